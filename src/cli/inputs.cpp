#include "inputs.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

namespace npyguard_cli {
namespace {

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
