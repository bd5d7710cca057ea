// The command's inputs: arguments expanded into files (directories walked
// with -r), each validated, with the bytes around an error kept for display.
#ifndef NPYGUARD_CLI_INPUTS_HPP
#define NPYGUARD_CLI_INPUTS_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "npyguard/npyguard.hpp"
#include "npyguard/npz/validate.hpp"

namespace npyguard_cli {

// The formats the command reads. `detect` goes by the name first for
// RawArray (SPEC-ra.md section 9: a file called .ra is never sent to another
// parser), then by the first bytes: "\x93NUMPY" is .npy, "PK\3\4" or
// "PK\5\6" (an empty archive) .npz, "rawarray" RawArray; other bytes are .npz
// when the name ends in ".npz" (an archive with bytes prepended then gets
// the archive's error), else .npy (bad_magic).
enum class file_format { detect, npy, npz, ra };

// True when `name` ends in `suffix` and has something before it (".npy"
// alone is not a .npy name).
[[nodiscard]] bool has_suffix(const std::string& name, const char* suffix);

// One file to check: a path, standard input ("-"), or a problem found while
// expanding the arguments (an unreadable directory, a FIFO met in a walk).
struct input {
  std::string name;
  bool standard_input = false;
  // Set when the argument could not become a file: the io_error to report.
  std::string problem;
};

struct walk_options {
  bool recursive = false;
  bool all_files = false; // with recursive: not only *.npy, *.npz and *.ra
};

// Arguments in order; directories (with -r) contribute their regular files
// in sorted order, depth first. Symbolic links met inside a walk are not
// followed (so a walk cannot loop through them); FIFOs, sockets and devices
// met inside a walk with a name the walk takes are inputs with a problem,
// never opened; directories reached twice (bind mounts) are skipped. Links
// named on the command line are followed.
[[nodiscard]] std::vector<input> expand(const std::vector<std::string>& arguments, const walk_options& walk);

// A verdict and, for an error with an offset, the bytes of the file around
// it (excerpt_start is the file offset of excerpt[0]). `format` says which
// verdict holds the answer: `verdict` (.npy), `archive` (.npz) or `rawarray`.
struct checked {
  file_format format = file_format::npy;
  npyguard::result verdict = npyguard::error{};
  npyguard::npz::archive_result archive = npyguard::error{};
  npyguard::ra::result rawarray = npyguard::error{};
  [[nodiscard]] const npyguard::error* failure() const noexcept {
    switch (format) {
      case file_format::npz: return archive.failure_if();
      case file_format::ra: return rawarray.failure_if();
      case file_format::detect:
      case file_format::npy: break;
    }
    return verdict.failure_if();
  }
  [[nodiscard]] bool ok() const noexcept { return failure() == nullptr; }
  std::string excerpt;
  std::uint64_t excerpt_start = 0;
  bool excerpt_continues = false; // the input goes on after the excerpt
};

// Validates one input; for errors keeps up to `context` bytes either side of
// the offset (standard input: from the first 64 KiB it read); 0: no excerpt,
// and no second read of the file.
[[nodiscard]] checked check_input(const input& item, const npyguard::options& opts, std::size_t context,
                                  file_format format = file_format::detect);

} // namespace npyguard_cli

#endif
