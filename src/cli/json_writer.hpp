// A streaming JSON writer for --json: values go straight into a text
// buffer, so memory does not grow with the size of the document (inspect
// --json of a 1 MiB header of 50,000 fields once took 90 MB as a
// nlohmann::json tree). The output is byte for byte what nlohmann::json's
// dump() (compact, ensure_ascii off, error_handler replace) wrote before:
// the callers give the keys of each object in alphabetical order, as
// nlohmann's std::map did (checked in debug builds). Header-only so that
// the CLI tests compare it with nlohmann::json.
#ifndef NPYGUARD_CLI_JSON_WRITER_HPP
#define NPYGUARD_CLI_JSON_WRITER_HPP

#include <cassert>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "text.hpp"
#include "unicode.hpp"

namespace npyguard_cli {

class json_writer {
public:
  // Appends to `out`. With a `sink`, the text is written to it whenever
  // more than `flush_at` bytes are waiting, and by flush().
  explicit json_writer(std::string& out, std::FILE* sink = nullptr, std::size_t flush_at = std::size_t{64} * 1024)
      : out_(out), sink_(sink), flush_at_(flush_at) {}
  json_writer(const json_writer&) = delete;
  json_writer& operator=(const json_writer&) = delete;
  ~json_writer() { flush(); }

  void begin_object() {
    value_start();
    out_ += '{';
    open(true);
  }
  void end_object() { close('}'); }
  void begin_array() {
    value_start();
    out_ += '[';
    open(false);
  }
  void end_array() { close(']'); }

  // A key of the innermost object; the next call writes its value.
  void key(std::string_view name) {
    assert(!levels_.empty() && levels_.back().is_object && !after_key_);
    level& current = levels_.back();
    assert(current.first || current.last_key < name); // alphabetical, each once
#ifndef NDEBUG
    current.last_key.assign(name);
#endif
    if (!current.first) out_ += ',';
    current.first = false;
    append_string(name);
    out_ += ':';
    after_key_ = true;
  }

  void string(std::string_view text) {
    value_start();
    append_string(text);
  }
  void number(std::uint64_t value) {
    value_start();
    out_ += std::to_string(value);
  }
  void boolean(bool value) {
    value_start();
    out_ += value ? "true" : "false";
  }
  void null() {
    value_start();
    out_ += "null";
  }

  // Ends a line (one JSON document per line).
  void end_line() {
    assert(levels_.empty());
    out_ += '\n';
    maybe_flush();
  }

  void flush() {
    if (sink_ != nullptr && !out_.empty()) {
      std::fwrite(out_.data(), 1, out_.size(), sink_);
      out_.clear();
    }
  }

private:
  struct level {
    bool is_object = false;
    bool first = true;
#ifndef NDEBUG
    std::string last_key;
#endif
  };

  void open(bool is_object) {
    levels_.emplace_back();
    levels_.back().is_object = is_object;
  }

  void close(char bracket) {
    assert(!levels_.empty() && levels_.back().is_object == (bracket == '}') && !after_key_);
    levels_.pop_back();
    out_ += bracket;
    maybe_flush();
  }

  // Before a value: the comma between array elements (an object's value
  // follows its key).
  void value_start() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (levels_.empty()) return;
    assert(!levels_.back().is_object);
    if (!levels_.back().first) out_ += ',';
    levels_.back().first = false;
  }

  void maybe_flush() {
    if (sink_ != nullptr && out_.size() >= flush_at_) flush();
  }

  // nlohmann's escaping: \" \\ \b \f \n \r \t, other controls below 0x20 as
  // \u00xx, and DEL as \u007f (which a terminal may act on); everything else
  // (non-ASCII) as it is, except what a terminal acts on; each step of bytes
  // that is not UTF-8 becomes U+FFFD, as with its error_handler_t::replace.
  void append_string(std::string_view text) {
    out_ += '"';
    std::size_t plain = 0; // start of the bytes not yet copied
    for (std::size_t at = 0; at < text.size();) {
      const auto byte = static_cast<unsigned char>(text[at]);
      if (byte >= 0x20 && byte < 0x7F && byte != '"' && byte != '\\') { // DEL escaped, as the text form does
        ++at;
        continue;
      }
      const utf8_step step = byte < 0x80 ? utf8_step{1, true, byte} : next_utf8(text, at);
      // Kept as they are, except what a terminal acts on and the line
      // separators U+2028/U+2029 (and U+0085), which line-oriented readers
      // split on: those become \uNNNN, so one document stays one line.
      const bool escape = acts_on_terminal(step.code_point) || step.code_point == 0x2028 || step.code_point == 0x2029;
      if (step.valid && byte >= 0x80 && !escape) {
        at += step.length;
        continue;
      }
      out_.append(text.data() + plain, at - plain);
      if (!step.valid) {
        out_ += "\xEF\xBF\xBD";
      } else if (byte >= 0x80) {
        out_ += "\\u";
        for (int shift = 12; shift >= 0; shift -= 4) out_ += hex_digits[(step.code_point >> shift) & 0xF];
      } else {
        switch (byte) {
          case '"': out_ += "\\\""; break;
          case '\\': out_ += "\\\\"; break;
          case '\b': out_ += "\\b"; break;
          case '\f': out_ += "\\f"; break;
          case '\n': out_ += "\\n"; break;
          case '\r': out_ += "\\r"; break;
          case '\t': out_ += "\\t"; break;
          default:
            out_ += "\\u00";
            out_ += hex_digits[byte >> 4];
            out_ += hex_digits[byte & 0xF];
        }
      }
      at += step.length;
      plain = at;
      // A long string (a descr of a million bytes) does not collect whole.
      if (sink_ != nullptr && out_.size() >= flush_at_) flush();
    }
    out_.append(text.data() + plain, text.size() - plain);
    out_ += '"';
  }

  std::string& out_;
  std::FILE* sink_;
  std::size_t flush_at_;
  std::vector<level> levels_;
  bool after_key_ = false;
};

} // namespace npyguard_cli

#endif
