// Type strings (SPEC.md section 3): BYTEORDER KIND SIZE [UNIT], nothing else.
#ifndef NPYGUARD_SRC_TYPE_STRING_HPP
#define NPYGUARD_SRC_TYPE_STRING_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"

namespace npyguard::detail {

struct type_string_failure {
  error_code code;
  std::string message;
};

// The dtype's scalars to their defaults; its fields stay (for reuse).
inline void reset_scalars(dtype& type) noexcept {
  type.kind = dtype_kind::raw_void;
  type.order = byte_order::not_applicable;
  type.itemsize = 0;
  type.datetime_unit = time_unit::generic;
  type.datetime_multiplier = 1;
}

// `type` as a default dtype; its field vector, emptied, keeps its capacity
// for reuse (npy/workspace.hpp).
inline void reset_dtype(dtype& type) noexcept {
  reset_scalars(type);
  type.fields.clear();
}

// Parses a decoded type string into `out` (a non-structured dtype). On
// failure returns false and fills `failure`. Object dtypes parse; refusing
// them is the caller's decision.
[[nodiscard]] bool parse_type_string(std::string_view text, dtype& out, type_string_failure& failure);

// The kinds read_common_type_string reads: which one-byte kinds, and for
// each the sizes it takes and those for which the byte order is free ('|',
// '<' and '>' all mean the same, reported as '|').
struct common_kind {
  dtype_kind kind;
  bool any_size;            // S and V: every size
  std::uint64_t sizes;      // else bit n: size n is valid
  std::uint64_t order_free; // bit n: size n takes any byte order
};

inline constexpr common_kind no_common_kind{dtype_kind::raw_void, false, 0, 0};
inline constexpr std::uint64_t size_bits_1248 = 1u << 1 | 1u << 2 | 1u << 4 | 1u << 8;

[[nodiscard]] constexpr common_kind common_kind_of(char kind) noexcept {
  switch (kind) {
    case 'b': return {dtype_kind::boolean, false, 1u << 1, 1u << 1};
    case 'i': return {dtype_kind::signed_integer, false, size_bits_1248, 1u << 1};
    case 'u': return {dtype_kind::unsigned_integer, false, size_bits_1248, 1u << 1};
    case 'f': return {dtype_kind::floating, false, 1u << 2 | 1u << 4 | 1u << 8 | 1u << 16, 0};
    case 'c': return {dtype_kind::complex_floating, false, 1u << 8 | 1u << 16 | std::uint64_t{1} << 32, 0};
    case 'S': return {dtype_kind::bytes, true, 0, 0};
    case 'V': return {dtype_kind::raw_void, true, 0, 0};
    default: return no_common_kind;
  }
}

// The kind byte's common_kind, looked up rather than switched on: the
// kinds of consecutive fields vary, and a table costs no indirect branch.
struct common_kind_table {
  std::array<common_kind, 128> entries{};
  constexpr common_kind_table() noexcept {
    for (std::size_t c = 0; c < entries.size(); ++c) entries[c] = common_kind_of(static_cast<char>(c));
  }
};
inline constexpr common_kind_table common_kinds{};

// The form nearly every field's type has, a byte order, one of the kinds
// b i u f c S V and a size of one or two digits ("<f8", "|u1", "<c16",
// "|S7"), read into `out` as parse_type_string would read it: true. False,
// `out` untouched, for every other text, valid or not (parse_type_string
// reads and judges those). Inline, in a few comparisons and one table
// look-up: a long struct reads one type string per field.
[[nodiscard, gnu::always_inline]] inline bool read_common_type_string(std::string_view text, dtype& out) noexcept {
  const std::size_t length = text.size();
  if (length != 3 && length != 4) return false;
  const auto digit = [](char c) { return static_cast<unsigned>(static_cast<unsigned char>(c)) - unsigned{'0'}; };
  unsigned size = digit(text[2]);
  if (size > 9) return false;
  if (length == 4) {
    const unsigned ones = digit(text[3]);
    if (size == 0 || ones > 9) return false; // a leading zero, or not a digit
    size = size * 10 + ones;
  }
  const char order_byte = text[0];
  if (order_byte != '<' && order_byte != '>' && order_byte != '|') return false;
  const auto kind_byte = static_cast<unsigned char>(text[1]);
  if (kind_byte >= common_kinds.entries.size()) return false;
  const common_kind& kind = common_kinds.entries[kind_byte];
  // size < 100; the masks have bits below 64 only.
  const bool size_valid = kind.any_size || (size < 64 && ((kind.sizes >> size) & 1u) != 0);
  const bool order_free = kind.any_size || (size < 64 && ((kind.order_free >> size) & 1u) != 0);
  if (!size_valid || (!order_free && order_byte == '|')) return false;
  out.kind = kind.kind;
  out.order = order_free ? byte_order::not_applicable : order_byte == '<' ? byte_order::little : byte_order::big;
  out.itemsize = size;
  out.datetime_unit = time_unit::generic;
  out.datetime_multiplier = 1;
  out.fields.clear();
  return true;
}

} // namespace npyguard::detail

#endif
