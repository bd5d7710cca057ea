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
#include "platform/fd.hpp"
#include "platform/file_status.hpp"
#include "platform/validated_output.hpp"

namespace npyguard {
namespace detail {
namespace {

// What the writer checks its own output with: only the format's limits,
// and nothing after the data.
options writer_options() {
  options loosest = options::loosest();
  loosest.allow_trailing_data = false;
  return loosest;
}

// The output file of write_array and canonicalize_file: its commit checks
// that the flushed file reads back as a valid canonical file first (the
// writer never hands out bytes its own validator rejects).
class checked_output {
public:
  explicit checked_output(std::string destination) : output_(std::move(destination)) {}
  [[nodiscard]] std::optional<error> create() { return output_.create(); }
  [[nodiscard]] std::optional<error> write_all(const void* data, std::size_t size) {
    return output_.write_all(data, size);
  }
  [[nodiscard]] std::optional<error> copy_from(int input, std::uint64_t offset, std::uint64_t length) {
    return output_.copy_from(input, offset, length);
  }
  [[nodiscard]] std::optional<error> commit(bool pickle) {
    return output_.commit([pickle](int fd) -> std::optional<error> {
      options strict = writer_options();
      strict.canonical = true;
      strict.allow_object = pickle;
      platform::file_status info;
      const result written = validate_open_file(fd, strict, info);
      if (written.ok()) return std::nullopt;
      return written.failure();
    });
  }

private:
  platform::validated_output output_;
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
  if (auto failure = output.copy_from(input.get(), model.data_offset, length)) return *failure;
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

void remove_temporary_files_on_signals() noexcept { platform::remove_temporaries_on_signals(); }

} // namespace npyguard
