// npyguard: where validation reads its bytes from. Sources report read
// errors in their answer (minus an errno value), never through errno.
#ifndef NPYGUARD_IO_HPP
#define NPYGUARD_IO_HPP

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "npyguard/error.hpp"
#include "npyguard/export.hpp"

namespace npyguard {

// A source of unknown total size, such as a pipe.
class NPYGUARD_API byte_source {
public:
  virtual ~byte_source() = default;
  // Reads up to `size` bytes into `buffer`; returns how many (0 at the end of
  // the input), or on a read error minus an errno value that says why
  // (-EIO when nothing more specific applies; -ETIMEDOUT for a timeout).
  // The library never looks at errno itself after a read: the answer is the
  // whole report, so a source need not be a descriptor.
  virtual std::ptrdiff_t read(void* buffer, std::size_t size) noexcept = 0;
};

// read(2) on a descriptor as a byte_source, as validate_fd reads: retries
// on EINTR; a non-blocking descriptor, and any with a timeout, is polled
// before each read (a FIFO opened without blocking reads as ended until a
// writer comes, so the waiting happens in poll). `timeout_ms` (0: no limit)
// bounds all reads together from construction; past it a read answers
// -ETIMEDOUT. With `cancel`, a set flag makes the next read, or a wait in
// progress within about 50 ms, answer -ECANCELED (the waiting is then done
// in slices of 50 ms; Python's Ctrl-C sets such a flag). The descriptor is
// neither closed nor rewound.
class NPYGUARD_API fd_byte_source final : public byte_source {
public:
  explicit fd_byte_source(int fd, std::uint32_t timeout_ms = 0) noexcept;
  fd_byte_source(int fd, std::uint32_t timeout_ms, const std::atomic<bool>* cancel) noexcept;
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override;

private:
  bool wait_readable() noexcept;

  int fd_;
  bool timed_;
  bool poll_first_ = false;
  std::chrono::steady_clock::time_point deadline_;
  const std::atomic<bool>* cancel_ = nullptr;
};

// An input of known size that can be read at any offset: a file, a memory
// range, an object in storage read by range requests. It must not change
// size while it is validated.
class NPYGUARD_API random_access_source {
public:
  virtual ~random_access_source() = default;
  // The input's size in bytes.
  [[nodiscard]] virtual std::uint64_t size() const noexcept = 0;
  // Reads up to `size` bytes at `offset` into `buffer`: how many (fewer only
  // where the input ends), or on a read error minus an errno value.
  virtual std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept = 0;
};

// A regular file opened by path and read by offset (pread), as validate_file
// reads one: for callers that wrap a source (to count its reads, say) and
// read local files too. Opened read-only without blocking (a FIFO is never
// waited for) and closed on destruction. Anything but a regular file is
// refused, never read.
class NPYGUARD_API file_source final : public random_access_source {
public:
  explicit file_source(const char* path) noexcept;
  ~file_source() override;
  file_source(const file_source&) = delete;
  file_source& operator=(const file_source&) = delete;

  // Why the file cannot be read, as io_error: "cannot open: ...", "cannot
  // stat: ...", "is a directory", "is a FIFO (a socket, a character device,
  // a block device), not a regular file". Empty once the file is open;
  // otherwise size() is 0 and read_at answers -EBADF.
  [[nodiscard]] const std::optional<error>& failure() const noexcept { return failure_; }

  // The size fstat gave when the file was opened.
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override;

private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::optional<error> failure_;
};

} // namespace npyguard

#endif
