// npyguard: the .npz entry points (SPEC-npz.md). None of them throws; each
// returns the archive's members or one error with code, archive offset and,
// when the error is tied to a member, its name and the offset inside it.
//
// What is read: the last min(size, 65,557) bytes (the end records), the
// central directory, every local header and data descriptor, and each
// member's first bytes (preamble, header, one more byte; inflated only that
// far for deflate members). With options::verify, every member in full,
// streamed through fixed buffers. Memory never grows with a size the archive
// declares: only with the limits, the directory's actual bytes and the
// longest member header.
//
// Thread safety: every function may run concurrently on distinct inputs.
#ifndef NPYGUARD_NPZ_VALIDATE_HPP
#define NPYGUARD_NPZ_VALIDATE_HPP

#include <cstddef>

#include "npyguard/export.hpp"
#include "npyguard/io.hpp"
#include "npyguard/npz/archive.hpp"
#include "npyguard/options.hpp"

namespace npyguard::npz {

// The whole archive in memory, read in place.
[[nodiscard]] NPYGUARD_API archive_result validate_buffer(const void* data, std::size_t size,
                                                          const options& opts = {}) noexcept;

// Any input of known size read by offset: a file, a memory range, an object
// in storage read by range requests.
[[nodiscard]] NPYGUARD_API archive_result validate_source(random_access_source& source,
                                                          const options& opts = {}) noexcept;

// A path. A regular file is read by offset (pread); anything else (a FIFO, a
// device) is read as a stream, below.
[[nodiscard]] NPYGUARD_API archive_result validate_file(const char* path, const options& opts = {}) noexcept;

// An open descriptor: by offset when it is a regular file (its own offset
// untouched), else as a stream. Neither closed nor rewound.
[[nodiscard]] NPYGUARD_API archive_result validate_fd(int fd, const options& opts = {}) noexcept;

// A source of unknown size (a pipe): a zip's directory is at its end, so the
// stream is read into memory, at most min(limits.max_stream_bytes,
// limits.max_total_bytes + 64 MiB) bytes; a longer stream is io_error, read
// no further. A caller that cannot afford that passes a file or a buffer.
[[nodiscard]] NPYGUARD_API archive_result validate_stream(byte_source& source, const options& opts = {}) noexcept;

// validate_stream with the stream written to an unlinked temporary file
// instead of memory, then read by offset as validate_source reads: memory
// stays that of reading a file (fixed buffers, the directory) whatever the
// archive's size; the disk holds the stream. The same limit bounds the
// bytes written, with the same io_error past it. The file is made in
// `temporary_directory` (nullptr or "": $TMPDIR when set, else /tmp) with
// no name (O_TMPFILE, or a name unlinked at once), so nothing is left
// behind even if the process dies; a directory that cannot hold it (missing,
// not writable, full) is io_error saying which. For a caller reading pipes
// of any size, as the command does.
[[nodiscard]] NPYGUARD_API archive_result validate_stream_spooled(byte_source& source, const options& opts = {},
                                                                  const char* temporary_directory = nullptr) noexcept;

} // namespace npyguard::npz

#endif
