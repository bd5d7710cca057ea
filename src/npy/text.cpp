#include "npy/text.hpp"

#include <cstring>

#include "core/utf8.hpp"

namespace npyguard::detail {

std::optional<error> check_header_text(const unsigned char* text, std::size_t size, bool utf8,
                                       std::uint64_t base_offset, bool& ascii_only) {
  ascii_only = true;
  // Fast path: 32, then 8 bytes of 0x01-0x7F at once (no NUL, nothing to
  // decode). A word has a byte outside that range when this is not 0.
  const auto unusual = [text](std::size_t at) noexcept {
    std::uint64_t word = 0;
    std::memcpy(&word, text + at, 8);
    constexpr std::uint64_t ones = 0x0101010101010101ull;
    constexpr std::uint64_t highs = 0x8080808080808080ull;
    return ((word - ones) & ~word & highs) | (word & highs);
  };
  for (std::size_t i = 0; i < size;) {
    if (size - i >= 32 && (unusual(i) | unusual(i + 8) | unusual(i + 16) | unusual(i + 24)) == 0) {
      i += 32;
      continue;
    }
    if (size - i >= 8 && unusual(i) == 0) {
      i += 8;
      continue;
    }
    const unsigned char byte = text[i];
    if (byte == 0) return error{error_code::control_character, base_offset + i, "NUL byte in header"};
    if (byte < 0x80) {
      ++i;
      continue;
    }
    ascii_only = false;
    if (!utf8) { // latin-1: every byte is a character
      ++i;
      continue;
    }
    const utf8_step step = decode_utf8(text + i, size - i);
    if (step.length == 0) {
      return error{error_code::invalid_utf8, base_offset + i + step.bad_index,
                   "version 3.0 header is not valid UTF-8 (overlong form, surrogate, stray or missing "
                   "continuation byte, or above U+10FFFF)"};
    }
    i += step.length;
  }
  // NPZ.jl writes no padding at all when none is needed: the text then ends
  // with the dict's '}', which the grammar checks closes the dict.
  if (size == 0 || (text[size - 1] != '\n' && text[size - 1] != '}')) {
    return error{error_code::header_not_terminated, base_offset + (size == 0 ? 0 : size - 1),
                 "the header text must end with '\\n' (or, without any padding, with the dict's closing '}')"};
  }
  return std::nullopt;
}

} // namespace npyguard::detail
