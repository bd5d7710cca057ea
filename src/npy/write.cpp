// Writing files: encode_header's self-check, and the output discipline of
// write_array and canonicalize_file (a new file in the target directory,
// flushed, validated, then renamed into place).
#include "npyguard/npy/write.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "npy/encode.hpp"
#include "npy/entry_points.hpp"
#include "npyguard/npy/descr.hpp"
#include "npyguard/npy/validate.hpp"
#include "platform/atomic_output.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard {
namespace detail {
namespace {

// Data is copied through one buffer of this size: memory stays constant
// whatever the array's size.
constexpr std::size_t copy_chunk = std::size_t{1024} * 1024;

error output_failure(const std::string& path, const char* what, int errno_value) {
  return io_error_from((what + (" " + path)).c_str(), errno_value);
}

// What a failed step of the output says: the directory for create, the
// destination for the rest.
error describe_failure(const platform::atomic_output& output, const platform::output_failure& failure) {
  switch (failure.step) {
    case platform::output_step::create:
      return output_failure(output.directory(), "cannot create a file in", failure.errno_value);
    case platform::output_step::flush: return output_failure(output.destination(), "cannot flush", failure.errno_value);
    case platform::output_step::rename:
      return output_failure(output.destination(), "cannot rename the finished file to", failure.errno_value);
    case platform::output_step::write:
    case platform::output_step::close: break;
  }
  return output_failure(output.destination(), "cannot write", failure.errno_value);
}

// What the writer checks its own output with: only the format's limits,
// and nothing after the data.
options writer_options() {
  options loosest = options::loosest();
  loosest.allow_trailing_data = false;
  return loosest;
}

// The output file of write_array and canonicalize_file: a
// platform::atomic_output whose steps answer with errors, and whose commit
// checks that the flushed file reads back as a valid canonical file first
// (the writer never hands out bytes its own validator rejects).
class checked_output {
public:
  explicit checked_output(std::string destination) : output_(std::move(destination)) {}

  [[nodiscard]] std::optional<error> create() {
    // The rename replaces whatever the name holds: only a regular file (or
    // nothing) may be replaced, never a device, a FIFO, a directory or a
    // symbolic link (as root, "/dev/null" would become a regular file).
    platform::file_status existing;
    if (platform::lstat_path(output_.destination().c_str(), existing) == 0 && !existing.is_regular()) {
      return error{error_code::io_error, std::nullopt,
                   "the output " + output_.destination() +
                       " exists and is not a regular file (a link, directory, device or FIFO); it is never replaced"};
    }
    return failure_of(output_.create());
  }

  [[nodiscard]] std::optional<error> write_all(const void* data, std::size_t size) {
    return failure_of(output_.write_all(data, size));
  }

  [[nodiscard]] std::optional<error> commit(bool pickle) {
    if (auto failure = failure_of(output_.flush())) return failure;
    options strict = writer_options();
    strict.canonical = true;
    strict.allow_object = pickle;
    platform::file_status info;
    const result written = validate_open_file(output_.fd(), strict, info);
    if (!written.ok()) {
      error failure = written.failure();
      failure.message = "internal error, the output does not validate: " + failure.message;
      return failure;
    }
    return failure_of(output_.commit());
  }

private:
  [[nodiscard]] std::optional<error> failure_of(const std::optional<platform::output_failure>& failure) const {
    if (!failure) return std::nullopt;
    return describe_failure(output_, *failure);
  }

  platform::atomic_output output_;
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

std::optional<error> copy_range(int input, std::uint64_t offset, std::uint64_t length, checked_output& output) {
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
  platform::file_status info;
  if (const int failed = platform::stat_fd(input.get(), info); failed != 0) {
    return io_error_from("cannot stat the input", -failed);
  }
  if (!info.is_regular()) {
    return error{error_code::io_error, std::nullopt, "the input is not a regular file (canon copies by offset)"};
  }
  options relaxed = opts;
  relaxed.canonical = false;
  result checked = validate_open_file(input.get(), relaxed, info);
  if (!checked.ok()) return checked;
  const header& model = checked.value();

  platform::file_status existing;
  if (platform::stat_path(output_path, existing) == 0 && existing.same_file(info)) {
    return error{error_code::io_error, std::nullopt,
                 std::string("the output ") + output_path + " is the input file; canon never writes over its input"};
  }

  std::string header_bytes;
  const result encoded = encode_checked(model.descr, model.shape, model.fortran_order, header_bytes);
  if (!encoded.ok()) return encoded.failure();

  checked_output output(output_path);
  if (auto failure = output.create()) return *failure;
  if (auto failure = output.write_all(header_bytes.data(), header_bytes.size())) return *failure;
  const std::uint64_t file_size = info.size;
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
    detail::checked_output output(path);
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
