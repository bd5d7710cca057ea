// Lower-case hexadecimal digits, as Python's repr and numpy write them.
#ifndef NPYGUARD_SRC_CORE_HEX_HPP
#define NPYGUARD_SRC_CORE_HEX_HPP

#include <cstdint>
#include <string>

namespace npyguard::detail {

inline constexpr char hex_digits[] = "0123456789abcdef";

// The low `digits` hex digits of `value`, most significant first.
inline void append_hex(std::string& out, std::uint64_t value, int digits) {
  for (int shift = (digits - 1) * 4; shift >= 0; shift -= 4) out.push_back(hex_digits[(value >> shift) & 0xF]);
}

} // namespace npyguard::detail

#endif
