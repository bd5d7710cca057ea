// The C API (npyguard.h) over the public C++ API: options converted with
// their size checked, inputs adapted to the library's sources, the verdict
// held in one result object whose accessors hand out pointers into it.
// Nothing throws across the boundary: every entry point catches everything.
#include "npyguard.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>

#include "npyguard/detect.hpp"
#include "npyguard/input.hpp"
#include "npyguard/npy/descr.hpp"
#include "npyguard/npy/validate.hpp"
#include "npyguard/npz/validate.hpp"
#include "npyguard/ra/validate.hpp"
#include "npyguard/version.hpp"

// The C enumerations mirror the C++ ones value for value.
#define NPYGUARD_SAME_CODE(c_name, cpp_name) \
  static_assert(static_cast<int>(c_name) == static_cast<int>(npyguard::error_code::cpp_name), #cpp_name);
NPYGUARD_SAME_CODE(NPYGUARD_E_IO_ERROR, io_error)
NPYGUARD_SAME_CODE(NPYGUARD_E_OUT_OF_MEMORY, out_of_memory)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_MAGIC, bad_magic)
NPYGUARD_SAME_CODE(NPYGUARD_E_UNSUPPORTED_VERSION, unsupported_version)
NPYGUARD_SAME_CODE(NPYGUARD_E_TRUNCATED_PREAMBLE, truncated_preamble)
NPYGUARD_SAME_CODE(NPYGUARD_E_HEADER_TOO_LARGE, header_too_large)
NPYGUARD_SAME_CODE(NPYGUARD_E_TRUNCATED_HEADER, truncated_header)
NPYGUARD_SAME_CODE(NPYGUARD_E_INVALID_UTF8, invalid_utf8)
NPYGUARD_SAME_CODE(NPYGUARD_E_CONTROL_CHARACTER, control_character)
NPYGUARD_SAME_CODE(NPYGUARD_E_HEADER_NOT_TERMINATED, header_not_terminated)
NPYGUARD_SAME_CODE(NPYGUARD_E_SYNTAX_ERROR, syntax_error)
NPYGUARD_SAME_CODE(NPYGUARD_E_INTEGER_TOO_LARGE, integer_too_large)
NPYGUARD_SAME_CODE(NPYGUARD_E_NEGATIVE_DIMENSION, negative_dimension)
NPYGUARD_SAME_CODE(NPYGUARD_E_DEPTH_EXCEEDED, depth_exceeded)
NPYGUARD_SAME_CODE(NPYGUARD_E_MISSING_KEY, missing_key)
NPYGUARD_SAME_CODE(NPYGUARD_E_DUPLICATE_KEY, duplicate_key)
NPYGUARD_SAME_CODE(NPYGUARD_E_UNKNOWN_KEY, unknown_key)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_FORTRAN_ORDER, bad_fortran_order)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_SHAPE, bad_shape)
NPYGUARD_SAME_CODE(NPYGUARD_E_TOO_MANY_DIMENSIONS, too_many_dimensions)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_DESCR, bad_descr)
NPYGUARD_SAME_CODE(NPYGUARD_E_OBJECT_DTYPE, object_dtype)
NPYGUARD_SAME_CODE(NPYGUARD_E_DUPLICATE_FIELD_NAME, duplicate_field_name)
NPYGUARD_SAME_CODE(NPYGUARD_E_EMPTY_FIELD_NAME, empty_field_name)
NPYGUARD_SAME_CODE(NPYGUARD_E_ITEMSIZE_OVERFLOW, itemsize_overflow)
NPYGUARD_SAME_CODE(NPYGUARD_E_SIZE_OVERFLOW, size_overflow)
NPYGUARD_SAME_CODE(NPYGUARD_E_DATA_TOO_LARGE, data_too_large)
NPYGUARD_SAME_CODE(NPYGUARD_E_TRUNCATED_DATA, truncated_data)
NPYGUARD_SAME_CODE(NPYGUARD_E_TRAILING_DATA, trailing_data)
NPYGUARD_SAME_CODE(NPYGUARD_E_NOT_CANONICAL, not_canonical)
NPYGUARD_SAME_CODE(NPYGUARD_E_BUFFER_TOO_SMALL, buffer_too_small)
NPYGUARD_SAME_CODE(NPYGUARD_E_UNSUPPORTED_FLAGS, unsupported_flags)
NPYGUARD_SAME_CODE(NPYGUARD_E_UNKNOWN_ELEMENT_TYPE, unknown_element_type)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_ELEMENT_SIZE, bad_element_size)
NPYGUARD_SAME_CODE(NPYGUARD_E_DATA_LENGTH_MISMATCH, data_length_mismatch)
NPYGUARD_SAME_CODE(NPYGUARD_E_NOT_ZIP, not_zip)
NPYGUARD_SAME_CODE(NPYGUARD_E_ARCHIVE_COMMENT, archive_comment)
NPYGUARD_SAME_CODE(NPYGUARD_E_AMBIGUOUS_EOCD, ambiguous_eocd)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_EOCD, bad_eocd)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_ZIP64_EOCD, bad_zip64_eocd)
NPYGUARD_SAME_CODE(NPYGUARD_E_TOO_MANY_MEMBERS, too_many_members)
NPYGUARD_SAME_CODE(NPYGUARD_E_ENTRY_COUNT_MISMATCH, entry_count_mismatch)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_CENTRAL_HEADER, bad_central_header)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_EXTRA_FIELD, bad_extra_field)
NPYGUARD_SAME_CODE(NPYGUARD_E_ENCRYPTED_MEMBER, encrypted_member)
NPYGUARD_SAME_CODE(NPYGUARD_E_UNSUPPORTED_METHOD, unsupported_method)
NPYGUARD_SAME_CODE(NPYGUARD_E_UNSUPPORTED_FEATURE, unsupported_feature)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_MEMBER_TYPE, bad_member_type)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_MEMBER_NAME, bad_member_name)
NPYGUARD_SAME_CODE(NPYGUARD_E_NOT_NPY_MEMBER, not_npy_member)
NPYGUARD_SAME_CODE(NPYGUARD_E_DUPLICATE_NAME, duplicate_name)
NPYGUARD_SAME_CODE(NPYGUARD_E_NAME_MISMATCH, name_mismatch)
NPYGUARD_SAME_CODE(NPYGUARD_E_ENTRY_OUT_OF_BOUNDS, entry_out_of_bounds)
NPYGUARD_SAME_CODE(NPYGUARD_E_SIZE_MISMATCH, size_mismatch)
NPYGUARD_SAME_CODE(NPYGUARD_E_RATIO_EXCEEDED, ratio_exceeded)
NPYGUARD_SAME_CODE(NPYGUARD_E_TOTAL_SIZE_EXCEEDED, total_size_exceeded)
NPYGUARD_SAME_CODE(NPYGUARD_E_PREPENDED_DATA, prepended_data)
NPYGUARD_SAME_CODE(NPYGUARD_E_GAP_BETWEEN_ENTRIES, gap_between_entries)
NPYGUARD_SAME_CODE(NPYGUARD_E_OVERLAPPING_ENTRIES, overlapping_entries)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_LOCAL_HEADER, bad_local_header)
NPYGUARD_SAME_CODE(NPYGUARD_E_HEADER_MISMATCH, header_mismatch)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_DATA_DESCRIPTOR, bad_data_descriptor)
NPYGUARD_SAME_CODE(NPYGUARD_E_ENTRY_ORDER, entry_order)
NPYGUARD_SAME_CODE(NPYGUARD_E_BAD_DEFLATE, bad_deflate)
NPYGUARD_SAME_CODE(NPYGUARD_E_CRC_MISMATCH, crc_mismatch)
NPYGUARD_SAME_CODE(NPYGUARD_E_NOT_CONVERTIBLE, not_convertible)
NPYGUARD_SAME_CODE(NPYGUARD_E_INVALID_ARGUMENT, invalid_argument)
#undef NPYGUARD_SAME_CODE

#define NPYGUARD_SAME_KIND(c_name, cpp_name) \
  static_assert(static_cast<int>(c_name) == static_cast<int>(npyguard::dtype_kind::cpp_name), #cpp_name);
NPYGUARD_SAME_KIND(NPYGUARD_KIND_BOOL, boolean)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_INT, signed_integer)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_UINT, unsigned_integer)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_FLOAT, floating)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_COMPLEX, complex_floating)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_BYTES, bytes)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_UNICODE, unicode)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_VOID, raw_void)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_DATETIME, datetime)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_TIMEDELTA, timedelta)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_OBJECT, object)
NPYGUARD_SAME_KIND(NPYGUARD_KIND_STRUCT, structured)
#undef NPYGUARD_SAME_KIND

static_assert(static_cast<int>(NPYGUARD_FORMAT_NPY) == static_cast<int>(npyguard::file_format::npy), "npy");
static_assert(static_cast<int>(NPYGUARD_FORMAT_NPZ) == static_cast<int>(npyguard::file_format::npz), "npz");
static_assert(static_cast<int>(NPYGUARD_FORMAT_RA) == static_cast<int>(npyguard::file_format::ra), "ra");

// The opaque types are never defined: their pointers are the C++ models'
// (npyguard::header, dtype, field, ra::header), converted with
// reinterpret_cast on the way out and back on the way in.

struct npyguard_result {
  npyguard_format format = NPYGUARD_FORMAT_DETECT;
  std::variant<std::monostate, npyguard::header, npyguard::npz::archive, npyguard::ra::header> model;
  std::optional<npyguard::error> failure;
  npyguard_error c_error{};
};

namespace {

using npyguard::error;
using npyguard::error_code;

const npyguard_error no_memory = {
    NPYGUARD_E_OUT_OF_MEMORY, 0, 0, "out of memory for the result", nullptr, 0, 0, 0, nullptr, 0, 0, 0};

error invalid(std::string message) { return error{error_code::invalid_argument, std::nullopt, std::move(message)}; }

// ---------------------------------------------------------------------------
// Options: only the fields inside the caller's struct_size are read.

template <typename Field>
bool inside(std::size_t struct_size, std::size_t offset) noexcept {
  return offset + sizeof(Field) <= struct_size;
}

std::optional<error> read_flag(const std::uint8_t& value, const char* name, bool& out) {
  if (value > 1) return invalid(std::string("options.") + name + " is " + std::to_string(value) + ": use 0 or 1");
  out = value == 1;
  return std::nullopt;
}

std::optional<error> convert_options(const npyguard_options* in, npyguard::options& out) {
  out = npyguard::options{};
  if (in == nullptr) return std::nullopt;
  const std::size_t size = in->struct_size;
  if (size < offsetof(npyguard_options, max_header_bytes)) {
    return invalid("options.struct_size is " + std::to_string(size) +
                   ": call npyguard_options_init(&opts, sizeof opts) before setting options");
  }
  if (size > sizeof(npyguard_options)) { // a newer caller: its extra fields must all be unset
    const auto* bytes = reinterpret_cast<const unsigned char*>(in);
    for (std::size_t i = sizeof(npyguard_options); i < size; ++i) {
      if (bytes[i] != 0) {
        return invalid("options.struct_size is " + std::to_string(size) + ", and byte " + std::to_string(i) +
                       " is set: this library (" NPYGUARD_VERSION_STRING ") knows only the first " +
                       std::to_string(sizeof(npyguard_options)) + " bytes of npyguard_options");
      }
    }
  }
#define NPYGUARD_FIELD(name, target) \
  if (inside<decltype(in->name)>(size, offsetof(npyguard_options, name))) (target) = in->name;
#define NPYGUARD_FLAG(name, target)                                         \
  if (inside<decltype(in->name)>(size, offsetof(npyguard_options, name))) { \
    if (auto failure = read_flag(in->name, #name, target)) return failure;  \
  }
  NPYGUARD_FIELD(max_header_bytes, out.limits.max_header_bytes)
  NPYGUARD_FIELD(max_depth, out.limits.max_depth)
  NPYGUARD_FIELD(max_ndim, out.limits.max_ndim)
  NPYGUARD_FIELD(timeout_ms, out.timeout_ms)
  NPYGUARD_FIELD(max_data_bytes, out.limits.max_data_bytes)
  NPYGUARD_FIELD(max_members, out.limits.max_members)
  NPYGUARD_FIELD(max_total_bytes, out.limits.max_total_bytes)
  NPYGUARD_FIELD(max_ratio, out.limits.max_ratio)
  NPYGUARD_FIELD(max_stream_bytes, out.limits.max_stream_bytes)
  NPYGUARD_FLAG(allow_object, out.allow_object)
  NPYGUARD_FLAG(allow_trailing_data, out.allow_trailing_data)
  NPYGUARD_FLAG(canonical, out.canonical)
  NPYGUARD_FLAG(verify, out.verify)
  NPYGUARD_FLAG(ra_allow_type5, out.ra_allow_type5)
  NPYGUARD_FLAG(ra_reject_metadata, out.ra_reject_metadata)
  NPYGUARD_FLAG(minimal_reads, out.minimal_reads)
#undef NPYGUARD_FIELD
#undef NPYGUARD_FLAG
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// The caller's callbacks as the library's sources. A callback that answers
// more than it was asked is a read error (-EIO), never trusted.

std::ptrdiff_t checked_answer(std::ptrdiff_t answer, std::size_t asked) noexcept {
  if (answer > 0 && static_cast<std::size_t>(answer) > asked) return -EIO;
  return answer;
}

class reader_source final : public npyguard::random_access_source {
public:
  explicit reader_source(const npyguard_reader& reader) noexcept : reader_(reader) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return reader_.size; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (size == 0) return 0; // the caller is promised no empty requests
    return checked_answer(reader_.read_at(reader_.context, offset, buffer, size), size);
  }

private:
  const npyguard_reader& reader_;
};

class stream_source final : public npyguard::byte_source {
public:
  stream_source(npyguard_read_fn function, void* context) noexcept : read_(function), context_(context) {}
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    if (size == 0) return 0;
    return checked_answer(read_(context_, buffer, size), size);
  }

private:
  npyguard_read_fn read_;
  void* context_;
};

// ---------------------------------------------------------------------------
// Results.

npyguard_format c_format(npyguard::file_format format) noexcept { return static_cast<npyguard_format>(format); }

bool known_format(npyguard_format format) noexcept {
  return format == NPYGUARD_FORMAT_DETECT || format == NPYGUARD_FORMAT_NPY || format == NPYGUARD_FORMAT_NPZ ||
         format == NPYGUARD_FORMAT_RA;
}

// The npyguard_options fields an error may name: the library's names
// (npyguard::options, npyguard::limits), which the C struct spells alike.
// Static strings, so the C error may point at them.
constexpr const char* c_option_names[] = {
    "max_header_bytes", "max_depth",      "max_ndim",           "timeout_ms",    "max_data_bytes",      "max_members",
    "max_total_bytes",  "max_ratio",      "max_stream_bytes",   "allow_object",  "allow_trailing_data", "canonical",
    "verify",           "ra_allow_type5", "ra_reject_metadata", "minimal_reads",
};

// The npyguard_options field named `option`; NULL for none (or a name this
// table lacks, which the C tests rule out).
const char* c_option_name(std::string_view option) noexcept {
  if (option.empty()) return nullptr;
  for (const char* name : c_option_names) {
    if (option == name) return name;
  }
  return nullptr;
}

// Points the C error at the C++ one (both live in `result`); the message
// names the npyguard_options field that refused the input.
void publish_error(npyguard_result& result) {
  error& failure = *result.failure;
  npyguard_error& out = result.c_error;
  out.option = c_option_name(failure.option);
  if (out.option != nullptr) failure.message += std::string(" (npyguard_options.") + out.option + ")";
  out.has_limit = failure.limit.has_value() ? 1 : 0;
  out.limit = failure.limit.value_or(0);
  out.actual = failure.actual.value_or(0);
  out.code = static_cast<int>(failure.code);
  out.has_offset = failure.offset.has_value() ? 1 : 0;
  out.offset = failure.offset.value_or(0);
  out.message = failure.message.c_str();
  out.member = failure.member ? failure.member->c_str() : nullptr;
  out.member_length = failure.member ? failure.member->size() : 0;
  out.has_member_offset = failure.member_offset.has_value() ? 1 : 0;
  out.member_offset = failure.member_offset.value_or(0);
}

template <typename Model>
void store(npyguard_result& result, npyguard::basic_result<Model> checked) {
  if (const error* failure = checked.failure_if()) {
    result.failure = *failure;
    publish_error(result);
    return;
  }
  result.model = checked.value();
}

void store_error(npyguard_result& result, error failure) {
  result.failure = std::move(failure);
  publish_error(result);
}

// Runs `fill(result, options)` in a new result once the format and the
// caller's options passed; nothing escapes. NULL only when the result itself
// cannot be allocated.
template <typename Fill>
npyguard_result* make_result(npyguard_format format, const npyguard_options* opts, Fill fill) noexcept {
  auto* result = new (std::nothrow) npyguard_result();
  if (result == nullptr) return nullptr;
  result->format = format;
  try {
    if (!known_format(format)) {
      store_error(*result, invalid("format " + std::to_string(static_cast<int>(format)) +
                                   " is none of NPYGUARD_FORMAT_DETECT, _NPY, _NPZ, _RA"));
    } else {
      npyguard::options cpp;
      if (auto failure = convert_options(opts, cpp)) {
        store_error(*result, std::move(*failure));
      } else {
        fill(*result, cpp);
      }
    }
  } catch (...) { // bad_alloc while building the verdict or its copy:
    // the model (if any) is hidden by the error (accepted() below)
    result->c_error = no_memory;
  }
  return result;
}

// Validates with the validator of `format` (not DETECT): `npy(opts)`,
// `npz(opts)`, `ra(opts)` each return that format's result.
template <typename Npy, typename Npz, typename Ra>
void dispatch(npyguard_result& result, npyguard_format format, const npyguard::options& opts, Npy npy, Npz npz, Ra ra) {
  result.format = format;
  switch (format) {
    case NPYGUARD_FORMAT_NPZ: store(result, npz(opts)); return;
    case NPYGUARD_FORMAT_RA: store(result, ra(opts)); return;
    case NPYGUARD_FORMAT_NPY:
    case NPYGUARD_FORMAT_DETECT:
    case NPYGUARD_FORMAT_INT_MAX_: break; // refused before (known_format)
  }
  store(result, npy(opts));
}

const npyguard::header* npy_of(const npyguard_npy* npy) noexcept {
  return reinterpret_cast<const npyguard::header*>(npy);
}
const npyguard::dtype* dtype_of(const npyguard_dtype* dtype) noexcept {
  return reinterpret_cast<const npyguard::dtype*>(dtype);
}
const npyguard::field* field_of(const npyguard_field* field) noexcept {
  return reinterpret_cast<const npyguard::field*>(field);
}
const npyguard::ra::header* ra_of(const npyguard_ra* ra) noexcept {
  return reinterpret_cast<const npyguard::ra::header*>(ra);
}
const npyguard_npy* c_npy(const npyguard::header* npy) noexcept { return reinterpret_cast<const npyguard_npy*>(npy); }

// The result holds an accepted model (not an error, not out of memory).
bool accepted(const npyguard_result* result) noexcept { return result != nullptr && result->c_error.code == 0; }

const npyguard::npz::archive* archive_of(const npyguard_result* result) noexcept {
  return accepted(result) ? std::get_if<npyguard::npz::archive>(&result->model) : nullptr;
}
const npyguard::npz::member* member_of(const npyguard_result* result, std::size_t index) noexcept {
  const npyguard::npz::archive* archive = archive_of(result);
  if (archive == nullptr || index >= archive->members.size()) return nullptr;
  return &archive->members[index];
}

std::size_t copy_out(const std::string& text, char* buffer, std::size_t size) noexcept {
  if (buffer != nullptr && size != 0) {
    const std::size_t n = std::min(text.size(), size - 1);
    std::memcpy(buffer, text.data(), n);
    buffer[n] = '\0';
  }
  return text.size();
}

// A verdict of the input boundary (npyguard/input.hpp) in the result.
void store_input(npyguard_result& result, npyguard::input_result checked) {
  result.format = c_format(checked.format);
  switch (checked.format) {
    case npyguard::file_format::npz: store(result, std::move(checked.npz)); return;
    case npyguard::file_format::ra: store(result, std::move(checked.ra)); return;
    case npyguard::file_format::npy: break;
  }
  store(result, std::move(checked.npy));
}

npyguard::input_request request_for(npyguard_format format) {
  npyguard::input_request request;
  if (format != NPYGUARD_FORMAT_DETECT) request.format = static_cast<npyguard::file_format>(format);
  return request;
}

} // namespace

extern "C" {

const char* npyguard_version(void) { return npyguard::version(); }

const char* npyguard_error_code_name(int code) {
  if (code == 0) return "ok";
  if (code < 0 || code > 0xFFFF) return "unknown";
  // error_code_name's views are of string literals: NUL-terminated.
  return npyguard::error_code_name(static_cast<error_code>(code)).data();
}

void npyguard_options_init(npyguard_options* opts, size_t struct_size) {
  if (opts == nullptr) return;
  const std::size_t known = std::min(struct_size, sizeof(npyguard_options));
  std::memset(opts, 0, struct_size); // the caller's whole struct, as it says
  npyguard_options defaults{};
  const npyguard::options cpp{};
  defaults.struct_size = struct_size;
  defaults.max_header_bytes = cpp.limits.max_header_bytes;
  defaults.max_depth = cpp.limits.max_depth;
  defaults.max_ndim = cpp.limits.max_ndim;
  defaults.timeout_ms = cpp.timeout_ms;
  defaults.max_data_bytes = cpp.limits.max_data_bytes;
  defaults.max_members = cpp.limits.max_members;
  defaults.max_total_bytes = cpp.limits.max_total_bytes;
  defaults.max_ratio = cpp.limits.max_ratio;
  defaults.max_stream_bytes = cpp.limits.max_stream_bytes;
  defaults.allow_object = cpp.allow_object ? 1 : 0;
  defaults.allow_trailing_data = cpp.allow_trailing_data ? 1 : 0;
  defaults.canonical = cpp.canonical ? 1 : 0;
  defaults.verify = cpp.verify ? 1 : 0;
  defaults.ra_allow_type5 = cpp.ra_allow_type5 ? 1 : 0;
  defaults.ra_reject_metadata = cpp.ra_reject_metadata ? 1 : 0;
  defaults.minimal_reads = cpp.minimal_reads ? 1 : 0;
  std::memcpy(opts, &defaults, known);
}

npyguard_result* npyguard_check_buffer(npyguard_format format, const void* data, size_t size,
                                       const npyguard_options* opts) {
  return make_result(format, opts, [&](npyguard_result& result, const npyguard::options& cpp) {
    if (data == nullptr && size != 0)
      return store_error(result, invalid("data is NULL with a size of " + std::to_string(size)));
    const npyguard_format chosen =
        format == NPYGUARD_FORMAT_DETECT ? c_format(npyguard::detect_format(data, size)) : format;
    dispatch(
        result, chosen, cpp, [&](const npyguard::options& o) { return npyguard::validate_buffer(data, size, o); },
        [&](const npyguard::options& o) { return npyguard::npz::validate_buffer(data, size, o); },
        [&](const npyguard::options& o) { return npyguard::ra::validate_buffer(data, size, o); });
  });
}

npyguard_result* npyguard_check_file(npyguard_format format, const char* path, const npyguard_options* opts) {
  return make_result(format, opts, [&](npyguard_result& result, const npyguard::options& cpp) {
    if (path == nullptr) return store_error(result, invalid("path is NULL"));
    // The boundary: one open without blocking, fstat of that descriptor,
    // and with DETECT the format of SPEC.md section 9 (the name's claim,
    // else the first bytes, read from the same descriptor).
    store_input(result, npyguard::validate_input(path, cpp, request_for(format)));
  });
}

npyguard_result* npyguard_check_fd(npyguard_format format, int fd, const npyguard_options* opts) {
  return make_result(format, opts, [&](npyguard_result& result, const npyguard::options& cpp) {
    if (format == NPYGUARD_FORMAT_DETECT) {
      return store_error(result, invalid("npyguard_check_fd needs the format: NPYGUARD_FORMAT_NPY, _NPZ or _RA"));
    }
    store_input(result, npyguard::validate_input_fd(fd, cpp, request_for(format)));
  });
}

npyguard_result* npyguard_check_reader(npyguard_format format, const npyguard_reader* reader,
                                       const npyguard_options* opts) {
  return make_result(format, opts, [&](npyguard_result& result, const npyguard::options& cpp) {
    if (reader == nullptr || reader->read_at == nullptr) {
      return store_error(result, invalid("the reader or its read_at is NULL"));
    }
    if (reader->struct_size < sizeof(npyguard_reader)) {
      return store_error(result, invalid("reader.struct_size is " + std::to_string(reader->struct_size) +
                                         ": set it to sizeof(npyguard_reader)"));
    }
    reader_source source(*reader);
    npyguard_format chosen = format;
    if (format == NPYGUARD_FORMAT_DETECT) {
      unsigned char head[npyguard::detect_bytes] = {};
      const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(source.size(), sizeof head));
      const std::ptrdiff_t got = source.read_at(0, head, wanted);
      // A failed read is reported by the validator's own first read.
      chosen = c_format(npyguard::detect_format(head, got > 0 ? static_cast<std::size_t>(got) : 0));
    }
    dispatch(
        result, chosen, cpp, [&](const npyguard::options& o) { return npyguard::validate_source(source, o); },
        [&](const npyguard::options& o) { return npyguard::npz::validate_source(source, o); },
        [&](const npyguard::options& o) { return npyguard::ra::validate_source(source, o); });
  });
}

npyguard_result* npyguard_check_stream(npyguard_format format, npyguard_read_fn read, void* context,
                                       const npyguard_options* opts) {
  return make_result(format, opts, [&](npyguard_result& result, const npyguard::options& cpp) {
    if (read == nullptr) return store_error(result, invalid("the read function is NULL"));
    stream_source stream(read, context);
    npyguard::peeked_source source(stream);
    npyguard_format chosen = format;
    if (format == NPYGUARD_FORMAT_DETECT) {
      source.peek();
      chosen = c_format(npyguard::detect_format(source.head(), source.head_size()));
    }
    dispatch(
        result, chosen, cpp, [&](const npyguard::options& o) { return npyguard::validate_stream(source, o); },
        [&](const npyguard::options& o) { return npyguard::npz::validate_stream(source, o); },
        [&](const npyguard::options& o) { return npyguard::ra::validate_stream(source, o); });
  });
}

void npyguard_result_free(npyguard_result* result) { delete result; }

int npyguard_result_ok(const npyguard_result* result) { return accepted(result) ? 1 : 0; }

npyguard_format npyguard_result_format(const npyguard_result* result) {
  return result == nullptr ? NPYGUARD_FORMAT_DETECT : result->format;
}

const npyguard_error* npyguard_result_error(const npyguard_result* result) {
  if (result == nullptr) return &no_memory;
  return result->c_error.code == 0 ? nullptr : &result->c_error;
}

// .npy

const npyguard_npy* npyguard_result_npy(const npyguard_result* result) {
  if (!accepted(result)) return nullptr;
  const auto* model = std::get_if<npyguard::header>(&result->model);
  return model == nullptr ? nullptr : c_npy(model);
}

unsigned npyguard_npy_major_version(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->major_version; }
unsigned npyguard_npy_minor_version(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->minor_version; }
uint32_t npyguard_npy_header_length(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->header_length; }
uint64_t npyguard_npy_data_offset(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->data_offset; }
int npyguard_npy_fortran_order(const npyguard_npy* npy) { return npy != nullptr && npy_of(npy)->fortran_order ? 1 : 0; }
size_t npyguard_npy_ndim(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->shape.size(); }
uint64_t npyguard_npy_dim(const npyguard_npy* npy, size_t index) {
  return npy == nullptr || index >= npy_of(npy)->shape.size() ? 0 : npy_of(npy)->shape[index];
}
uint64_t npyguard_npy_count(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->count; }
uint64_t npyguard_npy_nbytes(const npyguard_npy* npy) { return npy == nullptr ? 0 : npy_of(npy)->nbytes; }
int npyguard_npy_data_is_pickle(const npyguard_npy* npy) {
  return npy != nullptr && npy_of(npy)->data_is_pickle ? 1 : 0;
}
const npyguard_dtype* npyguard_npy_dtype(const npyguard_npy* npy) {
  return npy == nullptr ? nullptr : reinterpret_cast<const npyguard_dtype*>(&npy_of(npy)->descr);
}

size_t npyguard_dtype_descr(const npyguard_dtype* dtype, char* buffer, size_t size) {
  if (dtype == nullptr) return copy_out(std::string(), buffer, size);
  try {
    return copy_out(npyguard::descr_repr(*dtype_of(dtype)), buffer, size);
  } catch (...) { // out of memory for the string
    return copy_out(std::string(), buffer, size);
  }
}

npyguard_dtype_kind npyguard_dtype_get_kind(const npyguard_dtype* dtype) {
  return dtype == nullptr ? NPYGUARD_KIND_VOID : static_cast<npyguard_dtype_kind>(dtype_of(dtype)->kind);
}
char npyguard_dtype_byte_order(const npyguard_dtype* dtype) {
  if (dtype == nullptr) return '|';
  switch (dtype_of(dtype)->order) {
    case npyguard::byte_order::little: return '<';
    case npyguard::byte_order::big: return '>';
    case npyguard::byte_order::not_applicable: break;
  }
  return '|';
}
uint64_t npyguard_dtype_itemsize(const npyguard_dtype* dtype) {
  return dtype == nullptr ? 0 : dtype_of(dtype)->itemsize;
}
const char* npyguard_dtype_time_unit(const npyguard_dtype* dtype) {
  if (dtype == nullptr || (dtype_of(dtype)->kind != npyguard::dtype_kind::datetime &&
                           dtype_of(dtype)->kind != npyguard::dtype_kind::timedelta)) {
    return "";
  }
  // time_unit_name's views are of string literals: NUL-terminated.
  return npyguard::time_unit_name(dtype_of(dtype)->datetime_unit).data();
}
uint32_t npyguard_dtype_time_multiplier(const npyguard_dtype* dtype) {
  return dtype == nullptr ? 1 : dtype_of(dtype)->datetime_multiplier;
}
size_t npyguard_dtype_field_count(const npyguard_dtype* dtype) {
  return dtype == nullptr ? 0 : dtype_of(dtype)->fields.size();
}
const npyguard_field* npyguard_dtype_field(const npyguard_dtype* dtype, size_t index) {
  if (dtype == nullptr || index >= dtype_of(dtype)->fields.size()) return nullptr;
  return reinterpret_cast<const npyguard_field*>(&dtype_of(dtype)->fields[index]);
}

const char* npyguard_field_name(const npyguard_field* field, size_t* length) {
  if (length != nullptr) *length = field == nullptr ? 0 : field_of(field)->name.size();
  return field == nullptr ? nullptr : field_of(field)->name.c_str();
}
const char* npyguard_field_title(const npyguard_field* field, size_t* length) {
  const bool titled = field != nullptr && field_of(field)->title.has_value();
  if (length != nullptr) *length = titled ? field_of(field)->title->size() : 0;
  return titled ? field_of(field)->title->c_str() : nullptr;
}
uint64_t npyguard_field_offset(const npyguard_field* field) { return field == nullptr ? 0 : field_of(field)->offset; }
uint64_t npyguard_field_itemsize(const npyguard_field* field) {
  return field == nullptr ? 0 : field_of(field)->itemsize;
}
size_t npyguard_field_subarray_ndim(const npyguard_field* field) {
  return field == nullptr ? 0 : field_of(field)->subarray_shape.size();
}
uint64_t npyguard_field_subarray_dim(const npyguard_field* field, size_t index) {
  return field == nullptr || index >= field_of(field)->subarray_shape.size() ? 0
                                                                             : field_of(field)->subarray_shape[index];
}
const npyguard_dtype* npyguard_field_dtype(const npyguard_field* field) {
  return field == nullptr ? nullptr : reinterpret_cast<const npyguard_dtype*>(&field_of(field)->type);
}

// .npz

size_t npyguard_result_member_count(const npyguard_result* result) {
  const npyguard::npz::archive* archive = archive_of(result);
  return archive == nullptr ? 0 : archive->members.size();
}
const char* npyguard_member_name(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? nullptr : member->name.c_str();
}
const char* npyguard_member_key(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? nullptr : member->key.c_str();
}
unsigned npyguard_member_method(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? 0 : static_cast<unsigned>(member->method);
}
uint64_t npyguard_member_compressed_size(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? 0 : member->compressed_size;
}
uint64_t npyguard_member_uncompressed_size(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? 0 : member->uncompressed_size;
}
uint32_t npyguard_member_crc32(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? 0 : member->crc32;
}
uint64_t npyguard_member_local_header_offset(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? 0 : member->local_header_offset;
}
uint64_t npyguard_member_data_start(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? 0 : member->data_start;
}
const npyguard_npy* npyguard_member_npy(const npyguard_result* result, size_t index) {
  const npyguard::npz::member* member = member_of(result, index);
  return member == nullptr ? nullptr : c_npy(&member->npy);
}
int npyguard_npz_zip64(const npyguard_result* result) {
  const npyguard::npz::archive* archive = archive_of(result);
  return archive != nullptr && archive->zip64 ? 1 : 0;
}
int npyguard_npz_verified(const npyguard_result* result) {
  const npyguard::npz::archive* archive = archive_of(result);
  return archive != nullptr && archive->verified ? 1 : 0;
}
uint64_t npyguard_npz_bytes_read(const npyguard_result* result) {
  const npyguard::npz::archive* archive = archive_of(result);
  return archive == nullptr ? 0 : archive->bytes_read;
}

// RawArray

const npyguard_ra* npyguard_result_ra(const npyguard_result* result) {
  if (!accepted(result)) return nullptr;
  const auto* model = std::get_if<npyguard::ra::header>(&result->model);
  return model == nullptr ? nullptr : reinterpret_cast<const npyguard_ra*>(model);
}
uint64_t npyguard_ra_flags(const npyguard_ra* ra) { return ra == nullptr ? 0 : ra_of(ra)->flags; }
int npyguard_ra_big_endian(const npyguard_ra* ra) { return ra != nullptr && ra_of(ra)->big_endian ? 1 : 0; }
unsigned npyguard_ra_eltype(const npyguard_ra* ra) {
  return ra == nullptr ? 0 : static_cast<unsigned>(ra_of(ra)->eltype);
}
uint64_t npyguard_ra_elbyte(const npyguard_ra* ra) { return ra == nullptr ? 0 : ra_of(ra)->elbyte; }
size_t npyguard_ra_ndim(const npyguard_ra* ra) { return ra == nullptr ? 0 : ra_of(ra)->dims.size(); }
uint64_t npyguard_ra_dim(const npyguard_ra* ra, size_t index) {
  return ra == nullptr || index >= ra_of(ra)->dims.size() ? 0 : ra_of(ra)->dims[index];
}
uint64_t npyguard_ra_count(const npyguard_ra* ra) { return ra == nullptr ? 0 : ra_of(ra)->count; }
uint64_t npyguard_ra_data_offset(const npyguard_ra* ra) { return ra == nullptr ? 0 : ra_of(ra)->data_offset; }
uint64_t npyguard_ra_data_length(const npyguard_ra* ra) { return ra == nullptr ? 0 : ra_of(ra)->data_length; }
size_t npyguard_ra_type_name(const npyguard_ra* ra, char* buffer, size_t size) {
  if (ra == nullptr) return copy_out(std::string(), buffer, size);
  try {
    return copy_out(npyguard::ra::type_name(ra_of(ra)->eltype, ra_of(ra)->elbyte), buffer, size);
  } catch (...) { // out of memory for the string
    return copy_out(std::string(), buffer, size);
  }
}
int npyguard_ra_metadata(const npyguard_ra* ra, uint64_t* offset, uint64_t* length) {
  const bool known = ra != nullptr && ra_of(ra)->metadata_offset && ra_of(ra)->metadata_length;
  if (offset != nullptr) *offset = known ? *ra_of(ra)->metadata_offset : 0;
  if (length != nullptr) *length = known ? *ra_of(ra)->metadata_length : 0;
  return known ? 1 : 0;
}

} // extern "C"
