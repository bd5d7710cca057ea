// The command's inputs: arguments expanded into files (directories walked
// with -r), each validated, with the bytes around an error kept for display.
#ifndef NPYGUARD_CLI_INPUTS_HPP
#define NPYGUARD_CLI_INPUTS_HPP

#include <dirent.h>
#include <sys/stat.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <utility>
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
// walking the arguments (an unreadable directory, a FIFO met in a walk).
struct input {
  std::string name;
  bool standard_input = false;
  // Set when the argument could not become a file: the io_error to report.
  std::string problem;
  // A regular file the walk listed: name[leaf:] is its name in the directory
  // name[:leaf], which had this identity when the walk listed it.
  // check_input opens the file relative to that directory, which it holds
  // open across the files of it it checks (one path walk per directory, not
  // per file), once it has made sure it is the same directory. 0: opened by
  // its name.
  std::size_t leaf = 0;
  std::uint64_t directory_device = 0;
  std::uint64_t directory_inode = 0;
};

struct walk_options {
  bool recursive = false;
  bool all_files = false; // with recursive: not only *.npy, *.npz and *.ra
};

// The arguments as inputs, one at a time, found as they are asked for: no
// list of the whole tree is built, so the first file can be checked while
// the rest of a tree is still unread. Arguments come in order; a directory
// (with -r) contributes its regular files depth first, each directory's
// entries in byte order of their names (strcmp, the C locale) with
// subdirectories in their sorted place. Symbolic links met inside a walk
// are not followed (so a walk cannot loop through them); FIFOs, sockets and
// devices met inside a walk with a name the walk takes are inputs with a
// problem, never opened; a directory reached twice (a bind mount, a repeated
// or nested argument) is walked the first time only. Links named on the
// command line are followed.
//
// Memory: the listings of the directories on the current path (a
// directory's names are read and sorted before its first entry is given),
// the listings read ahead (below), and one (device, inode) pair per
// directory walked.
//
// Listing ahead: with read_ahead(n), the directory the walk will enter next
// (found by d_type) is named by next() once the walk is a few hundred
// entries from it, and opened by its path, listed, sorted and closed by
// help(), which the threads that check the files call while next() runs on
// another thread (theirs may have descriptor tables of their own). When the
// walk reaches the directory it opens it relative to its parent as always,
// and takes the names listed ahead only if what it opened is the directory
// that was listed (else, or when none is ready, it lists it itself), so the
// order and the verdicts do not change, only which thread reads the names.
class input_walk {
public:
  input_walk(const std::vector<std::string>& arguments, const walk_options& options);
  ~input_walk();
  input_walk(const input_walk&) = delete;
  input_walk& operator=(const input_walk&) = delete;

  // Writes the next input over `out` and returns true; false once every
  // argument is done. `out`'s strings keep their capacity, so a caller that
  // reuses it allocates nothing per file once the names fit.
  bool next(input& out);

  // Lets help() list directories ahead of the walk, `listings` slots of
  // them (at most a quarter of the descriptors the walk may hold, as each
  // help() holds one while it lists); 0, the
  // default, lists each directory when the walk reaches it. Before the
  // first next().
  void read_ahead(std::size_t listings);

  // Lists one directory the walk will enter, if one waits; true when it
  // did. The one member safe to call while another thread is in next().
  bool help();

private:
  struct entry {
    std::size_t offset = 0; // of the name in `names`
    std::size_t size = 0;
    unsigned char type = 0; // d_type
    int ahead = -1;         // its listing ahead, a slot of `ahead_`; -1: none
  };
  // A directory being walked. Its listing stays open while its entries are
  // given, so that subdirectories are opened and stat'ed relative to its
  // descriptor rather than by a path that could change under the walk.
  struct directory {
    DIR* listing = nullptr;
    std::string path;
    std::string names; // NUL-terminated, back to back
    std::vector<entry> entries;
    std::size_t next = 0;
    std::size_t ahead_from = 0; // entries before this were considered for listing ahead
    std::string problem;        // a read error, given before the entries
    dev_t device = 0;           // the identity of what was listed
    ino_t inode = 0;
  };

  // A directory listed ahead: named by the walk (queued), opened by its
  // path, listed and closed again by help() or by the walk itself (running),
  // waiting for the walk (done). help() runs on threads whose descriptor
  // tables may be their own: nothing it opens outlives the call.
  struct listing_ahead {
    enum class state : unsigned char { free, queued, running, done };
    state status = state::free;
    std::string path;        // queued: the directory's path
    directory listed;        // done: its sorted names (no listing held open)
    int error = 0;           // done: the errno when it could not be read
    struct stat identity {}; // done: the fstat of what was listed
  };

  bool next_in_directory(input& out);
  bool enter(int parent, const char* name, bool follow, const std::string& path, const struct stat& info, input& out,
             int ahead = -1);
  int list(directory& into, int descriptor);
  static int read_names(directory& into, int descriptor);
  void leave();
  void plan_ahead();
  void queue_ahead(directory& place, entry& item);
  void run_ahead(std::size_t slot);
  listing_ahead* claim_ahead(int slot, const struct stat& info);
  int adopt_ahead(listing_ahead& job, directory& into, int descriptor);
  void drop_ahead(int slot);
  void unqueue(std::size_t slot);

  const std::vector<std::string>& arguments_;
  walk_options options_;
  std::size_t held_descriptors_; // directories deeper than this are opened by path
  std::size_t next_argument_ = 0;
  std::vector<directory> stack_; // [0, depth_) in use; the rest keep their buffers
  std::size_t depth_ = 0;
  std::set<std::pair<dev_t, ino_t>> visited_;
  // Listings ahead: the slots and the queued ones in walk order, guarded by
  // ahead_lock_ (a running slot's contents belong to the thread that runs
  // it, a done one's to the walk).
  std::vector<listing_ahead> ahead_;
  std::vector<std::size_t> queue_;
  std::atomic<std::size_t> queued_{0}; // queue_.size(), read without the lock
  std::mutex ahead_lock_;
  std::condition_variable ahead_done_;
};

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
