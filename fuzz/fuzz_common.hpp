// Shared pieces of the fuzz targets: an invariant trap that survives NDEBUG,
// exactly sized input copies, the option decoder (the first input bytes pick
// the options and limits, so the configuration space is fuzzed too), and the
// invariants every accepted model must satisfy.
#ifndef NPYGUARD_FUZZ_COMMON_HPP
#define NPYGUARD_FUZZ_COMMON_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "npyguard/npyguard.hpp"

// Not assert(): fuzzers are built with NDEBUG as often as without.
#define NPYGUARD_FUZZ_CHECK(condition)                                                            \
  do {                                                                                            \
    if (!(condition)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #condition); \
      __builtin_trap();                                                                           \
    }                                                                                             \
  } while (false)

namespace npyguard::fuzz {

// 128-bit arithmetic is the reference the 64-bit checked math is held to.
__extension__ typedef unsigned __int128 u128;

// Reads the input front to back; bytes past the end read as zero, so short
// inputs still decode to a configuration (the defaults).
class input_reader {
public:
  input_reader(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}

  std::uint8_t byte() noexcept {
    if (size_ == 0) return 0;
    --size_;
    return *data_++;
  }

  std::uint64_t u64() noexcept {
    std::uint64_t value = 0;
    for (unsigned i = 0; i < 8; ++i) value |= std::uint64_t{byte()} << (8 * i);
    return value;
  }

  const std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

private:
  const std::uint8_t* data_;
  std::size_t size_;
};

// The rest of the input in a heap block of exactly its size, so ASan reports
// a read one byte past the end (libFuzzer's own buffer may be larger).
inline std::unique_ptr<std::uint8_t[]> exact_copy(const std::uint8_t* data, std::size_t size) {
  auto copy = std::make_unique<std::uint8_t[]>(size);
  if (size != 0) std::memcpy(copy.get(), data, size);
  return copy;
}

// The input as a random_access_source (the .npz and RawArray targets): a
// read must start inside the input, and asks for nothing past its end.
class memory_source final : public random_access_source {
public:
  memory_source(const std::uint8_t* data, std::size_t size) noexcept : data_(data), size_(size) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return size_; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    NPYGUARD_FUZZ_CHECK(offset <= size_);
    const std::size_t n = std::min<std::size_t>(size, size_ - static_cast<std::size_t>(offset));
    if (n != 0) std::memcpy(buffer, data_ + offset, n);
    furthest_ = std::max<std::uint64_t>(furthest_, offset + n);
    return static_cast<std::ptrdiff_t>(n);
  }
  // The end of the furthest read so far.
  [[nodiscard]] std::uint64_t furthest() const noexcept { return furthest_; }

private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::uint64_t furthest_ = 0;
};

// The input as a stream delivered in chunks of at most `chunk` bytes.
class chunked_stream final : public byte_source {
public:
  chunked_stream(const std::uint8_t* data, std::size_t size, std::size_t chunk) noexcept
      : data_(data), size_(size), chunk_(chunk) {}
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    const std::size_t n = std::min(std::min(size, chunk_), size_ - at_);
    if (n != 0) std::memcpy(buffer, data_ + at_, n);
    at_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }

private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t chunk_;
  std::size_t at_ = 0;
};

// Two configuration bytes:
//   first:  bit 0 allow_object, bit 1 allow_trailing_data,
//           bits 2-4 max_header_bytes, bits 5-7 max_depth
//   second: bits 0-2 max_ndim, bits 3-5 max_data_bytes, bit 6 canonical
// Selector 0 is the default everywhere, so 00 00 means options{}.
inline options decode_options(std::uint8_t first, std::uint8_t second) noexcept {
  constexpr std::uint32_t u32_max = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint32_t header_bytes[8] = {1024 * 1024, 0, 10, 64, 200, 4096, 65535, u32_max};
  constexpr std::uint32_t depths[8] = {32, 0, 1, 2, 3, 8, hard_max_depth, u32_max};
  constexpr std::uint32_t ndims[8] = {64, 0, 1, 2, 3, 32, 1000, u32_max};
  constexpr std::uint64_t data_bytes[8] = {
      std::numeric_limits<std::uint64_t>::max(), 0, 1, 7, 64, 4096, 1ull << 31, (1ull << 63) - 1};
  options opts;
  opts.allow_object = (first & 1) != 0;
  opts.allow_trailing_data = (first & 2) != 0;
  opts.limits.max_header_bytes = header_bytes[(first >> 2) & 7];
  opts.limits.max_depth = depths[(first >> 5) & 7];
  opts.limits.max_ndim = ndims[second & 7];
  opts.limits.max_data_bytes = data_bytes[(second >> 3) & 7];
  opts.canonical = (second & 0x40) != 0;
  return opts;
}

// Everything switched on and every limit at its maximum (options::loosest()):
// accepts a superset of what any decoded configuration accepts.
inline options loosest_options() noexcept { return options::loosest(); }

// Errors that exist only because of a limit or a switch; any other rejection
// must not depend on the configuration.
inline bool is_configuration_error(error_code code) noexcept {
  switch (code) {
    case error_code::header_too_large:
    case error_code::depth_exceeded:
    case error_code::too_many_dimensions:
    case error_code::data_too_large:
    case error_code::object_dtype:
    case error_code::trailing_data:
    case error_code::not_canonical: return true;
    default: return false;
  }
}

// The product of the dimensions, saturated at 2^64 so it never wraps (and
// zero as soon as one dimension is zero).
inline u128 product_of(const std::vector<std::uint64_t>& dims) noexcept {
  constexpr u128 cap = static_cast<u128>(1) << 64;
  u128 value = 1;
  for (std::uint64_t dim : dims) value = std::min(value * dim, cap);
  return value;
}

// numpy pickles the data when an object appears anywhere in the dtype.
inline bool holds_object(const dtype& type) noexcept {
  if (type.kind == dtype_kind::object) return true;
  for (const field& member : type.fields) {
    if (holds_object(member.type)) return true;
  }
  return false;
}

inline void check_dtype(const dtype& type) {
  constexpr std::uint64_t max_itemsize = 0x7FFF'FFFFu;
  NPYGUARD_FUZZ_CHECK(type.itemsize <= max_itemsize);
  NPYGUARD_FUZZ_CHECK(type.datetime_multiplier >= 1);
  if (type.kind != dtype_kind::structured) {
    NPYGUARD_FUZZ_CHECK(type.fields.empty());
    return;
  }
  for (const field& member : type.fields) {
    NPYGUARD_FUZZ_CHECK(!member.name.empty());
    NPYGUARD_FUZZ_CHECK(member.subarray_shape.size() <= 32);
    NPYGUARD_FUZZ_CHECK(member.itemsize == member.type.itemsize * product_of(member.subarray_shape));
    NPYGUARD_FUZZ_CHECK(member.offset <= type.itemsize && member.itemsize <= type.itemsize - member.offset);
    check_dtype(member.type);
  }
}

// What must hold for every model any entry point returns.
inline void check_model(const header& model, const options& opts) {
  NPYGUARD_FUZZ_CHECK(model.major_version >= 1 && model.major_version <= 3 && model.minor_version == 0);
  NPYGUARD_FUZZ_CHECK(model.header_length <= opts.limits.max_header_bytes);
  NPYGUARD_FUZZ_CHECK(model.data_offset == (model.major_version == 1 ? 10u : 12u) + model.header_length);
  NPYGUARD_FUZZ_CHECK(model.data_alignment != 0 && (model.data_alignment & (model.data_alignment - 1)) == 0);
  NPYGUARD_FUZZ_CHECK(model.data_offset % model.data_alignment == 0);
  NPYGUARD_FUZZ_CHECK((model.data_offset / model.data_alignment) % 2 == 1);
  NPYGUARD_FUZZ_CHECK(model.shape.size() <= opts.limits.max_ndim);
  NPYGUARD_FUZZ_CHECK(model.data_is_pickle == holds_object(model.descr));
  NPYGUARD_FUZZ_CHECK(!model.data_is_pickle || opts.allow_object);
  NPYGUARD_FUZZ_CHECK(model.count == product_of(model.shape));
  NPYGUARD_FUZZ_CHECK(static_cast<u128>(model.count) * model.descr.itemsize == model.nbytes);
  NPYGUARD_FUZZ_CHECK(model.nbytes <= opts.limits.max_data_bytes);
  NPYGUARD_FUZZ_CHECK(model.data_offset + model.nbytes >= model.data_offset); // no wrap
  check_dtype(model.descr);
  // A plain dtype's descr is its type string, quoted; a struct has none.
  const std::string plain = type_string(model.descr);
  if (model.descr.kind == dtype_kind::structured) {
    NPYGUARD_FUZZ_CHECK(plain.empty());
  } else {
    NPYGUARD_FUZZ_CHECK(descr_repr(model.descr) == "'" + plain + "'");
  }
}

// The shape as Python's repr spells a tuple: (), (5,), (2, 3).
inline std::string shape_repr(const header& model) {
  std::string text = "(";
  for (std::size_t i = 0; i < model.shape.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(model.shape[i]);
  }
  if (model.shape.size() == 1) text += ',';
  return text + ')';
}

// descr_repr is numpy's repr(dtype_to_descr(dtype)); written back into a
// header and validated again it must give the same model. (This checks
// descr_repr and the parser against each other until the writer exists.)
inline void check_descr_round_trip(const header& model, const options& opts) {
  const std::string text = "{'descr': " + descr_repr(model.descr) +
                           ", 'fortran_order': " + (model.fortran_order ? "True" : "False") +
                           ", 'shape': " + shape_repr(model) + ", }\n";
  options again = loosest_options();
  again.allow_object = opts.allow_object;
  const result reread = validate_header_text(text.data(), text.size(), 3, again);
  if (!reread.ok()) {
    std::fprintf(stderr, "descr_repr does not re-parse: %s\n%s: %s\n", text.c_str(),
                 std::string(error_code_name(reread.failure().code)).c_str(), reread.failure().message.c_str());
  }
  NPYGUARD_FUZZ_CHECK(reread.ok());
  NPYGUARD_FUZZ_CHECK(reread.value().descr == model.descr);
  NPYGUARD_FUZZ_CHECK(reread.value().shape == model.shape);
  NPYGUARD_FUZZ_CHECK(reread.value().fortran_order == model.fortran_order);
  NPYGUARD_FUZZ_CHECK(reread.value().nbytes == model.nbytes);
}

// A verdict under `opts` against the verdict under loosest_options() for the
// same bytes: limits and switches only ever turn an acceptance into one of
// their own rejections.
inline void check_against_loosest(const result& strict, const result& loose) {
  if (!strict.ok()) NPYGUARD_FUZZ_CHECK(error_code_name(strict.failure().code) != "unknown");
  if (strict.ok()) {
    NPYGUARD_FUZZ_CHECK(loose.ok());
    NPYGUARD_FUZZ_CHECK(loose.value() == strict.value());
  } else if (!is_configuration_error(strict.failure().code)) {
    NPYGUARD_FUZZ_CHECK(!loose.ok());
    NPYGUARD_FUZZ_CHECK(loose.failure().code == strict.failure().code);
    NPYGUARD_FUZZ_CHECK(loose.failure().offset == strict.failure().offset);
  }
}

} // namespace npyguard::fuzz

#endif
