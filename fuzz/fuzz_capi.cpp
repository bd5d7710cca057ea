// The C API (npyguard.h) against the C++ API it wraps: the same bytes and
// options through npyguard_check_buffer / _reader / _stream and through the
// C++ entry point of the same kind must give the same verdict (code, offset,
// message, member), and every accessor must show the C++ model exactly
// (the dtype tree walked by index, .npz members, RawArray fields).
//
// Input: four configuration bytes, then the file.
//   byte 0: bits 0-1 the format (0 DETECT, 1 .npy, 2 .npz, 3 RawArray),
//           bits 2-3 the entry point (0 buffer, 1 reader, 2 stream, 3 buffer),
//           bit 4 an older caller's options struct (the flags past its size
//           take their defaults), bits 5-7 the stream's chunk size
//   bytes 1-2: the .npy options, as fuzz_common.hpp's decode_options
//   byte 3: bit 0 verify, bit 1 ra_reject_metadata, bit 2 ra type 5 refused,
//           bit 3 minimal_reads
// 00 00 00 00 is DETECT on a buffer with the default options.
#include <cstddef>

#include "fuzz_common.hpp"
#include "npyguard.h"

namespace {

using namespace npyguard;
using fuzz::chunked_stream;

// The C callbacks over the same bytes.
struct c_input {
  const std::uint8_t* data;
  std::size_t size;
  std::size_t chunk;
  std::size_t at;
};

std::ptrdiff_t c_read_at(void* context, std::uint64_t offset, void* buffer, std::size_t size) {
  const auto* input = static_cast<const c_input*>(context);
  NPYGUARD_FUZZ_CHECK(size != 0 && buffer != nullptr); // the C API promises no empty requests
  if (offset >= input->size) return 0;
  const std::size_t n = std::min<std::size_t>(size, input->size - static_cast<std::size_t>(offset));
  std::memcpy(buffer, input->data + offset, n);
  return static_cast<std::ptrdiff_t>(n);
}

std::ptrdiff_t c_read(void* context, void* buffer, std::size_t size) {
  auto* input = static_cast<c_input*>(context);
  const std::size_t n = std::min(std::min(size, input->chunk), input->size - input->at);
  if (n != 0) std::memcpy(buffer, input->data + input->at, n);
  input->at += n;
  return static_cast<std::ptrdiff_t>(n);
}

std::string descr_of(const npyguard_dtype* dtype) {
  const std::size_t length = npyguard_dtype_descr(dtype, nullptr, 0);
  std::string out(length + 1, '\0');
  NPYGUARD_FUZZ_CHECK(npyguard_dtype_descr(dtype, out.data(), out.size()) == length);
  NPYGUARD_FUZZ_CHECK(out[length] == '\0');
  out.resize(length);
  return out;
}

void same_dtype(const npyguard_dtype* c, const dtype& cpp) {
  NPYGUARD_FUZZ_CHECK(c != nullptr);
  NPYGUARD_FUZZ_CHECK(static_cast<int>(npyguard_dtype_get_kind(c)) == static_cast<int>(cpp.kind));
  const char order = cpp.order == byte_order::little ? '<' : cpp.order == byte_order::big ? '>' : '|';
  NPYGUARD_FUZZ_CHECK(npyguard_dtype_byte_order(c) == order);
  NPYGUARD_FUZZ_CHECK(npyguard_dtype_itemsize(c) == cpp.itemsize);
  if (cpp.kind == dtype_kind::datetime || cpp.kind == dtype_kind::timedelta) {
    NPYGUARD_FUZZ_CHECK(time_unit_name(cpp.datetime_unit) == npyguard_dtype_time_unit(c));
    NPYGUARD_FUZZ_CHECK(npyguard_dtype_time_multiplier(c) == cpp.datetime_multiplier);
  } else {
    NPYGUARD_FUZZ_CHECK(std::strcmp(npyguard_dtype_time_unit(c), "") == 0);
  }
  NPYGUARD_FUZZ_CHECK(npyguard_dtype_field_count(c) == cpp.fields.size());
  NPYGUARD_FUZZ_CHECK(npyguard_dtype_field(c, cpp.fields.size()) == nullptr);
  for (std::size_t i = 0; i < cpp.fields.size(); ++i) {
    const npyguard_field* field = npyguard_dtype_field(c, i);
    const ::npyguard::field& expected = cpp.fields[i];
    std::size_t length = 1;
    const char* name = npyguard_field_name(field, &length);
    NPYGUARD_FUZZ_CHECK(field != nullptr && name != nullptr && expected.name == std::string(name, length));
    const char* title = npyguard_field_title(field, &length);
    NPYGUARD_FUZZ_CHECK(expected.title ? title != nullptr && *expected.title == std::string(title, length)
                                       : title == nullptr && length == 0);
    NPYGUARD_FUZZ_CHECK(npyguard_field_offset(field) == expected.offset);
    NPYGUARD_FUZZ_CHECK(npyguard_field_itemsize(field) == expected.itemsize);
    NPYGUARD_FUZZ_CHECK(npyguard_field_subarray_ndim(field) == expected.subarray_shape.size());
    for (std::size_t d = 0; d <= expected.subarray_shape.size(); ++d) {
      const std::uint64_t want = d < expected.subarray_shape.size() ? expected.subarray_shape[d] : 0;
      NPYGUARD_FUZZ_CHECK(npyguard_field_subarray_dim(field, d) == want);
    }
    same_dtype(npyguard_field_dtype(field), expected.type);
  }
}

void same_npy(const npyguard_npy* c, const header& cpp) {
  NPYGUARD_FUZZ_CHECK(c != nullptr);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_major_version(c) == cpp.major_version);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_minor_version(c) == cpp.minor_version);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_header_length(c) == cpp.header_length);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_data_offset(c) == cpp.data_offset);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_fortran_order(c) == (cpp.fortran_order ? 1 : 0));
  NPYGUARD_FUZZ_CHECK(npyguard_npy_ndim(c) == cpp.shape.size());
  for (std::size_t i = 0; i <= cpp.shape.size(); ++i) {
    NPYGUARD_FUZZ_CHECK(npyguard_npy_dim(c, i) == (i < cpp.shape.size() ? cpp.shape[i] : 0));
  }
  NPYGUARD_FUZZ_CHECK(npyguard_npy_count(c) == cpp.count);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_nbytes(c) == cpp.nbytes);
  NPYGUARD_FUZZ_CHECK(npyguard_npy_data_is_pickle(c) == (cpp.data_is_pickle ? 1 : 0));
  same_dtype(npyguard_npy_dtype(c), cpp.descr);
  NPYGUARD_FUZZ_CHECK(descr_of(npyguard_npy_dtype(c)) == descr_repr(cpp.descr));
}

void same_ra(const npyguard_ra* c, const ra::header& cpp) {
  NPYGUARD_FUZZ_CHECK(c != nullptr);
  NPYGUARD_FUZZ_CHECK(npyguard_ra_flags(c) == cpp.flags);
  NPYGUARD_FUZZ_CHECK(npyguard_ra_big_endian(c) == (cpp.big_endian ? 1 : 0));
  NPYGUARD_FUZZ_CHECK(npyguard_ra_eltype(c) == static_cast<unsigned>(cpp.eltype));
  NPYGUARD_FUZZ_CHECK(npyguard_ra_elbyte(c) == cpp.elbyte);
  const std::string name = ra::type_name(cpp.eltype, cpp.elbyte);
  char buffer[64];
  NPYGUARD_FUZZ_CHECK(npyguard_ra_type_name(c, buffer, sizeof buffer) == name.size());
  NPYGUARD_FUZZ_CHECK(name.compare(0, sizeof buffer - 1, buffer) == 0 || name.size() >= sizeof buffer);
  NPYGUARD_FUZZ_CHECK(npyguard_ra_ndim(c) == cpp.dims.size());
  for (std::size_t i = 0; i <= cpp.dims.size(); ++i) {
    NPYGUARD_FUZZ_CHECK(npyguard_ra_dim(c, i) == (i < cpp.dims.size() ? cpp.dims[i] : 0));
  }
  NPYGUARD_FUZZ_CHECK(npyguard_ra_count(c) == cpp.count);
  NPYGUARD_FUZZ_CHECK(npyguard_ra_data_offset(c) == cpp.data_offset);
  NPYGUARD_FUZZ_CHECK(npyguard_ra_data_length(c) == cpp.data_length);
  std::uint64_t offset = 1;
  std::uint64_t length = 1;
  const int known = npyguard_ra_metadata(c, &offset, &length);
  NPYGUARD_FUZZ_CHECK(known == (cpp.metadata_offset ? 1 : 0));
  NPYGUARD_FUZZ_CHECK(offset == cpp.metadata_offset.value_or(0) && length == cpp.metadata_length.value_or(0));
}

void same_archive(const npyguard_result* c, const npz::archive& cpp) {
  NPYGUARD_FUZZ_CHECK(npyguard_result_member_count(c) == cpp.members.size());
  NPYGUARD_FUZZ_CHECK(npyguard_npz_zip64(c) == (cpp.zip64 ? 1 : 0));
  NPYGUARD_FUZZ_CHECK(npyguard_npz_verified(c) == (cpp.verified ? 1 : 0));
  NPYGUARD_FUZZ_CHECK(npyguard_npz_bytes_read(c) == cpp.bytes_read);
  NPYGUARD_FUZZ_CHECK(npyguard_member_name(c, cpp.members.size()) == nullptr);
  for (std::size_t i = 0; i < cpp.members.size(); ++i) {
    const npz::member& m = cpp.members[i];
    NPYGUARD_FUZZ_CHECK(m.name == npyguard_member_name(c, i) && m.key == npyguard_member_key(c, i));
    NPYGUARD_FUZZ_CHECK(npyguard_member_method(c, i) == static_cast<unsigned>(m.method));
    NPYGUARD_FUZZ_CHECK(npyguard_member_crc32(c, i) == m.crc32);
    NPYGUARD_FUZZ_CHECK(npyguard_member_compressed_size(c, i) == m.compressed_size);
    NPYGUARD_FUZZ_CHECK(npyguard_member_uncompressed_size(c, i) == m.uncompressed_size);
    NPYGUARD_FUZZ_CHECK(npyguard_member_local_header_offset(c, i) == m.local_header_offset);
    NPYGUARD_FUZZ_CHECK(npyguard_member_data_start(c, i) == m.data_start);
    same_npy(npyguard_member_npy(c, i), m.npy);
  }
}

void same_error(const npyguard_result* c, const error& cpp) {
  NPYGUARD_FUZZ_CHECK(npyguard_result_ok(c) == 0);
  const npyguard_error* e = npyguard_result_error(c);
  NPYGUARD_FUZZ_CHECK(e != nullptr && e->code == static_cast<int>(cpp.code));
  NPYGUARD_FUZZ_CHECK(e->has_offset == (cpp.offset ? 1 : 0) && e->offset == cpp.offset.value_or(0));
  // The C message is the library's, with the option's C spelling after it
  // when an option refused the input; the fields carry the same facts.
  const std::string hint = cpp.option.empty() ? "" : " (npyguard_options." + std::string(cpp.option) + ")";
  NPYGUARD_FUZZ_CHECK(e->message != nullptr && cpp.message + hint == e->message);
  NPYGUARD_FUZZ_CHECK(cpp.option.empty() ? e->option == nullptr
                                         : e->option != nullptr && cpp.option == std::string_view(e->option));
  NPYGUARD_FUZZ_CHECK(e->has_limit == (cpp.limit ? 1 : 0) && e->limit == cpp.limit.value_or(0) &&
                      e->actual == cpp.actual.value_or(0));
  NPYGUARD_FUZZ_CHECK(cpp.member ? e->member != nullptr && *cpp.member == std::string(e->member, e->member_length)
                                 : e->member == nullptr && e->member_length == 0);
  NPYGUARD_FUZZ_CHECK(e->has_member_offset == (cpp.member_offset ? 1 : 0));
  NPYGUARD_FUZZ_CHECK(e->member_offset == cpp.member_offset.value_or(0));
  NPYGUARD_FUZZ_CHECK(npyguard_result_npy(c) == nullptr && npyguard_result_ra(c) == nullptr);
  NPYGUARD_FUZZ_CHECK(npyguard_result_member_count(c) == 0);
}

template <typename Model, typename Same>
void compare(const npyguard_result* c, const basic_result<Model>& cpp, Same same) {
  if (const error* failure = cpp.failure_if()) {
    same_error(c, *failure);
    return;
  }
  NPYGUARD_FUZZ_CHECK(npyguard_result_ok(c) == 1 && npyguard_result_error(c) == nullptr);
  same(cpp.value());
}

npyguard_options c_options(const options& cpp, bool older) {
  npyguard_options out;
  npyguard_options_init(&out, older ? offsetof(npyguard_options, allow_object) : sizeof out);
  out.max_header_bytes = cpp.limits.max_header_bytes;
  out.max_depth = cpp.limits.max_depth;
  out.max_ndim = cpp.limits.max_ndim;
  out.max_data_bytes = cpp.limits.max_data_bytes;
  // An older caller's struct ends before the flags: set them anyway, the
  // library must not read them (the C++ side keeps their defaults).
  out.allow_object = cpp.allow_object ? 1 : 0;
  out.allow_trailing_data = cpp.allow_trailing_data ? 1 : 0;
  out.canonical = cpp.canonical ? 1 : 0;
  out.verify = cpp.verify ? 1 : 0;
  out.ra_allow_type5 = cpp.ra_allow_type5 ? 1 : 0;
  out.ra_reject_metadata = cpp.ra_reject_metadata ? 1 : 0;
  out.minimal_reads = cpp.minimal_reads ? 1 : 0;
  return out;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input_reader in(data, size);
  const std::uint8_t shape = in.byte();
  const std::uint8_t first = in.byte();
  const std::uint8_t second = in.byte();
  const std::uint8_t third = in.byte();
  const auto file = fuzz::exact_copy(in.data(), in.size());
  const std::size_t file_size = in.size();
  const std::uint8_t* bytes = file.get();

  constexpr std::size_t chunks[8] = {1, 2, 3, 7, 64, 4096, 65536, 1 << 20};
  const auto format = static_cast<npyguard_format>(shape & 3);
  const int entry = (shape >> 2) & 3;
  const bool older = (shape & 0x10) != 0;
  const std::size_t chunk = chunks[(shape >> 5) & 7];

  options cpp = fuzz::decode_options(first, second);
  cpp.verify = (third & 1) != 0;
  cpp.ra_reject_metadata = (third & 2) != 0;
  cpp.ra_allow_type5 = (third & 4) == 0;
  cpp.minimal_reads = (third & 8) != 0;
  const npyguard_options opts = c_options(cpp, older);
  if (older) { // what the library reads of an older struct: the limits only
    const options defaults;
    cpp.allow_object = defaults.allow_object;
    cpp.allow_trailing_data = defaults.allow_trailing_data;
    cpp.canonical = defaults.canonical;
    cpp.verify = defaults.verify;
    cpp.ra_allow_type5 = defaults.ra_allow_type5;
    cpp.ra_reject_metadata = defaults.ra_reject_metadata;
    cpp.minimal_reads = defaults.minimal_reads;
  }

  c_input callbacks{bytes, file_size, chunk, 0};
  npyguard_result* c = nullptr;
  if (entry == 1) {
    const npyguard_reader reader{sizeof(npyguard_reader), &callbacks, file_size, c_read_at};
    c = npyguard_check_reader(format, &reader, &opts);
  } else if (entry == 2) {
    c = npyguard_check_stream(format, c_read, &callbacks, &opts);
  } else {
    c = npyguard_check_buffer(format, bytes, file_size, &opts);
  }
  NPYGUARD_FUZZ_CHECK(c != nullptr);

  const file_format chosen =
      format == NPYGUARD_FORMAT_DETECT ? detect_format(bytes, file_size) : static_cast<file_format>(format);
  NPYGUARD_FUZZ_CHECK(static_cast<int>(npyguard_result_format(c)) == static_cast<int>(chosen));
  fuzz::memory_source source(bytes, file_size);
  chunked_stream stream(bytes, file_size, chunk);
  switch (chosen) {
    case file_format::npy: {
      const result expected = entry == 1   ? validate_source(source, cpp)
                              : entry == 2 ? validate_stream(stream, cpp)
                                           : validate_buffer(bytes, file_size, cpp);
      compare(c, expected, [&](const header& model) { same_npy(npyguard_result_npy(c), model); });
      break;
    }
    case file_format::npz: {
      const npz::archive_result expected = entry == 1   ? npz::validate_source(source, cpp)
                                           : entry == 2 ? npz::validate_stream(stream, cpp)
                                                        : npz::validate_buffer(bytes, file_size, cpp);
      compare(c, expected, [&](const npz::archive& model) { same_archive(c, model); });
      break;
    }
    case file_format::ra: {
      const ra::result expected = entry == 1   ? ra::validate_source(source, cpp)
                                  : entry == 2 ? ra::validate_stream(stream, cpp)
                                               : ra::validate_buffer(bytes, file_size, cpp);
      compare(c, expected, [&](const ra::header& model) { same_ra(npyguard_result_ra(c), model); });
      break;
    }
  }
  npyguard_result_free(c);
  return 0;
}
