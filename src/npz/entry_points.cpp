// The .npz entry points: each adapts its input to an archive_reader for the
// pipeline (npz/archive_pipeline.hpp); every exception stops here.
#include <algorithm>
#include <cerrno>
#include <vector>

#include "core/checked_math.hpp"
#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/npz/validate.hpp"
#include "npz/archive_pipeline.hpp"
#include "platform/inputs.hpp"

namespace npyguard::npz {

namespace {

// A stream held in memory, at most the stream limit.
archive_result validate_spooled(byte_source& source, const options& opts, member_sink* sink = nullptr) {
  constexpr std::uint64_t slack = std::uint64_t{64} << 20;
  const std::uint64_t limit = std::min(
      opts.limits.max_stream_bytes,
      npyguard::detail::checked_add(opts.limits.max_total_bytes, slack, ~std::uint64_t{0}).value_or(~std::uint64_t{0}));
  // Filled up to `have`; grown geometrically when full (each byte is
  // zeroed once), never past limit + 1, so a stream of 1-byte reads costs
  // linear time like one of large reads.
  std::vector<unsigned char> bytes;
  std::size_t have = 0;
  for (;;) {
    if (have == bytes.size()) {
      const std::uint64_t grown = std::min<std::uint64_t>(std::max<std::uint64_t>(65536, 2 * std::uint64_t{have}),
                                                          limit + 1); // one byte past: a longer stream is seen
      bytes.reserve(static_cast<std::size_t>(grown));                 // exactly: resize alone may double past the limit
      bytes.resize(static_cast<std::size_t>(grown));
    }
    const std::size_t room = bytes.size() - have;
    const std::ptrdiff_t got = source.read(bytes.data() + have, room);
    if (got < 0) return npyguard::detail::read_error_from(got);
    if (static_cast<std::size_t>(got) > room) return npyguard::detail::read_error_from(-EIO);
    if (got == 0) break;
    have += static_cast<std::size_t>(got);
    if (have > limit) {
      return error{error_code::io_error, std::nullopt,
                   "the archive stream holds more than " + std::to_string(limit) +
                       " bytes, the most read into memory (limits.max_stream_bytes, --max-stream-bytes; "
                       "a file is read without that limit)",
                   std::nullopt, std::nullopt};
    }
  }
  bytes.resize(have);
  detail::archive_reader reader(bytes.data(), bytes.size());
  return detail::validate_archive(reader, opts, sink);
}

archive_result validate_archive_source(random_access_source& source, const options& opts, member_sink* sink = nullptr) {
  detail::archive_reader reader(source);
  return detail::validate_archive(reader, opts, sink);
}

archive_result validate_archive_buffer(const void* data, std::size_t size, const options& opts,
                                       member_sink* sink = nullptr) {
  detail::archive_reader reader(static_cast<const unsigned char*>(data), size);
  return detail::validate_archive(reader, opts, sink);
}

} // namespace

archive_result validate_buffer(const void* data, std::size_t size, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_archive_buffer(data, size, opts); });
}

archive_result validate_source(random_access_source& source, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_archive_source(source, opts); });
}

archive_result validate_stream(byte_source& source, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_spooled(source, opts); });
}

// By offset: the reader asks for what it needs; a stream is held in memory first.
archive_result validate_fd(int fd, const options& opts) noexcept {
  return platform::read_descriptor<archive_result>(
      fd, opts.timeout_ms, [&](random_access_source& input) { return validate_archive_source(input, opts); },
      [&](byte_source& source) { return validate_spooled(source, opts); });
}

archive_result validate_file(const char* path, const options& opts) noexcept {
  return platform::read_path<archive_result>(
      path, opts.timeout_ms, [&](random_access_source& input) { return validate_archive_source(input, opts); },
      [&](byte_source& source) { return validate_spooled(source, opts); });
}

// The same pipelines with a sink for the members' data (npz/data.hpp).
archive_result read_archive(const void* data, std::size_t size, member_sink& sink, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_archive_buffer(data, size, opts, &sink); });
}

archive_result read_archive(random_access_source& source, member_sink& sink, const options& opts) noexcept {
  return npyguard::detail::guarded([&] { return validate_archive_source(source, opts, &sink); });
}

archive_result read_archive_file(const char* path, member_sink& sink, const options& opts) noexcept {
  return platform::read_path<archive_result>(
      path, opts.timeout_ms, [&](random_access_source& input) { return validate_archive_source(input, opts, &sink); },
      [&](byte_source& source) { return validate_spooled(source, opts, &sink); });
}

} // namespace npyguard::npz
