// The one place exceptions stop: the public API never throws.
#ifndef NPYGUARD_SRC_CORE_GUARD_HPP
#define NPYGUARD_SRC_CORE_GUARD_HPP

#include <new>
#include <optional>
#include <stdexcept>

#include "npyguard/error.hpp"

namespace npyguard::detail {

// Runs `function` (returning a result or an optional error) and turns an
// escaping std::bad_alloc or std::length_error (a size the library cannot
// allocate) into out_of_memory. Any other exception is a bug: it is not
// caught here, reaches a noexcept boundary and terminates the process,
// never passing for a verdict. The message fits the small-string buffer,
// so building it cannot allocate.
template <typename Function>
auto guarded(Function&& function) noexcept -> decltype(function()) {
  try {
    return function();
  } catch (const std::bad_alloc&) {
    return error{error_code::out_of_memory, std::nullopt, "out of memory"};
  } catch (const std::length_error&) {
    return error{error_code::out_of_memory, std::nullopt, "out of memory"};
  }
}

} // namespace npyguard::detail

#endif
