// The fast path of npy/parse.hpp: a recursive-descent reader of the grammar
// of grammar/npy_header.hpp, rule for rule (each function names the rules
// it reads), for the headers the grammar accepts. It never decides a
// rejection: at the first byte where the grammar would fail, it gives up
// and the grammar reads the text again and says why. It builds the tree
// through ast_builder, like the grammar's actions, in the same order.
//
// Why it can give up at the first unexpected byte: in this grammar a value,
// a dict entry or a string either fails without consuming anything or is
// committed (a must<> follows its first byte), and every place that tries
// one and finds none then requires a closing bracket. So wherever the next
// byte starts no value, entry or bracket the grammar expects, the grammar
// reports an error there or later; it never backtracks into an accept.
#include "npy/parse.hpp"

#include <array>
#include <cstdint>
#include <cstring>

namespace npyguard::detail {
namespace {

// The bytes a string's scan stops at: both quotes, the backslash, the
// three bytes no string may hold (NUL, LF, CR) and every byte above 0x7F
// (transcoded from latin-1). The rest are copied as they are.
constexpr std::array<bool, 256> make_string_stop() noexcept {
  std::array<bool, 256> stop{};
  for (const char c : {'\'', '"', '\\', '\n', '\r', '\0'}) stop[static_cast<unsigned char>(c)] = true;
  for (std::size_t c = 0x80; c < 256; ++c) stop[c] = true;
  return stop;
}
constexpr std::array<bool, 256> string_stop = make_string_stop();

class fast_parser {
public:
  fast_parser(const char* text, std::size_t size, const parse_settings& settings, ast& out)
      : p_(text), end_(text + size), utf8_(settings.utf8), builder_(text, size, settings, out) {}

  // header <- dict_value trailing; trailing <- sep eof
  bool header() {
    if (!dict()) return false;
    skip_ws();
    return p_ == end_;
  }

private:
  static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

  // ws <- [ \t\n\r]; sep <- ws*
  // Runs of spaces (a header's padding: up to max_header_bytes of them,
  // inflated from a few bytes inside an .npz) go eight at a time.
  void skip_ws() noexcept {
    constexpr std::uint64_t spaces = 0x2020202020202020u;
    const char* p = p_; // a local: the loop keeps it in a register
    for (;;) {
      while (end_ - p >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, p, sizeof word);
        if (word != spaces) break;
        p += 8;
      }
      if (p == end_ || !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) break;
      ++p;
    }
    p_ = p;
  }

  [[nodiscard]] bool at(char c) const noexcept { return p_ != end_ && *p_ == c; }

  // The first bytes of value's alternatives.
  [[nodiscard]] bool starts_value() const noexcept {
    if (p_ == end_) return false;
    switch (*p_) {
      case '\'':
      case '"':
      case '-':
      case 'T':
      case 'F':
      case '(':
      case '[': return true;
      default: return is_digit(*p_);
    }
  }

  // dict_value <- '{' sep entries? '}'
  // entries <- entry sep (',' sep entry sep)* (',' sep)?
  // entry <- string_value sep ':' sep value
  bool dict() {
    if (!at('{') || !builder_.open(node_kind::dict, p_, why_)) return false;
    ++p_;
    skip_ws();
    while (at('\'') || at('"')) {
      if (!string()) return false;
      skip_ws();
      if (!at(':')) return false;
      ++p_;
      skip_ws();
      if (!value()) return false;
      skip_ws();
      if (!at(',')) break;
      ++p_;
      skip_ws();
    }
    if (!at('}')) return false;
    ++p_;
    builder_.close();
    return true;
  }

  // value <- string_value / integer_value / boolean_value / tuple_value / list_value
  bool value() {
    if (p_ == end_) return false;
    switch (*p_) {
      case '\'':
      case '"': return string();
      case 'T': return keyword("True", 4, true);
      case 'F': return keyword("False", 5, false);
      case '(': return tuple();
      case '[': return list();
      default: return integer();
    }
  }

  // elements <- value sep (',' sep value sep)* (',' sep)?
  bool elements() {
    if (!value()) return false;
    skip_ws();
    while (at(',')) {
      ++p_;
      skip_ws();
      if (!starts_value()) break;
      if (!value()) return false;
      skip_ws();
    }
    return true;
  }

  // tuple_value <- '(' sep tuple_elements? ')'
  // tuple_elements <- value sep ',' sep elements?
  bool tuple() {
    if (!builder_.open(node_kind::tuple, p_, why_)) return false;
    ++p_;
    skip_ws();
    if (!at(')')) {
      if (!value()) return false;
      skip_ws();
      if (!at(',')) return false;
      ++p_;
      skip_ws();
      if (starts_value() && !elements()) return false;
    }
    if (!at(')')) return false;
    ++p_;
    builder_.close();
    return true;
  }

  // list_value <- '[' sep elements? ']'
  bool list() {
    if (!builder_.open(node_kind::list, p_, why_)) return false;
    ++p_;
    skip_ws();
    if (starts_value() && !elements()) return false;
    if (!at(']')) return false;
    ++p_;
    builder_.close();
    return true;
  }

  // kw_true <- 'True'; kw_false <- 'False'
  bool keyword(const char* word, std::size_t length, bool truth) {
    if (static_cast<std::size_t>(end_ - p_) < length || std::memcmp(p_, word, length) != 0) return false;
    builder_.add_boolean(p_, truth);
    p_ += length;
    return true;
  }

  // integer_value <- negative_integer / unsigned_integer
  // negative_integer <- '-' unsigned_integer; unsigned_integer <- magnitude 'L'?
  // magnitude <- '0' !digit / [1-9] digit*
  bool integer() {
    const char* q = p_;
    if (*q == '-') ++q;
    if (q == end_) return false;
    if (*q == '0') {
      ++q;
      if (q != end_ && is_digit(*q)) return false;
    } else if (*q >= '1' && *q <= '9') {
      ++q;
      while (q != end_ && is_digit(*q)) ++q;
    } else {
      return false;
    }
    if (q != end_ && *q == 'L') ++q;
    if (!builder_.add_integer(p_, q, why_)) return false;
    p_ = q;
    return true;
  }

  // sq_string <- "'" sq_char* "'"; dq_string <- '"' dq_char* '"'
  // sq_char, dq_char <- plain / non_ascii / escape: any byte but NUL, LF, CR,
  // the quote and the backslash, or an escape.
  //
  // The common string (ASCII, no escape) is read here; at the first byte
  // that needs more, string_rest takes over.
  bool string() {
    const char* q = skip_plain(p_ + 1);
    if (q == end_ || *q != *p_) return string_rest(q);
    ++q; // the closing quote
    if (!builder_.add_plain_string(p_, q, end_)) return false;
    p_ = q;
    return true;
  }

  // string() from `q`, a byte in the string that is not plain ASCII.
  [[gnu::noinline]] bool string_rest(const char* q) {
    const char quote = *p_;
    bool plain = true; // no escape, no byte to transcode
    for (;;) {
      q = skip_plain(q);
      if (q == end_) return false;
      const char c = *q;
      if (c == quote) break;
      if (c == '\\') {
        q = escape(q);
        if (q == nullptr) return false;
        plain = false;
        continue;
      }
      if (c == '\n' || c == '\r' || c == '\0') return false;
      if (static_cast<unsigned char>(c) >= 0x80 && !utf8_) plain = false;
      ++q; // the other quote, or a byte above 0x7F
    }
    ++q; // the closing quote
    if (plain ? !builder_.add_plain_string(p_, q, end_) : !builder_.add_string(p_, q, why_)) return false;
    p_ = q;
    return true;
  }

  // The first byte from `q` on that string_stop marks, or end_.
  [[nodiscard]] const char* skip_plain(const char* q) const noexcept {
    while (q != end_ && !string_stop[static_cast<unsigned char>(*q)]) ++q;
    return q;
  }

  // escape <- '\\' (escape_simple / 'x' hex{2} / 'u' hex{4} / 'U' hex{8}):
  // the byte after the escape at `q`, or nullptr.
  [[nodiscard]] const char* escape(const char* q) const noexcept {
    ++q; // the backslash
    if (q == end_) return nullptr;
    std::size_t digits = 0;
    switch (*q) {
      case '\\':
      case '\'':
      case '"':
      case 'n':
      case 'r':
      case 't': return q + 1;
      case 'x': digits = 2; break;
      case 'u': digits = 4; break;
      case 'U': digits = 8; break;
      default: return nullptr;
    }
    ++q;
    if (static_cast<std::size_t>(end_ - q) < digits) return nullptr;
    for (std::size_t i = 0; i < digits; ++i, ++q) {
      const char c = *q;
      if (!is_digit(c) && !(c >= 'a' && c <= 'f') && !(c >= 'A' && c <= 'F')) return nullptr;
    }
    return q;
  }

  const char* p_;
  const char* const end_;
  const bool utf8_; // version 3.0: bytes above 0x7F are UTF-8 already
  ast_builder builder_;
  build_failure why_; // unused: the grammar says why
};

} // namespace

bool parse_header_text_fast(const char* text, std::size_t size, const parse_settings& settings, ast& out) {
  return fast_parser(text, size, settings, out).header();
}

} // namespace npyguard::detail
