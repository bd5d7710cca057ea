// Conversion between RawArray and .npy (SPEC-ra.md section 10a): validate
// the input, decide the target's header, copy (or transpose) the data into a
// validated_output, validate the written file, rename it into place.
#include "npyguard/convert.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "core/guard.hpp"
#include "core/io_error.hpp"
#include "npy/entry_points.hpp"
#include "npyguard/npy/write.hpp"
#include "npyguard/ra/validate.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"
#include "platform/mapping.hpp"
#include "platform/validated_output.hpp"

namespace npyguard {
namespace detail {
namespace {

constexpr std::uint64_t eltype_offset = 16;
constexpr std::uint64_t elbyte_offset = 24;
constexpr std::uint64_t ndims_offset = 40;
constexpr std::size_t numpy_max_ndim = 32; // numpy 1.24's NPY_MAXDIMS

// The input: one descriptor, a regular file, not the output.
std::optional<error> open_input(const char* input_path, const char* output_path, platform::unique_fd& fd,
                                platform::file_status& info) {
  fd = platform::open_for_reading(input_path);
  if (!fd) return io_error_from("cannot open the input", errno);
  if (const int failed = platform::stat_fd(fd.get(), info); failed != 0) {
    return io_error_from("cannot stat the input", -failed);
  }
  if (!info.is_regular()) {
    return error{error_code::io_error, std::nullopt, "the input is not a regular file (convert reads it by offset)"};
  }
  platform::file_status existing;
  if (platform::stat_path(output_path, existing) == 0 && existing.same_file(info)) {
    return error{error_code::io_error, std::nullopt,
                 std::string("the output ") + output_path + " is the input file; convert never writes over its input"};
  }
  return std::nullopt;
}

error not_convertible(std::uint64_t offset, const std::string& why) {
  return error{error_code::not_convertible, offset, why};
}

// ---------------------------------------------------------------------------
// .ra -> .npy

// The numpy dtype of a RawArray element, or why there is none.
std::optional<error> numpy_type_of(const ra::header& model, dtype& out) {
  const std::string name = ra::type_name(model.eltype, model.elbyte);
  switch (model.eltype) {
    case ra::element_type::user:
      return not_convertible(eltype_offset, "a user-defined element type (" + name +
                                                ") has no numpy dtype: its layout is not in the file");
    case ra::element_type::signed_integer: out.kind = dtype_kind::signed_integer; break;
    case ra::element_type::unsigned_integer: out.kind = dtype_kind::unsigned_integer; break;
    case ra::element_type::floating: out.kind = dtype_kind::floating; break;
    case ra::element_type::complex_floating: out.kind = dtype_kind::complex_floating; break;
    case ra::element_type::extension:
      if (model.elbyte != 1) {
        return not_convertible(eltype_offset, "bfloat16 (element type 5, 2 bytes) has no numpy 1.24 dtype");
      }
      out.kind = dtype_kind::boolean;
      break;
  }
  const bool integer = out.kind == dtype_kind::signed_integer || out.kind == dtype_kind::unsigned_integer;
  if ((integer && model.elbyte == 16) || (out.kind == dtype_kind::complex_floating && model.elbyte == 4)) {
    return not_convertible(elbyte_offset, name + " has no numpy dtype");
  }
  if (model.dims.size() > numpy_max_ndim) {
    return not_convertible(ndims_offset,
                           std::to_string(model.dims.size()) + " dimensions: numpy 1.24 builds arrays of at most 32");
  }
  out.itemsize = model.elbyte;
  out.order = model.elbyte == 1 ? byte_order::not_applicable : model.big_endian ? byte_order::big : byte_order::little;
  return std::nullopt;
}

basic_result<ra_to_npy> ra_file_to_npy(const char* input_path, const char* output_path, const options& opts) {
  platform::unique_fd input;
  platform::file_status info;
  if (auto failure = open_input(input_path, output_path, input, info)) return *failure;
  ra::result checked = ra::validate_fd(input.get(), opts);
  if (!checked.ok()) return checked.failure();
  const ra::header& model = checked.value();
  const basic_result<dtype> numpy_type = numpy_dtype(model);
  if (!numpy_type.ok()) return numpy_type.failure();
  const dtype& type = numpy_type.value();
  std::size_t long_dims = 0;
  for (const std::uint64_t dim : model.dims) long_dims += dim > 1 ? 1 : 0;
  std::string header_bytes;
  const result encoded = encode_header(type, model.dims, long_dims >= 2, header_bytes);
  if (!encoded.ok()) return encoded.failure();

  platform::validated_output output(output_path);
  if (auto failure = output.create()) return *failure;
  if (auto failure = output.write_all(header_bytes.data(), header_bytes.size())) return *failure;
  if (auto failure = output.copy_from(input.get(), model.data_offset, model.data_length)) return *failure;
  options strict = options::loosest();
  strict.allow_object = false;
  strict.allow_trailing_data = false;
  strict.canonical = true;
  if (auto failure = output.commit([&](int fd) -> std::optional<error> {
        platform::file_status written_info;
        const result written = validate_open_file(fd, strict, written_info);
        if (!written.ok()) return written.failure();
        if (written.value() != encoded.value()) return error{error_code::io_error, std::nullopt, "a different model"};
        return std::nullopt;
      })) {
    return *failure;
  }
  return ra_to_npy{model, encoded.value()};
}

// ---------------------------------------------------------------------------
// .npy -> .ra

void put_u64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

// The RawArray eltype of a numpy dtype, or why there is none.
std::optional<error> ra_type_of(const header& model, std::uint64_t& eltype) {
  const std::uint64_t at = model.data_offset - model.header_length; // the header text
  switch (model.descr.kind) {
    case dtype_kind::signed_integer: eltype = 1; return std::nullopt;
    case dtype_kind::unsigned_integer: eltype = 2; return std::nullopt;
    case dtype_kind::floating: eltype = 3; return std::nullopt;
    case dtype_kind::complex_floating: eltype = 4; return std::nullopt;
    case dtype_kind::boolean: eltype = 5; return std::nullopt; // RawArray.jl's Bool
    case dtype_kind::structured: return not_convertible(at, "RawArray has no structured types");
    case dtype_kind::object: return not_convertible(at, "RawArray has no Python objects");
    case dtype_kind::bytes:
    case dtype_kind::unicode: return not_convertible(at, "RawArray has no string types");
    case dtype_kind::raw_void: return not_convertible(at, "RawArray has no void types");
    case dtype_kind::datetime:
    case dtype_kind::timedelta: return not_convertible(at, "RawArray has no datetime or timedelta types");
  }
  return not_convertible(at, "RawArray has no such type");
}

// Writes the C-order data of `model` in Fortran order (dims[0] fastest),
// reading the input through a read-only mapping and writing through a
// fixed buffer: an odometer over the output's index, the input offset kept
// up to date by strides.
std::optional<error> write_transposed(int input, const header& model, platform::validated_output& output) {
  const auto nbytes = static_cast<std::size_t>(model.nbytes);
  platform::mapping mapped;
  if (const int failed = platform::map_readonly(input, model.data_offset, nbytes, mapped); failed != 0) {
    return io_error_from("cannot map the input's data", -failed);
  }
  // The file must still hold the data before the mapping is touched.
  platform::file_status now;
  if (const int failed = platform::stat_fd(input, now); failed != 0) return io_error_from("cannot stat", -failed);
  if (now.size < model.data_offset + model.nbytes) {
    return error{error_code::truncated_data, now.size, "the input shrank after validation"};
  }
  const std::size_t ndim = model.shape.size();
  const auto itemsize = static_cast<std::size_t>(model.descr.itemsize);
  std::vector<std::size_t> strides(ndim); // C order, in bytes
  std::size_t stride = itemsize;
  for (std::size_t k = ndim; k-- > 0;) {
    strides[k] = stride;
    stride *= static_cast<std::size_t>(model.shape[k]);
  }
  std::vector<std::size_t> index(ndim, 0);
  // Whole elements per buffer: at least one, about 1 MiB.
  const std::size_t per_chunk = std::max<std::size_t>(1, (std::size_t{1} << 20) / itemsize);
  std::vector<unsigned char> buffer(per_chunk * itemsize);
  const unsigned char* data = mapped.data();
  std::size_t offset = 0;
  std::size_t filled = 0;
  for (std::uint64_t element = 0; element < model.count; ++element) {
    std::memcpy(buffer.data() + filled, data + offset, itemsize);
    filled += itemsize;
    if (filled == buffer.size()) {
      if (auto failure = output.write_all(buffer.data(), filled)) return failure;
      filled = 0;
    }
    for (std::size_t k = 0; k < ndim; ++k) { // dims[0] fastest
      if (++index[k] < model.shape[k]) {
        offset += strides[k];
        break;
      }
      offset -= strides[k] * (index[k] - 1);
      index[k] = 0;
    }
  }
  if (filled != 0) return output.write_all(buffer.data(), filled);
  return std::nullopt;
}

basic_result<npy_to_ra> npy_file_to_ra(const char* input_path, const char* output_path, const options& opts) {
  platform::unique_fd input;
  platform::file_status info;
  if (auto failure = open_input(input_path, output_path, input, info)) return *failure;
  result checked = validate_open_file(input.get(), opts, info);
  if (!checked.ok()) return checked.failure();
  const header& model = checked.value();
  std::uint64_t eltype = 0;
  if (auto failure = ra_type_of(model, eltype)) return *failure;

  std::string header_bytes("rawarray", 8);
  put_u64(header_bytes, model.descr.order == byte_order::big ? 1 : 0);
  put_u64(header_bytes, eltype);
  put_u64(header_bytes, model.descr.itemsize);
  put_u64(header_bytes, model.nbytes);
  put_u64(header_bytes, model.shape.size());
  for (const std::uint64_t dim : model.shape) put_u64(header_bytes, dim);

  std::size_t long_dims = 0;
  for (const std::uint64_t dim : model.shape) long_dims += dim > 1 ? 1 : 0;
  const bool same_bytes = model.fortran_order || long_dims <= 1 || model.nbytes == 0;

  platform::validated_output output(output_path);
  if (auto failure = output.create()) return *failure;
  if (auto failure = output.write_all(header_bytes.data(), header_bytes.size())) return *failure;
  if (same_bytes) {
    if (auto failure = output.copy_from(input.get(), model.data_offset, model.nbytes)) return *failure;
  } else if (auto failure = write_transposed(input.get(), model, output)) {
    return *failure;
  }
  options strict = options::loosest();
  strict.ra_reject_metadata = true;
  ra::header written_model;
  if (auto failure = output.commit([&](int fd) -> std::optional<error> {
        const ra::result written = ra::validate_fd(fd, strict);
        if (!written.ok()) return written.failure();
        written_model = written.value();
        return std::nullopt;
      })) {
    return *failure;
  }
  return npy_to_ra{model, written_model};
}

} // namespace
} // namespace detail

basic_result<dtype> numpy_dtype(const ra::header& model) noexcept {
  return detail::guarded([&]() -> basic_result<dtype> {
    dtype type;
    if (auto failure = detail::numpy_type_of(model, type)) return *failure;
    return type;
  });
}

basic_result<ra_to_npy> convert_ra_to_npy(const char* input, const char* output, const options& opts) noexcept {
  return detail::guarded([&] { return detail::ra_file_to_npy(input, output, opts); });
}

basic_result<npy_to_ra> convert_npy_to_ra(const char* input, const char* output, const options& opts) noexcept {
  return detail::guarded([&] { return detail::npy_file_to_ra(input, output, opts); });
}

} // namespace npyguard
