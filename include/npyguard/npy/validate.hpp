// npyguard: the entry points. None of them throws; each returns a result.
#ifndef NPYGUARD_NPY_VALIDATE_HPP
#define NPYGUARD_NPY_VALIDATE_HPP

#include "npyguard/export.hpp"
#include "npyguard/io.hpp"

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

// (b') Any input of known size read by offset (npyguard/io.hpp): what
// validate_file does for a regular file, for a memory range, an object in
// storage read by range requests, or an archive member. Reads the preamble
// and header only (one read of up to 4 KiB, a second for a longer header);
// never a data byte. The size decides the data verdict.
[[nodiscard]] NPYGUARD_API result validate_source(random_access_source& source, const options& opts = {}) noexcept;

// (c) A source of unknown total size, such as a pipe (npyguard/io.hpp).
// Reads the header in bounded chunks (memory grows only with bytes that
// actually arrived), then counts data bytes without storing them, and only
// until the verdict is certain (SPEC.md section 5): up to the first byte
// past the data (trailing_data, whose message then cannot count the rest),
// up to the end of the data with allow_trailing_data, nothing after the
// header of a pickle. A hostile sender cannot keep it reading.
[[nodiscard]] NPYGUARD_API result validate_stream(byte_source& source, const options& opts = {}) noexcept;

// A file descriptor, neither closed nor moved. A regular file (fstat says
// so) is read as validate_file reads one: by offset (pread), the preamble
// and header only, and the descriptor's offset stays where it was. Anything
// else is validate_stream over read(2), retrying on EINTR, which advances the
// offset by what it read; a non-blocking descriptor, or any with
// options::timeout_ms, is polled before each read, up to the timeout (then
// io_error).
[[nodiscard]] NPYGUARD_API result validate_fd(int fd, const options& opts = {}) noexcept;

// The header text alone (the HEADER_LEN bytes after the preamble) of a file
// of the given major version (1, 2 or 3): grammar, validation and size math,
// without the data-size verdict. Offsets are file offsets, as if the text
// followed a standard preamble (10 bytes for 1.0, 12 otherwise).
[[nodiscard]] NPYGUARD_API result validate_header_text(const void* text, std::size_t size, unsigned major_version,
                                                       const options& opts = {}) noexcept;

} // namespace npyguard

#endif
