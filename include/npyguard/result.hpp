// npyguard: a validated header or the error that rejected the input.
#ifndef NPYGUARD_RESULT_HPP
#define NPYGUARD_RESULT_HPP

#include <utility>
#include <variant>

#include "npyguard/error.hpp"
#include "npyguard/model.hpp"

namespace npyguard {

class result {
public:
  result(header value) noexcept : state_(std::move(value)) {}
  result(error failure) noexcept : state_(std::move(failure)) {}

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // Precondition: ok(). Returns nullptr-free references; calling the wrong
  // accessor is a programming error and terminates (the API never throws).
  [[nodiscard]] const header& value() const noexcept { return *std::get_if<header>(&state_); }
  [[nodiscard]] const error& failure() const noexcept { return *std::get_if<error>(&state_); }

  // Never null when the precondition holds; null otherwise.
  [[nodiscard]] const header* value_if() const noexcept { return std::get_if<header>(&state_); }
  [[nodiscard]] const error* failure_if() const noexcept { return std::get_if<error>(&state_); }

  // Same verdict: both accepted with equal models, or both rejected with
  // equal errors (code, offset and message).
  friend bool operator==(const result& a, const result& b) noexcept { return a.state_ == b.state_; }
  friend bool operator!=(const result& a, const result& b) noexcept { return !(a == b); }

private:
  std::variant<header, error> state_;
};

} // namespace npyguard

#endif
