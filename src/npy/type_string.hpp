// Type strings (SPEC.md section 3): BYTEORDER KIND SIZE [UNIT], nothing else.
#ifndef NPYGUARD_SRC_TYPE_STRING_HPP
#define NPYGUARD_SRC_TYPE_STRING_HPP

#include <cstddef>
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

// The form nearly every field's type has, a byte order, one of the kinds
// b i u f c S V and a size of one or two digits ("<f8", "|u1", "<c16",
// "|S7"), read into `out` as parse_type_string would read it: true. False,
// `out` untouched, for every other text, valid or not (parse_type_string
// reads and judges those). Inline, in a few comparisons: a long struct
// reads one type string per field.
[[nodiscard]] inline bool read_common_type_string(std::string_view text, dtype& out) noexcept {
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
  byte_order order = byte_order::not_applicable;
  switch (text[0]) {
    case '<': order = byte_order::little; break;
    case '>': order = byte_order::big; break;
    case '|': break;
    default: return false;
  }
  dtype_kind kind = dtype_kind::raw_void;
  bool size_valid = false;
  bool order_free = false; // '|' '<' '>' all mean the same, reported as '|'
  switch (text[1]) {
    case 'b':
      kind = dtype_kind::boolean;
      size_valid = size == 1;
      order_free = true;
      break;
    case 'i':
    case 'u':
      kind = text[1] == 'i' ? dtype_kind::signed_integer : dtype_kind::unsigned_integer;
      size_valid = size == 1 || size == 2 || size == 4 || size == 8;
      order_free = size == 1;
      break;
    case 'f':
      kind = dtype_kind::floating;
      size_valid = size == 2 || size == 4 || size == 8 || size == 16;
      break;
    case 'c':
      kind = dtype_kind::complex_floating;
      size_valid = size == 8 || size == 16 || size == 32;
      break;
    case 'S':
    case 'V':
      kind = text[1] == 'S' ? dtype_kind::bytes : dtype_kind::raw_void;
      size_valid = true;
      order_free = true;
      break;
    default: return false;
  }
  if (!size_valid || (!order_free && order == byte_order::not_applicable)) return false;
  out.kind = kind;
  out.order = order_free ? byte_order::not_applicable : order;
  out.itemsize = size;
  out.datetime_unit = time_unit::generic;
  out.datetime_multiplier = 1;
  out.fields.clear();
  return true;
}

} // namespace npyguard::detail

#endif
