// The grammar's actions build the AST; its control turns every hard failure
// into one parse_failure exception, caught in exactly one place below.
#include "npy/parse.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#include "npyguard/options.hpp"

#include "core/checked_math.hpp"
#include "core/utf8.hpp"
#include "grammar/npy_header.hpp"

namespace npyguard::detail {
namespace {

namespace pegtl = tao::pegtl;

struct parse_failure {
  error_code code;
  std::size_t position; // in the header text
  const char* message;
  std::uint32_t control = 0; // control_character: the code point
};

struct open_container {
  std::uint32_t index;
  std::uint32_t last_child;
};

struct parse_state {
  const char* text_begin;
  const parse_settings& settings;
  ast& tree;
  std::size_t max_nodes; // the worst case for this header's size
  // The dict and at most hard_max_depth lists and tuples: no allocation.
  std::array<open_container, hard_max_depth + 2> open;
  std::size_t open_count = 0;

  std::size_t position_of(const char* p) const noexcept { return static_cast<std::size_t>(p - text_begin); }

  [[noreturn]] void fail(error_code code, const char* at, const char* message) const {
    throw parse_failure{code, position_of(at), message};
  }

  // The code point of a raw control character at `at` (C0 but tab, LF and
  // CR; DEL; C1 in latin-1 or UTF-8), or 0. Only strings consume these, so
  // a parse that stops at one stopped at a control outside a string.
  std::uint32_t raw_control_at(const char* at, const char* end) const noexcept {
    if (at == end) return 0;
    const auto byte = static_cast<unsigned char>(*at);
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) return byte;
    if (!settings.utf8 && byte >= 0x80 && byte <= 0x9F) return byte;
    if (settings.utf8 && byte == 0xC2 && end - at >= 2) {
      const auto next = static_cast<unsigned char>(at[1]);
      if (next >= 0x80 && next <= 0x9F) return next;
    }
    return 0;
  }

  node& add(node_kind kind, const char* at) {
    const auto index = static_cast<std::uint32_t>(tree.nodes.size());
    if (tree.nodes.size() == tree.nodes.capacity()) { // double, but never past the worst case
      tree.nodes.reserve(std::min(std::max<std::size_t>(2 * tree.nodes.capacity(), 16), max_nodes));
    }
    node& added = tree.nodes.emplace_back();
    added.kind = kind;
    added.offset = static_cast<std::uint32_t>(position_of(at));
    if (open_count != 0) {
      open_container& parent = open[open_count - 1];
      node& parent_node = tree.nodes[parent.index];
      if (parent.last_child == no_node) {
        parent_node.children.first = index;
      } else {
        tree.nodes[parent.last_child].next = index;
      }
      parent.last_child = index;
      ++parent_node.children.count;
    }
    return tree.nodes.back();
  }

  void open_node(node_kind kind, const char* at) {
    // The dict is the root and does not count; lists and tuples do.
    if (kind != node_kind::dict && open_count > settings.max_depth) {
      fail(error_code::depth_exceeded, at, "lists and tuples nested deeper than limits.max_depth");
    }
    add(kind, at);
    open[open_count++] = {static_cast<std::uint32_t>(tree.nodes.size() - 1), no_node};
  }

  void close_node() noexcept { --open_count; }

  void add_string(const char* begin, const char* end) {
    node& added = add(node_kind::string, begin);
    const auto arena_begin = tree.strings.size();
    // Between the quotes; the grammar has checked every escape's form.
    const char* const last = end - 1; // the closing quote
    for (const char* p = begin + 1; p < last;) {
      // Copy the run up to the next escape (or, in latin-1, the next byte
      // that needs transcoding) in one append.
      const char* run_end = p;
      if (settings.utf8 || settings.ascii_only) {
        run_end = static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(last - p)));
        if (run_end == nullptr) run_end = last;
      } else {
        while (run_end < last && *run_end != '\\' && static_cast<unsigned char>(*run_end) < 0x80) ++run_end;
      }
      tree.strings.append(p, static_cast<std::size_t>(run_end - p));
      p = run_end;
      if (p == last) break;
      if (*p != '\\') {
        append_utf8(tree.strings, static_cast<unsigned char>(*p)); // latin-1: the byte is the code point
        ++p;
        continue;
      }
      const char* escape_begin = p;
      const char code = p[1];
      p += 2;
      switch (code) {
        case 'n': tree.strings.push_back('\n'); continue;
        case 'r': tree.strings.push_back('\r'); continue;
        case 't': tree.strings.push_back('\t'); continue;
        case '\\':
        case '\'':
        case '"': tree.strings.push_back(code); continue;
        default: break;
      }
      const int digits = code == 'x' ? 2 : code == 'u' ? 4 : 8;
      std::uint32_t code_point = 0;
      for (int i = 0; i < digits; ++i, ++p) {
        code_point = code_point * 16u + hex_value(*p);
      }
      if (code_point > 0x10FFFF) {
        fail(error_code::syntax_error, escape_begin, "escape names a code point above U+10FFFF");
      }
      if (code_point >= 0xD800 && code_point <= 0xDFFF) {
        fail(error_code::syntax_error, escape_begin,
             "escape names a surrogate (U+D800-U+DFFF), which is not a character");
      }
      append_utf8(tree.strings, code_point);
    }
    // Offsets are 32-bit; only a header near 4 GiB of latin-1 text (which
    // doubles in UTF-8) could exceed them.
    if (tree.strings.size() > 0xFFFF'FFFFu) {
      fail(error_code::header_too_large, begin, "decoded header strings exceed 4 GiB");
    }
    added.text.begin = static_cast<std::uint32_t>(arena_begin);
    added.text.size = static_cast<std::uint32_t>(tree.strings.size() - arena_begin);
  }

  void add_integer(const char* begin, const char* end) {
    const char* p = begin;
    const bool negative = *p == '-';
    if (negative) ++p;
    std::uint64_t magnitude = 0;
    for (; p < end && *p >= '0' && *p <= '9'; ++p) {
      const auto digit = static_cast<std::uint64_t>(*p - '0');
      if (magnitude > (max_signed_size - digit) / 10) {
        fail(error_code::integer_too_large, begin, "integer above 2^63-1 (9223372036854775807)");
      }
      magnitude = magnitude * 10 + digit;
    }
    if (p < end && !settings.allow_long_suffix) {
      fail(error_code::syntax_error, p, "the L suffix (Python 2 long) is allowed in versions 1.0 and 2.0 only");
    }
    node& added = add(node_kind::integer, begin);
    added.negative = negative;
    added.number = magnitude;
  }

  void add_boolean(const char* at, bool truth) { add(node_kind::boolean, at).number = truth ? 1 : 0; }
};

template <typename Rule>
struct action : pegtl::nothing<Rule> {};

template <node_kind Kind>
struct open_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, parse_state& state) {
    state.open_node(Kind, in.begin());
  }
};

struct close_action {
  template <typename ActionInput>
  static void apply(const ActionInput& /*unused*/, parse_state& state) {
    state.close_node();
  }
};

struct string_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, parse_state& state) {
    state.add_string(in.begin(), in.end());
  }
};

template <bool Truth>
struct boolean_action {
  template <typename ActionInput>
  static void apply(const ActionInput& in, parse_state& state) {
    state.add_boolean(in.begin(), Truth);
  }
};

// clang-format off
template<> struct action< grammar::dict_open > : open_action< node_kind::dict > {};
template<> struct action< grammar::list_open > : open_action< node_kind::list > {};
template<> struct action< grammar::tuple_open > : open_action< node_kind::tuple > {};
template<> struct action< grammar::dict_close > : close_action {};
template<> struct action< grammar::list_close > : close_action {};
template<> struct action< grammar::tuple_close > : close_action {};
template<> struct action< grammar::sq_string > : string_action {};
template<> struct action< grammar::dq_string > : string_action {};
template<> struct action< grammar::kw_true > : boolean_action< true > {};
template<> struct action< grammar::kw_false > : boolean_action< false > {};
// clang-format on

template <>
struct action<grammar::integer_value> {
  template <typename ActionInput>
  static void apply(const ActionInput& in, parse_state& state) {
    state.add_integer(in.begin(), in.end());
  }
};

template <typename Rule>
struct control : pegtl::normal<Rule> {
  template <typename ParseInput>
  [[noreturn]] static void raise(const ParseInput& in, parse_state& state) {
    static_assert(grammar::error_message<Rule> != nullptr, "a rule under must<> needs an error_message");
    // After a backslash the rule is about the escape, not about a token.
    constexpr bool in_escape = std::is_same_v<Rule, grammar::escape_code> ||
                               std::is_same_v<Rule, grammar::escape_hex2> ||
                               std::is_same_v<Rule, grammar::escape_hex4> || std::is_same_v<Rule, grammar::escape_hex8>;
    if (!in_escape) {
      if (const std::uint32_t control = state.raw_control_at(in.current(), in.end())) {
        throw parse_failure{error_code::control_character, state.position_of(in.current()),
                            "raw control character outside a string (only string content may hold one)", control};
      }
    }
    state.fail(error_code::syntax_error, in.current(), grammar::error_message<Rule>);
  }
};

} // namespace

std::optional<error> parse_header_text(const char* text, std::size_t size, const parse_settings& settings, ast& out) {
  out.clear();
  // Every node takes at least 2 bytes (a leaf and the separator or bracket
  // after it; a container its two brackets), so n bytes hold at most
  // (n + 1) / 2 nodes: 12 bytes of AST per header byte. Real headers are far
  // sparser (a field "('name', '<f8'), " is 3 nodes in 17 bytes), so start
  // at 1 node per 6 bytes and double up to the worst case: at most 12 bytes
  // per header byte kept, 20 while the last doubling copies (8 + 12).
  const std::size_t max_nodes = size / 2 + 2;
  out.nodes.reserve(std::min(max_nodes, size / 6 + 16));
  out.strings.reserve(size);
  parse_state state{text, settings, out, max_nodes, {}};
  pegtl::memory_input<pegtl::tracking_mode::lazy, pegtl::eol::lf_crlf> input(text, size, "header");
  try {
    pegtl::parse<grammar::header, action, control>(input, state);
  } catch (const parse_failure& failure) {
    if (failure.control != 0) {
      char message[112];
      std::snprintf(message, sizeof message,
                    "raw control character U+%04X outside a string (only string content may hold one)",
                    static_cast<unsigned>(failure.control));
      return error{failure.code, settings.base_offset + failure.position, message};
    }
    return error{failure.code, settings.base_offset + failure.position, failure.message};
  } catch (const pegtl::parse_error& failure) {
    // Not raised by this grammar's control; kept so no PEGTL exception escapes.
    const auto& positions = failure.positions();
    return error{error_code::syntax_error, settings.base_offset + (positions.empty() ? 0 : positions.front().byte),
                 std::string(failure.message())};
  }
  return std::nullopt;
}

} // namespace npyguard::detail
