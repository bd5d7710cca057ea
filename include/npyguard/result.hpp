// npyguard: a validated model or the error that rejected the input.
//
// Thread safety: a result is a plain value. Distinct results may be used
// from distinct threads freely; one result may be read from several threads
// at once through its const member functions.
#ifndef NPYGUARD_RESULT_HPP
#define NPYGUARD_RESULT_HPP

#include <cstdio>
#include <cstdlib>
#include <utility>
#include <variant>

#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"

namespace npyguard {

namespace detail {
// A broken precondition of the API (value() of a failure, failure() of a
// success) is a bug in the caller: it stops the process with SIGABRT, the
// same way every time, rather than reading through a null pointer.
[[noreturn]] inline void precondition_failed(const char* what) noexcept {
  std::fprintf(stderr, "npyguard: precondition violated: %s\n", what);
  std::abort();
}
} // namespace detail

// The result of validating one input in some format: its model T, or one
// error. .npy validation returns basic_result<header> (`result`).
template <typename T>
class basic_result {
public:
  using value_type = T;

  basic_result(T value) noexcept : state_(std::in_place_index<0>, std::move(value)) {}
  basic_result(error failure) noexcept : state_(std::in_place_index<1>, std::move(failure)) {}

  [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  // Precondition: ok() (failure(): !ok()). Calling the wrong one aborts the
  // process (SIGABRT); the API never throws.
  [[nodiscard]] const T& value() const noexcept {
    if (const T* held = value_if()) return *held;
    detail::precondition_failed("value() called on a result that holds an error");
  }
  [[nodiscard]] const error& failure() const noexcept {
    if (const error* held = failure_if()) return *held;
    detail::precondition_failed("failure() called on a result that holds a value");
  }

  // Null when the result holds the other alternative.
  [[nodiscard]] const T* value_if() const noexcept { return std::get_if<0>(&state_); }
  [[nodiscard]] const error* failure_if() const noexcept { return std::get_if<1>(&state_); }
  // The same, for code that fills or reuses a result in place.
  [[nodiscard]] T* value_if() noexcept { return std::get_if<0>(&state_); }
  [[nodiscard]] error* failure_if() noexcept { return std::get_if<1>(&state_); }

  // Same verdict: both accepted with equal models, or both rejected with
  // equal errors (code, offset and message).
  friend bool operator==(const basic_result& a, const basic_result& b) noexcept { return a.state_ == b.state_; }
  friend bool operator!=(const basic_result& a, const basic_result& b) noexcept { return !(a == b); }

private:
  std::variant<T, error> state_;
};

// The result of validating a .npy file.
using result = basic_result<header>;

} // namespace npyguard

#endif
