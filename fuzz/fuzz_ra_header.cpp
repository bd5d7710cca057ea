// RawArray files through every entry point but the path: the buffer, a
// source of known size, and a stream in fuzzer-chosen chunks.
//
// Input: two configuration bytes, then the file.
//   byte 0: bit 0 ra_allow_type5 off, bit 1 ra_reject_metadata,
//           bits 2-4 max_ndim, bits 5-7 max_data_bytes (tables below)
//   byte 1: bits 0-2 the stream's chunk size
// 00 00 is options{} read in 1-byte chunks.
#include "fuzz_common.hpp"

namespace {

using namespace npyguard;
using fuzz::chunked_stream;

std::uint64_t le64(const std::uint8_t* at) {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | at[i];
  return value;
}

bool size_allowed(std::uint64_t eltype, std::uint64_t elbyte) {
  switch (eltype) {
    case 0: return elbyte != 0;
    case 1:
    case 2: return elbyte == 1 || elbyte == 2 || elbyte == 4 || elbyte == 8 || elbyte == 16;
    case 3: return elbyte == 2 || elbyte == 4 || elbyte == 8 || elbyte == 16;
    case 4: return elbyte == 4 || elbyte == 8 || elbyte == 16 || elbyte == 32;
    case 5: return elbyte == 1 || elbyte == 2;
    default: return false;
  }
}

// The accepted model, recomputed from the bytes with 128-bit arithmetic.
void check_model(const ra::header& model, const std::uint8_t* file, std::size_t size, const options& opts) {
  NPYGUARD_FUZZ_CHECK(size >= 48 && std::memcmp(file, "rawarray", 8) == 0);
  const std::uint64_t ndims = le64(file + 40);
  NPYGUARD_FUZZ_CHECK(model.dims.size() == ndims);
  NPYGUARD_FUZZ_CHECK(ndims <= std::min(opts.limits.max_ndim, ra::hard_max_ndim));
  NPYGUARD_FUZZ_CHECK(model.data_offset == 48 + 8 * ndims);
  NPYGUARD_FUZZ_CHECK(model.data_offset <= size);
  NPYGUARD_FUZZ_CHECK(model.flags == le64(file + 8) && model.flags <= 1 && model.big_endian == (model.flags == 1));
  const std::uint64_t eltype = le64(file + 16);
  NPYGUARD_FUZZ_CHECK(static_cast<std::uint64_t>(model.eltype) == eltype);
  NPYGUARD_FUZZ_CHECK(eltype < 5 || (eltype == 5 && opts.ra_allow_type5));
  NPYGUARD_FUZZ_CHECK(model.elbyte == le64(file + 24) && size_allowed(eltype, model.elbyte));
  constexpr fuzz::u128 max_signed = (static_cast<fuzz::u128>(1) << 63) - 1;
  fuzz::u128 bytes = model.elbyte;
  fuzz::u128 count = 1;
  bool empty = false;
  for (std::size_t i = 0; i < model.dims.size(); ++i) {
    NPYGUARD_FUZZ_CHECK(model.dims[i] == le64(file + 48 + 8 * i));
    if (model.dims[i] == 0) {
      empty = true;
      continue;
    }
    bytes *= model.dims[i];
    count *= model.dims[i];
    NPYGUARD_FUZZ_CHECK(bytes <= max_signed);
  }
  NPYGUARD_FUZZ_CHECK(model.count == (empty ? 0 : count));
  NPYGUARD_FUZZ_CHECK(model.data_length == (empty ? 0 : bytes));
  NPYGUARD_FUZZ_CHECK(model.data_length == le64(file + 32));
  NPYGUARD_FUZZ_CHECK(model.data_length <= opts.limits.max_data_bytes);
  const std::uint64_t end = model.data_offset + model.data_length;
  NPYGUARD_FUZZ_CHECK(end <= size && end <= max_signed);
  NPYGUARD_FUZZ_CHECK(!opts.ra_reject_metadata || end == size);
  NPYGUARD_FUZZ_CHECK(model.metadata_offset == std::optional<std::uint64_t>(end));
  NPYGUARD_FUZZ_CHECK(model.metadata_length == std::optional<std::uint64_t>(size - end));
  NPYGUARD_FUZZ_CHECK(!ra::type_name(model.eltype, model.elbyte).empty());
}

// Each code at the offsets SPEC-ra.md section 8 gives it.
void check_error(const error& failure, std::size_t size) {
  NPYGUARD_FUZZ_CHECK(failure.offset.has_value() && !failure.message.empty());
  const std::uint64_t at = *failure.offset;
  NPYGUARD_FUZZ_CHECK(at <= size);
  switch (failure.code) {
    case error_code::bad_magic: NPYGUARD_FUZZ_CHECK(at < 8); break;
    case error_code::unsupported_flags: NPYGUARD_FUZZ_CHECK(at == 8); break;
    case error_code::unknown_element_type: NPYGUARD_FUZZ_CHECK(at == 16); break;
    case error_code::bad_element_size: NPYGUARD_FUZZ_CHECK(at == 24); break;
    case error_code::too_many_dimensions: NPYGUARD_FUZZ_CHECK(at == 40); break;
    case error_code::size_overflow: NPYGUARD_FUZZ_CHECK(at == 24 || at == 32 || (at >= 48 && at % 8 == 0)); break;
    case error_code::data_length_mismatch:
    case error_code::data_too_large: NPYGUARD_FUZZ_CHECK(at == 32); break;
    case error_code::truncated_header:
    case error_code::truncated_data: NPYGUARD_FUZZ_CHECK(at == size); break;
    case error_code::trailing_data: NPYGUARD_FUZZ_CHECK(at < size); break;
    default: NPYGUARD_FUZZ_CHECK(false); // no other code belongs to RawArray
  }
}

bool is_configuration_error(const error& failure) {
  switch (failure.code) {
    case error_code::too_many_dimensions:
    case error_code::data_too_large:
    case error_code::trailing_data:
    case error_code::unknown_element_type: return true; // type 5 when it is refused
    default: return false;
  }
}

bool same_code_and_offset(const ra::result& a, const ra::result& b) {
  return !a.ok() && !b.ok() && a.failure().code == b.failure().code && a.failure().offset == b.failure().offset;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::uint32_t ndims[8] = {64, 0, 1, 2, 3, 32, 65, std::numeric_limits<std::uint32_t>::max()};
  constexpr std::uint64_t data_bytes[8] = {
      std::numeric_limits<std::uint64_t>::max(), 0, 1, 7, 64, 4096, 1ull << 31, (1ull << 63) - 1};
  constexpr std::size_t chunks[8] = {1, 2, 3, 7, 8, 48, 4096, 65536};
  fuzz::input_reader in(data, size);
  const std::uint8_t first = in.byte();
  const std::uint8_t second = in.byte();
  options opts;
  opts.ra_allow_type5 = (first & 1) == 0;
  opts.ra_reject_metadata = (first & 2) != 0;
  opts.limits.max_ndim = ndims[(first >> 2) & 7];
  opts.limits.max_data_bytes = data_bytes[(first >> 5) & 7];
  const auto file = fuzz::exact_copy(in.data(), in.size());
  const std::size_t file_size = in.size();

  const ra::result verdict = ra::validate_buffer(file.get(), file_size, opts);
  fuzz::memory_source source(file.get(), file_size);
  NPYGUARD_FUZZ_CHECK(ra::validate_source(source, opts) == verdict);

  // A stream: the same verdict, without metadata fields; an error with the
  // same code and offset (a stream may not count what follows the data).
  chunked_stream stream(file.get(), file_size, chunks[second & 7]);
  const ra::result streamed = ra::validate_stream(stream, opts);
  if (const ra::header* model = verdict.value_if()) {
    ra::header without = *model;
    without.metadata_offset.reset();
    without.metadata_length.reset();
    NPYGUARD_FUZZ_CHECK(streamed.ok() && streamed.value() == without);
    check_model(*model, file.get(), file_size, opts);
  } else {
    NPYGUARD_FUZZ_CHECK(same_code_and_offset(streamed, verdict));
    check_error(verdict.failure(), file_size);
  }

  // The loosest options accept a superset, and refuse for the same reason
  // whatever does not depend on a limit or a switch.
  const ra::result loosest = ra::validate_buffer(file.get(), file_size, options::loosest());
  if (verdict.ok()) {
    NPYGUARD_FUZZ_CHECK(loosest == verdict);
  } else if (loosest.ok()) {
    NPYGUARD_FUZZ_CHECK(is_configuration_error(verdict.failure()));
  } else if (!is_configuration_error(verdict.failure())) {
    NPYGUARD_FUZZ_CHECK(same_code_and_offset(loosest, verdict));
  }
  return 0;
}
