#include "inputs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

namespace npyguard_cli {
namespace {

constexpr std::size_t recorded_prefix = std::size_t{64} * 1024;

// The names a walk takes without --all-files.
bool has_array_suffix(const std::string& name) {
  return has_suffix(name, ".npy") || has_suffix(name, ".npz") || has_suffix(name, ".ra");
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

std::string join(const std::string& directory, const std::string& name) {
  return directory.empty() || directory.back() == '/' ? directory + name : directory + "/" + name;
}

class walker {
public:
  walker(const walk_options& options, std::vector<input>& out) : options_(options), out_(out) {}

  void directory(const std::string& path, const struct stat& info) {
    const std::pair<dev_t, ino_t> identity{info.st_dev, info.st_ino};
    if (!visited_.insert(identity).second) return; // reached twice: a bind mount or a repeated argument
    DIR* listing = ::opendir(path.c_str());
    if (listing == nullptr) {
      out_.push_back({path, false, std::string("cannot read the directory: ") + std::strerror(errno)});
      return;
    }
    // d_type spares a stat for regular files and links (most file systems
    // fill it in); DT_UNKNOWN and directories are stat'ed.
    std::vector<std::pair<std::string, unsigned char>> entries;
    errno = 0;
    while (const dirent* entry = ::readdir(listing)) {
      const char* name = entry->d_name;
      if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0) entries.emplace_back(name, entry->d_type);
    }
    const int read_errno = errno;
    ::closedir(listing);
    if (read_errno != 0) {
      out_.push_back({path, false, std::string("cannot read the directory: ") + std::strerror(read_errno)});
    }
    std::sort(entries.begin(), entries.end());
    for (const auto& [name, type] : entries) {
      const std::string child = join(path, name);
      const bool wanted = options_.all_files || has_array_suffix(name);
      if (type == DT_REG) {
        if (wanted) out_.push_back({child, false, {}});
        continue;
      }
      if (const char* kind = special_kind(type)) {
        if (wanted) special(child, kind);
        continue;
      }
      if (type != DT_DIR && type != DT_UNKNOWN) continue; // symbolic links
      struct stat child_info {};
      if (::lstat(child.c_str(), &child_info) != 0) {
        out_.push_back({child, false, std::string("cannot stat: ") + std::strerror(errno)});
      } else if (S_ISDIR(child_info.st_mode)) {
        directory(child, child_info);
      } else if (S_ISREG(child_info.st_mode) && wanted) {
        out_.push_back({child, false, {}});
      } else if (const char* what = special_kind(child_info.st_mode); what != nullptr && wanted) {
        special(child, what);
      }
      // Symbolic links inside a walk are skipped.
    }
  }

private:
  // A FIFO, socket or device that a walk meets is never opened: opening a
  // FIFO blocks until a writer comes, reading a device may never end or
  // have effects (a tape rewinds), and nobody named it. It is reported, so
  // that a .npy name that is not a file does not pass unnoticed.
  void special(const std::string& path, const char* kind) {
    out_.push_back({path, false,
                    std::string("is ") + kind +
                        "; not opened (under -r, FIFOs, sockets and devices "
                        "are reported, never read)"});
  }

  const walk_options& options_;
  std::vector<input>& out_;
  std::set<std::pair<dev_t, ino_t>> visited_;
};

// The library's descriptor source, keeping the first bytes it delivers for
// the excerpt. With --timeout, standard input from a pipe nobody writes to
// ends in io_error ("no input within the time allowed") instead of waiting
// forever.
class recording_source final : public npyguard::byte_source {
public:
  recording_source(int fd, std::uint32_t timeout_ms) noexcept : source_(fd, timeout_ms) {}

  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    const std::ptrdiff_t n = source_.read(buffer, size);
    if (n > 0 && prefix_.size() < recorded_prefix) {
      const std::size_t keep = std::min(static_cast<std::size_t>(n), recorded_prefix - prefix_.size());
      try {
        prefix_.append(static_cast<const char*>(buffer), keep);
      } catch (const std::exception&) { // the excerpt is only for display
      }
    }
    return n;
  }
  [[nodiscard]] const std::string& prefix() const noexcept { return prefix_; }

private:
  npyguard::fd_byte_source source_; // EINTR, polling and the timeout, as validate_fd reads
  std::string prefix_;
};

// Bytes [begin, end) of the file at `path`, or fewer if it is shorter.
std::string read_range(const std::string& path, std::uint64_t begin, std::uint64_t end) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) return out;
  struct stat info {};
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    out.resize(static_cast<std::size_t>(end - begin));
    const ssize_t n = ::pread(fd, out.data(), out.size(), static_cast<off_t>(begin));
    out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  }
  ::close(fd);
  return out;
}

// The format an input is read as: forced, else npyguard::detect_format.
file_format format_of(file_format forced, const unsigned char* head, std::size_t size, const std::string& name) {
  if (forced != file_format::detect) return forced;
  switch (npyguard::detect_format(head, size, name)) {
    case npyguard::file_format::npz: return file_format::npz;
    case npyguard::file_format::ra: return file_format::ra;
    case npyguard::file_format::npy: break;
  }
  return file_format::npy;
}

// A regular file read by offset (pread), as the library's validate_file
// reads one; its first bytes, read once to find the format, are served
// again from memory.
class file_source final : public npyguard::random_access_source {
public:
  file_source(int fd, std::uint64_t size) noexcept : fd_(fd), size_(size) {}

  // Reads the first bytes; false (errno set) on a read error.
  bool read_head() noexcept {
    std::size_t got = 0;
    while (got < sizeof head_ && got < size_) {
      const ssize_t n = ::pread(fd_, head_ + got, sizeof head_ - got, static_cast<off_t>(got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return false;
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    head_size_ = got;
    return true;
  }
  [[nodiscard]] const unsigned char* head() const noexcept { return head_; }
  [[nodiscard]] std::size_t head_size() const noexcept { return head_size_; }

  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (offset + size <= head_size_) {
      std::memcpy(buffer, head_ + offset, size);
      return static_cast<std::ptrdiff_t>(size);
    }
    std::size_t got = 0;
    while (got < size) {
      const std::size_t ask = std::min<std::size_t>(size - got, std::size_t{1} << 30);
      const ssize_t n = ::pread(fd_, static_cast<char*>(buffer) + got, ask, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -errno;
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
    }
    return static_cast<std::ptrdiff_t>(got);
  }

private:
  int fd_;
  std::uint64_t size_;
  unsigned char head_[4096];
  std::size_t head_size_ = 0;
};

void validate_stream_input(int fd, const std::string& name, const npyguard::options& opts, file_format forced,
                           checked& out, std::string& prefix) {
  recording_source recorded(fd, opts.timeout_ms);
  npyguard::peeked_source source(recorded);
  source.peek();
  out.format = format_of(forced, source.head(), source.head_size(), name);
  if (out.format == file_format::npz) {
    // A zip's directory is at its end: the stream goes to an unlinked file in
    // $TMPDIR, not memory, so a piped archive of any size costs a few MiB.
    out.archive = npyguard::npz::validate_stream_spooled(source, opts);
  } else if (out.format == file_format::ra) {
    out.rawarray = npyguard::ra::validate_stream(source, opts);
  } else {
    out.verdict = npyguard::validate_stream(source, opts);
  }
  prefix = recorded.prefix();
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

std::vector<input> expand(const std::vector<std::string>& arguments, const walk_options& walk) {
  std::vector<input> out;
  walker walking(walk, out);
  for (const std::string& argument : arguments) {
    if (argument == "-") {
      out.push_back({argument, true, {}});
      continue;
    }
    // Without -r nothing is stat'ed here: validation's own fstat finds
    // directories (check_input words that error).
    struct stat info {};
    if (walk.recursive && ::stat(argument.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      walking.directory(argument, info);
      continue;
    }
    out.push_back({argument, false, {}}); // missing files are reported by validation
  }
  return out;
}

checked check_input(const input& item, const npyguard::options& opts, std::size_t context, file_format forced) {
  checked out;
  // Until the first bytes say otherwise (an input that cannot be read).
  out.format = forced != file_format::detect   ? forced
               : item.standard_input           ? file_format::npy
               : has_suffix(item.name, ".npz") ? file_format::npz
               : has_suffix(item.name, ".ra")  ? file_format::ra
                                               : file_format::npy;
  if (!item.problem.empty()) {
    set_io_error(out, item.problem);
    return out;
  }
  std::string prefix;
  if (item.standard_input) {
    validate_stream_input(0, {}, opts, forced, out, prefix);
  } else {
    // Without blocking: opening a FIFO would otherwise wait for a writer with no limit.
    const int fd = ::open(item.name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
      set_io_error(out, std::string("cannot open: ") + std::strerror(errno));
      return out;
    }
    struct stat info {};
    if (::fstat(fd, &info) != 0) {
      set_io_error(out, std::string("cannot stat: ") + std::strerror(errno));
    } else if (S_ISDIR(info.st_mode)) {
      set_io_error(out, "is a directory (use -r to check the files in it)");
    } else if (S_ISREG(info.st_mode)) {
      file_source source(fd, static_cast<std::uint64_t>(info.st_size));
      if (!source.read_head()) {
        set_io_error(out, std::string("cannot read: ") + std::strerror(errno));
      } else {
        out.format = format_of(forced, source.head(), source.head_size(), item.name);
        if (out.format == file_format::npz) {
          out.archive = npyguard::npz::validate_source(source, opts);
        } else if (out.format == file_format::ra) {
          out.rawarray = npyguard::ra::validate_source(source, opts);
        } else {
          out.verdict = npyguard::validate_source(source, opts);
        }
      }
    } else {
      validate_stream_input(fd, item.name, opts, forced, out, prefix);
    }
    ::close(fd);
  }
  const npyguard::error* failure = out.failure();
  // Archive and RawArray errors point at binary structures: no excerpt.
  if (out.format == file_format::npz || out.format == file_format::ra) return out;
  // Data-size verdicts point into the data, not at a header byte.
  if (failure == nullptr || !failure->offset || context == 0 || failure->code == npyguard::error_code::truncated_data ||
      failure->code == npyguard::error_code::trailing_data) {
    return out;
  }
  const std::uint64_t at = *failure->offset;
  const std::uint64_t begin = at > context ? at - context : 0;
  const std::uint64_t end = at + context + 2; // one byte more tells whether the input goes on
  if (item.standard_input) {
    if (begin < prefix.size()) {
      out.excerpt = prefix.substr(static_cast<std::size_t>(begin),
                                  static_cast<std::size_t>(std::min<std::uint64_t>(end, prefix.size()) - begin));
    }
  } else {
    out.excerpt = read_range(item.name, begin, end);
  }
  out.excerpt_start = begin;
  out.excerpt_continues = out.excerpt.size() == end - begin;
  if (out.excerpt_continues) out.excerpt.pop_back();
  return out;
}

} // namespace npyguard_cli
