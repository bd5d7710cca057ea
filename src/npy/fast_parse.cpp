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

// Each rule takes the position it starts at and returns the one after
// what it read, or nullptr where it gives up: a rule can read ahead and
// decline without undoing anything (string_pair).
class fast_parser {
public:
  fast_parser(const char* text, std::size_t size, const parse_settings& settings, ast& out)
      : begin_(text), end_(text + size), utf8_(settings.utf8), builder_(text, size, settings, out) {}

  // header <- dict_value trailing; trailing <- sep eof
  bool header() {
    const char* p = dict(begin_);
    return p != nullptr && skip_ws(p) == end_;
  }

private:
  static bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

  // ws <- [ \t\n\r]; sep <- ws*
  // Most separators are empty or one space ("', '"), decided from a byte
  // or two (every white-space byte is at most ' ').
  [[nodiscard]] const char* skip_ws(const char* p) const noexcept {
    if (p == end_ || static_cast<unsigned char>(*p) > ' ') return p;
    if (*p == ' ' && end_ - p >= 2 && static_cast<unsigned char>(p[1]) > ' ') return p + 1;
    return skip_ws_run(p);
  }

  // Runs of spaces (a header's padding: up to max_header_bytes of them,
  // inflated from a few bytes inside an .npz) go eight at a time.
  [[gnu::noinline]] const char* skip_ws_run(const char* p) const noexcept {
    constexpr std::uint64_t spaces = 0x2020202020202020u;
    for (;;) {
      while (end_ - p >= 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, p, sizeof word);
        if (word != spaces) break;
        p += 8;
      }
      if (p == end_ || !(*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) return p;
      ++p;
    }
  }

  [[nodiscard]] bool at(const char* p, char c) const noexcept { return p != end_ && *p == c; }

  // The first bytes of value's alternatives.
  [[nodiscard]] bool starts_value(const char* p) const noexcept {
    if (p == end_) return false;
    switch (*p) {
      case '\'':
      case '"':
      case '-':
      case 'T':
      case 'F':
      case '(':
      case '[': return true;
      default: return is_digit(*p);
    }
  }

  // dict_value <- '{' sep entries? '}'
  // entries <- entry sep (',' sep entry sep)* (',' sep)?
  // entry <- string_value sep ':' sep value
  const char* dict(const char* p) {
    if (!at(p, '{') || !builder_.open(node_kind::dict, p, why_)) return nullptr;
    p = skip_ws(p + 1);
    while (at(p, '\'') || at(p, '"')) {
      p = string(p);
      if (p == nullptr) return nullptr;
      p = skip_ws(p);
      if (!at(p, ':')) return nullptr;
      p = value(skip_ws(p + 1));
      if (p == nullptr) return nullptr;
      p = skip_ws(p);
      if (!at(p, ',')) break;
      p = skip_ws(p + 1);
    }
    if (!at(p, '}')) return nullptr;
    builder_.close();
    return p + 1;
  }

  // value <- string_value / integer_value / boolean_value / tuple_value / list_value
  const char* value(const char* p) {
    if (p == end_) return nullptr;
    switch (*p) {
      case '\'':
      case '"': return string(p);
      case 'T': return keyword(p, "True", 4, true);
      case 'F': return keyword(p, "False", 5, false);
      case '(': return tuple(p);
      case '[': return list(p);
      default: return integer(p);
    }
  }

  // value, with a string (a field's name or type) and a pair of strings
  // (a field) read here rather than in a recursive call of value().
  // Inline: a list of fields calls no function per field.
  [[gnu::always_inline]] const char* element(const char* p) {
    if (at(p, '\'') || at(p, '"')) return string(p);
    if (at(p, '(')) {
      if (const char* after = string_pair(p)) return after;
    }
    return value(p);
  }

  // tuple_value of exactly two plain strings, "('f0', '<f8')", the form of
  // nearly every field: scanned, then added in one step
  // (ast_builder::add_string_pair) rather than opened, filled and closed.
  // nullptr, nothing added, for every other text: tuple() reads it. It
  // reads no further than the tuple's two strings, so declining costs at
  // most one more read of them: the parse stays linear.
  [[gnu::always_inline]] const char* string_pair(const char* p) {
    const char* first = skip_ws(p + 1);
    const char* first_end = plain_string_end(first);
    if (first_end == nullptr) return nullptr;
    const char* q = skip_ws(first_end);
    if (!at(q, ',')) return nullptr;
    const char* second = skip_ws(q + 1);
    const char* second_end = plain_string_end(second);
    if (second_end == nullptr) return nullptr;
    q = skip_ws(second_end);
    if (!at(q, ')') || !builder_.add_string_pair(p, first, first_end, second, second_end)) return nullptr;
    return q + 1;
  }

  // The end of the string token at `p` (past its closing quote) when it is
  // a plain one (ASCII, no escape), else nullptr.
  [[nodiscard]] const char* plain_string_end(const char* p) const noexcept {
    if (!at(p, '\'') && !at(p, '"')) return nullptr;
    const char* q = skip_plain(p + 1);
    return q != end_ && *q == *p ? q + 1 : nullptr;
  }

  // elements <- value sep (',' sep value sep)* (',' sep)?
  const char* elements(const char* p) {
    p = element(p);
    if (p == nullptr) return nullptr;
    p = skip_ws(p);
    while (at(p, ',')) {
      p = skip_ws(p + 1);
      if (!starts_value(p)) break;
      p = element(p);
      if (p == nullptr) return nullptr;
      p = skip_ws(p);
    }
    return p;
  }

  // tuple_value <- '(' sep tuple_elements? ')'
  // tuple_elements <- value sep ',' sep elements?
  const char* tuple(const char* p) {
    if (!builder_.open(node_kind::tuple, p, why_)) return nullptr;
    p = skip_ws(p + 1);
    if (!at(p, ')')) {
      p = element(p);
      if (p == nullptr) return nullptr;
      p = skip_ws(p);
      if (!at(p, ',')) return nullptr;
      p = skip_ws(p + 1);
      if (starts_value(p)) {
        p = elements(p);
        if (p == nullptr) return nullptr;
      }
    }
    if (!at(p, ')')) return nullptr;
    builder_.close();
    return p + 1;
  }

  // list_value <- '[' sep elements? ']'
  const char* list(const char* p) {
    if (!builder_.open(node_kind::list, p, why_)) return nullptr;
    p = skip_ws(p + 1);
    if (starts_value(p)) {
      p = elements(p);
      if (p == nullptr) return nullptr;
    }
    if (!at(p, ']')) return nullptr;
    builder_.close();
    return p + 1;
  }

  // kw_true <- 'True'; kw_false <- 'False'
  const char* keyword(const char* p, const char* word, std::size_t length, bool truth) {
    if (static_cast<std::size_t>(end_ - p) < length || std::memcmp(p, word, length) != 0) return nullptr;
    builder_.add_boolean(p, truth);
    return p + length;
  }

  // integer_value <- negative_integer / unsigned_integer
  // negative_integer <- '-' unsigned_integer; unsigned_integer <- magnitude 'L'?
  // magnitude <- '0' !digit / [1-9] digit*
  const char* integer(const char* p) {
    const char* q = p;
    if (*q == '-') ++q;
    if (q == end_) return nullptr;
    if (*q == '0') {
      ++q;
      if (q != end_ && is_digit(*q)) return nullptr;
    } else if (*q >= '1' && *q <= '9') {
      ++q;
      while (q != end_ && is_digit(*q)) ++q;
    } else {
      return nullptr;
    }
    if (q != end_ && *q == 'L') ++q;
    if (!builder_.add_integer(p, q, why_)) return nullptr;
    return q;
  }

  // sq_string <- "'" sq_char* "'"; dq_string <- '"' dq_char* '"'
  // sq_char, dq_char <- plain / non_ascii / escape: any byte but NUL, LF, CR,
  // the quote and the backslash, or an escape.
  //
  // The common string (ASCII, no escape) is read here; at the first byte
  // that needs more, string_rest takes over.
  const char* string(const char* p) {
    const char* q = skip_plain(p + 1);
    if (q == end_ || *q != *p) return string_rest(p, q);
    ++q; // the closing quote
    builder_.add_plain_string(p, q);
    return q;
  }

  // string() of the token at `p` from `q`, a byte in it that is not plain
  // ASCII.
  [[gnu::noinline]] const char* string_rest(const char* p, const char* q) {
    const char quote = *p;
    bool plain = true; // no escape, no byte to transcode
    for (;;) {
      q = skip_plain(q);
      if (q == end_) return nullptr;
      const char c = *q;
      if (c == quote) break;
      if (c == '\\') {
        q = escape(q);
        if (q == nullptr) return nullptr;
        plain = false;
        continue;
      }
      if (c == '\n' || c == '\r' || c == '\0') return nullptr;
      if (static_cast<unsigned char>(c) >= 0x80 && !utf8_) plain = false;
      ++q; // the other quote, or a byte above 0x7F
    }
    ++q; // the closing quote
    if (plain) {
      builder_.add_plain_string(p, q);
    } else if (!builder_.add_string(p, q, why_)) {
      return nullptr;
    }
    return q;
  }

  // The first byte from `q` on that string_stop marks, or end_.
  // Four bytes a step while four remain: one test a byte rather than two.
  [[nodiscard]] const char* skip_plain(const char* q) const noexcept {
    const auto stops = [](const char* at) { return string_stop[static_cast<unsigned char>(*at)]; };
    for (; end_ - q >= 4; q += 4) {
      if (stops(q)) return q;
      if (stops(q + 1)) return q + 1;
      if (stops(q + 2)) return q + 2;
      if (stops(q + 3)) return q + 3;
    }
    while (q != end_ && !stops(q)) ++q;
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

  const char* const begin_;
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
