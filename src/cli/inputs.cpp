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

// A directory is listed ahead (input_walk::help) once the walk is within
// this many entries of it: time enough for the listing to be ready when the
// walk arrives, and no earlier than the walk needs it, so that a file
// created in a directory the walk has not come near yet is seen, as it is
// without listing ahead.
constexpr std::size_t ahead_distance = 256;
constexpr std::size_t ahead_levels = 4;

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
  // No help() runs any more (the threads that call it are joined first).
  for (listing_ahead& slot : ahead_) {
    if (slot.listed.listing != nullptr) ::closedir(slot.listed.listing);
  }
}

void input_walk::read_ahead(std::size_t listings) {
  ahead_.resize(std::min(listings, held_descriptors_ / 4));
  queue_.reserve(ahead_.size());
}

bool input_walk::next(input& out) {
  out.standard_input = false;
  out.problem.clear();
  out.leaf = 0;
  plan_ahead();
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
      out.leaf = out.name.size() - item.size;
      out.directory_device = current.device;
      out.directory_inode = current.inode;
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
    const int ahead = item.ahead;
    struct stat info {};
    if (::fstatat(parent, relative, &info, AT_SYMLINK_NOFOLLOW) != 0) {
      set_errno_problem(out.problem, "cannot stat: ", errno);
      drop_ahead(ahead);
      return true;
    }
    if (S_ISDIR(info.st_mode)) {
      const std::string child = out.name; // out.name is the problem's name if entering fails
      return enter(parent, current.listing != nullptr ? name : child.c_str(), false, child, info, out, ahead);
    }
    drop_ahead(ahead);
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
                       input& out, int ahead) {
  if (!visited_.insert({info.st_dev, info.st_ino}).second) { // reached twice
    drop_ahead(ahead);
    return false;
  }
  listing_ahead* listed = claim_ahead(ahead, info);
  // Inside a walk a directory swapped for a link after the stat is refused
  // rather than followed; arguments are followed, as their stat did.
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | (follow ? 0 : O_NOFOLLOW);
  const int descriptor = ::openat(parent, name, flags);
  const int open_error = errno;
  // The identity of what is listed: a directory swapped after the stat above
  // is what the names come from (and what check_input opens files in).
  struct stat opened {};
  const bool known = descriptor >= 0 && ::fstat(descriptor, &opened) == 0;
  if (listed != nullptr &&
      (!known || opened.st_dev != listed->identity.st_dev || opened.st_ino != listed->identity.st_ino)) {
    drop_ahead(ahead); // listed ahead, but not what is open now
    listed = nullptr;
  }
  // `name` may point into a listing on the stack: growing the stack may move
  // it, so the open comes first.
  if (depth_ == stack_.size()) stack_.emplace_back();
  directory& into = stack_[depth_];
  int error = 0;
  if (descriptor < 0) {
    error = open_error; // a listing ahead was dropped above
  } else if (listed != nullptr) {
    error = adopt_ahead(*listed, into, descriptor);
  } else {
    error = list(into, descriptor);
  }
  if (error != 0) {
    out.name.assign(path);
    set_errno_problem(out.problem, "cannot read the directory: ", error);
    return true;
  }
  into.path.assign(path);
  into.device = known ? opened.st_dev : info.st_dev;
  into.inode = known ? opened.st_ino : info.st_ino;
  ++depth_;
  plan_ahead();
  return false;
}

// read_names, then the listing is closed below held_descriptors_.
int input_walk::list(directory& into, int descriptor) {
  const int error = read_names(into, descriptor);
  if (error == 0 && depth_ >= held_descriptors_) {
    ::closedir(into.listing);
    into.listing = nullptr;
  }
  return error;
}

// Reads every name of the directory (but "." and "..") and sorts them; takes
// the descriptor, and leaves the listing open. Returns 0, or the errno when
// it cannot be read at all; a read error part way is the directory's
// problem, given before the names it did read.
int input_walk::read_names(directory& into, int descriptor) {
  into.listing = ::fdopendir(descriptor);
  if (into.listing == nullptr) {
    const int error = errno;
    ::close(descriptor);
    return error;
  }
  into.names.clear();
  into.entries.clear();
  into.next = 0;
  into.ahead_from = 0;
  into.problem.clear();
  for (;;) {
    errno = 0; // readdir's only way to tell the end from an error
    const dirent* found = ::readdir(into.listing);
    if (found == nullptr) break;
    const char* name = found->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    const std::size_t size = std::strlen(name);
    into.entries.push_back({into.names.size(), size, found->d_type, -1});
    into.names.append(name, size + 1);
  }
  if (errno != 0) set_errno_problem(into.problem, "cannot read the directory: ", errno);
  const char* names = into.names.data();
  std::sort(into.entries.begin(), into.entries.end(), [names](const entry& a, const entry& b) {
    return std::string_view(names + a.offset, a.size) < std::string_view(names + b.offset, b.size);
  });
  return 0;
}

// Opens the directory the walk will enter next, once the walk is within
// ahead_distance entries of it: the first directory after the current
// entry of the innermost directory, else of the one around it, and so on.
// Never one past a directory the walk has not been through (its size is
// not known). Only d_type's directories in listings held open; a name that
// cannot be opened now is left to the walk, which meets the error in its
// place.
void input_walk::plan_ahead() {
  if (ahead_.empty()) return;
  std::size_t before = 0; // entries the walk meets before the current level's next one
  // At most ahead_levels levels up: a call per input costs no more in a
  // deep, narrow tree (each level's entries are looked at once).
  for (std::size_t level = depth_, looked = 0; level-- > 0 && looked < ahead_levels && before < ahead_distance;
       ++looked) {
    directory& place = stack_[level];
    place.ahead_from = std::max(place.ahead_from, place.next);
    for (; place.ahead_from < place.entries.size(); ++place.ahead_from) {
      if (before + (place.ahead_from - place.next) >= ahead_distance) return;
      entry& item = place.entries[place.ahead_from];
      if (item.type == DT_UNKNOWN) return; // perhaps a directory
      if (item.type != DT_DIR) continue;
      if (item.ahead == -1 && place.listing != nullptr) queue_ahead(place, item);
      return;
    }
    before += place.entries.size() - place.next;
  }
}

// Names `item` of `place` in a free slot and queues it for help(); nothing
// when no slot is free.
void input_walk::queue_ahead(directory& place, entry& item) {
  const std::lock_guard<std::mutex> guard(ahead_lock_);
  const auto slot = std::find_if(ahead_.begin(), ahead_.end(),
                                 [](const listing_ahead& a) { return a.status == listing_ahead::state::free; });
  if (slot == ahead_.end()) return;
  slot->status = listing_ahead::state::queued;
  set_joined(slot->path, place.path, place.names.data() + item.offset, item.size);
  const auto number = static_cast<std::size_t>(slot - ahead_.begin());
  item.ahead = static_cast<int>(number);
  queue_.push_back(number); // within the capacity reserved for every slot
  queued_.store(queue_.size(), std::memory_order_relaxed);
}

bool input_walk::help() {
  if (queued_.load(std::memory_order_relaxed) == 0) return false;
  std::size_t slot = 0;
  {
    const std::lock_guard<std::mutex> guard(ahead_lock_);
    if (queue_.empty()) return false;
    slot = queue_.front();
    queue_.erase(queue_.begin());
    queued_.store(queue_.size(), std::memory_order_relaxed);
    ahead_[slot].status = listing_ahead::state::running;
  }
  run_ahead(slot);
  return true;
}

// Lists a slot's directory (the slot is running: this thread's alone),
// opened by its path and closed again; the walk checks that what it opens
// itself is the directory listed (claim_ahead, enter).
void input_walk::run_ahead(std::size_t slot) {
  listing_ahead& job = ahead_[slot];
  const int descriptor =
      ::openat(AT_FDCWD, job.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (descriptor < 0) {
    job.error = errno;
  } else if (::fstat(descriptor, &job.identity) != 0) {
    job.error = errno;
    ::close(descriptor);
  } else {
    job.error = read_names(job.listed, descriptor);
    if (job.listed.listing != nullptr) ::closedir(job.listed.listing);
    job.listed.listing = nullptr;
  }
  {
    const std::lock_guard<std::mutex> guard(ahead_lock_);
    job.status = listing_ahead::state::done;
  }
  ahead_done_.notify_all();
}

// The listing ahead in `slot` (-1: none), once done: waits for the help()
// that lists it, or lists a queued one here. Null (the slot freed) when
// there is none, when it could not be read, or when what was listed is not
// the directory the walk stat'ed as `info` any more: the walk then opens and
// lists the directory itself, and meets any error in its own way.
input_walk::listing_ahead* input_walk::claim_ahead(int slot, const struct stat& info) {
  if (slot < 0) return nullptr;
  listing_ahead& job = ahead_[static_cast<std::size_t>(slot)];
  bool run_here = false;
  {
    std::unique_lock<std::mutex> guard(ahead_lock_);
    if (job.status == listing_ahead::state::queued) {
      unqueue(static_cast<std::size_t>(slot));
      job.status = listing_ahead::state::running;
      run_here = true;
    } else {
      ahead_done_.wait(guard, [&] { return job.status == listing_ahead::state::done; });
    }
  }
  if (run_here) run_ahead(static_cast<std::size_t>(slot));
  if (job.error == 0 && job.identity.st_dev == info.st_dev && job.identity.st_ino == info.st_ino) return &job;
  drop_ahead(slot);
  return nullptr;
}

// A claimed listing into the walk's `into`, with `descriptor` (the same
// directory, opened by the walk) as its listing; its slot is freed. Returns
// 0, or the errno when the descriptor cannot be a listing.
int input_walk::adopt_ahead(listing_ahead& job, directory& into, int descriptor) {
  into.listing = ::fdopendir(descriptor);
  if (into.listing == nullptr) {
    const int error = errno;
    ::close(descriptor);
    drop_ahead(static_cast<int>(&job - ahead_.data()));
    return error;
  }
  into.names.swap(job.listed.names);
  into.entries.swap(job.listed.entries);
  into.problem.swap(job.listed.problem);
  into.next = 0;
  into.ahead_from = 0;
  if (depth_ >= held_descriptors_) {
    ::closedir(into.listing);
    into.listing = nullptr;
  }
  drop_ahead(static_cast<int>(&job - ahead_.data()));
  return 0;
}

// Frees `slot` (-1: none): a queued one leaves the queue, a running one is
// waited for; what it holds is closed.
void input_walk::drop_ahead(int slot) {
  if (slot < 0) return;
  listing_ahead& job = ahead_[static_cast<std::size_t>(slot)];
  std::unique_lock<std::mutex> guard(ahead_lock_);
  if (job.status == listing_ahead::state::queued) {
    unqueue(static_cast<std::size_t>(slot));
  } else {
    ahead_done_.wait(guard, [&] { return job.status == listing_ahead::state::done; });
  }
  if (job.listed.listing != nullptr) ::closedir(job.listed.listing);
  job.listed.listing = nullptr;
  job.status = listing_ahead::state::free;
}

// Takes a queued slot out of the queue (ahead_lock_ held).
void input_walk::unqueue(std::size_t slot) {
  queue_.erase(std::find(queue_.begin(), queue_.end(), slot));
  queued_.store(queue_.size(), std::memory_order_relaxed);
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

// The directory a checking thread holds open for the files the walk found in
// it (input::leaf), so that each is opened relative to it.
class held_directory {
public:
  held_directory() = default;
  held_directory(const held_directory&) = delete;
  held_directory& operator=(const held_directory&) = delete;
  ~held_directory() { drop(); }

  // The directory of `item`, open, or -1: it could not be opened, or what
  // its path names now is not the directory the walk listed (then the file
  // is opened by its name, as any other).
  int get(const input& item) {
    if (fd_ >= 0 && device_ == item.directory_device && inode_ == item.directory_inode) return fd_;
    drop();
    path_.assign(item.name, 0, item.leaf);
    const int fd = ::openat(AT_FDCWD, path_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat info {};
    if (::fstat(fd, &info) != 0 || info.st_dev != item.directory_device || info.st_ino != item.directory_inode) {
      ::close(fd);
      return -1;
    }
    fd_ = fd;
    device_ = info.st_dev;
    inode_ = info.st_ino;
    return fd_;
  }

  // Gives the descriptor back (when descriptors run short).
  void drop() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

private:
  int fd_ = -1;
  std::uint64_t device_ = 0;
  std::uint64_t inode_ = 0;
  std::string path_;
};

// validate_input(item.name), with a file the walk listed opened relative to
// its directory (validate_input_at): the same flags, the same verdict, one
// path component to look up rather than the whole path. A file that cannot
// be opened that way is left to validate_input, which meets the failure (or
// not) in its own words.
npyguard::input_result validate_named(const input& item, const npyguard::options& opts,
                                      const npyguard::input_request& request) {
  if (item.leaf != 0 && item.leaf < item.name.size()) {
    thread_local held_directory held;
    const int directory = held.get(item);
    if (directory >= 0) {
      npyguard::input_request named = request;
      named.name = item.name;
      npyguard::input_result verdict =
          npyguard::validate_input_at(directory, item.name.c_str() + item.leaf, opts, named);
      if (verdict.kind != npyguard::input_kind::unknown) return verdict; // it was opened
      held.drop(); // perhaps descriptors ran short: give this one back
    }
  }
  return npyguard::validate_input(item.name.c_str(), opts, request);
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
  npyguard::input_result verdict =
      item.standard_input ? npyguard::validate_input_fd(0, opts, request) : validate_named(item, opts, request);
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
