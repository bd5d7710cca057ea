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

bool has_npy_suffix(const std::string& name) {
  return name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0;
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
      const bool wanted = options_.all_files || has_npy_suffix(name);
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

} // namespace

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

checked check_input(const input& item, const npyguard::options& opts, std::size_t context) {
  checked out;
  if (!item.problem.empty()) {
    out.verdict = npyguard::error{npyguard::error_code::io_error, std::nullopt, item.problem};
    return out;
  }
  std::string prefix;
  if (item.standard_input) {
    recording_source source(0, opts.timeout_ms);
    out.verdict = npyguard::validate_stream(source, opts);
    prefix = source.prefix();
  } else {
    out.verdict = npyguard::validate_file(item.name.c_str(), opts);
  }
  const npyguard::error* failure = out.verdict.failure_if();
  if (failure != nullptr && failure->code == npyguard::error_code::io_error && !item.standard_input) {
    struct stat info {};
    if (::stat(item.name.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      out.verdict = npyguard::error{npyguard::error_code::io_error, std::nullopt,
                                    "is a directory (use -r to check the files in it)"};
      return out;
    }
  }
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
