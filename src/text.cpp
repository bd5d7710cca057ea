#include "text.hpp"

#include <array>
#include <cstdio>
#include <cstring>
#include <string>

#include "utf8.hpp"

namespace npyguard::detail {
namespace {

enum class byte_class : unsigned char { text, control, high };

constexpr std::array<byte_class, 256> make_classes() {
  std::array<byte_class, 256> classes{};
  for (std::size_t b = 0; b < 256; ++b) {
    if (b >= 0x80) {
      classes[b] = byte_class::high;
    } else if ((b < 0x20 && b != '\t' && b != '\n' && b != '\r') || b == 0x7F) {
      classes[b] = byte_class::control;
    } else {
      classes[b] = byte_class::text;
    }
  }
  return classes;
}

constexpr std::array<byte_class, 256> classes = make_classes();

error control_error(std::uint64_t offset, std::uint32_t code_point) {
  if (code_point == 0) return {error_code::control_character, offset, "NUL byte in header"};
  char message[96];
  std::snprintf(message, sizeof message,
                "raw control character U+%04X in header (inside strings it must be escaped)",
                static_cast<unsigned>(code_point));
  return {error_code::control_character, offset, message};
}

} // namespace

std::optional<error> check_header_text(const unsigned char* text, std::size_t size, bool utf8,
                                       std::uint64_t base_offset, bool& ascii_only) {
  ascii_only = true;
  for (std::size_t i = 0; i < size;) {
    // Fast path: 8 bytes of printable ASCII (0x20-0x7E) at once.
    if (size - i >= 8) {
      std::uint64_t word = 0;
      std::memcpy(&word, text + i, 8);
      constexpr std::uint64_t ones = 0x0101010101010101ull;
      constexpr std::uint64_t highs = 0x8080808080808080ull;
      const std::uint64_t below_space = (word - 0x20 * ones) & ~word & highs;
      const std::uint64_t at_or_above_del = (word | (word + ones)) & highs;
      if ((below_space | at_or_above_del) == 0) {
        i += 8;
        continue;
      }
    }
    const unsigned char byte = text[i];
    switch (classes[byte]) {
      case byte_class::text: ++i; continue;
      case byte_class::control: return control_error(base_offset + i, byte);
      case byte_class::high: break;
    }
    ascii_only = false;
    if (!utf8) {
      if (byte <= 0x9F) return control_error(base_offset + i, byte); // C1 in latin-1
      ++i;
      continue;
    }
    const utf8_step step = decode_utf8(text + i, size - i);
    if (step.length == 0) {
      return error{error_code::invalid_utf8, base_offset + i + step.bad_index,
                   "version 3.0 header is not valid UTF-8 (overlong form, surrogate, stray or missing "
                   "continuation byte, or above U+10FFFF)"};
    }
    if (step.code_point <= 0x9F) return control_error(base_offset + i, step.code_point);
    i += step.length;
  }
  if (size == 0 || text[size - 1] != '\n') {
    return error{error_code::header_not_terminated, base_offset + (size == 0 ? 0 : size - 1),
                 "the header text must end with '\\n'"};
  }
  return std::nullopt;
}

} // namespace npyguard::detail
