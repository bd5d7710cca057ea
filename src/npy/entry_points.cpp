// The public entry points: each adapts its input (a buffer, a path, a
// descriptor, a source) to the pipeline (npy/pipeline.hpp), and every
// exception stops here (core/guard.hpp).
#include <cerrno>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "npy/entry_points.hpp"
#include "npy/framing.hpp"
#include "npy/pipeline.hpp"
#include "npyguard/npy/validate.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard {
namespace detail {

result validate_open_file(int fd, const options& opts, platform::file_status& info) noexcept {
  return guarded([&]() -> result {
    if (const int failed = platform::stat_fd(fd, info); failed != 0) return io_error_from("cannot stat", -failed);
    if (info.is_directory()) return io_error_from("cannot read", EISDIR);
    if (info.is_regular()) {
      platform::pread_source input(fd, info.size);
      return validate_random_access(input, opts);
    }
    fd_byte_source source(fd, opts.timeout_ms);
    return validate_sequential(source, opts);
  });
}

} // namespace detail

result validate_buffer(const void* data, std::size_t size, const options& opts) noexcept {
  return detail::guarded(
      [&] { return detail::validate_contiguous(static_cast<const unsigned char*>(data), size, opts); });
}

result validate_header_text(const void* text, std::size_t size, unsigned major_version, const options& opts) noexcept {
  return detail::guarded([&]() -> result {
    if (major_version < 1 || major_version > 3) {
      return error{error_code::unsupported_version, 6, "format version must be 1.0, 2.0 or 3.0"};
    }
    const std::uint64_t field_max = major_version == 1 ? 0xFFFFu : 0xFFFF'FFFFu;
    if (size > opts.limits.max_header_bytes || size > field_max) {
      return error{error_code::header_too_large, 8, "header text above limits.max_header_bytes"};
    }
    detail::preamble framing;
    framing.major_version = static_cast<std::uint8_t>(major_version);
    framing.header_length = static_cast<std::uint32_t>(size);
    framing.header_offset = detail::preamble_size(major_version);
    return detail::validate_text(framing, static_cast<const unsigned char*>(text), opts);
  });
}

result validate_stream(byte_source& source, const options& opts) noexcept {
  return detail::guarded([&] { return detail::validate_sequential(source, opts); });
}

result validate_fd(int fd, const options& opts) noexcept {
  fd_byte_source source(fd, opts.timeout_ms);
  return validate_stream(source, opts);
}

result validate_file(const char* path, const options& opts) noexcept {
  // Without blocking: opening a FIFO would otherwise wait for a writer
  // with no limit.
  const platform::unique_fd fd = platform::open_for_reading(path);
  if (!fd) return detail::guarded([] { return result(detail::io_error_from("cannot open", errno)); });
  platform::file_status info;
  return detail::validate_open_file(fd.get(), opts, info);
}

result validate_source(random_access_source& source, const options& opts) noexcept {
  return detail::guarded([&] { return detail::validate_random_access(source, opts); });
}

} // namespace npyguard
