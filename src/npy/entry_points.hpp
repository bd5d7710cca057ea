// Entry points shared inside the library: the writer and the data view
// validate the descriptor they then read from, so nothing is opened twice.
#ifndef NPYGUARD_SRC_NPY_ENTRY_POINTS_HPP
#define NPYGUARD_SRC_NPY_ENTRY_POINTS_HPP

#include "core/guard.hpp"    // guarded, for the writer and the data view
#include "core/io_error.hpp" // io_error_from, likewise
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"
#include "platform/file_status.hpp"

namespace npyguard::detail {

// Validates an open descriptor: fstat into `info`, then a regular file by
// pread (the descriptor's offset is untouched, the data never read) and
// anything else as a stream. Directories are io_error.
[[nodiscard]] result validate_open_file(int fd, const options& opts, platform::file_status& info) noexcept;

} // namespace npyguard::detail

#endif
