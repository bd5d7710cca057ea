// npyguard: the RawArray entry points (SPEC-ra.md). None of them throws;
// each returns the model or one error with code and file offset.
//
// What is read: the header alone, 48 + 8 * ndims bytes (at most
// 48 + 8 * limits.max_ndim), never a data or metadata byte, except from a
// stream, where the data is counted (read and dropped through a fixed
// buffer) up to its end, plus one byte with options::ra_reject_metadata.
// Nothing is allocated from a header field: the dims only once ndims has
// passed limits.max_ndim.
//
// Thread safety: every function may run concurrently on distinct inputs.
#ifndef NPYGUARD_RA_VALIDATE_HPP
#define NPYGUARD_RA_VALIDATE_HPP

#include <cstddef>

#include "npyguard/export.hpp"
#include "npyguard/io.hpp"
#include "npyguard/options.hpp"
#include "npyguard/ra/model.hpp"

namespace npyguard::ra {

// The whole file in memory.
[[nodiscard]] NPYGUARD_API result validate_buffer(const void* data, std::size_t size,
                                                  const options& opts = {}) noexcept;

// Any input of known size read by offset: a file, a memory range, an object
// in storage read by range requests (one read of up to 48 bytes, one of the
// dims).
[[nodiscard]] NPYGUARD_API result validate_source(random_access_source& source, const options& opts = {}) noexcept;

// A path. A regular file is read by offset (pread) and its size taken from
// fstat; anything else (a FIFO, a device) is read as a stream.
[[nodiscard]] NPYGUARD_API result validate_file(const char* path, const options& opts = {}) noexcept;

// An open descriptor: by offset when it is a regular file (its own offset
// untouched), else as a stream. Neither closed nor rewound.
[[nodiscard]] NPYGUARD_API result validate_fd(int fd, const options& opts = {}) noexcept;

// A source of unknown size (a pipe): the header in memory, then the data
// counted, not stored, up to its end (SPEC-ra.md section 5); the metadata
// fields of the model are then null.
[[nodiscard]] NPYGUARD_API result validate_stream(byte_source& source, const options& opts = {}) noexcept;

} // namespace npyguard::ra

#endif
