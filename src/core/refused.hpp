// Errors an option or limit decided: the fields error.hpp documents, set in
// one way at every site. No I/O.
#ifndef NPYGUARD_SRC_CORE_REFUSED_HPP
#define NPYGUARD_SRC_CORE_REFUSED_HPP

#include <cstdint>
#include <optional>
#include <string_view>

#include "npyguard/error.hpp"

namespace npyguard::detail {

// `failure` refused by the limit `option` (its name in npyguard::limits):
// the limit in force and what the input had.
[[nodiscard]] inline error refused(error failure, std::string_view option, std::uint64_t limit,
                                   std::uint64_t actual) noexcept {
  failure.option = option;
  failure.limit = limit;
  failure.actual = actual;
  return failure;
}

// `failure` refused by the setting `option` (its name in npyguard::options),
// which has no number.
[[nodiscard]] inline error refused(error failure, std::string_view option) noexcept {
  failure.option = option;
  return failure;
}

// One past `limit`, saturating: what a check that stops at the first value
// over the limit knows of the input.
[[nodiscard]] constexpr std::uint64_t past(std::uint64_t limit) noexcept {
  return limit == ~std::uint64_t{0} ? limit : limit + 1;
}

} // namespace npyguard::detail

#endif
