// The .npz entry points: each adapts its input to an archive_reader for the
// pipeline (npz/archive_pipeline.hpp); every exception stops here.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/checked_math.hpp"
#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "core/refused.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/npz/validate.hpp"
#include "npz/archive_pipeline.hpp"
#include "platform/inputs.hpp"

namespace npyguard::npz {

namespace {

archive_result validate_archive_source(random_access_source& source, const options& opts, member_sink* sink = nullptr) {
  detail::archive_reader reader(source);
  return detail::validate_archive(reader, opts, sink);
}

archive_result validate_archive_buffer(const void* data, std::size_t size, const options& opts,
                                       member_sink* sink = nullptr) {
  detail::archive_reader reader(static_cast<const unsigned char*>(data), size);
  return detail::validate_archive(reader, opts, sink);
}

// The most a stream may hold, in memory or on a temporary file (SPEC-npz.md
// section 17).
std::uint64_t stream_limit(const options& opts) {
  constexpr std::uint64_t slack = std::uint64_t{64} << 20;
  const std::uint64_t all = ~std::uint64_t{0};
  return std::min(opts.limits.max_stream_bytes,
                  npyguard::detail::checked_add(opts.limits.max_total_bytes, slack, all).value_or(all));
}

// How many bytes to read to tell a stream within `limit` from a longer one.
std::uint64_t stream_ceiling(std::uint64_t limit) { return limit == ~std::uint64_t{0} ? limit : limit + 1; }

// The limit that bound the stream is the option named: max_stream_bytes, or
// max_total_bytes when its 64 MiB of slack is the smaller.
error stream_too_long(const options& opts, const char* held) {
  const std::uint64_t limit = stream_limit(opts);
  const char* option = limit == opts.limits.max_stream_bytes ? "max_stream_bytes" : "max_total_bytes";
  return npyguard::detail::refused(error{error_code::io_error, std::nullopt,
                                         "the archive stream holds more than " + std::to_string(limit) +
                                             " bytes, the most " + held + "; a file is read without that limit"},
                                   option, limit, npyguard::detail::past(limit));
}

// A stream's bytes in memory as chunks that are never moved or zeroed: the
// memory is what arrived plus the chunk being filled. Chunks grow from
// 64 KiB to 1 MiB, so a small archive stays small; each read fills what is
// left of the last one, so 1-byte reads cost linear time.
class chunked_memory final : public random_access_source {
public:
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }

  // Where the next bytes go: room in the last chunk, a new one (of at most
  // `most` bytes, most > 0) when it is full. May throw std::bad_alloc.
  unsigned char* room(std::uint64_t most, std::size_t& length) {
    if (size_ == capacity_) {
      const std::size_t grown = chunks_.empty() ? first_chunk : std::min(2 * chunks_.back().length, last_chunk);
      const auto length_of_new = static_cast<std::size_t>(std::min<std::uint64_t>(grown, most));
      chunks_.push_back({std::unique_ptr<unsigned char[]>(new unsigned char[length_of_new]), capacity_, length_of_new});
      capacity_ += length_of_new;
    }
    const chunk& last = chunks_.back();
    length = static_cast<std::size_t>(capacity_ - size_);
    return last.bytes.get() + (size_ - last.start);
  }
  void add(std::size_t length) noexcept { size_ += length; }
  [[nodiscard]] std::uint64_t capacity() const noexcept { return capacity_; }

  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (offset >= size_) return 0;
    const auto total = static_cast<std::size_t>(std::min<std::uint64_t>(size, size_ - offset));
    // The last chunk that starts at or before `offset`.
    auto at = std::upper_bound(chunks_.begin(), chunks_.end(), offset,
                               [](std::uint64_t value, const chunk& c) { return value < c.start; });
    --at;
    auto* out = static_cast<unsigned char*>(buffer);
    for (std::size_t copied = 0; copied < total; ++at) {
      const auto skip = static_cast<std::size_t>(offset + copied - at->start);
      const std::size_t n = std::min(at->length - skip, total - copied);
      std::memcpy(out + copied, at->bytes.get() + skip, n);
      copied += n;
    }
    return static_cast<std::ptrdiff_t>(total);
  }

private:
  static constexpr std::size_t first_chunk = std::size_t{64} << 10;
  static constexpr std::size_t last_chunk = std::size_t{1} << 20;
  struct chunk {
    std::unique_ptr<unsigned char[]> bytes; // new[] without (): not zeroed
    std::uint64_t start;
    std::size_t length;
  };
  std::vector<chunk> chunks_;
  std::uint64_t size_ = 0;
  std::uint64_t capacity_ = 0;
};

// A stream held in memory, at most the stream limit; then read by offset.
archive_result validate_spooled(byte_source& source, const options& opts, member_sink* sink = nullptr) {
  const std::uint64_t limit = stream_limit(opts);
  const std::uint64_t ceiling = stream_ceiling(limit); // one byte past: a longer stream is seen
  chunked_memory held;
  while (held.size() < ceiling) {
    std::size_t room = 0;
    unsigned char* into = held.room(ceiling - held.size(), room);
    const std::ptrdiff_t got = source.read(into, room);
    if (got < 0) return npyguard::detail::read_error_from(got);
    if (static_cast<std::size_t>(got) > room) return npyguard::detail::read_error_from(-EIO);
    if (got == 0) break;
    held.add(static_cast<std::size_t>(got));
  }
  if (held.size() > limit) return stream_too_long(opts, "read into memory");
  detail::archive_reader reader(held);
  return detail::validate_archive(reader, opts, sink);
}

// A stream written to an unlinked temporary file, at most the stream limit;
// then read by offset (pread) like a file. Memory: one buffer, written out
// when full, so short reads cost no more writes than long ones.
archive_result validate_spooled_to_file(byte_source& source, const options& opts, const char* directory) {
  const std::uint64_t limit = stream_limit(opts);
  const std::uint64_t ceiling = stream_ceiling(limit);
  const platform::temporary_directory where = platform::choose_temporary_directory(directory);
  const std::string place = where.path + (where.from_environment ? " ($TMPDIR)" : "");
  const platform::unique_fd file = platform::create_unlinked_file(where.path);
  if (!file) {
    const int failed = errno;
    return npyguard::detail::io_error_from(
        ("cannot create a temporary file in " + place + " to hold the archive stream").c_str(), failed);
  }
  const auto write_out = [&](const unsigned char* bytes, std::size_t length) -> std::optional<error> {
    if (const int failed = platform::write_full(file.get(), bytes, length); failed != 0) {
      return npyguard::detail::io_error_from(
          ("cannot write the temporary file in " + place + " that holds the archive stream").c_str(), -failed);
    }
    return std::nullopt;
  };
  constexpr std::size_t buffer_size = std::size_t{256} << 10;
  const std::unique_ptr<unsigned char[]> buffer(new unsigned char[buffer_size]); // not zeroed
  std::size_t filled = 0;
  std::uint64_t size = 0;
  while (size < ceiling) {
    const auto room = static_cast<std::size_t>(std::min<std::uint64_t>(buffer_size - filled, ceiling - size));
    const std::ptrdiff_t got = source.read(buffer.get() + filled, room);
    if (got < 0) return npyguard::detail::read_error_from(got);
    if (static_cast<std::size_t>(got) > room) return npyguard::detail::read_error_from(-EIO);
    if (got == 0) break;
    size += static_cast<std::uint64_t>(got);
    filled += static_cast<std::size_t>(got);
    if (filled == buffer_size && size <= limit) {
      if (auto failure = write_out(buffer.get(), filled)) return *failure;
      filled = 0;
    }
  }
  if (size > limit) return stream_too_long(opts, "written to a temporary file");
  if (auto failure = write_out(buffer.get(), filled)) return *failure;
  platform::pread_source input(file.get(), size);
  return validate_archive_source(input, opts);
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

archive_result validate_stream_spooled(byte_source& source, const options& opts,
                                       const char* temporary_directory) noexcept {
  return npyguard::detail::guarded([&] { return validate_spooled_to_file(source, opts, temporary_directory); });
}

// By offset: the reader asks for what it needs; a stream is held in memory first.
archive_result validate_fd(int fd, const options& opts) noexcept {
  return platform::read_descriptor<archive_result>(
      fd, opts, [&](random_access_source& input) { return validate_archive_source(input, opts); },
      [&](byte_source& source) { return validate_spooled(source, opts); });
}

archive_result validate_file(const char* path, const options& opts) noexcept {
  return platform::read_path<archive_result>(
      path, opts, [&](random_access_source& input) { return validate_archive_source(input, opts); },
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
      path, opts, [&](random_access_source& input) { return validate_archive_source(input, opts, &sink); },
      [&](byte_source& source) { return validate_spooled(source, opts, &sink); });
}

} // namespace npyguard::npz
