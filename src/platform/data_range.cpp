// The data range of a view: one descriptor, mapped or read, checked again.
#include "platform/data_range.hpp"

#include <cerrno>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "platform/mapping.hpp"

namespace npyguard::detail {
namespace {

// data() of an empty range: non-null, aligned for every scalar, never read.
alignas(alignof(std::max_align_t)) constexpr unsigned char no_bytes[1] = {0};

std::string file_kind(platform::file_type type) {
  switch (type) {
    case platform::file_type::directory: return "a directory";
    case platform::file_type::fifo: return "a FIFO";
    case platform::file_type::character_device: return "a character device";
    case platform::file_type::block_device: return "a block device";
    case platform::file_type::socket: return "a socket";
    case platform::file_type::regular:
    case platform::file_type::symbolic_link:
    case platform::file_type::other: break;
  }
  return "not a regular file";
}

} // namespace

std::optional<error> data_range_access::open_regular(const char* path, platform::unique_fd& fd,
                                                     platform::file_status& info) {
  fd = platform::open_for_reading(path);
  if (!fd) return io_error_from("cannot open", errno);
  if (const int failed = platform::stat_fd(fd.get(), info); failed != 0) {
    fd.reset();
    return io_error_from("cannot stat", -failed);
  }
  if (!info.is_regular()) {
    fd.reset();
    return error{error_code::io_error, std::nullopt,
                 "the data view needs a regular file, and this is " + file_kind(info.type)};
  }
  return std::nullopt;
}

std::optional<error> data_range_access::read_range(int fd, const validated_range& range, unsigned char* buffer) {
  const auto size = static_cast<std::size_t>(range.length);
  const std::ptrdiff_t got = platform::pread_full(fd, buffer, size, range.offset);
  if (got < 0) return io_error_from("cannot read the data", static_cast<int>(-got));
  if (static_cast<std::size_t>(got) < size) {
    return error{error_code::truncated_data, range.offset + static_cast<std::uint64_t>(got),
                 "the file shrank after validation: the header implies " + std::to_string(range.length) +
                     " data bytes, but only " + std::to_string(got) + " could be read"};
  }
  return std::nullopt;
}

std::optional<error> data_range_access::check_unchanged(int fd, const validated_range& range,
                                                        const platform::file_status& validated) {
  platform::file_status now;
  if (const int failed = platform::stat_fd(fd, now); failed != 0) return io_error_from("cannot stat", -failed);
  const std::uint64_t data_end = range.offset + range.length; // checked by validation
  if (now.size < data_end) {
    return error{error_code::truncated_data, now.size,
                 "the file shrank after validation to " + std::to_string(now.size) + " bytes: the header implies " +
                     std::to_string(range.length) + " data bytes (input of " + std::to_string(data_end) + " bytes)"};
  }
  if (now.size > data_end && !range.bytes_may_follow) {
    return error{error_code::trailing_data, data_end,
                 "the file grew after validation: " + std::to_string(now.size - data_end) + " bytes follow the " +
                     std::to_string(range.length) + " bytes of array data"};
  }
  if (now.size != validated.size) {
    return error{error_code::io_error, std::nullopt,
                 "the file changed after validation: its size went from " + std::to_string(validated.size) + " to " +
                     std::to_string(now.size) + " bytes"};
  }
  if (!now.same_file(validated)) {
    return error{error_code::io_error, std::nullopt, "the file changed after validation: another file"};
  }
  if (now.mtime_seconds != validated.mtime_seconds || now.mtime_nanoseconds != validated.mtime_nanoseconds) {
    return error{error_code::io_error, std::nullopt,
                 "the file changed after validation: its modification time is not the one validated"};
  }
  return std::nullopt;
}

std::optional<error> data_range_access::destination_too_small(std::uint64_t length, std::size_t destination_size) {
  if (destination_size >= length) return std::nullopt;
  return error{error_code::buffer_too_small, std::nullopt,
               "the array data is " + std::to_string(length) + " bytes, but the destination holds only " +
                   std::to_string(destination_size)};
}

std::optional<error> data_range_access::attach(int fd, const platform::file_status& info, const validated_range& range,
                                               data_access access, data_range& out) {
  data_range local;
  npyguard::data_range::state& state = local.state_;
  state.fd = fd; // from here on the destructor of `local` closes it
  state.offset = range.offset;
  state.access = access;
  state.bytes_may_follow = range.bytes_may_follow;
  state.file_size = info.size;
  state.device = info.device;
  state.inode = info.inode;
  state.mtime_seconds = info.mtime_seconds;
  state.mtime_nanoseconds = info.mtime_nanoseconds;

  if (range.length > std::numeric_limits<std::size_t>::max() / 2) {
    return error{error_code::data_too_large, std::nullopt,
                 "the array data (" + std::to_string(range.length) + " bytes) does not fit in this address space"};
  }
  const auto length = static_cast<std::size_t>(range.length);
  if (length == 0) {
    state.data = no_bytes;
  } else if (access == data_access::map) {
    platform::mapping mapped;
    if (const int failed = platform::map_readonly(fd, range.offset, length, mapped); failed != 0) {
      return io_error_from("cannot map the data", -failed);
    }
    // From here on the destructor of `local` unmaps it.
    state.data = mapped.data();
    state.mapping_length = mapped.length();
    state.mapping = mapped.release();
  } else {
    // operator new[] memory is aligned for every scalar type; it is filled
    // completely or handed to nobody.
    local.buffer_.reset(new (std::nothrow) unsigned char[length]);
    if (!local.buffer_) {
      return error{error_code::out_of_memory, std::nullopt,
                   "out of memory for " + std::to_string(length) + " data bytes"};
    }
    if (auto failure = read_range(fd, range, local.buffer_.get())) return failure;
    state.data = local.buffer_.get();
  }
  state.size = range.length;
  // Mapping a range past the end of the file succeeds; touching it would
  // raise SIGBUS. The fstat after the mapping catches a file that shrank
  // (or changed) since validation.
  if (auto failure = check_unchanged(fd, range, info)) return failure;
  out = std::move(local);
  return std::nullopt;
}

void data_range_access::borrow(const unsigned char* data, std::uint64_t length, data_range& out) noexcept {
  data_range local;
  local.state_.access = data_access::borrowed;
  local.state_.data = length == 0 ? no_bytes : data;
  local.state_.size = length;
  out = std::move(local);
}

} // namespace npyguard::detail

namespace npyguard {

using detail::data_range_access;
using detail::validated_range;

data_range::~data_range() { reset(); }

data_range::data_range(data_range&& other) noexcept
    : buffer_(std::move(other.buffer_)), state_(std::exchange(other.state_, state{})) {}

data_range& data_range::operator=(data_range&& other) noexcept {
  if (this == &other) return *this;
  reset();
  buffer_ = std::move(other.buffer_);
  state_ = std::exchange(other.state_, state{});
  return *this;
}

void data_range::reset() noexcept {
  platform::unmap(state_.mapping, state_.mapping_length);
  platform::close_fd(state_.fd);
  buffer_.reset();
  state_ = state{};
}

const void* data_range::typed(std::size_t alignment, bool boolean) const noexcept {
  if (state_.data == nullptr) return nullptr;
  if (alignment == 0 || reinterpret_cast<std::uintptr_t>(state_.data) % alignment != 0) return nullptr;
  if (boolean) {
    const auto count = static_cast<std::size_t>(state_.size);
    for (std::size_t i = 0; i < count; ++i) {
      if (state_.data[i] > 1) return nullptr;
    }
  }
  return state_.data;
}

std::optional<error> data_range::verify_unchanged() const noexcept {
  return detail::guarded([&]() -> std::optional<error> {
    if (state_.access == data_access::borrowed && state_.data != nullptr) return std::nullopt; // the caller's memory
    if (state_.fd < 0) return error{error_code::io_error, std::nullopt, "no file is open"};
    platform::file_status validated;
    validated.size = state_.file_size;
    validated.device = state_.device;
    validated.inode = state_.inode;
    validated.mtime_seconds = state_.mtime_seconds;
    validated.mtime_nanoseconds = state_.mtime_nanoseconds;
    return data_range_access::check_unchanged(
        state_.fd, validated_range{state_.offset, state_.size, state_.bytes_may_follow}, validated);
  });
}

} // namespace npyguard
