// npyguard::file_source (npyguard/io.hpp): a path opened as the entry points
// open one, for callers that read a regular file by offset themselves.
#include <cerrno>
#include <new>

#include "core/io_error.hpp"
#include "npyguard/io.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard {
namespace {

const char* not_regular(platform::file_type type) noexcept {
  switch (type) {
    case platform::file_type::fifo: return "is a FIFO, not a regular file";
    case platform::file_type::socket: return "is a socket, not a regular file";
    case platform::file_type::character_device: return "is a character device, not a regular file";
    case platform::file_type::block_device: return "is a block device, not a regular file";
    case platform::file_type::directory: return "is a directory";
    default: return "is not a regular file";
  }
}

} // namespace

file_source::file_source(const char* path) noexcept {
  try {
    platform::unique_fd fd = platform::open_for_reading(path);
    if (!fd) {
      failure_ = detail::io_error_from("cannot open", errno);
      return;
    }
    platform::file_status info;
    if (const int failed = platform::stat_fd(fd.get(), info); failed != 0) {
      failure_ = detail::io_error_from("cannot stat", -failed);
      return;
    }
    if (!info.is_regular()) {
      failure_ = error{error_code::io_error, std::nullopt, not_regular(info.type)};
      return;
    }
    size_ = info.size;
    fd_ = fd.release();
  } catch (const std::bad_alloc&) { // a message could not be made
    failure_.emplace();
    failure_->code = error_code::out_of_memory;
  }
}

file_source::~file_source() { platform::close_fd(fd_); }

std::ptrdiff_t file_source::read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept {
  if (fd_ < 0) return -EBADF;
  return platform::pread_full(fd_, buffer, size, offset);
}

} // namespace npyguard
