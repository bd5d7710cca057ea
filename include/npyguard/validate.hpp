// npyguard: the entry points. None of them throws; each returns a result.
#ifndef NPYGUARD_VALIDATE_HPP
#define NPYGUARD_VALIDATE_HPP

#include "npyguard/export.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard {

// (a) A memory buffer holding the whole file. The data bytes are never read;
// only the buffer's size is compared with the header's claim.
[[nodiscard]] NPYGUARD_API result validate_buffer(const void* data, std::size_t size,
                                     const options& opts = {}) noexcept;

// (b) A file path. Regular files: reads the preamble and the header only
// (pread), takes the size from fstat, never maps or reads the data. Anything
// else (a FIFO, a character device) is opened without blocking and goes
// through validate_fd: a FIFO without a writer is waited on up to
// options::timeout_ms (no limit by default).
[[nodiscard]] NPYGUARD_API result validate_file(const char* path, const options& opts = {}) noexcept;

// (c) A source of unknown total size, such as a pipe.
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
// -ETIMEDOUT. The descriptor is neither closed nor rewound.
class NPYGUARD_API fd_byte_source final : public byte_source {
public:
  explicit fd_byte_source(int fd, std::uint32_t timeout_ms = 0) noexcept;
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override;

private:
  bool wait_readable() noexcept;

  int fd_;
  bool timed_;
  bool poll_first_ = false;
  std::chrono::steady_clock::time_point deadline_;
};

// Reads the header in bounded chunks (memory grows only with bytes that
// actually arrived), then counts data bytes without storing them, and only
// until the verdict is certain (SPEC.md section 5): up to the first byte
// past the data (trailing_data, whose message then cannot count the rest),
// up to the end of the data with allow_trailing_data, nothing after the
// header of a pickle. A hostile sender cannot keep it reading.
[[nodiscard]] NPYGUARD_API result validate_stream(byte_source& source, const options& opts = {}) noexcept;

// validate_stream over a file descriptor (read(2), retrying on EINTR). The
// descriptor is neither closed nor rewound. A non-blocking descriptor, or
// any with options::timeout_ms, is polled before each read, up to the
// timeout (then io_error).
[[nodiscard]] NPYGUARD_API result validate_fd(int fd, const options& opts = {}) noexcept;

// The header text alone (the HEADER_LEN bytes after the preamble) of a file
// of the given major version (1, 2 or 3): grammar, validation and size math,
// without the data-size verdict. Offsets are file offsets, as if the text
// followed a standard preamble (10 bytes for 1.0, 12 otherwise).
[[nodiscard]] NPYGUARD_API result validate_header_text(const void* text, std::size_t size,
                                          unsigned major_version,
                                          const options& opts = {}) noexcept;

} // namespace npyguard

#endif
