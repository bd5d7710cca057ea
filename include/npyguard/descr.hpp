// npyguard: spelling a dtype the way numpy does.
#ifndef NPYGUARD_DESCR_HPP
#define NPYGUARD_DESCR_HPP

#include <string>

#include "npyguard/model.hpp"

namespace npyguard {

// numpy's repr(numpy.lib.format.dtype_to_descr(dtype)): "'<f8'" or
// "[('a', '<i4'), ('', '|V4'), ('b', '<f8')]", with Python's quoting and
// escaping of names. Returns an empty string only if memory runs out.
[[nodiscard]] std::string descr_repr(const dtype& type) noexcept;

// The type string of a non-structured dtype ("<M8[10ms]", "|S5", "|O").
[[nodiscard]] std::string type_string(const dtype& type) noexcept;

} // namespace npyguard

#endif
