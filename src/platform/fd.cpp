#include "platform/fd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <limits>

namespace npyguard {
namespace platform {

void close_fd(int fd) noexcept {
  if (fd >= 0) ::close(fd);
}

void unique_fd::reset(int fd) noexcept {
  close_fd(fd_);
  fd_ = fd;
}

unique_fd open_for_reading(const char* path) noexcept {
  return unique_fd(::open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
}

std::ptrdiff_t pread_full(int fd, void* buffer, std::size_t size, std::uint64_t offset) noexcept {
  auto* bytes = static_cast<unsigned char*>(buffer);
  std::size_t got = 0;
  while (got < size) {
    // Linux moves at most 0x7ffff000 bytes per call; ask for no more than
    // ssize_t can report.
    const std::size_t want = std::min(size - got, static_cast<std::size_t>(std::numeric_limits<ssize_t>::max()));
    const ssize_t n = ::pread(fd, bytes + got, want, static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return static_cast<std::ptrdiff_t>(got);
}

} // namespace platform

// The public descriptor reader (npyguard/io.hpp).
fd_byte_source::fd_byte_source(int fd, std::uint32_t timeout_ms) noexcept
    : fd_(fd),
      timed_(timeout_ms != 0),
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

} // namespace npyguard
