#include "inputs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

namespace npyguard_cli {
namespace {

// True when `name` ends in `suffix` and has something before it.
bool ends_with(std::string_view name, std::string_view suffix) {
  return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The names a walk takes without --all-files.
bool has_array_suffix(std::string_view name) {
  return ends_with(name, ".npy") || ends_with(name, ".npz") || ends_with(name, ".ra");
}

// What a special file is, for its io_error.
const char* special_kind(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return nullptr;
}

const char* special_kind(unsigned char d_type) {
  switch (d_type) {
    case DT_FIFO: return "a FIFO";
    case DT_SOCK: return "a socket";
    case DT_CHR: return "a character device";
    case DT_BLK: return "a block device";
    default: return nullptr;
  }
}

// The words for a special file a walk met, never opened: opening a FIFO
// blocks until a writer comes, reading a device may never end or have
// effects (a tape rewinds), and nobody named it. It is reported, so that a
// .npy name that is not a file does not pass unnoticed.
void set_special(input& out, const char* kind) {
  out.problem.assign("is ").append(kind).append(
      "; not opened (under -r, FIFOs, sockets and devices are reported, never read)");
}

void set_errno_problem(std::string& problem, const char* what, int error) {
  problem.assign(what).append(std::strerror(error));
}

// A name: `directory` joined with `name`, without doubling a '/'.
void set_joined(std::string& out, const std::string& directory, const char* name, std::size_t size) {
  out.assign(directory);
  if (!out.empty() && out.back() != '/') out += '/';
  out.append(name, size);
}

// Above this depth a directory's descriptor stays open while its entries
// are walked; deeper ones are closed once listed and their subdirectories
// opened by path, so that a deep tree cannot run out of descriptors: at most
// 64, and a quarter of the process's limit (the checks need theirs).
std::size_t descriptors_to_hold() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  return static_cast<std::size_t>(std::min<rlim_t>(64, limit.rlim_cur / 4));
}

} // namespace

input_walk::input_walk(const std::vector<std::string>& arguments, const walk_options& options)
    : arguments_(arguments), options_(options), held_descriptors_(descriptors_to_hold()) {}

input_walk::~input_walk() {
  while (depth_ > 0) leave();
}

bool input_walk::next(input& out) {
  out.standard_input = false;
  out.problem.clear();
  while (depth_ > 0) {
    if (next_in_directory(out)) return true;
  }
  while (next_argument_ < arguments_.size()) {
    const std::string& argument = arguments_[next_argument_++];
    out.name.assign(argument);
    if (argument == "-") {
      out.standard_input = true;
      return true;
    }
    // Without -r nothing is stat'ed here: validation's own fstat finds
    // directories (check_input words that error). Links are followed.
    struct stat info {};
    if (!options_.recursive || ::stat(argument.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return true; // missing files are reported by validation
    }
    if (enter(AT_FDCWD, argument.c_str(), true, argument, info, out)) return true;
    while (depth_ > 0) {
      if (next_in_directory(out)) return true;
    }
  }
  return false;
}

// Gives the next input of the innermost directory, entering subdirectories
// on the way; false when it has nothing to give now (it may have left the
// directory or entered a subdirectory: the caller asks again).
bool input_walk::next_in_directory(input& out) {
  directory& current = stack_[depth_ - 1];
  if (!current.problem.empty()) {
    out.name.assign(current.path);
    out.problem.swap(current.problem);
    current.problem.clear();
    return true;
  }
  while (current.next < current.entries.size()) {
    const entry& item = current.entries[current.next++];
    const char* name = current.names.data() + item.offset;
    const bool wanted = options_.all_files || has_array_suffix(std::string_view(name, item.size));
    // d_type spares a stat for regular files, links and special files (most
    // file systems fill it in); DT_UNKNOWN and directories are stat'ed.
    if (item.type == DT_REG) {
      if (!wanted) continue;
      set_joined(out.name, current.path, name, item.size);
      return true;
    }
    if (const char* kind = special_kind(item.type)) {
      if (!wanted) continue;
      set_joined(out.name, current.path, name, item.size);
      set_special(out, kind);
      return true;
    }
    if (item.type != DT_DIR && item.type != DT_UNKNOWN) continue; // symbolic links
    set_joined(out.name, current.path, name, item.size);
    // Relative to the directory's descriptor; by path below held_descriptors_.
    const int parent = current.listing != nullptr ? ::dirfd(current.listing) : AT_FDCWD;
    const char* relative = current.listing != nullptr ? name : out.name.c_str();
    struct stat info {};
    if (::fstatat(parent, relative, &info, AT_SYMLINK_NOFOLLOW) != 0) {
      set_errno_problem(out.problem, "cannot stat: ", errno);
      return true;
    }
    if (S_ISDIR(info.st_mode)) {
      const std::string child = out.name; // out.name is the problem's name if entering fails
      return enter(parent, current.listing != nullptr ? name : child.c_str(), false, child, info, out);
    }
    if (S_ISREG(info.st_mode) && wanted) return true;
    if (const char* kind = special_kind(info.st_mode); kind != nullptr && wanted) {
      set_special(out, kind);
      return true;
    }
    // Symbolic links inside a walk are skipped.
  }
  leave();
  return false;
}

// Opens and lists a directory, unless it was walked before. True when that
// failed: `out` is then the directory with its problem.
bool input_walk::enter(int parent, const char* name, bool follow, const std::string& path, const struct stat& info,
                       input& out) {
  if (!visited_.insert({info.st_dev, info.st_ino}).second) return false; // reached twice
  // Inside a walk a directory swapped for a link after the stat is refused
  // rather than followed; arguments are followed, as their stat did.
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
  const int descriptor = ::openat(parent, name, flags);
  const int open_error = errno;
  // `name` may point into a listing on the stack: growing the stack may move
  // it, so the open comes first.
  if (depth_ == stack_.size()) stack_.emplace_back();
  directory& into = stack_[depth_];
  const int error = descriptor < 0 ? open_error : list(into, descriptor);
  if (error != 0) {
    out.name.assign(path);
    set_errno_problem(out.problem, "cannot read the directory: ", error);
    return true;
  }
  into.path.assign(path);
  ++depth_;
  return false;
}

// Reads every name of the directory (but "." and "..") and sorts them; takes
// the descriptor. Returns 0, or the errno when it cannot be read at all; a
// read error part way is the directory's problem, given before the names it
// did read.
int input_walk::list(directory& into, int descriptor) {
  into.listing = ::fdopendir(descriptor);
  if (into.listing == nullptr) {
    const int error = errno;
    ::close(descriptor);
    return error;
  }
  into.names.clear();
  into.entries.clear();
  into.next = 0;
  into.problem.clear();
  for (;;) {
    errno = 0; // readdir's only way to tell the end from an error
    const dirent* found = ::readdir(into.listing);
    if (found == nullptr) break;
    const char* name = found->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    const std::size_t size = std::strlen(name);
    into.entries.push_back({into.names.size(), size, found->d_type});
    into.names.append(name, size + 1);
  }
  if (errno != 0) set_errno_problem(into.problem, "cannot read the directory: ", errno);
  const char* names = into.names.data();
  std::sort(into.entries.begin(), into.entries.end(), [names](const entry& a, const entry& b) {
    return std::string_view(names + a.offset, a.size) < std::string_view(names + b.offset, b.size);
  });
  if (depth_ >= held_descriptors_) {
    ::closedir(into.listing);
    into.listing = nullptr;
  }
  return 0;
}

void input_walk::leave() {
  directory& done = stack_[--depth_];
  if (done.listing != nullptr) ::closedir(done.listing);
  done.listing = nullptr;
}

namespace {

// The command's format and the library's.
npyguard::file_format library_format(file_format format) {
  switch (format) {
    case file_format::npz: return npyguard::file_format::npz;
    case file_format::ra: return npyguard::file_format::ra;
    case file_format::detect:
    case file_format::npy: break;
  }
  return npyguard::file_format::npy;
}

file_format cli_format(npyguard::file_format format, file_format forced) {
  if (forced != file_format::detect) return forced;
  switch (format) {
    case npyguard::file_format::npz: return file_format::npz;
    case npyguard::file_format::ra: return file_format::ra;
    case npyguard::file_format::npy: break;
  }
  return file_format::npy;
}

void set_io_error(checked& out, std::string message) {
  const npyguard::error failure{npyguard::error_code::io_error, std::nullopt, std::move(message)};
  if (out.format == file_format::npz) {
    out.archive = failure;
  } else if (out.format == file_format::ra) {
    out.rawarray = failure;
  } else {
    out.verdict = failure;
  }
}

} // namespace

bool has_suffix(const std::string& name, const char* suffix) {
  const std::size_t n = std::strlen(suffix);
  return name.size() > n && name.compare(name.size() - n, n, suffix) == 0;
}

checked check_input(const input& item, const npyguard::options& opts, std::size_t context, file_format forced) {
  checked out;
  npyguard::input_request request;
  if (forced != file_format::detect) request.format = library_format(forced);
  request.context = context;
  // A zip's directory is at its end: a piped archive goes to an unlinked
  // file in $TMPDIR, not memory, so an archive of any size costs a few MiB.
  request.spool_directory = "";
  if (!item.problem.empty()) {
    out.format = cli_format(npyguard::detect_format(nullptr, 0, item.name), forced);
    set_io_error(out, item.problem);
    return out;
  }
  npyguard::input_result verdict = item.standard_input ? npyguard::validate_input_fd(0, opts, request)
                                                       : npyguard::validate_input(item.name.c_str(), opts, request);
  out.format = cli_format(verdict.format, file_format::detect);
  out.verdict = std::move(verdict.npy);
  out.archive = std::move(verdict.npz);
  out.rawarray = std::move(verdict.ra);
  if (verdict.kind == npyguard::input_kind::directory) {
    set_io_error(out, "is a directory (use -r to check the files in it)");
    return out;
  }
  const npyguard::error* failure = out.failure();
  // Archive and RawArray errors point at binary structures, data-size
  // verdicts into the data, not at a header byte: no excerpt.
  if (failure == nullptr || out.format != file_format::npy || failure->code == npyguard::error_code::truncated_data ||
      failure->code == npyguard::error_code::trailing_data) {
    return out;
  }
  out.excerpt = std::move(verdict.context);
  out.excerpt_start = verdict.context_start;
  out.excerpt_continues = verdict.context_continues;
  return out;
}

} // namespace npyguard_cli
