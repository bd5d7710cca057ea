// UTF-8 helpers shared by text decoding, the parser's string actions and the
// Python repr writer.
#ifndef NPYGUARD_SRC_UTF8_HPP
#define NPYGUARD_SRC_UTF8_HPP

#include <cstddef>
#include <cstdint>
#include <string>

namespace npyguard::detail {

// `out`: anything with push_back(char), such as a std::string.
template <typename Out>
void append_utf8(Out& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

// Value of a hex digit the grammar has already checked.
[[nodiscard]] inline std::uint32_t hex_value(char c) noexcept {
  if (c >= '0' && c <= '9') return static_cast<std::uint32_t>(c - '0');
  if (c >= 'a' && c <= 'f') return static_cast<std::uint32_t>(c - 'a' + 10);
  return static_cast<std::uint32_t>(c - 'A' + 10);
}

struct utf8_step {
  std::uint32_t code_point = 0;
  std::size_t length = 0;    // bytes consumed when valid
  std::size_t bad_index = 0; // when length == 0: index of the first bad byte
};

// Decodes one strict UTF-8 sequence at text[0] (text[0] >= 0x80): no
// overlong forms, no surrogates, nothing above U+10FFFF (RFC 3629).
[[nodiscard]] inline utf8_step decode_utf8(const unsigned char* text, std::size_t available) noexcept {
  const unsigned char lead = text[0];
  std::size_t length = 0;
  std::uint32_t code_point = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code_point = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code_point = lead & 0x0Fu;
    if (lead == 0xE0) low = 0xA0;  // overlong
    if (lead == 0xED) high = 0x9F; // surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code_point = lead & 0x07u;
    if (lead == 0xF0) low = 0x90;  // overlong
    if (lead == 0xF4) high = 0x8F; // above U+10FFFF
  } else {
    return {0, 0, 0};
  }
  for (std::size_t i = 1; i < length; ++i) {
    if (i >= available) return {0, 0, i};
    const unsigned char byte = text[i];
    const unsigned char lo = i == 1 ? low : 0x80;
    const unsigned char hi = i == 1 ? high : 0xBF;
    if (byte < lo || byte > hi) return {0, 0, i};
    code_point = (code_point << 6) | (byte & 0x3Fu);
  }
  return {code_point, length, 0};
}

} // namespace npyguard::detail

#endif
