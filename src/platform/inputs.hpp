// How an entry point reads a path or a descriptor it was given: a regular
// file by offset (its size from fstat), anything else as a stream; a
// directory or a failed open or fstat is io_error. Shared by the formats'
// entry points, so each says only what it does with the bytes.
#ifndef NPYGUARD_SRC_PLATFORM_INPUTS_HPP
#define NPYGUARD_SRC_PLATFORM_INPUTS_HPP

#include <cerrno>
#include <cstdint>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "npyguard/io.hpp"
#include "npyguard/options.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard::platform {

// `by_offset(random_access_source&)` for a regular file, `as_stream(byte_source&)`
// (read(2), polled up to opts.timeout_ms) for anything else; opts.cancel
// stops either. The descriptor is neither closed nor moved. Exceptions stop
// here.
template <typename Result, typename ByOffset, typename AsStream>
Result read_descriptor(int fd, const options& opts, ByOffset by_offset, AsStream as_stream) noexcept {
  return npyguard::detail::guarded([&]() -> Result {
    file_status info;
    if (const int failed = stat_fd(fd, info); failed != 0)
      return npyguard::detail::io_error_from("cannot stat", -failed);
    if (info.is_directory()) return npyguard::detail::io_error_from("cannot read", EISDIR);
    if (info.is_regular()) {
      pread_source input(fd, info.size, opts.cancel);
      return by_offset(input);
    }
    fd_byte_source source(fd, opts.timeout_ms, opts.cancel);
    return as_stream(source);
  });
}

// read_descriptor on `path`, opened without blocking (a FIFO would otherwise
// wait for a writer with no limit) and closed afterwards.
template <typename Result, typename ByOffset, typename AsStream>
Result read_path(const char* path, const options& opts, ByOffset by_offset, AsStream as_stream) noexcept {
  const unique_fd fd = open_for_reading(path);
  if (!fd) {
    const int failed = errno;
    return npyguard::detail::guarded([&] { return Result(npyguard::detail::io_error_from("cannot open", failed)); });
  }
  return read_descriptor<Result>(fd.get(), opts, by_offset, as_stream);
}

} // namespace npyguard::platform

#endif
