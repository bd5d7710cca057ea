// Test helpers for .npz verdicts: a readable description of a result, and
// the acceptance and error checks (code, archive offset, member and offset
// inside the member) that every .npz test makes.
#ifndef NPYGUARD_TESTS_NPZ_SUPPORT_HPP
#define NPYGUARD_TESTS_NPZ_SUPPORT_HPP

#include <cstdint>
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "npyguard/npz/validate.hpp"

namespace npyguard_test {

inline std::string describe(const npyguard::npz::archive_result& r) {
  const npyguard::error* failure = r.failure_if();
  if (!failure) return "accepted";
  return std::string(npyguard::error_code_name(failure->code)) + " at " +
         (failure->offset ? std::to_string(*failure->offset) : "none") + " member " + failure->member.value_or("-") +
         ": " + failure->message;
}

inline void require_ok(const npyguard::npz::archive_result& r) {
  INFO(describe(r));
  REQUIRE(r.ok());
}

inline void require_error(const npyguard::npz::archive_result& r, npyguard::error_code code,
                          std::optional<std::uint64_t> offset, std::optional<std::string> member = std::nullopt,
                          std::optional<std::uint64_t> member_offset = std::nullopt) {
  INFO(describe(r));
  REQUIRE_FALSE(r.ok());
  CHECK(npyguard::error_code_name(r.failure().code) == npyguard::error_code_name(code));
  CHECK(r.failure().offset == offset);
  CHECK(r.failure().member == member);
  CHECK(r.failure().member_offset == member_offset);
  CHECK_FALSE(r.failure().message.empty());
}

} // namespace npyguard_test

#endif
