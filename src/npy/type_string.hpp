// Type strings (SPEC.md section 3): BYTEORDER KIND SIZE [UNIT], nothing else.
#ifndef NPYGUARD_SRC_TYPE_STRING_HPP
#define NPYGUARD_SRC_TYPE_STRING_HPP

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

} // namespace npyguard::detail

#endif
