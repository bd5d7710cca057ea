// Member names (SPEC-npz.md section 6): decoding as Python's zipfile does
// (UTF-8 with flag bit 11, CP437 without), the rules every name must pass,
// and NFC for the duplicate check. No I/O.
#ifndef NPYGUARD_SRC_NPZ_NAMES_HPP
#define NPYGUARD_SRC_NPZ_NAMES_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "npyguard/error.hpp"

namespace npyguard::npz::detail {

// Decodes `raw` (UTF-8 when `utf8_flag`, else CP437) into `decoded` (UTF-8).
// False when a UTF-8 name is not strict UTF-8. May throw std::bad_alloc.
[[nodiscard]] bool decode_name(const unsigned char* raw, std::size_t length, bool utf8_flag, std::string& decoded);

// The rules of section 6 after decoding, in its order, for the name at
// archive offset `at`: characters, overlong bytes (CP437 names), ".npy",
// then the path rules. On success `key` is the name without ".npy".
// May throw std::bad_alloc.
[[nodiscard]] std::optional<error> check_name(const unsigned char* raw, std::size_t length, bool utf8_flag,
                                              const std::string& decoded, std::uint64_t at, std::string& key);

// The Unicode NFC form of a decoded name (ASCII names are their own).
// May throw std::bad_alloc.
[[nodiscard]] std::string nfc(const std::string& decoded);

} // namespace npyguard::npz::detail

#endif
