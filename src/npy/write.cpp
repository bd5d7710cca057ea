// Writing files: encode_header's self-check, and the output discipline of
// write_array and canonicalize_file (a new file in the target directory,
// flushed, validated, then renamed into place).
#include "npyguard/write.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "core/hex.hpp"
#include "npy/encode.hpp"
#include "npy/entry_points.hpp"
#include "npyguard/descr.hpp"
#include "npyguard/validate.hpp"
#include "platform/fd.hpp"

namespace npyguard {
namespace detail {
namespace {

// Data is copied through one buffer of this size: memory stays constant
// whatever the array's size.
constexpr std::size_t copy_chunk = std::size_t{1024} * 1024;
// write(2) moves at most about 2 GiB per call on Linux.
constexpr std::size_t max_write = 1u << 30;

error output_failure(const std::string& path, const char* what, int errno_value) {
  return io_error_from((what + (" " + path)).c_str(), errno_value);
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// What the writer checks its own output with: only the format's limits,
// and nothing after the data.
options writer_options() {
  options loosest = options::loosest();
  loosest.allow_trailing_data = false;
  return loosest;
}

// A new file beside the destination, renamed over it by commit(); removed by
// the destructor if commit() did not succeed.
class atomic_output {
public:
  explicit atomic_output(std::string destination) : destination_(std::move(destination)) {}
  atomic_output(const atomic_output&) = delete;
  atomic_output& operator=(const atomic_output&) = delete;
  ~atomic_output() {
    if (fd_ >= 0) ::close(fd_);
    if (!temporary_.empty()) ::unlink(temporary_.c_str());
  }

  [[nodiscard]] std::optional<error> create() {
    // The rename replaces whatever the name holds: only a regular file (or
    // nothing) may be replaced, never a device, a FIFO, a directory or a
    // symbolic link (as root, "/dev/null" would become a regular file).
    struct stat existing {};
    if (::lstat(destination_.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
      return error{error_code::io_error, std::nullopt,
                   "the output " + destination_ +
                       " exists and is not a regular file (a link, directory, device or FIFO); it is never replaced"};
    }
    const std::string directory = directory_of(destination_);
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::uint64_t nonce = 0;
      if (::getrandom(&nonce, sizeof nonce, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof nonce)) {
        nonce = (static_cast<std::uint64_t>(::getpid()) << 32) ^ static_cast<std::uint64_t>(attempt) ^
                reinterpret_cast<std::uintptr_t>(this);
      }
      std::string name = directory + "/.npyguard-";
      append_hex(name, nonce, 16);
      name += ".tmp";
      // 0666 and the umask, as any new file: the output is an ordinary file.
      fd_ = ::open(name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0666);
      if (fd_ >= 0) {
        temporary_ = std::move(name);
        return std::nullopt;
      }
      if (errno != EEXIST) return output_failure(directory, "cannot create a file in", errno);
    }
    return output_failure(directory, "cannot create a file in", EEXIST);
  }

  [[nodiscard]] int fd() const noexcept { return fd_; }

  [[nodiscard]] std::optional<error> write_all(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd_, bytes, std::min(size, max_write));
      if (n < 0) {
        if (errno == EINTR) continue;
        return output_failure(destination_, "cannot write", errno);
      }
      bytes += n;
      size -= static_cast<std::size_t>(n);
    }
    return std::nullopt;
  }

  // Flushes the file, checks that it reads back as a valid canonical file
  // (the writer never hands out bytes its own validator rejects), and
  // renames it over the destination.
  [[nodiscard]] std::optional<error> commit(bool pickle) {
    if (::fsync(fd_) != 0) return output_failure(destination_, "cannot flush", errno);
    options strict = writer_options();
    strict.canonical = true;
    strict.allow_object = pickle;
    struct stat info {};
    const result written = validate_open_file(fd_, strict, info);
    if (!written.ok()) {
      error failure = written.failure();
      failure.message = "internal error, the output does not validate: " + failure.message;
      return failure;
    }
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return output_failure(destination_, "cannot write", errno);
    if (::rename(temporary_.c_str(), destination_.c_str()) != 0) {
      return output_failure(destination_, "cannot rename the finished file to", errno);
    }
    temporary_.clear();
    // The rename itself is durable only once the directory is flushed;
    // failing that is not worth undoing a complete file for.
    const int directory = ::open(directory_of(destination_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (directory >= 0) {
      (void)::fsync(directory);
      ::close(directory);
    }
    return std::nullopt;
  }

private:
  std::string destination_;
  std::string temporary_;
  int fd_ = -1;
};

// encode_header_bytes, then the bytes are validated and must give back the
// same descr and shape: what cannot round-trip is refused.
result encode_checked(const dtype& type, const std::vector<std::uint64_t>& shape, bool fortran_order,
                      std::string& out) {
  std::string bytes;
  if (!encode_header_bytes(type, shape, fortran_order, bytes)) {
    return error{error_code::header_too_large, std::nullopt, "the header would exceed 4 GiB, which no format holds"};
  }
  const std::size_t text_offset = preamble_size(static_cast<unsigned char>(bytes[6]));
  result written = validate_header_text(bytes.data() + text_offset, bytes.size() - text_offset,
                                        static_cast<unsigned char>(bytes[6]), writer_options());
  if (!written.ok()) {
    error failure = written.failure();
    failure.offset.reset();
    failure.message = "the array cannot be written: " + failure.message;
    return failure;
  }
  const header& model = written.value();
  if (model.descr != type || model.shape != shape) {
    return error{error_code::bad_descr, std::nullopt,
                 "the dtype cannot be written as it is: reading its header back gives " + descr_repr(model.descr) +
                     " (check itemsizes against kinds, field offsets and itemsizes, and byte orders)"};
  }
  out = std::move(bytes);
  return written;
}

std::optional<error> copy_range(int input, std::uint64_t offset, std::uint64_t length, atomic_output& output) {
  const auto buffer = std::make_unique<unsigned char[]>(copy_chunk);
  while (length > 0) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(length, copy_chunk));
    const std::ptrdiff_t n = platform::pread_full(input, buffer.get(), want, offset);
    if (n < 0) return io_error_from("cannot read the input", static_cast<int>(-n));
    if (n > 0) {
      if (auto failure = output.write_all(buffer.get(), static_cast<std::size_t>(n))) return failure;
    }
    offset += static_cast<std::uint64_t>(n);
    length -= static_cast<std::uint64_t>(n);
    if (static_cast<std::size_t>(n) < want) {
      return error{
          error_code::truncated_data, offset,
          "the input ended at byte " + std::to_string(offset) + " while it was copied (it shrank after validation)"};
    }
  }
  return std::nullopt;
}

result canonicalize(const char* input_path, const char* output_path, const options& opts) {
  // O_NONBLOCK: opening a FIFO with no writer would block; regular files ignore it.
  const platform::unique_fd input = platform::open_for_reading(input_path);
  if (!input) return io_error_from("cannot open the input", errno);
  struct stat info {};
  if (::fstat(input.get(), &info) != 0) return io_error_from("cannot stat the input", errno);
  if (!S_ISREG(info.st_mode)) {
    return error{error_code::io_error, std::nullopt, "the input is not a regular file (canon copies by offset)"};
  }
  options relaxed = opts;
  relaxed.canonical = false;
  result checked = validate_open_file(input.get(), relaxed, info);
  if (!checked.ok()) return checked;
  const header& model = checked.value();

  struct stat existing {};
  if (::stat(output_path, &existing) == 0 && existing.st_dev == info.st_dev && existing.st_ino == info.st_ino) {
    return error{error_code::io_error, std::nullopt,
                 std::string("the output ") + output_path + " is the input file; canon never writes over its input"};
  }

  std::string header_bytes;
  const result encoded = encode_checked(model.descr, model.shape, model.fortran_order, header_bytes);
  if (!encoded.ok()) return encoded.failure();

  atomic_output output(output_path);
  if (auto failure = output.create()) return *failure;
  if (auto failure = output.write_all(header_bytes.data(), header_bytes.size())) return *failure;
  const auto file_size = static_cast<std::uint64_t>(info.st_size);
  const std::uint64_t length = model.data_is_pickle ? file_size - model.data_offset : model.nbytes;
  if (auto failure = copy_range(input.get(), model.data_offset, length, output)) return *failure;
  if (auto failure = output.commit(model.data_is_pickle)) return *failure;
  return checked;
}

} // namespace
} // namespace detail

result encode_header(const dtype& type, const std::vector<std::uint64_t>& shape, bool fortran_order,
                     std::string& out) noexcept {
  return detail::guarded([&] { return detail::encode_checked(type, shape, fortran_order, out); });
}

result encode_header(const header& model, std::string& out) noexcept {
  return encode_header(model.descr, model.shape, model.fortran_order, out);
}

result write_array(const char* path, const dtype& type, const std::vector<std::uint64_t>& shape, bool fortran_order,
                   const void* data, std::size_t size) noexcept {
  return detail::guarded([&]() -> result {
    std::string header_bytes;
    result encoded = detail::encode_checked(type, shape, fortran_order, header_bytes);
    if (!encoded.ok()) return encoded;
    const header& model = encoded.value();
    if (model.data_is_pickle) {
      return error{error_code::object_dtype, std::nullopt, "npyguard does not write object arrays (pickles)"};
    }
    if (size != model.nbytes) {
      const bool short_data = size < model.nbytes;
      return error{short_data ? error_code::truncated_data : error_code::trailing_data, std::nullopt,
                   "the header implies " + std::to_string(model.nbytes) + " data bytes, but " + std::to_string(size) +
                       " were given"};
    }
    detail::atomic_output output(path);
    if (auto failure = output.create()) return *failure;
    if (auto failure = output.write_all(header_bytes.data(), header_bytes.size())) return *failure;
    if (size > 0) {
      if (auto failure = output.write_all(data, size)) return *failure;
    }
    if (auto failure = output.commit(false)) return *failure;
    return encoded;
  });
}

result canonicalize_file(const char* input, const char* output, const options& opts) noexcept {
  return detail::guarded([&] { return detail::canonicalize(input, output, opts); });
}

} // namespace npyguard
