// npyguard: the one way in for a path or a descriptor whatever its format
// (SPEC.md section 9). It opens a path once, without blocking (O_RDONLY |
// O_NONBLOCK | O_NOCTTY | O_CLOEXEC), asks fstat about the descriptor it got
// (never the path again), chooses the format (the caller's, else the name's
// claim, else the first bytes), and validates that descriptor: a regular
// file by offset, anything else as a stream whose every read waits no later
// than options::timeout_ms after the call began. The command, the C API and
// the Python package read their inputs through it.
#ifndef NPYGUARD_INPUT_HPP
#define NPYGUARD_INPUT_HPP

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "npyguard/detect.hpp"
#include "npyguard/export.hpp"
#include "npyguard/npy/validate.hpp"
#include "npyguard/npz/validate.hpp"
#include "npyguard/options.hpp"
#include "npyguard/ra/validate.hpp"
#include "npyguard/result.hpp"

namespace npyguard {

// What fstat said the descriptor is; `unknown` when it was never asked (the
// path could not be opened).
enum class input_kind : std::uint8_t {
  unknown = 0,
  regular = 1,
  directory = 2,
  fifo = 3,
  character_device = 4,
  block_device = 5,
  socket = 6,
  other = 7,
};

struct input_request {
  // The format to judge the input as; empty: SPEC.md section 9 (a name
  // ending in ".npy", ".npz" or ".ra" claims that format whatever the bytes,
  // else the first bytes decide, as detect_format).
  std::optional<file_format> format;
  // The name whose claim is judged: validate_input uses its path when this
  // is empty; for validate_input_fd it is the only name there is.
  std::string_view name;
  // Bytes to keep either side of an error's offset, read from the same
  // descriptor (a stream: from its first 64 KiB, kept while it is read); 0:
  // none, and no read for them.
  std::size_t context = 0;
  // A .npz stream (a pipe, a FIFO) is spooled to an unlinked file in this
  // directory (npz::validate_stream_spooled; "" for $TMPDIR or /tmp) rather
  // than held in memory (npz::validate_stream). Null: in memory.
  const char* spool_directory = nullptr;
  // Set by another thread to stop the call: every read of the input, and a
  // wait for a stream's bytes within about 50 ms, then answers io_error
  // ("Operation canceled"). Null: options::cancel, which does the same.
  const std::atomic<bool>* cancel = nullptr;
};

// The verdict on one input. `format` says which of the three holds it; the
// other two hold an empty error and mean nothing.
struct input_result {
  file_format format = file_format::npy;
  input_kind kind = input_kind::unknown;
  result npy = error{};
  npz::archive_result npz = error{};
  ra::result ra = error{};
  // The bytes around the error's offset (input_request::context), the file
  // offset of context[0], and whether the input went on after them.
  std::string context;
  std::uint64_t context_start = 0;
  bool context_continues = false;

  // The error of the verdict that holds the answer, or null.
  [[nodiscard]] const error* failure() const noexcept {
    switch (format) {
      case file_format::npz: return npz.failure_if();
      case file_format::ra: return ra.failure_if();
      case file_format::npy: break;
    }
    return npy.failure_if();
  }
  [[nodiscard]] bool ok() const noexcept { return failure() == nullptr; }
};

// Opens `path` as above and validates it. A path that cannot be opened is
// io_error (kind unknown) in the format the request or the name claims; a
// directory is io_error (kind directory). The descriptor is closed before
// the call returns.
[[nodiscard]] NPYGUARD_API input_result validate_input(const char* path, const options& opts = {},
                                                       const input_request& request = {}) noexcept;

// The same with `path` relative to the directory open as `directory`
// (openat(2); AT_FDCWD: the working directory, as validate_input): a caller
// that walks a tree holds each directory open and has one name to look up
// per file, not the whole path, and a directory renamed or swapped under it
// cannot send it elsewhere. request.name, when empty, is `path`.
[[nodiscard]] NPYGUARD_API input_result validate_input_at(int directory, const char* path, const options& opts = {},
                                                          const input_request& request = {}) noexcept;

// The same for a descriptor the caller opened: neither closed nor moved when
// it is a regular file (read by offset); a stream's offset advances by what
// was read.
[[nodiscard]] NPYGUARD_API input_result validate_input_fd(int fd, const options& opts = {},
                                                          const input_request& request = {}) noexcept;

// The first bytes of `path` (up to detect_bytes), for a caller that must
// choose before it validates (convert's direction): opened as above and
// read only when it is a regular file; `kind` says what it is. Fails with
// io_error when it cannot be opened or read.
struct input_head {
  input_kind kind = input_kind::unknown;
  std::uint64_t size = 0; // regular files
  unsigned char bytes[detect_bytes] = {};
  std::size_t length = 0;
};
[[nodiscard]] NPYGUARD_API basic_result<input_head> read_input_head(const char* path) noexcept;

} // namespace npyguard

#endif
