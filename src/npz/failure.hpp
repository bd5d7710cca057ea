// Building the error values of the archive phases. No I/O.
#ifndef NPYGUARD_SRC_NPZ_FAILURE_HPP
#define NPYGUARD_SRC_NPZ_FAILURE_HPP

#include <cstdint>
#include <optional>
#include <string>

#include "core/refused.hpp"
#include "npyguard/error.hpp"

namespace npyguard::npz::detail {

using npyguard::detail::past;
using npyguard::detail::refused;

// An archive-level error at `at` (none: a whole-input condition).
[[nodiscard]] inline error fail(error_code code, std::optional<std::uint64_t> at, std::string message) {
  return error{code, at, std::move(message)};
}

// The error tied to a member whose name decoded.
[[nodiscard]] inline error fail(error_code code, std::uint64_t at, std::string message, const std::string& member) {
  return error{code, at, std::move(message), member, std::nullopt};
}

} // namespace npyguard::npz::detail

#endif
