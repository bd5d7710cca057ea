// numpy's spellings of the datetime units, shared by the type-string parser
// and the printer, so that neither includes the other.
#ifndef NPYGUARD_SRC_NPY_TIME_UNITS_HPP
#define NPYGUARD_SRC_NPY_TIME_UNITS_HPP

#include <cstddef>
#include <iterator>
#include <string_view>

#include "npyguard/npy/model.hpp"

namespace npyguard::detail {

// Indexed by time_unit: generic (no brackets) first, then Y ... as.
inline constexpr std::string_view time_unit_spellings[] = {"",  "Y",  "M",  "W",  "D",  "h",  "m",
                                                           "s", "ms", "us", "ns", "ps", "fs", "as"};

[[nodiscard]] constexpr std::string_view time_unit_spelling(time_unit unit) noexcept {
  const auto index = static_cast<std::size_t>(unit);
  return index < std::size(time_unit_spellings) ? time_unit_spellings[index] : std::string_view("?");
}

} // namespace npyguard::detail

#endif
