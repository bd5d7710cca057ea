// The public entry points: each adapts its input (a buffer, a path, a
// descriptor, a source) to the pipeline (npy/pipeline.hpp), in the thread's
// workspace (npy/workspace.hpp), and every exception stops here
// (core/guard.hpp). npyguard::validator (npy/validator.cpp) runs the same
// adapters in a workspace and model of its own.
#include <cerrno>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "core/refused.hpp"
#include "npy/entry_points.hpp"
#include "npy/framing.hpp"
#include "npy/pipeline.hpp"
#include "npyguard/npy/validate.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard {
namespace detail {
namespace {

// `stage(space, model)` in the thread's workspace, as a result.
template <typename Stage>
result in_thread_workspace(Stage&& stage) noexcept {
  return guarded([&]() -> result {
    workspace_lease lease;
    return to_result([&](header& model) { return stage(lease.get(), model); });
  });
}

} // namespace

std::optional<error> validate_open_file(workspace& space, int fd, const options& opts, platform::file_status& info,
                                        header& model) {
  if (const int failed = platform::stat_fd(fd, info); failed != 0) return io_error_from("cannot stat", -failed);
  if (info.is_directory()) return io_error_from("cannot read", EISDIR);
  if (info.is_regular()) {
    platform::pread_source input(fd, info.size, opts.cancel);
    return validate_random_access(space, input, opts, model);
  }
  fd_byte_source source(fd, opts.timeout_ms, opts.cancel);
  return validate_sequential(space, source, opts, model);
}

result validate_open_file(int fd, const options& opts, platform::file_status& info) noexcept {
  return in_thread_workspace(
      [&](workspace& space, header& model) { return validate_open_file(space, fd, opts, info, model); });
}

std::optional<error> validate_path(workspace& space, const char* path, const options& opts, header& model) {
  // Without blocking: opening a FIFO would otherwise wait for a writer
  // with no limit.
  const platform::unique_fd fd = platform::open_for_reading(path);
  if (!fd) return io_error_from("cannot open", errno);
  platform::file_status info;
  return validate_open_file(space, fd.get(), opts, info, model);
}

std::optional<error> validate_fd(workspace& space, int fd, const options& opts, header& model) {
  // A regular file by offset (pread: its size from fstat, the descriptor's
  // offset untouched), anything else as a stream, as validate_file reads.
  platform::file_status info;
  return validate_open_file(space, fd, opts, info, model);
}

std::optional<error> validate_header_text(workspace& space, const void* text, std::size_t size, unsigned major_version,
                                          const options& opts, header& model) {
  if (major_version < 1 || major_version > 3) {
    return error{error_code::unsupported_version, 6, "format version must be 1.0, 2.0 or 3.0"};
  }
  const std::uint64_t field_max = major_version == 1 ? 0xFFFFu : 0xFFFF'FFFFu;
  if (size > field_max) {
    return error{error_code::header_too_large, 8, "header text above what this version's HEADER_LEN holds"};
  }
  if (size > opts.limits.max_header_bytes) {
    return refused(error{error_code::header_too_large, 8,
                         "header text of " + std::to_string(size) + " bytes, above the limit of " +
                             std::to_string(opts.limits.max_header_bytes)},
                   "max_header_bytes", opts.limits.max_header_bytes, size);
  }
  preamble framing;
  framing.major_version = static_cast<std::uint8_t>(major_version);
  framing.header_length = static_cast<std::uint32_t>(size);
  framing.header_offset = preamble_size(major_version);
  return validate_text(space, framing, static_cast<const unsigned char*>(text), opts, model);
}

} // namespace detail

result validate_buffer(const void* data, std::size_t size, const options& opts) noexcept {
  return detail::in_thread_workspace([&](detail::workspace& space, header& model) {
    return detail::validate_contiguous(space, static_cast<const unsigned char*>(data), size, opts, model);
  });
}

result validate_header_text(const void* text, std::size_t size, unsigned major_version, const options& opts) noexcept {
  return detail::in_thread_workspace([&](detail::workspace& space, header& model) {
    return detail::validate_header_text(space, text, size, major_version, opts, model);
  });
}

result validate_stream(byte_source& source, const options& opts) noexcept {
  return detail::in_thread_workspace(
      [&](detail::workspace& space, header& model) { return detail::validate_sequential(space, source, opts, model); });
}

result validate_fd(int fd, const options& opts) noexcept {
  return detail::in_thread_workspace(
      [&](detail::workspace& space, header& model) { return detail::validate_fd(space, fd, opts, model); });
}

result validate_file(const char* path, const options& opts) noexcept {
  return detail::in_thread_workspace(
      [&](detail::workspace& space, header& model) { return detail::validate_path(space, path, opts, model); });
}

result validate_source(random_access_source& source, const options& opts) noexcept {
  return detail::in_thread_workspace([&](detail::workspace& space, header& model) {
    return detail::validate_random_access(space, source, opts, model);
  });
}

} // namespace npyguard
