// npyguard: spelling a dtype the way numpy does.
#ifndef NPYGUARD_NPY_DESCR_HPP
#define NPYGUARD_NPY_DESCR_HPP

#include <string>
#include <string_view>
#include <vector>

#include "npyguard/export.hpp"
#include "npyguard/npy/model.hpp"

namespace npyguard {

// numpy's repr(numpy.lib.format.dtype_to_descr(dtype)): "'<f8'" or
// "[('a', '<i4'), ('', '|V4'), ('b', '<f8')]", with Python's quoting and
// escaping of names. Returns an empty string only if memory runs out.
[[nodiscard]] NPYGUARD_API std::string descr_repr(const dtype& type) noexcept;

// numpy's spelling of a unit: "" (generic), "Y", "M", "W", "D", "h", "m",
// "s", "ms", "us", "ns", "ps", "fs", "as".
[[nodiscard]] NPYGUARD_API std::string_view time_unit_name(time_unit unit) noexcept;

// Python's repr of a shape tuple: "()", "(3,)", "(2, 3)". Returns an empty
// string only if memory runs out.
[[nodiscard]] NPYGUARD_API std::string shape_repr(const std::vector<std::uint64_t>& shape) noexcept;

// The type string of a non-structured dtype ("<M8[10ms]", "|S5", "|O").
[[nodiscard]] NPYGUARD_API std::string type_string(const dtype& type) noexcept;

} // namespace npyguard

#endif
