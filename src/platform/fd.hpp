// Descriptors: closing, opening for reading, EINTR-safe reads and writes,
// unlinked temporary files, and the descriptor-backed sources the entry
// points hand to the pipeline. (The rest of platform: file_status.hpp,
// mapping.hpp, atomic_output.hpp.)
#ifndef NPYGUARD_SRC_PLATFORM_FD_HPP
#define NPYGUARD_SRC_PLATFORM_FD_HPP

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "npyguard/io.hpp"

namespace npyguard::platform {

// close(2) for a descriptor this program owns; nothing for a negative one.
void close_fd(int fd) noexcept;

// A descriptor closed on destruction; move-only.
class unique_fd {
public:
  unique_fd() noexcept = default;
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd& operator=(unique_fd&& other) noexcept {
    if (this != &other) reset(std::exchange(other.fd_, -1));
    return *this;
  }
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { reset(); }

  [[nodiscard]] int get() const noexcept { return fd_; }
  [[nodiscard]] explicit operator bool() const noexcept { return fd_ >= 0; }
  // Gives the descriptor up without closing it.
  [[nodiscard]] int release() noexcept { return std::exchange(fd_, -1); }
  void reset(int fd = -1) noexcept;

private:
  int fd_ = -1;
};

// open(path) for reading: O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK (a
// FIFO must not block the open; regular files ignore the flag). On failure
// the unique_fd is empty and errno says why.
[[nodiscard]] unique_fd open_for_reading(const char* path) noexcept;

// The same, `path` relative to the directory open as `directory` (openat;
// AT_FDCWD: as open_for_reading).
[[nodiscard]] unique_fd open_for_reading_at(int directory, const char* path) noexcept;

// pread until `size` bytes arrived or the file ended, retrying on EINTR and
// asking no more than ssize_t can report per call: how many bytes (fewer
// only at the end of the file), or minus an errno value.
[[nodiscard]] std::ptrdiff_t pread_full(int fd, void* buffer, std::size_t size, std::uint64_t offset) noexcept;

// write until all `size` bytes are written, retrying on EINTR and short
// writes: 0, or minus an errno value (-ENOSPC for a write that takes
// nothing).
[[nodiscard]] int write_full(int fd, const void* buffer, std::size_t size) noexcept;

// Where temporary files go: `directory` when it names one, else $TMPDIR
// when set and not empty, else /tmp. `from_environment` says it was $TMPDIR
// (for the message when it cannot be used). May throw std::bad_alloc.
struct temporary_directory {
  std::string path;
  bool from_environment = false;
};
[[nodiscard]] temporary_directory choose_temporary_directory(const char* directory);

// A new file in `directory` that no name reaches, open for reading and
// writing (O_TMPFILE where the file system has it, else mkostemp and an
// unlink at once): the system frees it when the descriptor closes, also
// when the process dies. On failure the unique_fd is empty and errno says
// why. May throw std::bad_alloc.
[[nodiscard]] unique_fd create_unlinked_file(const std::string& directory);

// A regular file of known size as a random_access_source (pread: the
// descriptor's offset is untouched). With `cancel`, a set flag makes every
// later read answer -ECANCELED.
class pread_source final : public random_access_source {
public:
  pread_source(int fd, std::uint64_t size, const std::atomic<bool>* cancel = nullptr) noexcept
      : fd_(fd), size_(size), cancel_(cancel) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (cancel_ != nullptr && cancel_->load(std::memory_order_relaxed)) return -ECANCELED;
    return pread_full(fd_, buffer, size, offset);
  }

private:
  int fd_;
  std::uint64_t size_;
  const std::atomic<bool>* cancel_;
};

} // namespace npyguard::platform

#endif
