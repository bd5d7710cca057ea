#include "platform/fd.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <vector>

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

unique_fd open_for_reading_at(int directory, const char* path) noexcept {
  return unique_fd(::openat(directory, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
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

int write_full(int fd, const void* buffer, std::size_t size) noexcept {
  const auto* bytes = static_cast<const unsigned char*>(buffer);
  std::size_t put = 0;
  while (put < size) {
    const std::size_t want = std::min(size - put, static_cast<std::size_t>(std::numeric_limits<ssize_t>::max()));
    const ssize_t n = ::write(fd, bytes + put, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    if (n == 0) return -ENOSPC;
    put += static_cast<std::size_t>(n);
  }
  return 0;
}

temporary_directory choose_temporary_directory(const char* directory) {
  if (directory != nullptr && *directory != '\0') return {directory, false};
  const char* from_environment = std::getenv("TMPDIR");
  if (from_environment != nullptr && *from_environment != '\0') return {from_environment, true};
  return {"/tmp", false};
}

unique_fd create_unlinked_file(const std::string& directory) {
#ifdef O_TMPFILE
  // No name ever exists; file systems without O_TMPFILE (and kernels before
  // 3.11) refuse it, and mkostemp below says the same of a directory that
  // cannot be used.
  if (unique_fd file(::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)); file) return file;
#endif
  std::string pattern = directory;
  if (pattern.empty() || pattern.back() != '/') pattern += '/';
  pattern += "npyguard-spool-XXXXXX";
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  unique_fd file(::mkostemp(name.data(), O_CLOEXEC));
  if (!file) return file;
  if (::unlink(name.data()) != 0) {
    const int failed = errno;
    file.reset();
    errno = failed;
  }
  return file;
}

} // namespace platform

// The public descriptor reader (npyguard/io.hpp).
fd_byte_source::fd_byte_source(int fd, std::uint32_t timeout_ms) noexcept : fd_byte_source(fd, timeout_ms, nullptr) {}

fd_byte_source::fd_byte_source(int fd, std::uint32_t timeout_ms, const std::atomic<bool>* cancel) noexcept
    : fd_(fd),
      timed_(timeout_ms != 0),
      deadline_(std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms)),
      cancel_(cancel) {
  const int flags = ::fcntl(fd, F_GETFL);
  poll_first_ = timed_ || cancel != nullptr || (flags >= 0 && (flags & O_NONBLOCK) != 0);
}

std::ptrdiff_t fd_byte_source::read(void* buffer, std::size_t size) noexcept {
  for (;;) {
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) return -ECANCELED;
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
  constexpr int cancel_slice_ms = 50;
  for (;;) {
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) {
      errno = ECANCELED;
      return false;
    }
    int wait_ms = cancel_ != nullptr ? cancel_slice_ms : -1;
    if (timed_) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        errno = ETIMEDOUT;
        return false;
      }
      const auto limit = cancel_ != nullptr ? cancel_slice_ms : 1 << 30;
      wait_ms = static_cast<int>(std::min<std::chrono::milliseconds::rep>(left.count(), limit));
    }
    pollfd entry{fd_, POLLIN, 0};
    const int ready = ::poll(&entry, 1, wait_ms);
    if (ready > 0) return true;
    if (ready < 0 && errno != EINTR) return false;
  }
}

} // namespace npyguard
