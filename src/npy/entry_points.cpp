// The entry points: bytes -> framing -> text decoding -> grammar -> model ->
// size math -> data-size verdict. Every exception stops here.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "npy/framing.hpp"
#include "npyguard/validate.hpp"
#include "npy/entry_points.hpp"
#include "npy/encode.hpp"
#include "npy/parse.hpp"
#include "npy/text.hpp"
#include "npy/model_builder.hpp"

namespace npyguard {
namespace detail {
namespace {

// Header and preamble of a regular file are read with one pread when they fit.
constexpr std::size_t file_prefix_size = 4096;
// Streams grow the header buffer by at most what has already arrived (at
// least this much), so a short input claiming a huge header costs little.
constexpr std::size_t first_stream_chunk = 4096;
constexpr std::size_t drain_chunk = 64 * 1024;

result validate_text(const preamble& framing, const unsigned char* text, const options& opts) {
  const bool utf8 = framing.major_version == 3;
  parse_settings settings;
  if (auto failure = check_header_text(text, framing.header_length, utf8, framing.header_offset, settings.ascii_only)) {
    return *failure;
  }
  settings.utf8 = utf8;
  settings.allow_long_suffix = !utf8;
  settings.max_depth = std::min(opts.limits.max_depth, hard_max_depth);
  settings.base_offset = framing.header_offset;
  ast tree;
  if (auto failure = parse_header_text(reinterpret_cast<const char*>(text), framing.header_length, settings, tree)) {
    return *failure;
  }
  header model;
  model.major_version = framing.major_version;
  model.minor_version = framing.minor_version;
  model.header_length = framing.header_length;
  model.data_offset = framing.data_offset();
  model.data_alignment = model.data_offset & (~model.data_offset + 1);
  if (auto failure = build_model(tree, framing.header_offset, opts, model)) return *failure;
  // The canonical comparison comes before the data-size verdict: errors are
  // reported in the order of their offsets, and its offset is in the header.
  if (opts.canonical) {
    if (auto failure = check_canonical(model, framing, text)) return *failure;
  }
  return model;
}

// SPEC.md section 5: the input size must be exactly data_offset + nbytes.
// A stream stops reading at the first byte past the data, so its
// `input_size` is then a lower bound (`read_all` false).
result check_data_size(result checked, std::uint64_t input_size, const options& opts, bool read_all = true) {
  const header* model = checked.value_if();
  if (model == nullptr || model->data_is_pickle) return checked;
  const std::uint64_t expected = model->data_offset + model->nbytes; // checked by build_model
  if (input_size < expected) {
    return error{error_code::truncated_data, input_size,
                 "the header implies " + std::to_string(model->nbytes) + " data bytes (input of " +
                     std::to_string(expected) + " bytes), but the input has " + std::to_string(input_size) +
                     " bytes"};
  }
  if (input_size > expected && !opts.allow_trailing_data) {
    return error{error_code::trailing_data, expected,
                 (read_all ? std::to_string(input_size - expected) + " bytes follow the "
                           : std::string("the stream goes on after the ")) +
                     std::to_string(model->nbytes) +
                     " bytes of array data (set allow_trailing_data to accept them)"};
  }
  return checked;
}

error io_failure(const char* what, int errno_value) {
  if (errno_value <= 0) errno_value = EIO; // a byte_source that gave no reason
  if (errno_value == ETIMEDOUT) {
    return error{error_code::io_error, std::nullopt,
                 std::string(what) + ": no input within the time allowed (set timeout_ms to wait longer)"};
  }
  return error{error_code::io_error, std::nullopt, std::string(what) + ": " + std::strerror(errno_value)};
}

// Reads until `size` bytes arrived or the input ended; on a read error the
// source's negative answer (minus an errno value).
std::ptrdiff_t read_full(byte_source& source, unsigned char* buffer, std::size_t size) {
  std::size_t got = 0;
  while (got < size) {
    const std::ptrdiff_t n = source.read(buffer + got, size - got);
    if (n < 0) return n;
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<std::ptrdiff_t>(got);
}

// A byte_source's read error: its answer is minus an errno value.
error source_failure(std::ptrdiff_t answer) {
  return io_failure("cannot read", answer < -4095 ? EIO : static_cast<int>(-answer));
}

std::ptrdiff_t pread_full(int fd, unsigned char* buffer, std::size_t size, std::uint64_t offset) {
  std::size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, buffer + got, size - got, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<std::ptrdiff_t>(got);
}

result validate_memory(const unsigned char* data, std::size_t size, const options& opts) {
  preamble framing;
  if (auto failure = read_preamble(data, std::min(size, max_preamble_size), opts, framing)) return *failure;
  if (auto failure = check_header_fits(framing, size)) return *failure;
  return check_data_size(validate_text(framing, data + framing.header_offset, opts), size, opts);
}

result validate_regular_file(int fd, std::uint64_t file_size, const options& opts) {
  unsigned char prefix[file_prefix_size];
  const std::ptrdiff_t got = pread_full(fd, prefix, std::min<std::uint64_t>(file_size, sizeof prefix), 0);
  if (got < 0) return io_failure("cannot read", errno);
  const auto available = static_cast<std::size_t>(got);
  preamble framing;
  if (auto failure = read_preamble(prefix, std::min(available, max_preamble_size), opts, framing)) return *failure;
  if (auto failure = check_header_fits(framing, file_size)) return *failure;
  const std::uint64_t header_end = framing.data_offset();
  if (header_end <= available) {
    return check_data_size(validate_text(framing, prefix + framing.header_offset, opts), file_size, opts);
  }
  // Allocated only now: max_header_bytes and the file size bound it.
  std::vector<unsigned char> text(framing.header_length);
  const std::size_t already = available - static_cast<std::size_t>(framing.header_offset);
  std::memcpy(text.data(), prefix + framing.header_offset, already);
  const std::ptrdiff_t rest = pread_full(fd, text.data() + already, text.size() - already, available);
  if (rest < 0) return io_failure("cannot read", errno);
  if (static_cast<std::size_t>(rest) != text.size() - already) { // the file shrank under us
    return check_header_fits(framing, available + static_cast<std::uint64_t>(rest)).value();
  }
  return check_data_size(validate_text(framing, text.data(), opts), file_size, opts);
}

result validate_source(byte_source& source, const options& opts) {
  unsigned char prefix[max_preamble_size];
  const std::ptrdiff_t got = read_full(source, prefix, sizeof prefix);
  if (got < 0) return source_failure(got);
  const auto available = static_cast<std::size_t>(got);
  preamble framing;
  if (auto failure = read_preamble(prefix, available, opts, framing)) return *failure;

  std::vector<unsigned char> text;
  const std::size_t already = std::min<std::size_t>(available - framing.header_offset, framing.header_length);
  text.assign(prefix + framing.header_offset, prefix + framing.header_offset + already);
  while (text.size() < framing.header_length) {
    const std::size_t chunk =
        std::min<std::size_t>(framing.header_length - text.size(), std::max(first_stream_chunk, text.size()));
    const std::size_t old_size = text.size();
    text.resize(old_size + chunk);
    const std::ptrdiff_t n = read_full(source, text.data() + old_size, chunk);
    if (n < 0) return source_failure(n);
    text.resize(old_size + static_cast<std::size_t>(n));
    if (static_cast<std::size_t>(n) < chunk) {
      return check_header_fits(framing, framing.header_offset + text.size()).value();
    }
  }
  result checked = validate_text(framing, text.data(), opts);
  if (!checked.ok()) return checked;

  // The data is counted, never stored, and read only until the verdict is
  // certain (SPEC.md section 5): the first byte past the data is
  // trailing_data, and with trailing data allowed the end of the data is
  // enough. A pickle's length is unknown: nothing more to read. The
  // preamble read may have taken bytes past a short header.
  const header& model = checked.value();
  if (model.data_is_pickle) return checked;
  std::uint64_t total = framing.header_offset + text.size() + (available - framing.header_offset - already);
  text.clear();
  text.shrink_to_fit();
  const std::uint64_t data_end = model.data_offset + model.nbytes; // checked by build_model
  const std::uint64_t enough = opts.allow_trailing_data ? data_end : data_end + 1;
  bool ended = false;
  if (total < enough) {
    const auto drain = std::make_unique<unsigned char[]>(drain_chunk);
    while (total < enough) {
      const std::ptrdiff_t n = source.read(drain.get(), static_cast<std::size_t>(std::min<std::uint64_t>(drain_chunk, enough - total)));
      if (n < 0) return source_failure(n);
      if (n == 0) {
        ended = true;
        break;
      }
      total += static_cast<std::uint64_t>(n);
    }
  }
  return check_data_size(std::move(checked), total, opts, ended);
}

} // namespace

result validate_open_file(int fd, const options& opts, struct stat& info) noexcept {
  return guarded([&]() -> result {
    if (::fstat(fd, &info) != 0) return io_failure("cannot stat", errno);
    if (S_ISDIR(info.st_mode)) return io_failure("cannot read", EISDIR);
    if (S_ISREG(info.st_mode)) return validate_regular_file(fd, static_cast<std::uint64_t>(info.st_size), opts);
    return validate_fd(fd, opts);
  });
}

error io_error_from(const char* what, int errno_value) { return io_failure(what, errno_value); }

} // namespace detail

std::string_view error_code_name(error_code code) noexcept {
  switch (code) {
#define NPYGUARD_NAME(name) \
  case error_code::name: return #name;
    NPYGUARD_NAME(io_error)
    NPYGUARD_NAME(out_of_memory)
    NPYGUARD_NAME(bad_magic)
    NPYGUARD_NAME(unsupported_version)
    NPYGUARD_NAME(truncated_preamble)
    NPYGUARD_NAME(header_too_large)
    NPYGUARD_NAME(truncated_header)
    NPYGUARD_NAME(invalid_utf8)
    NPYGUARD_NAME(control_character)
    NPYGUARD_NAME(header_not_terminated)
    NPYGUARD_NAME(syntax_error)
    NPYGUARD_NAME(integer_too_large)
    NPYGUARD_NAME(negative_dimension)
    NPYGUARD_NAME(depth_exceeded)
    NPYGUARD_NAME(missing_key)
    NPYGUARD_NAME(duplicate_key)
    NPYGUARD_NAME(unknown_key)
    NPYGUARD_NAME(bad_fortran_order)
    NPYGUARD_NAME(bad_shape)
    NPYGUARD_NAME(too_many_dimensions)
    NPYGUARD_NAME(bad_descr)
    NPYGUARD_NAME(object_dtype)
    NPYGUARD_NAME(duplicate_field_name)
    NPYGUARD_NAME(empty_field_name)
    NPYGUARD_NAME(itemsize_overflow)
    NPYGUARD_NAME(size_overflow)
    NPYGUARD_NAME(data_too_large)
    NPYGUARD_NAME(truncated_data)
    NPYGUARD_NAME(trailing_data)
    NPYGUARD_NAME(not_canonical)
    NPYGUARD_NAME(buffer_too_small)
#undef NPYGUARD_NAME
  }
  return "unknown";
}

result validate_buffer(const void* data, std::size_t size, const options& opts) noexcept {
  return detail::guarded([&] { return detail::validate_memory(static_cast<const unsigned char*>(data), size, opts); });
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
    framing.header_offset = major_version == 1 ? 10 : 12;
    return detail::validate_text(framing, static_cast<const unsigned char*>(text), opts);
  });
}

result validate_stream(byte_source& source, const options& opts) noexcept {
  return detail::guarded([&] { return detail::validate_source(source, opts); });
}

fd_byte_source::fd_byte_source(int fd, std::uint32_t timeout_ms) noexcept
    : fd_(fd), timed_(timeout_ms != 0),
      deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms)) {
  const int flags = ::fcntl(fd, F_GETFL);
  poll_first_ = timed_ || (flags >= 0 && (flags & O_NONBLOCK) != 0);
}

std::ptrdiff_t fd_byte_source::read(void* buffer, std::size_t size) noexcept {
  for (;;) {
    if (poll_first_ && !wait_readable()) return -errno;
    const ssize_t n = ::read(fd_, buffer, size);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return -errno;
    poll_first_ = true;
  }
}

// True when a read will not block (data, the end of the input or an error
// to report); false with errno set on a poll error or ETIMEDOUT.
bool fd_byte_source::wait_readable() noexcept {
  for (;;) {
    int wait_ms = -1;
    if (timed_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        errno = ETIMEDOUT;
        return false;
      }
      wait_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), 1 << 30));
    }
    pollfd entry{fd_, POLLIN, 0};
    const int ready = ::poll(&entry, 1, wait_ms);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

result validate_fd(int fd, const options& opts) noexcept {
  fd_byte_source source(fd, opts.timeout_ms);
  return validate_stream(source, opts);
}

result validate_file(const char* path, const options& opts) noexcept {
  // Without blocking: opening a FIFO would otherwise wait for a writer
  // with no limit. Regular files ignore the flag.
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return detail::guarded([] { return result(detail::io_failure("cannot open", errno)); });
  struct stat info {};
  result checked = detail::validate_open_file(fd, opts, info);
  ::close(fd);
  return checked;
}

} // namespace npyguard
