#include "core/python_repr.hpp"

#include "core/hex.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "core/utf8.hpp"

namespace npyguard::detail {
namespace {

struct code_point_range {
  std::uint32_t first;
  std::uint32_t last;
};

constexpr code_point_range nonprintable[] = {
#include "core/unicode_nonprintable.inc"
};

bool is_printable_non_ascii(std::uint32_t code_point) noexcept {
  const auto* it = std::upper_bound(std::begin(nonprintable), std::end(nonprintable), code_point,
                                    [](std::uint32_t cp, const code_point_range& r) { return cp < r.first; });
  if (it == std::begin(nonprintable)) return true;
  --it;
  return code_point > it->last;
}

void append_hex_escape(std::string& out, char letter, std::uint32_t value, int digits) {
  out.push_back('\\');
  out.push_back(letter);
  append_hex(out, value, digits);
}

} // namespace

void append_python_repr(std::string& out, std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out.push_back(quote);
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char byte = bytes[i];
    if (byte < 0x80) {
      ++i;
      if (byte == static_cast<unsigned char>(quote) || byte == '\\') {
        out.push_back('\\');
        out.push_back(static_cast<char>(byte));
      } else if (byte == '\t') {
        out += "\\t";
      } else if (byte == '\n') {
        out += "\\n";
      } else if (byte == '\r') {
        out += "\\r";
      } else if (byte < 0x20 || byte == 0x7F) {
        append_hex_escape(out, 'x', byte, 2);
      } else {
        out.push_back(static_cast<char>(byte));
      }
      continue;
    }
    const utf8_step step = decode_utf8(bytes + i, text.size() - i);
    if (step.length == 0) { // not produced by the parser; never silently dropped
      append_hex_escape(out, 'x', byte, 2);
      ++i;
      continue;
    }
    if (is_printable_non_ascii(step.code_point)) {
      out.append(text.substr(i, step.length));
    } else if (step.code_point <= 0xFF) {
      append_hex_escape(out, 'x', step.code_point, 2);
    } else if (step.code_point <= 0xFFFF) {
      append_hex_escape(out, 'u', step.code_point, 4);
    } else {
      append_hex_escape(out, 'U', step.code_point, 8);
    }
    i += step.length;
  }
  out.push_back(quote);
}

std::string python_repr_for_message(std::string_view text, std::size_t max_bytes) {
  std::size_t cut = text.size();
  if (cut > max_bytes) {
    cut = max_bytes;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut; // character boundary
  }
  std::string out;
  append_python_repr(out, text.substr(0, cut));
  if (cut < text.size()) out += "...";
  return out;
}

} // namespace npyguard::detail
