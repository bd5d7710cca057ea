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

bool is_word_byte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// The library's names for what the command's flags set: ONE table, used
// for every message the command prints. Longer names come before the ends
// of them. The library's messages say, as of src/npy/ (data_size,
// framing, parse, model_builder) and src/core/io_error.cpp: "(set
// allow_trailing_data to accept them)", "(set allow_object to accept it;
// ...)", "(set timeout_ms to wait longer)", "above limits.max_header_bytes
// (N)", "nested deeper than limits.max_depth", "above
// limits.max_data_bytes (N)"; the other spellings are there for messages
// that name an option in the same ways.
struct flag_name {
  std::string_view library;
  std::string_view command;
};
constexpr flag_name flag_names[] = {
    {"allow_trailing_data", "--allow-trailing-data"},
    {"allow_object", "--allow-object"},
    {"limits.max_header_bytes", "--max-header-bytes"},
    {"limits.max_data_bytes", "--max-data-bytes"},
    {"limits.max_depth", "--max-depth"},
    {"limits.max_ndim", "--max-ndim"},
    {"max_header_bytes", "--max-header-bytes"},
    {"max_data_bytes", "--max-data-bytes"},
    {"max_depth", "--max-depth"},
    {"max_ndim", "--max-ndim"},
    {"ra_allow_type5 off", "--no-ra-type5"},
    {"ra_reject_metadata", "--ra-reject-metadata"},
    {"options::timeout_ms", "--timeout"},
    {"options.timeout_ms", "--timeout"},
    {"timeout_ms", "--timeout"},
};

// "set " before a name: the library's caller sets a field, the command's
// user gives a flag.
constexpr std::string_view library_verb = "set ";
constexpr std::string_view command_verb = "use ";

// The table's name at the start of `text`, ending there as a word; null
// when there is none.
const flag_name* name_at(std::string_view text) {
  for (const flag_name& name : flag_names) {
    if (text.substr(0, name.library.size()) == name.library &&
        (text.size() == name.library.size() || !is_word_byte(text[name.library.size()]))) {
      return &name;
    }
  }
  return nullptr;
}

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

std::string command_message(std::string_view message) {
  std::string out;
  out.reserve(message.size() + 16);
  char quote = 0; // inside a quoted name: its quote character
  for (std::size_t at = 0; at < message.size();) {
    const char c = message[at];
    if (quote != 0) {
      if (c == '\\' && at + 1 < message.size()) {
        out.append(message, at, 2);
        at += 2;
        continue;
      }
      if (c == quote) quote = 0;
      out += c;
      ++at;
      continue;
    }
    // A quote opens a name only where a word cannot be going on ("dict's"
    // is not a quote).
    const char before = at == 0 ? ' ' : message[at - 1];
    if ((c == '\'' || c == '"') && (at == 0 || before == ' ' || before == '(' || before == '[' || before == ',')) {
      quote = c;
      out += c;
      ++at;
      continue;
    }
    // A name starts a word: not inside "opts_.limits.max_depth" or
    // "--max-depth".
    if (at == 0 || !(is_word_byte(before) || before == '.' || before == ':' || before == '-')) {
      const std::string_view rest = message.substr(at);
      const bool verb = rest.substr(0, library_verb.size()) == library_verb;
      if (const flag_name* name = name_at(verb ? rest.substr(library_verb.size()) : rest)) {
        if (verb) out += command_verb;
        out += name->command;
        at += (verb ? library_verb.size() : 0) + name->library.size();
        continue;
      }
    }
    out += c;
    ++at;
  }
  return out;
}

} // namespace npyguard_cli
