// The .npy header grammar in PEGTL 3.x: one rule per line, mirroring
// grammar/npy_header.peg rule for rule, in the same order (a test checks it).
// Private to the library: no PEGTL type reaches include/npyguard/.
//
// The grammar works on bytes. Before it runs, the text-decoding step has
// rejected NUL bytes and, for version 3.0, every byte sequence that is not
// strict UTF-8, so a byte >= 0x80 here is part of a latin-1 (1.0, 2.0) or
// UTF-8 (3.0) character. Raw control characters other than NUL, LF and CR
// are string content (numpy reads them there); nothing else consumes them.
#ifndef NPYGUARD_GRAMMAR_NPY_HEADER_HPP
#define NPYGUARD_GRAMMAR_NPY_HEADER_HPP

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/uint8.hpp>

namespace npyguard::grammar {

using namespace tao::pegtl;

// clang-format off
struct ws : one< ' ', '\t', '\n', '\r' > {};
struct sep : star< ws > {};
struct comma : one< ',' > {};
struct colon : one< ':' > {};
struct hex_digit : ranges< '0', '9', 'a', 'f', 'A', 'F' > {};
struct escape_hex2 : rep< 2, hex_digit > {};
struct escape_hex4 : rep< 4, hex_digit > {};
struct escape_hex8 : rep< 8, hex_digit > {};
struct escape_x : seq< one< 'x' >, must< escape_hex2 > > {};
struct escape_u : seq< one< 'u' >, must< escape_hex4 > > {};
struct escape_U : seq< one< 'U' >, must< escape_hex8 > > {};
struct escape_simple : one< '\\', '\'', '"', 'n', 'r', 't' > {};
struct escape_code : sor< escape_simple, escape_x, escape_u, escape_U > {};
struct escape : seq< one< '\\' >, must< escape_code > > {};
struct non_ascii : uint8::range< 0x80, 0xFF > {};
struct sq_plain : ranges< 0x01, 0x09, 0x0B, 0x0C, 0x0E, 0x26, 0x28, 0x5B, 0x5D, 0x7F > {};
struct dq_plain : ranges< 0x01, 0x09, 0x0B, 0x0C, 0x0E, 0x21, 0x23, 0x5B, 0x5D, 0x7F > {};
struct sq_char : sor< sq_plain, non_ascii, escape > {};
struct dq_char : sor< dq_plain, non_ascii, escape > {};
struct sq_close : one< '\'' > {};
struct dq_close : one< '"' > {};
struct sq_string : seq< one< '\'' >, star< sq_char >, must< sq_close > > {};
struct dq_string : seq< one< '"' >, star< dq_char >, must< dq_close > > {};
struct string_value : sor< sq_string, dq_string > {};
struct no_leading_zero : not_at< digit > {};
struct zero : seq< one< '0' >, must< no_leading_zero > > {};
struct nonzero : seq< range< '1', '9' >, star< digit > > {};
struct magnitude : sor< zero, nonzero > {};
struct long_suffix : one< 'L' > {};
struct unsigned_integer : seq< magnitude, opt< long_suffix > > {};
struct minus : one< '-' > {};
struct negative_integer : seq< minus, must< unsigned_integer > > {};
struct integer_value : sor< negative_integer, unsigned_integer > {};
struct kw_true : string< 'T', 'r', 'u', 'e' > {};
struct kw_false : string< 'F', 'a', 'l', 's', 'e' > {};
struct boolean_value : sor< kw_true, kw_false > {};
struct value;
struct elements : seq< value, sep, star< comma, sep, value, sep >, opt< comma, sep > > {};
struct tuple_open : one< '(' > {};
struct tuple_first_comma : one< ',' > {};
struct tuple_close : one< ')' > {};
struct tuple_elements : seq< value, sep, must< tuple_first_comma >, sep, opt< elements > > {};
struct tuple_value : seq< tuple_open, sep, opt< tuple_elements >, must< tuple_close > > {};
struct list_open : one< '[' > {};
struct list_close : one< ']' > {};
struct list_value : seq< list_open, sep, opt< elements >, must< list_close > > {};
struct value : sor< string_value, integer_value, boolean_value, tuple_value, list_value > {};
struct entry : seq< string_value, sep, must< colon >, sep, must< value > > {};
struct entries : seq< entry, sep, star< comma, sep, entry, sep >, opt< comma, sep > > {};
struct dict_open : one< '{' > {};
struct dict_close : one< '}' > {};
struct dict_value : seq< dict_open, sep, opt< entries >, must< dict_close > > {};
struct trailing : seq< sep, eof > {};
struct header : seq< must< dict_value >, must< trailing > > {};
// clang-format on

// What the parser says when a rule inside must<> fails. A raising rule
// without a message does not compile (static_assert in the control).
template <typename Rule>
inline constexpr const char* error_message = nullptr;

// clang-format off
template<> inline constexpr const char* error_message< escape_hex2 > = "\\x must be followed by 2 hex digits";
template<> inline constexpr const char* error_message< escape_hex4 > = "\\u must be followed by 4 hex digits";
template<> inline constexpr const char* error_message< escape_hex8 > = "\\U must be followed by 8 hex digits";
template<> inline constexpr const char* error_message< escape_code > = "invalid escape: expected \\\\, \\', \\\", \\n, \\r, \\t, \\x, \\u or \\U";
template<> inline constexpr const char* error_message< sq_close > = "unterminated string: expected a closing ' on the same line";
template<> inline constexpr const char* error_message< dq_close > = "unterminated string: expected a closing \" on the same line";
template<> inline constexpr const char* error_message< no_leading_zero > = "integers have no leading zeros";
template<> inline constexpr const char* error_message< unsigned_integer > = "expected digits after '-'";
template<> inline constexpr const char* error_message< tuple_first_comma > = "expected ',': a one-element tuple needs a trailing comma, (v) is not a tuple";
template<> inline constexpr const char* error_message< tuple_close > = "expected a value, ',' or ')' in tuple";
template<> inline constexpr const char* error_message< list_close > = "expected a value, ',' or ']' in list";
template<> inline constexpr const char* error_message< colon > = "expected ':' after dictionary key";
template<> inline constexpr const char* error_message< value > = "expected a value: a string, an integer, True, False, a tuple or a list";
template<> inline constexpr const char* error_message< dict_close > = "expected a string key, ',' or '}' in dictionary";
template<> inline constexpr const char* error_message< dict_value > = "the header must start with '{'";
template<> inline constexpr const char* error_message< trailing > = "only white space may follow the closing '}'";
// clang-format on

} // namespace npyguard::grammar

#endif
