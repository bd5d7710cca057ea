// npyguard: error codes and the error value every rejection carries.
#ifndef NPYGUARD_ERROR_HPP
#define NPYGUARD_ERROR_HPP

#include "npyguard/export.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace npyguard {

// Stable codes: values are part of the public API and are never renumbered.
// The snake_case names (error_code_name) are the ones SPEC.md uses.
enum class error_code : std::uint16_t {
  io_error = 1,               // the input could not be opened or read
  out_of_memory = 2,          // an allocation failed (limits keep this rare)
  bad_magic = 3,              // the first six bytes are not "\x93NUMPY"
  unsupported_version = 4,    // version other than 1.0, 2.0, 3.0
  truncated_preamble = 5,     // input shorter than magic + version + HEADER_LEN
  header_too_large = 6,       // HEADER_LEN above limits.max_header_bytes
  truncated_header = 7,       // input ends inside the header text
  invalid_utf8 = 8,           // version 3.0 header that is not strict UTF-8
  control_character = 9,      // NUL or another raw control character in the header
  header_not_terminated = 10, // the header text does not end with '\n'
  syntax_error = 11,          // the text is not in the header grammar
  integer_too_large = 12,     // an integer above 2^63-1
  negative_dimension = 13,    // a '-' before a dimension
  depth_exceeded = 14,        // lists/tuples nested deeper than limits.max_depth
  missing_key = 15,           // descr, fortran_order or shape absent
  duplicate_key = 16,         // a key given twice
  unknown_key = 17,           // a key other than the three
  bad_fortran_order = 18,     // fortran_order not True/False
  bad_shape = 19,             // shape not a tuple of integers
  too_many_dimensions = 20,   // more than limits.max_ndim dimensions
  bad_descr = 21,             // descr not a valid type string or field list
  object_dtype = 22,          // 'O' in the descr without allow_object
  duplicate_field_name = 23,  // a name or title used twice in a struct
  empty_field_name = 24,      // a field named '' that is not padding
  itemsize_overflow = 25,     // an itemsize above 2^31-1
  size_overflow = 26,         // count, nbytes or data end above 2^63-1
  data_too_large = 27,        // nbytes above limits.max_data_bytes
  truncated_data = 28,        // fewer data bytes than the header implies
  trailing_data = 29,         // more data bytes than the header implies
  not_canonical = 30,         // canonical profile: header bytes differ from np.save's
  buffer_too_small = 31,      // a caller's buffer is smaller than the array data
};

// The snake_case name of a code ("truncated_data"); "unknown" for values
// outside the enumeration.
[[nodiscard]] NPYGUARD_API std::string_view error_code_name(error_code code) noexcept;

struct error {
  error_code code = error_code::io_error;
  // 0-based byte offset from the start of the file where the problem was
  // detected; empty for whole-input conditions (an unreadable file).
  std::optional<std::uint64_t> offset;
  std::string message;
};

inline bool operator==(const error& a, const error& b) noexcept {
  return a.code == b.code && a.offset == b.offset && a.message == b.message;
}
inline bool operator!=(const error& a, const error& b) noexcept { return !(a == b); }

} // namespace npyguard

#endif
