// Strict UTF-8 decoding for the command's output: names come from the
// file system as arbitrary bytes, and every output must say exactly which
// bytes were not UTF-8. Header-only so that the CLI tests can compare the
// JSON writer built on it with nlohmann::json.
#ifndef NPYGUARD_CLI_UNICODE_HPP
#define NPYGUARD_CLI_UNICODE_HPP

#include <cstddef>
#include <string_view>

namespace npyguard_cli {

inline constexpr char hex_digits[] = "0123456789abcdef";

// One step through a byte string. `valid`: bytes [at, at + length) encode
// `code_point`. Otherwise the bytes [at, at + length) belong to no
// character: the byte at `at` cannot start one, or the sequence it starts is
// broken at at + length (or by the end of the text), so decoding resumes
// there. This is the rule of nlohmann::json's replacing serializer (one
// U+FFFD per step) and of Unicode's "maximal subpart" practice.
struct utf8_step {
  std::size_t length = 1;
  bool valid = false;
  char32_t code_point = 0;
};

// Strict UTF-8 (Unicode Table 3-7): no overlong forms, no surrogates,
// nothing above U+10FFFF. `at` < text.size().
[[nodiscard]] inline utf8_step next_utf8(std::string_view text, std::size_t at) noexcept {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return {1, true, lead};
  std::size_t need = 0;     // continuation bytes
  unsigned char low = 0x80; // range of the first continuation byte
  unsigned char high = 0xBF;
  char32_t value = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    need = 1;
    value = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    need = 2;
    value = lead & 0x0Fu;
    if (lead == 0xE0) low = 0xA0;  // overlong
    if (lead == 0xED) high = 0x9F; // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    need = 3;
    value = lead & 0x07u;
    if (lead == 0xF0) low = 0x90;  // overlong
    if (lead == 0xF4) high = 0x8F; // above U+10FFFF
  } else {
    return {1, false, 0}; // a continuation byte, C0, C1 or F5..FF
  }
  std::size_t length = 1;
  for (; length <= need; ++length) {
    if (at + length >= text.size()) return {length, false, 0}; // cut off by the end
    const unsigned char next = byte(at + length);
    if (next < low || next > high) return {length, false, 0};
    low = 0x80;
    high = 0xBF;
    value = (value << 6) | (next & 0x3Fu);
  }
  return {length, true, value};
}

[[nodiscard]] inline bool is_valid_utf8(std::string_view text) noexcept {
  for (std::size_t at = 0; at < text.size();) {
    const utf8_step step = next_utf8(text, at);
    if (!step.valid) return false;
    at += step.length;
  }
  return true;
}

} // namespace npyguard_cli

#endif
