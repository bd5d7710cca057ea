// The grammar's actions build the AST; its control turns every hard failure
// into one parse_failure exception, caught in exactly one place below.
#include "npy/parse.hpp"

#include <cstdio>
#include <string>
#include <type_traits>

#include "core/refused.hpp"
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

struct parse_state {
  ast_builder builder;
  const char* end;

  [[noreturn]] static void raise(const build_failure& why) { throw parse_failure{why.code, why.position, why.message}; }

  [[noreturn]] void fail(error_code code, const char* at, const char* message) const {
    throw parse_failure{code, builder.position_of(at), message};
  }

  // The code point of a raw control character at `at` (C0 but tab, LF and
  // CR; DEL; C1 in latin-1 or UTF-8), or 0. Only strings consume these, so
  // a parse that stops at one stopped at a control outside a string.
  std::uint32_t raw_control_at(const char* at) const noexcept {
    if (at == end) return 0;
    const auto byte = static_cast<unsigned char>(*at);
    if ((byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r') || byte == 0x7F) return byte;
    const bool utf8 = builder.settings().utf8;
    if (!utf8 && byte >= 0x80 && byte <= 0x9F) return byte;
    if (utf8 && byte == 0xC2 && end - at >= 2) {
      const auto next = static_cast<unsigned char>(at[1]);
      if (next >= 0x80 && next <= 0x9F) return next;
    }
    return 0;
  }

  void open_node(node_kind kind, const char* at) {
    build_failure why;
    if (!builder.open(kind, at, why)) raise(why);
  }
  void close_node() noexcept { builder.close(); }
  void add_string(const char* begin, const char* end_of_token) {
    build_failure why;
    if (!builder.add_string(begin, end_of_token, why)) raise(why);
  }
  void add_integer(const char* begin, const char* end_of_token) {
    build_failure why;
    if (!builder.add_integer(begin, end_of_token, why)) raise(why);
  }
  void add_boolean(const char* at, bool truth) { builder.add_boolean(at, truth); }
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
      if (const std::uint32_t control = state.raw_control_at(in.current())) {
        throw parse_failure{error_code::control_character, state.builder.position_of(in.current()),
                            "raw control character outside a string (only string content may hold one)", control};
      }
    }
    state.fail(error_code::syntax_error, in.current(), grammar::error_message<Rule>);
  }
};

} // namespace

std::optional<error> parse_header_text_grammar(const char* text, std::size_t size, const parse_settings& settings,
                                               ast& out) {
  parse_state state{ast_builder(text, size, settings, out), text + size};
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
    error raised{failure.code, settings.base_offset + failure.position, failure.message};
    // Only the depth limit raises depth_exceeded (ast_builder::open); it
    // stops at the first list or tuple past the limit.
    if (failure.code == error_code::depth_exceeded) {
      return refused(std::move(raised), "max_depth", settings.max_depth, past(settings.max_depth));
    }
    return raised;
  } catch (const pegtl::parse_error& failure) {
    // Not raised by this grammar's control; kept so no PEGTL exception escapes.
    const auto& positions = failure.positions();
    return error{error_code::syntax_error, settings.base_offset + (positions.empty() ? 0 : positions.front().byte),
                 std::string(failure.message())};
  }
  return std::nullopt;
}

std::optional<error> parse_header_text(const char* text, std::size_t size, const parse_settings& settings, ast& out) {
  if (parse_header_text_fast(text, size, settings, out)) return std::nullopt;
  return parse_header_text_grammar(text, size, settings, out);
}

} // namespace npyguard::detail
