// Checked size math against an unsigned __int128 reference, directly and
// through a header whose shape and itemsize the fuzzer chooses.
//
// Input: ndim (one byte, taken modulo 65), the itemsize (8 bytes little
// endian, reduced to at most 2^31-1, numpy's limit), then ndim dimensions of
// 8 bytes each (missing bytes read as zero).
#include <string>
#include <vector>

#include "core/checked_math.hpp"
#include "fuzz_common.hpp"

namespace {

using namespace npyguard;
using fuzz::u128;

constexpr u128 max_size = detail::max_signed_size;

struct reference {
  bool overflows = false;
  std::size_t failing_index = 0;
  std::uint64_t count = 0;
  std::uint64_t nbytes = 0;
};

// numpy's rule: the product of the nonzero dimensions, and that product times
// the itemsize, must stay within 2^63-1; a zero dimension makes the array
// empty. Both products only grow, so the first index past the limit fails.
reference reference_size(const std::vector<std::uint64_t>& dims, std::uint64_t itemsize) {
  reference expected;
  u128 count = 1;
  bool empty = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 0) {
      empty = true;
      continue;
    }
    count *= dims[i]; // both factors are below 2^64
    if (count > max_size || count * itemsize > max_size) {
      expected.overflows = true;
      expected.failing_index = i;
      return expected;
    }
  }
  expected.count = empty ? 0 : static_cast<std::uint64_t>(count);
  expected.nbytes = empty ? 0 : static_cast<std::uint64_t>(count * itemsize);
  return expected;
}

// The same numbers through the header parser: '|V<itemsize>' and the shape.
void check_through_header(const std::vector<std::uint64_t>& dims, std::uint64_t itemsize, const reference& expected) {
  for (std::uint64_t dim : dims) {
    if (dim > detail::max_signed_size) return; // not a Python literal numpy accepts: integer_too_large
  }
  std::string text = "{'descr': '|V" + std::to_string(itemsize) + "', 'fortran_order': False, 'shape': ";
  const std::size_t shape_offset = text.size();
  text += '(';
  std::vector<std::size_t> dim_offsets;
  for (std::uint64_t dim : dims) {
    dim_offsets.push_back(text.size());
    text += std::to_string(dim) + ", ";
  }
  text += "), }\n";
  options opts;
  opts.limits.max_ndim = 64;
  const result verdict = validate_header_text(text.data(), text.size(), 1, opts);
  constexpr std::size_t header_offset = 10;
  const bool end_overflows = u128{expected.nbytes} + header_offset + text.size() > max_size;
  if (expected.overflows || end_overflows) {
    NPYGUARD_FUZZ_CHECK(!verdict.ok());
    NPYGUARD_FUZZ_CHECK(verdict.failure().code == error_code::size_overflow);
    // A dimension that overflows is named; an end past 2^63-1 names the shape.
    const std::size_t at = expected.overflows ? dim_offsets[expected.failing_index] : shape_offset;
    NPYGUARD_FUZZ_CHECK(verdict.failure().offset == header_offset + at);
  } else {
    NPYGUARD_FUZZ_CHECK(verdict.ok());
    NPYGUARD_FUZZ_CHECK(verdict.value().count == expected.count);
    NPYGUARD_FUZZ_CHECK(verdict.value().nbytes == expected.nbytes);
    NPYGUARD_FUZZ_CHECK(verdict.value().shape == dims);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input_reader in(data, size);
  const std::size_t ndim = in.byte() % 65u;
  const std::uint64_t itemsize = in.u64() % (detail::max_itemsize + 1);
  std::vector<std::uint64_t> dims(ndim);
  for (std::uint64_t& dim : dims) dim = in.u64();

  const reference expected = reference_size(dims, itemsize);
  std::size_t failing_index = static_cast<std::size_t>(-1);
  const auto computed = detail::compute_array_size(dims.data(), dims.size(), itemsize, failing_index);
  NPYGUARD_FUZZ_CHECK(computed.has_value() == !expected.overflows);
  if (computed) {
    NPYGUARD_FUZZ_CHECK(computed->count == expected.count);
    NPYGUARD_FUZZ_CHECK(computed->nbytes == expected.nbytes);
  } else {
    NPYGUARD_FUZZ_CHECK(failing_index == expected.failing_index);
  }
  check_through_header(dims, itemsize, expected);
  return 0;
}
