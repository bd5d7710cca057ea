// Entry points shared inside the library: the writer and the data view
// validate the descriptor they then read from, so nothing is opened twice.
#ifndef NPYGUARD_SRC_CHECK_HPP
#define NPYGUARD_SRC_CHECK_HPP

#include <sys/stat.h>

#include <new>
#include <optional>
#include <stdexcept>

#include "npyguard/error.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard::detail {

// Validates an open descriptor: fstat into `info`, then a regular file by
// pread (the descriptor's offset is untouched, the data never read) and
// anything else as a stream. Directories are io_error.
[[nodiscard]] result validate_open_file(int fd, const options& opts, struct stat& info) noexcept;

// Runs `function` (returning a result or an optional error) and turns an
// escaping std::bad_alloc or std::length_error (a size the library cannot
// allocate) into out_of_memory: the public API never throws. Any other
// exception is a bug: it is not caught here, reaches a noexcept boundary
// and terminates the process, never passing for a verdict. The message fits
// the small-string buffer, so building it cannot allocate.
template <typename Function>
auto guarded(Function&& function) noexcept -> decltype(function()) {
  try {
    return function();
  } catch (const std::bad_alloc&) {
    return error{error_code::out_of_memory, std::nullopt, "out of memory"};
  } catch (const std::length_error&) {
    return error{error_code::out_of_memory, std::nullopt, "out of memory"};
  }
}

// io_error with "WHAT: strerror(errno_value)" and no offset. May throw
// std::bad_alloc.
[[nodiscard]] error io_error_from(const char* what, int errno_value);

} // namespace npyguard::detail

#endif
