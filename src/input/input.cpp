// The input boundary (npyguard/input.hpp): one non-blocking open, one fstat
// of that descriptor, the format of SPEC.md section 9, and the validator of
// that format on the same descriptor.
#include "npyguard/input.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard {
namespace {

// A stream's first bytes kept for the context of an error.
constexpr std::size_t recorded_prefix = std::size_t{64} * 1024;

input_kind kind_of(platform::file_type type) noexcept {
  switch (type) {
    case platform::file_type::regular: return input_kind::regular;
    case platform::file_type::directory: return input_kind::directory;
    case platform::file_type::fifo: return input_kind::fifo;
    case platform::file_type::character_device: return input_kind::character_device;
    case platform::file_type::block_device: return input_kind::block_device;
    case platform::file_type::socket: return input_kind::socket;
    case platform::file_type::symbolic_link:
    case platform::file_type::other: break;
  }
  return input_kind::other;
}

// The format the request or the name claims before any byte is read: what
// an input that cannot be read is reported as.
file_format claimed_format(const input_request& request, std::string_view name) noexcept {
  return request.format ? *request.format : detect_format(nullptr, 0, name);
}

void set_failure(input_result& out, const error& failure) {
  switch (out.format) {
    case file_format::npz: out.npz = failure; break;
    case file_format::ra: out.ra = failure; break;
    case file_format::npy: out.npy = failure; break;
  }
}

// A regular file by offset (pread), its first 4 KiB read once (they tell the
// format, and hold a typical .npy header) and served again from memory.
class head_cached_source final : public random_access_source {
public:
  head_cached_source(int fd, std::uint64_t size, const std::atomic<bool>* cancel) noexcept
      : fd_(fd), size_(size), cancel_(cancel) {}

  // Reads the first bytes: 0, or minus an errno value.
  std::ptrdiff_t read_head() noexcept {
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(size_, sizeof head_));
    const std::ptrdiff_t got = platform::pread_full(fd_, head_, wanted, 0);
    if (got < 0) return got;
    head_size_ = static_cast<std::size_t>(got);
    return 0;
  }
  [[nodiscard]] const unsigned char* head() const noexcept { return head_; }
  [[nodiscard]] std::size_t head_size() const noexcept { return head_size_; }

  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) return -ECANCELED;
    if (offset <= head_size_ && size <= head_size_ - offset) {
      std::memcpy(buffer, head_ + offset, size);
      return static_cast<std::ptrdiff_t>(size);
    }
    return platform::pread_full(fd_, buffer, size, offset);
  }

private:
  int fd_;
  std::uint64_t size_;
  const std::atomic<bool>* cancel_;
  unsigned char head_[4096] = {};
  std::size_t head_size_ = 0;
};

// read(2) with the deadline (fd_byte_source), keeping the first bytes when
// the caller wants an error's context.
class recording_source final : public byte_source {
public:
  recording_source(int fd, std::uint32_t timeout_ms, const std::atomic<bool>* cancel, bool record) noexcept
      : source_(fd, timeout_ms, cancel), record_(record) {}

  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    const std::ptrdiff_t n = source_.read(buffer, size);
    if (record_ && n > 0 && prefix_.size() < recorded_prefix) {
      const std::size_t keep = std::min(static_cast<std::size_t>(n), recorded_prefix - prefix_.size());
      try {
        prefix_.append(static_cast<const char*>(buffer), keep);
      } catch (const std::exception&) { // the context is only for display
        record_ = false;
      }
    }
    return n;
  }
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

private:
  fd_byte_source source_;
  bool record_;
  std::string prefix_;
};

// The window [begin, end) around the failure's offset, or false.
bool context_window(const input_result& out, std::size_t context, std::uint64_t& begin, std::uint64_t& end) {
  const error* failure = out.failure();
  if (context == 0 || failure == nullptr || !failure->offset) return false;
  const std::uint64_t at = *failure->offset;
  begin = at > context ? at - context : 0;
  end = at + context + 2; // one byte more tells whether the input goes on
  return true;
}

void keep_context(input_result& out, std::string bytes, std::uint64_t begin, std::uint64_t end) {
  out.context = std::move(bytes);
  out.context_start = begin;
  out.context_continues = out.context.size() == end - begin;
  if (out.context_continues) out.context.pop_back();
}

void validate_regular(int fd, std::uint64_t size, const options& opts, const input_request& request,
                      std::string_view name, input_result& out) {
  head_cached_source source(fd, size, request.cancel != nullptr ? request.cancel : opts.cancel);
  if (const std::ptrdiff_t failed = source.read_head(); failed < 0) {
    set_failure(out, detail::read_error_from(failed));
    return;
  }
  out.format = request.format ? *request.format : detect_format(source.head(), source.head_size(), name);
  switch (out.format) {
    case file_format::npz: out.npz = npz::validate_source(source, opts); break;
    case file_format::ra: out.ra = ra::validate_source(source, opts); break;
    case file_format::npy: out.npy = validate_source(source, opts); break;
  }
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  if (!context_window(out, request.context, begin, end) || begin >= size) return;
  std::string bytes(static_cast<std::size_t>(std::min(end, size) - begin), '\0');
  const std::ptrdiff_t got = source.read_at(begin, bytes.data(), bytes.size());
  bytes.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  keep_context(out, std::move(bytes), begin, end);
}

void validate_sequential(int fd, const options& opts, const input_request& request, std::string_view name,
                         input_result& out) {
  recording_source recorded(fd, opts.timeout_ms, request.cancel != nullptr ? request.cancel : opts.cancel,
                            request.context != 0);
  peeked_source source(recorded);
  source.peek();
  out.format = request.format ? *request.format : detect_format(source.head(), source.head_size(), name);
  switch (out.format) {
    case file_format::npz:
      out.npz = request.spool_directory != nullptr
                    ? npz::validate_stream_spooled(source, opts,
                                                   *request.spool_directory != '\0' ? request.spool_directory : nullptr)
                    : npz::validate_stream(source, opts);
      break;
    case file_format::ra: out.ra = ra::validate_stream(source, opts); break;
    case file_format::npy: out.npy = validate_stream(source, opts); break;
  }
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  const std::string& prefix = recorded.prefix();
  if (!context_window(out, request.context, begin, end) || begin >= prefix.size()) return;
  keep_context(out,
               prefix.substr(static_cast<std::size_t>(begin),
                             static_cast<std::size_t>(std::min<std::uint64_t>(end, prefix.size()) - begin)),
               begin, end);
}

input_result validate_descriptor(int fd, const options& opts, const input_request& request, std::string_view name) {
  input_result out;
  out.format = claimed_format(request, name);
  platform::file_status info;
  if (const int failed = platform::stat_fd(fd, info); failed != 0) {
    set_failure(out, detail::io_error_from("cannot stat", -failed));
    return out;
  }
  out.kind = kind_of(info.type);
  if (info.is_directory()) {
    set_failure(out, detail::io_error_from("cannot read", EISDIR));
  } else if (info.is_regular()) {
    validate_regular(fd, info.size, opts, request, name, out);
  } else {
    validate_sequential(fd, opts, request, name, out);
  }
  return out;
}

// guarded() for an input_result: out_of_memory (from a std::bad_alloc or
// std::length_error, as guarded() says) in the .npy slot.
template <typename Function>
input_result guarded_input(Function&& function) noexcept {
  try {
    return function();
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {}
  input_result out; // a std::string's default constructor does not allocate
  out.npy = error{error_code::out_of_memory, std::nullopt, "out of memory"};
  return out;
}

// validate_input and validate_input_at: `opener` opens `path` for reading.
template <typename Opener>
input_result validate_opened(const char* path, const options& opts, const input_request& request,
                             Opener opener) noexcept {
  return guarded_input([&] {
    const std::string_view name = !request.name.empty() ? request.name : path != nullptr ? path : "";
    if (path == nullptr) {
      input_result out;
      out.format = claimed_format(request, name);
      set_failure(out, detail::io_error_from("cannot open", EFAULT));
      return out;
    }
    const platform::unique_fd fd = opener(path);
    if (!fd) {
      const int failed = errno;
      input_result out;
      out.format = claimed_format(request, name);
      set_failure(out, detail::io_error_from("cannot open", failed));
      return out;
    }
    return validate_descriptor(fd.get(), opts, request, name);
  });
}

} // namespace

input_result validate_input(const char* path, const options& opts, const input_request& request) noexcept {
  return validate_opened(path, opts, request, [](const char* p) { return platform::open_for_reading(p); });
}

input_result validate_input_at(int directory, const char* path, const options& opts,
                               const input_request& request) noexcept {
  return validate_opened(path, opts, request,
                         [directory](const char* p) { return platform::open_for_reading_at(directory, p); });
}

input_result validate_input_fd(int fd, const options& opts, const input_request& request) noexcept {
  return guarded_input([&] { return validate_descriptor(fd, opts, request, request.name); });
}

basic_result<input_head> read_input_head(const char* path) noexcept {
  return detail::guarded([&]() -> basic_result<input_head> {
    if (path == nullptr) return detail::io_error_from("cannot open", EFAULT);
    const platform::unique_fd fd = platform::open_for_reading(path);
    if (!fd) return detail::io_error_from("cannot open", errno);
    platform::file_status info;
    if (const int failed = platform::stat_fd(fd.get(), info); failed != 0) {
      return detail::io_error_from("cannot stat", -failed);
    }
    input_head head;
    head.kind = kind_of(info.type);
    if (!info.is_regular()) return head;
    head.size = info.size;
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(info.size, sizeof head.bytes));
    const std::ptrdiff_t got = platform::pread_full(fd.get(), head.bytes, wanted, 0);
    if (got < 0) return detail::read_error_from(got);
    head.length = static_cast<std::size_t>(got);
    return head;
  });
}

} // namespace npyguard
