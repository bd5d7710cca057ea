// io_error values: what failed and why, from an errno value. No I/O here.
#ifndef NPYGUARD_SRC_CORE_IO_ERROR_HPP
#define NPYGUARD_SRC_CORE_IO_ERROR_HPP

#include <cstddef>

#include "npyguard/error.hpp"

namespace npyguard::detail {

// io_error with "WHAT: strerror(errno_value)" and no offset (ETIMEDOUT:
// "no input within the time allowed"; 0 or less: EIO). May throw
// std::bad_alloc.
[[nodiscard]] error io_error_from(const char* what, int errno_value);

// A source's read error: its answer is minus an errno value.
[[nodiscard]] error read_error_from(std::ptrdiff_t answer);

} // namespace npyguard::detail

#endif
