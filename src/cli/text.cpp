#include "text.hpp"

#include <cstddef>

#include "unicode.hpp"

namespace npyguard_cli {
namespace {

void append_byte(std::string& out, unsigned char byte) {
  out += "\\x";
  out += hex_digits[byte >> 4];
  out += hex_digits[byte & 0xF];
}

void append_code_point(std::string& out, char32_t code_point) {
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) out += hex_digits[(code_point >> shift) & 0xF];
}

// The command's flag for each option the library's errors name
// (npyguard::error::option, spelled as in npyguard::options and
// npyguard::limits): ONE table, used for every message the command prints.
// ra_allow_type5 refuses only when it is off, which --no-ra-type5 does.
struct flag_name {
  std::string_view option;
  std::string_view flag;
};
constexpr flag_name flag_names[] = {
    {"max_header_bytes", "--max-header-bytes"},
    {"max_depth", "--max-depth"},
    {"max_ndim", "--max-ndim"},
    {"max_data_bytes", "--max-data-bytes"},
    {"max_members", "--max-members"},
    {"max_total_bytes", "--max-total-bytes"},
    {"max_ratio", "--max-ratio"},
    {"max_stream_bytes", "--max-stream-bytes"},
    {"timeout_ms", "--timeout"},
    {"allow_object", "--allow-object"},
    {"allow_trailing_data", "--allow-trailing-data"},
    {"canonical", "--canonical"},
    {"verify", "--verify"},
    {"ra_allow_type5", "--no-ra-type5"},
    {"ra_reject_metadata", "--ra-reject-metadata"},
};

} // namespace

std::string escaped(std::string_view text, shown_as how) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t at = 0; at < text.size();) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte == '\\') {
      out += how == shown_as::escaped_text ? "\\" : "\\\\";
    } else if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte >= 0x20 && byte < 0x7F) {
      out += static_cast<char>(byte);
    } else if (byte < 0x80 || how == shown_as::bytes) {
      append_byte(out, byte);
    } else {
      const utf8_step step = next_utf8(text, at);
      if (!step.valid) {
        for (std::size_t i = 0; i < step.length; ++i) append_byte(out, static_cast<unsigned char>(text[at + i]));
      } else if (acts_on_terminal(step.code_point)) {
        append_code_point(out, step.code_point);
      } else {
        out.append(text, at, step.length);
      }
      at += step.length;
      continue;
    }
    ++at;
  }
  return out;
}

std::string_view flag_of(std::string_view option) noexcept {
  for (const flag_name& name : flag_names) {
    if (name.option == option) return name.flag;
  }
  return {};
}

} // namespace npyguard_cli
