// Every error code: inputs that trigger it, checked for code and byte offset.
#include <string>

#include "support.hpp"

using namespace npyguard_test;
using npyguard::error_code;

namespace {

const std::string good_dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";

// A file whose dict is `dict`, with the data its shape implies when valid.
std::string file_with(const std::string& dict, unsigned major = 1, std::size_t data_bytes = 0) {
  return npy_file(dict, major, data_bytes);
}

std::string with_descr(const std::string& descr, const std::string& shape = "(3,)") {
  return "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
}

} // namespace

TEST_CASE("baseline file is valid", "[errors]") {
  require_ok(check_bytes(file_with(good_dict, 1, 24)));
  require_ok(check_bytes(file_with(good_dict, 2, 24)));
  require_ok(check_bytes(file_with(good_dict, 3, 24)));
}

TEST_CASE("io_error", "[errors]") {
  require_error(npyguard::validate_file("/nonexistent/npyguard/file.npy"), error_code::io_error, std::nullopt);
  require_error(npyguard::validate_file(NPYGUARD_SOURCE_DIR "/tests"), error_code::io_error, std::nullopt);
}

TEST_CASE("bad_magic", "[errors][framing]") {
  std::string bytes = file_with(good_dict, 1, 24);
  bytes[5] = 'X';
  require_error(check_bytes(bytes), error_code::bad_magic, 5);
  require_error(check_bytes(std::string("PK\x03\x04", 4)), error_code::bad_magic, 0);
  require_error(check_bytes(std::string("\x93NUMpy\x01\x00", 8)), error_code::bad_magic, 4);
}

TEST_CASE("unsupported_version", "[errors][framing]") {
  for (const auto& version : {std::string("\x04\x00", 2), std::string("\x01\x01", 2), std::string("\x00\x00", 2),
                              std::string("\x03\x01", 2)}) {
    std::string bytes = file_with(good_dict, 1, 24);
    bytes.replace(6, 2, version);
    require_error(check_bytes(bytes), error_code::unsupported_version, 6);
  }
}

TEST_CASE("truncated_preamble", "[errors][framing]") {
  const std::string v1 = file_with(good_dict, 1, 24);
  const std::string v2 = file_with(good_dict, 2, 24);
  require_error(check_bytes(std::string()), error_code::truncated_preamble, 0);
  require_error(check_bytes(v1.substr(0, 6)), error_code::truncated_preamble, 6);
  require_error(check_bytes(v1.substr(0, 9)), error_code::truncated_preamble, 9);
  require_error(check_bytes(v2.substr(0, 11)), error_code::truncated_preamble, 11);
}

TEST_CASE("header_too_large", "[errors][framing][limits]") {
  // Decided from the length field alone, before any header byte exists.
  require_error(check_bytes(preamble(2, (1u << 20) + 1)), error_code::header_too_large, 8);
  require_error(check_bytes(preamble(3, 0xFFFFFFFFu)), error_code::header_too_large, 8);
  npyguard::options small;
  small.limits.max_header_bytes = 100;
  const std::string bytes = file_with(good_dict, 1, 24); // HEADER_LEN 118
  require_error(check_bytes(bytes, small), error_code::header_too_large, 8);
  small.limits.max_header_bytes = 118;
  require_ok(check_bytes(bytes, small));
}

TEST_CASE("truncated_header", "[errors][framing]") {
  const std::string bytes = file_with(good_dict, 1, 24);
  require_error(check_bytes(bytes.substr(0, 50)), error_code::truncated_header, 50);
  require_error(check_bytes(bytes.substr(0, 10)), error_code::truncated_header, 10);
  require_error(check_bytes(preamble(2, 1000)), error_code::truncated_header, 12);
}

TEST_CASE("invalid_utf8", "[errors][text]") {
  // Each case: the bytes of a field name, and the index of the first bad byte in it.
  const std::pair<std::string, std::size_t> cases[] = {
      {"a\xC3(b", 2},          // missing continuation byte
      {"a\x80", 1},            // stray continuation byte
      {"\xC0\xAF", 0},         // overlong lead byte
      {"\xE0\x80\xAF", 1},     // overlong three-byte form
      {"\xED\xA0\x80", 1},     // surrogate U+D800
      {"\xF4\x90\x80\x80", 1}, // above U+10FFFF
      {"\xF5\x80\x80\x80", 0}, // lead byte never valid
      {"\xFF", 0},
  };
  for (const auto& [name, bad_index] : cases) {
    const std::string bytes = file_with(with_descr("[('" + name + "', '<i4')]"), 3, 12);
    require_error(check_bytes(bytes), error_code::invalid_utf8, offset_of(bytes, "[('", 3 + bad_index));
  }
}

TEST_CASE("control_character", "[errors][text]") {
  std::string dict = good_dict;
  dict.insert(dict.find("'fortran"), 1, '\0');
  const std::string with_nul = file_with(dict, 1, 24);
  require_error(check_bytes(with_nul), error_code::control_character, 10 + dict.find('\0'));
  // NUL inside a string too: numpy refuses it there ("source code string cannot contain null bytes").
  const std::string nul_in_name = file_with(with_descr(std::string("[('a\0', '<i4')]", 15)), 3, 12);
  require_error(check_bytes(nul_in_name), error_code::control_character, offset_of(nul_in_name, "a", 1));

  // Raw control characters outside strings: between tokens, before a key,
  // before a value, after the dict, in every encoding of C1.
  struct row {
    const char* what;
    std::string dict;
    std::string marker; // the error is at the marker's last byte
    unsigned major = 1;
  };
  const row rows[] = {
      {"vertical tab before a value", "{'descr':\x0B'<f8', 'fortran_order': False, 'shape': (3,), }", "\x0B"},
      {"form feed before a key", "{'descr': '<f8',\f'fortran_order': False, 'shape': (3,), }", "\f"},
      {"escape before a dimension",
       with_descr("'<f8'",
                  "(\x1B"
                  "3,)"),
       "\x1B"},
      {"DEL after a value", with_descr("'<f8'\x7F"), "\x7F"},
      {"C1 in latin-1", "{'descr': '<f8',\x85'fortran_order': False, 'shape': (3,), }", "\x85"},
      {"C1 in latin-1, version 2.0", "{'descr': '<f8',\x9B'fortran_order': False, 'shape': (3,), }", "\x9B", 2},
      {"C1 in UTF-8", "{'descr': '<f8',\xC2\x85'fortran_order': False, 'shape': (3,), }", ",\xC2", 3},
      {"after a minus",
       with_descr("'<f8'",
                  "(-\x01"
                  "3,)"),
       "-\x01"},
      {"after the dict", good_dict + "\x01", "}\x01"},
  };
  for (const row& r : rows) {
    INFO(r.what);
    const std::string bytes = file_with(r.dict, r.major, 24);
    const std::uint64_t at = offset_of(bytes, r.marker, r.marker.size() - 1);
    require_error(check_bytes(bytes), error_code::control_character, at);
  }
}

TEST_CASE("header_not_terminated", "[errors][text]") {
  const std::string text = good_dict + "   ";
  const std::string bytes = raw_file(text, 1, 24);
  require_error(check_bytes(bytes), error_code::header_not_terminated, 10 + text.size() - 1);
  require_error(check_bytes(raw_file("", 1, 0)), error_code::header_not_terminated, 10);
  const std::string v2 = raw_file(good_dict + " ", 2, 24);
  require_error(check_bytes(v2), error_code::header_not_terminated, 12 + good_dict.size());
  const std::string tab = raw_file(good_dict + "\t", 3, 24);
  require_error(check_bytes(tab), error_code::header_not_terminated, 12 + good_dict.size());
  // Ending with '}' is the unpadded form (NPZ.jl); a '}' that does not close the dict is not.
  const std::string stray_brace = raw_file(good_dict + " }", 1, 24);
  require_error(check_bytes(stray_brace), error_code::syntax_error, 10 + good_dict.size() + 1);
  const std::string unclosed = raw_file("{'descr': '}", 1, 24);
  require_error(check_bytes(unclosed), error_code::syntax_error, 10 + 12);
}

TEST_CASE("syntax_error", "[errors][grammar]") {
  struct row {
    const char* what;
    std::string dict;
    std::string marker; // the error is at the first byte of the marker...
    std::size_t delta;  // ...plus this
    unsigned major = 1;
  };
  const row rows[] = {
      {"space before the dict", " " + good_dict, " {", 0},
      {"newline before the dict", "\n" + good_dict, "\n{", 0},
      {"missing colon", "{'descr' '<f8', 'fortran_order': False, 'shape': (3,), }", "'descr' ", 8},
      {"missing comma between entries", "{'descr': '<f8' 'fortran_order': False, 'shape': (3,), }", "'<f8' ", 6},
      {"implicit concatenation", "{'descr': '<' 'f8', 'fortran_order': False, 'shape': (3,), }", "'<' ", 4},
      {"(v) is not a tuple", with_descr("'<f8'", "(3)"), "(3)", 2},
      {"unclosed tuple", with_descr("'<f8'", "(3, 4"), "(3, 4, }", 7},
      {"None", with_descr("None"), "None", 0},
      {"None as a title", with_descr("[((None, 'a'), '<i4')]"), "None", 0}, // numpy reads it: no title
      {"float", with_descr("'<f8'", "(1.5,)"), "1.5", 1},
      {"leading zero", with_descr("'<f8'", "(03,)"), "(03", 2},
      {"hex integer", with_descr("'<f8'", "(0x3,)"), "0x3", 1},
      {"octal integer", with_descr("'<f8'", "(0o3,)"), "0o3", 1},
      {"binary integer", with_descr("'<f8'", "(0b11,)"), "0b11", 1},
      {"two zeros", with_descr("'<f8'", "(00,)"), "(00", 2}, // numpy reads (0,)
      {"underscore in integer", with_descr("'<f8'", "(1_0,)"), "1_0", 1},
      {"plus sign", with_descr("'<f8'", "(+3,)"), "+3", 0},
      {"minus without digits", with_descr("'<f8'", "(-,)"), "-,", 1},
      {"minus separated from its digits", with_descr("'<f8'", "(- 3,)"), "- 3", 1}, // numpy reads (-3,)
      {"lowercase l suffix", with_descr("'<f8'", "(3l,)"), "3l", 1},
      {"parenthesised value", with_descr("'<f8'", "((3),)"), "(3)", 2},
      {"L suffix after white space", with_descr("'<f8'", "(3 L,)"), "3 L", 2},
      {"L suffix twice", with_descr("'<f8'", "(3L L,)"), "3L L", 3}, // numpy's filter drops both
      {"L suffix in version 3.0", with_descr("'<f8'", "(3L,)"), "3L", 1, 3},
      {"invalid escape", with_descr("'<\\q8'"), "\\q", 1},
      {"short \\x escape", with_descr("'<\\x4'"), "\\x4", 3},
      {"short \\u escape", with_descr("'\\u003'"), "\\u003", 5},
      {"surrogate escape", with_descr("[('\\ud800', '<i4')]"), "\\ud800", 0},
      {"escape above U+10FFFF", with_descr("[('\\U00110000', '<i4')]"), "\\U0011", 0},
      {"unterminated string", "{'descr': '<f8, 'fortran_order': False, 'shape': (3,), }", "'<f8, '", 7},
      {"newline inside a string", with_descr("'<f8\n'"), "8\n", 1},
      {"carriage return inside a string", with_descr("[('a\rb', '<i4')]"), "a\r", 1},
      {"string prefix", with_descr("u'<f8'"), "u'", 0},
      {"triple quotes", with_descr("'''<f8'''"), "'''", 2},
      {"nested dict", with_descr("{}"), "{}", 0},
      {"set", with_descr("'<f8'", "{3}"), "{3}", 0},
      {"comment", "{'descr': '<f8', # c\n 'fortran_order': False, 'shape': (3,), }", "#", 0},
      {"garbage after the dict", good_dict + " x", " x", 1},
      {"second dict", good_dict + "{}", "}{", 1},
      {"non-string key", "{1: '<f8', 'fortran_order': False, 'shape': (3,), }", "1:", 0},
      {"unclosed list", with_descr("[('a', '<i4')"), "'fortran_order':", 15},
      {"unclosed dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,)", "\n",
       1}, // expected '}' where the header ends
      {"missing value", "{'descr': , 'fortran_order': False, 'shape': (3,), }", ": ,", 2},
      {"true in lowercase", "{'descr': '<f8', 'fortran_order': false, 'shape': (3,), }", "false", 0},
      {"non-ASCII outside strings", "{'descr': '<f8',\xA0'fortran_order': False, 'shape': (3,), }", "\xA0", 0},
      {"two commas", with_descr("'<f8'", "(3,,)"), ",,", 1},
      {"line continuation", "{'descr': '<f8', \\\n'fortran_order': False, 'shape': (3,), }", "\\\n", 0},
      {"line continuation with a carriage return", "{'descr': '<f8', \\\r'fortran_order': False, 'shape': (3,), }",
       "\\\r", 0},
      {"raw control character after a backslash", with_descr("[('a\\\x01', '<i4')]"), "\\\x01", 1},
  };
  for (const row& r : rows) {
    INFO(r.what);
    const std::string bytes = file_with(r.dict, r.major, 24);
    require_error(check_bytes(bytes), error_code::syntax_error, offset_of(bytes, r.marker, r.delta));
  }
}

TEST_CASE("integer_too_large", "[errors][grammar]") {
  const std::string max = file_with(with_descr("'|u1'", "(9223372036854775807,)"), 1, 0);
  // 2^63-1 itself parses; the array is then too large for data_offset + nbytes.
  require_error(check_bytes(max), error_code::size_overflow, offset_of(max, "(9223"));
  const std::string over = file_with(with_descr("'|u1'", "(9223372036854775808,)"));
  require_error(check_bytes(over), error_code::integer_too_large, offset_of(over, "9223"));
  const std::string huge = file_with(with_descr("'|u1'", "(" + std::string(5000, '9') + ",)"));
  require_error(check_bytes(huge), error_code::integer_too_large, offset_of(huge, "999"));
  const std::string negative = file_with(with_descr("'|u1'", "(-" + std::string(30, '9') + ",)"));
  require_error(check_bytes(negative), error_code::integer_too_large, offset_of(negative, "-9"));
  const std::string title = file_with(with_descr("[((99999999999999999999, 'a'), '<i4')]")); // numpy reads it
  require_error(check_bytes(title), error_code::integer_too_large, offset_of(title, "9999"));
}

TEST_CASE("negative_dimension", "[errors][validate]") {
  const std::string shape = file_with(with_descr("'<f8'", "(2, -1)"));
  require_error(check_bytes(shape), error_code::negative_dimension, offset_of(shape, "-1"));
  const std::string zero = file_with(with_descr("'<f8'", "(-0,)"));
  require_error(check_bytes(zero), error_code::negative_dimension, offset_of(zero, "-0"));
  const std::string field = file_with(with_descr("[('a', '<i4', (2, -3))]"));
  require_error(check_bytes(field), error_code::negative_dimension, offset_of(field, "-3"));
}

TEST_CASE("depth_exceeded", "[errors][grammar][limits]") {
  // 32 levels of lists are fine at the default limit (and then bad_descr).
  const std::string deep32 = file_with(with_descr(std::string(32, '[') + std::string(32, ']')));
  require_error(check_bytes(deep32), error_code::bad_descr, offset_of(deep32, "[[", 1));
  const std::string deep33 = file_with(with_descr(std::string(33, '[') + std::string(33, ']')));
  require_error(check_bytes(deep33), error_code::depth_exceeded, offset_of(deep33, "[[") + 32);
  const std::string tuples = file_with(with_descr("'<f8'", std::string(40, '(') + "1," + std::string(40, ')')));
  require_error(check_bytes(tuples), error_code::depth_exceeded, offset_of(tuples, "((") + 32);

  npyguard::options shallow;
  shallow.limits.max_depth = 2; // a struct list and its field tuples
  const std::string nested = file_with(with_descr("[('a', [('b', '<i4')])]"), 1, 12);
  require_error(check_bytes(nested, shallow), error_code::depth_exceeded, offset_of(nested, "[('b'"));
  shallow.limits.max_depth = 4;
  require_ok(check_bytes(nested, shallow));
  shallow.limits.max_depth = 0; // not even the shape tuple
  require_error(check_bytes(file_with(good_dict, 1, 24), shallow), error_code::depth_exceeded,
                offset_of(file_with(good_dict, 1, 24), "(3,)"));

  // Python refuses a 200th open bracket counting the dict's '{': 200 lists
  // inside the dict are depth_exceeded at every setting, 199 are not.
  const std::string deep199 = file_with(with_descr(std::string(199, '[') + std::string(199, ']')));
  const std::string deep200 = file_with(with_descr(std::string(200, '[') + std::string(200, ']')));
  for (const std::uint32_t setting : {199U, 200U, 201U, 1000U, 0xFFFF'FFFFU}) {
    INFO("max_depth " << setting);
    npyguard::options deep;
    deep.limits.max_depth = setting;
    require_error(check_bytes(deep199, deep), error_code::bad_descr, offset_of(deep199, "[[", 1));
    require_error(check_bytes(deep200, deep), error_code::depth_exceeded, offset_of(deep200, "[[") + 199);
  }
}

TEST_CASE("missing_key, duplicate_key, unknown_key", "[errors][validate]") {
  const std::string missing = file_with("{'descr': '<f8', 'fortran_order': False, }");
  require_error(check_bytes(missing), error_code::missing_key, 10);
  require_error(check_bytes(file_with("{}")), error_code::missing_key, 10);
  const std::string duplicate = file_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'shape': (3,), }");
  require_error(check_bytes(duplicate), error_code::duplicate_key, offset_of(duplicate, "'shape': (3,), '", 15));
  // A shadowed first value (numpy reads the last one) may be rejected before the key is seen twice.
  const std::string shadowed = file_with("{'descr': '=f8', 'fortran_order': False, 'shape': (3,), 'descr': '<f8', }");
  require_error(check_bytes(shadowed), error_code::bad_descr, offset_of(shadowed, "'=f8'"));
  const std::string unknown = file_with("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), 'extra': 1, }");
  require_error(check_bytes(unknown), error_code::unknown_key, offset_of(unknown, "'extra'"));
  const std::string cased = file_with("{'Descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  require_error(check_bytes(cased), error_code::unknown_key, offset_of(cased, "'Descr'"));
}

TEST_CASE("bad_fortran_order", "[errors][validate]") {
  for (const char* value : {"0", "1", "'False'", "()", "[]"}) {
    const std::string bytes =
        file_with(std::string("{'descr': '<f8', 'fortran_order': ") + value + ", 'shape': (3,), }");
    require_error(check_bytes(bytes), error_code::bad_fortran_order, offset_of(bytes, value));
  }
}

TEST_CASE("bad_shape", "[errors][validate]") {
  const std::string list = file_with(with_descr("'<f8'", "[3]"));
  require_error(check_bytes(list), error_code::bad_shape, offset_of(list, "[3]"));
  const std::string integer = file_with(with_descr("'<f8'", "3"));
  require_error(check_bytes(integer), error_code::bad_shape, offset_of(integer, "3, }"));
  const std::string boolean = file_with(with_descr("'<f8'", "(True,)"));
  require_error(check_bytes(boolean), error_code::bad_shape, offset_of(boolean, "True"));
  const std::string text = file_with(with_descr("'<f8'", "(2, '3')"));
  require_error(check_bytes(text), error_code::bad_shape, offset_of(text, "'3'"));
  const std::string nested = file_with(with_descr("'<f8'", "((2,),)"));
  require_error(check_bytes(nested), error_code::bad_shape, offset_of(nested, "(2,)"));
}

TEST_CASE("too_many_dimensions", "[errors][validate][limits]") {
  std::string dims;
  for (int i = 0; i < 65; ++i) dims += "1, ";
  const std::string bytes = file_with(with_descr("'<f8'", "(" + dims + ")"));
  require_error(check_bytes(bytes), error_code::too_many_dimensions, offset_of(bytes, "(1, ") + 1 + 64 * 3);
  npyguard::options few;
  few.limits.max_ndim = 2;
  const std::string three = file_with(with_descr("'<f8'", "(1, 2, 3)"));
  require_error(check_bytes(three, few), error_code::too_many_dimensions, offset_of(three, "3)"));
  // Subarray shapes: numpy's NPY_MAXDIMS, 32.
  std::string sub_dims;
  for (int i = 0; i < 33; ++i) sub_dims += "1, ";
  const std::string field = file_with(with_descr("[('a', '<i4', (" + sub_dims + "))]"));
  require_error(check_bytes(field), error_code::too_many_dimensions, offset_of(field, "(1, ") + 1 + 32 * 3);
}

TEST_CASE("bad_descr", "[errors][validate][descr]") {
  const char* type_strings[] = {
      "'<f12'",
      "'<c24'",
      "'float64'",
      "'d'",
      "'?'",
      "'a10'",
      "'=f8'",
      "'f8'",
      "'|f8'",
      "'|i4'",
      "'|U4'",
      "'<i16'",
      "'<i3'",
      "'<f1'",
      "'<b2'",
      "'<i4,<i4'",
      "'(2,3)<i4'",
      "'<M4'",
      "'|M8[ms]'",
      "'<M8[0ms]'",
      "'<M8[01ms]'",
      "'<M8[+5ms]'",
      "'<M8[ 5ms]'",
      "'<M8[2147483648ms]'",
      "'<M8[]'",
      "'<M8[B]'",
      "'<M8[us'",
      "'<M8[10 ms]'",
      "'<M8ms'",
      "'<M8[ms]x'",
      "'<O'",
      "'|O2'",
      "'|O16'",
      "'|S01'",
      "'|S'",
      "'<U'",
      "'<f8 '",
      "''",
      "'<'",
      "'<x8'",
      "'>V'",
      "'<m8[generic]'",
      "'<f'",
      "'<i'",
      "'|b'",
      "'<i4294967300'", // numpy 1.24 takes sizes modulo 2^32: int32
      "'<M'",
      "'=S4'",
      "'V4'", // numpy reads generic datetime64, S4, V4
      "'<M8[ms/2]'",
      "'<M8[ms/4294967296]'", // numpy 1.24 dies of SIGFPE on it (the differential test found it)
  };
  for (const char* descr : type_strings) {
    INFO(descr);
    const std::string bytes = file_with(with_descr(descr));
    require_error(check_bytes(bytes), error_code::bad_descr, offset_of(bytes, descr));
  }
  const std::pair<const char*, const char*> structural[] = {
      {"('<i4', (2,))", "('<i4'"},                 // top-level (descr, shape)
      {"[['a', '<i4']]", "['a'"},                  // a field given as a list
      {"[('a',)]", "('a',)"},                      // wrong length
      {"[('a', '<i4', (2,), 1)]", "('a'"},         // wrong length
      {"['<i4']", "'<i4'"},                        // a bare type string as a field
      {"['ab']", "'ab'"},                          // numpy unpacks it: field 'a' of type 'b' (int8)
      {"[(1, '<i4')]", "1,"},                      // a non-string name
      {"[(('t', 1), '<i4')]", "('t', 1"},          // a (title, name) with a non-string name
      {"[(('t', 'a', 'b'), '<i4')]", "('t', 'a'"}, // a title tuple of three
      {"[((1, 'a'), '<i4')]", "(1, 'a')"},         // a non-string title
      {"[('a', ('<i4', (2,)))]", "('<i4'"},        // a field type given as a tuple
      {"[('a', 5)]", "5)"},                        // a field type given as an integer
      {"[('a', '<i4', 3)]", "3)"},                 // a subarray shape that is not a tuple
      {"[('a', '<i4', [3])]", "[3]"},              // a subarray shape given as a list
      {"[('a', '|S2', ('|b', 2))]", "'|b'"},       // numpy: (base, new) of equal itemsize, a plain S2
      {"[('a', '|S0', (2,))]", "(2,)"},            // numpy cannot make a subarray of S0
      {"[('a', '<U0', (2,))]", "(2,)"},
      {"[('a', '|V0', (2,))]", "(2,)"},
      {"[('a', '|S0', ())]", "())"}, // not even an empty shape (the differential test found it)
      {"[('a', '<U0', ())]", "())"},
      {"[('', '|V0', ())]", "())"},
      {"1", "1,"},
      {"True", "True"},
  };
  for (const auto& [descr, marker] : structural) {
    INFO(descr);
    const std::string bytes = file_with(with_descr(descr));
    require_error(check_bytes(bytes), error_code::bad_descr, offset_of(bytes, marker));
  }
}

TEST_CASE("object_dtype", "[errors][validate][descr]") {
  const std::string top = file_with(with_descr("'|O'"), 1, 24);
  require_error(check_bytes(top), error_code::object_dtype, offset_of(top, "'|O'"));
  const std::string nested = file_with(with_descr("[('a', '<i4'), ('b', [('c', '|O8')])]"), 1, 36);
  require_error(check_bytes(nested), error_code::object_dtype, offset_of(nested, "'|O8'"));
  npyguard::options allow;
  allow.allow_object = true;
  const auto accepted = check_bytes(nested, allow);
  require_ok(accepted);
  CHECK(accepted.value().data_is_pickle);
  // The pickle's length is unknown: no data-size verdict.
  require_ok(check_bytes(file_with(with_descr("'|O'")) + "any pickle bytes", allow));
}

TEST_CASE("duplicate_field_name", "[errors][validate][descr]") {
  const std::string names = file_with(with_descr("[('a', '<i4'), ('b', '<i4'), ('a', '<f8')]"));
  require_error(check_bytes(names), error_code::duplicate_field_name, offset_of(names, "('a', '<f8'", 1));
  const std::string title_is_name = file_with(with_descr("[(('a', 'a'), '<i4')]"));
  require_error(check_bytes(title_is_name), error_code::duplicate_field_name, offset_of(title_is_name, "'a')"));
  const std::string titles = file_with(with_descr("[(('t', 'a'), '<i4'), (('t', 'b'), '<i4')]"));
  require_error(check_bytes(titles), error_code::duplicate_field_name, offset_of(titles, "(('t', 'b'", 2));
  const std::string title_is_other_name = file_with(with_descr("[('b', '<i4'), (('b', 'a'), '<i4')]"));
  require_error(check_bytes(title_is_other_name), error_code::duplicate_field_name,
                offset_of(title_is_other_name, "(('b'", 2));
  // Names are per struct: the same name in a nested struct is fine.
  require_ok(check_bytes(file_with(with_descr("[('a', '<i4'), ('s', [('a', '<i4')])]"), 1, 24)));

  // Errors come in document order: a repeated name before another error
  // wins, one after it does not, also across nesting.
  const std::string repeat_first = file_with(with_descr("[('a', '<i4'), ('a', '<i4'), ('c', '<x4')]"));
  require_error(check_bytes(repeat_first), error_code::duplicate_field_name,
                offset_of(repeat_first, "('a', '<i4'), ('a'", 15));
  const std::string bad_type_first = file_with(with_descr("[('a', '<i4'), ('c', '<x4'), ('a', '<i4')]"));
  require_error(check_bytes(bad_type_first), error_code::bad_descr, offset_of(bad_type_first, "'<x4'"));
  const std::string outer_first = file_with(with_descr("[('a', '<i4'), ('a', '<i4'), ('s', [('b', '<x4')])]"));
  require_error(check_bytes(outer_first), error_code::duplicate_field_name,
                offset_of(outer_first, "('a', '<i4'), ('a'", 15));
  const std::string nested_first =
      file_with(with_descr("[('a', '<i4'), ('s', [('b', '<i4'), ('b', '<i4')]), ('a', '<i4')]"));
  require_error(check_bytes(nested_first), error_code::duplicate_field_name,
                offset_of(nested_first, "('b', '<i4'), ('b'", 15));
  const std::string overflow_after = file_with(with_descr("[('a', '|V2147483647'), ('a', '|V1')]"));
  require_error(check_bytes(overflow_after), error_code::duplicate_field_name,
                offset_of(overflow_after, "('a', '|V1'", 1));
  // The first repeat in document order, whatever the names sort like.
  const std::string two_pairs = file_with(with_descr("[('z', '<i4'), ('b', '<i4'), ('b', '<i4'), ('z', '<i4')]"));
  require_error(check_bytes(two_pairs), error_code::duplicate_field_name,
                offset_of(two_pairs, "('b', '<i4'), ('b'", 15));
  const std::string three = file_with(with_descr("[('q', '<i4'), ('q', '<i4'), ('q', '<i4')]"));
  require_error(check_bytes(three), error_code::duplicate_field_name, offset_of(three, "('q', '<i4'), ('q'", 15));
}

TEST_CASE("duplicate_field_name among thousands of names sharing long prefixes", "[errors][validate][descr][hostile]") {
  // Names that defeat a comparison (a 2,000-byte common prefix) and a
  // first repeat far from its original, with later repeats around it.
  const std::string prefix(2000, 'p');
  std::string descr = "[";
  for (int i = 0; i < 400; ++i) descr += "('" + prefix + std::to_string(i) + "', '|V0'), ";
  const std::string fields = descr;
  descr += "('" + prefix + "317', '|V0'), ('" + prefix + "3', '|V0'), ]";
  const std::string bytes = file_with(with_descr(descr, "(1,)"), 2);
  const std::size_t repeat = bytes.find("('" + prefix + "317', '|V0'), ('" + prefix + "3'");
  REQUIRE(repeat != std::string::npos);
  require_error(check_bytes(bytes), error_code::duplicate_field_name, repeat + 1);
  // Without the repeats: accepted, every name kept in order.
  const auto distinct = check_bytes(file_with(with_descr(fields + "]", "(1,)"), 2));
  require_ok(distinct);
  REQUIRE(distinct.value().descr.fields.size() == 400);
  CHECK(distinct.value().descr.fields[399].name == prefix + "399");
}

TEST_CASE("empty_field_name", "[errors][validate][descr]") {
  const std::string plain = file_with(with_descr("[('', '<i4')]"));
  require_error(check_bytes(plain), error_code::empty_field_name, offset_of(plain, "''"));
  const std::string titled = file_with(with_descr("[(('t', ''), '|V4')]"));
  require_error(check_bytes(titled), error_code::empty_field_name, offset_of(titled, "'')"));
  const std::string empty_title = file_with(with_descr("[(('', 'a'), '<i4')]"));
  require_error(check_bytes(empty_title), error_code::empty_field_name, offset_of(empty_title, "(('", 2));
  const std::string void_subarray = file_with(with_descr("[('', '|V4', (2,))]"));
  require_error(check_bytes(void_subarray), error_code::empty_field_name, offset_of(void_subarray, "''"));
  const std::string empty_struct = file_with(with_descr("[('', [])]"));
  require_error(check_bytes(empty_struct), error_code::empty_field_name, offset_of(empty_struct, "''"));
}

TEST_CASE("itemsize_overflow", "[errors][validate][size]") {
  for (const char* descr : {"'|S2147483648'", "'|V2147483648'", "'<U536870912'", "'|S99999999999999999999999'"}) {
    INFO(descr);
    const std::string bytes = file_with(with_descr(descr));
    require_error(check_bytes(bytes), error_code::itemsize_overflow, offset_of(bytes, descr));
  }
  const std::string sum = file_with(with_descr("[('a', '|S2147483647'), ('b', '|u1')]"));
  require_error(check_bytes(sum), error_code::itemsize_overflow, offset_of(sum, "('b'"));
  const std::string padding = file_with(with_descr("[('a', '|S2147483647'), ('', '|V1')]"));
  require_error(check_bytes(padding), error_code::itemsize_overflow, offset_of(padding, "('', "));
  const std::string subarray = file_with(with_descr("[('a', '<i4', (536870912,))]"));
  require_error(check_bytes(subarray), error_code::itemsize_overflow, offset_of(subarray, "(536870912,)"));
  const std::string dimension = file_with(with_descr("[('a', '<i4', (0, 2147483648))]"));
  require_error(check_bytes(dimension), error_code::itemsize_overflow, offset_of(dimension, "2147483648"));
  const std::string count = file_with(with_descr("[('a', [], (65536, 65536))]"));
  require_error(check_bytes(count), error_code::itemsize_overflow, offset_of(count, "65536)"));
  // numpy's rule: a zero dimension makes the count 0 before later ones multiply.
  require_ok(check_bytes(file_with(with_descr("[('a', '<i4', (0, 2147483647, 2147483647))]"))));
  // ... also after a running count above 2^31-1: numpy multiplies in 64 bits
  // and only the final count must fit a C int (found by the differential
  // test, tests/differential/regressions/subarray_zero_after_large_product).
  const auto zero_last = check_bytes(file_with(with_descr("[('a', '<i4', (65536, 65536, 0))]")));
  require_ok(zero_last);
  CHECK(zero_last.value().descr.itemsize == 0);
  require_ok(check_bytes(file_with(with_descr("[('a', '<i4', (2147483647, 2147483647, 2, 0))]"))));
  // A 64-bit overflow before the zero is refused (numpy: -1 from the product),
  // reported where the count first passed 2^31-1.
  const std::string wrapped = file_with(with_descr("[('a', '<i4', (2147483647, 2147483647, 2147483647, 0))]"));
  require_error(check_bytes(wrapped), error_code::itemsize_overflow, offset_of(wrapped, "2147483647, 2147483647, 0"));
}

TEST_CASE("size_overflow", "[errors][size]") {
  const std::string square = file_with(with_descr("'<f8'", "(4294967296, 4294967296)"));
  require_error(check_bytes(square), error_code::size_overflow, offset_of(square, "4294967296)"));
  // numpy: "array is too big" even though a zero dimension makes it empty.
  const std::string empty = file_with(with_descr("'|u1'", "(0, 4611686018427387904, 4611686018427387904)"));
  require_error(check_bytes(empty), error_code::size_overflow, offset_of(empty, "4611686018427387904)"));
  const std::string bytes = file_with(with_descr("'<f8'", "(1152921504606846976,)")); // 2^60 * 8 = 2^63
  require_error(check_bytes(bytes), error_code::size_overflow, offset_of(bytes, "1152921504606846976"));
  // The element count itself stays <= 2^63-1, even for itemsize 0.
  const std::string zero_itemsize = file_with(with_descr("'|V0'", "(4294967296, 4294967296)"));
  require_error(check_bytes(zero_itemsize), error_code::size_overflow, offset_of(zero_itemsize, "4294967296)"));
  const std::string data_end = file_with(with_descr("'|u1'", "(9223372036854775800,)"));
  require_error(check_bytes(data_end), error_code::size_overflow, offset_of(data_end, "(9223"));
}

TEST_CASE("data_too_large", "[errors][size][limits]") {
  npyguard::options limited;
  limited.limits.max_data_bytes = 23;
  const std::string bytes = file_with(good_dict, 1, 24);
  require_error(check_bytes(bytes, limited), error_code::data_too_large, offset_of(bytes, "(3,)"));
  limited.limits.max_data_bytes = 24;
  require_ok(check_bytes(bytes, limited));
}

TEST_CASE("truncated_data and trailing_data", "[errors][data]") {
  const std::string exact = file_with(good_dict, 1, 24);
  require_ok(check_bytes(exact));
  require_error(check_bytes(exact.substr(0, exact.size() - 1)), error_code::truncated_data, exact.size() - 1);
  require_error(check_bytes(exact.substr(0, 128)), error_code::truncated_data, 128);
  require_error(check_bytes(exact + "x"), error_code::trailing_data, exact.size());
  require_error(check_bytes(exact + "PK\x03\x04 a zip glued on"), error_code::trailing_data, exact.size());
  npyguard::options allow;
  allow.allow_trailing_data = true;
  require_ok(check_bytes(exact + "x", allow));
  require_error(check_bytes(exact.substr(0, exact.size() - 1), allow), error_code::truncated_data, exact.size() - 1);
}

TEST_CASE("error_code_name covers every code", "[errors]") {
  for (std::uint16_t value = 1; value <= 67; ++value) { // .npy, RawArray (32-35), .npz (36-65), conversion, C API
    CHECK(npyguard::error_code_name(static_cast<error_code>(value)) != "unknown");
  }
  CHECK(npyguard::error_code_name(static_cast<error_code>(0)) == "unknown");
  CHECK(static_cast<int>(error_code::unsupported_flags) == 32);
  CHECK(npyguard::error_code_name(error_code::unsupported_flags) == "unsupported_flags");
  CHECK(static_cast<int>(error_code::data_length_mismatch) == 35);
  CHECK(npyguard::error_code_name(error_code::data_length_mismatch) == "data_length_mismatch");
  CHECK(npyguard::error_code_name(static_cast<error_code>(68)) == "unknown");
  CHECK(static_cast<int>(error_code::invalid_argument) == 67);
  CHECK(static_cast<int>(error_code::not_convertible) == 66);
  CHECK(static_cast<int>(error_code::not_zip) == 36);
  CHECK(npyguard::error_code_name(error_code::not_zip) == "not_zip");
  CHECK(static_cast<int>(error_code::crc_mismatch) == 65);
  CHECK(npyguard::error_code_name(error_code::crc_mismatch) == "crc_mismatch");
  CHECK(static_cast<int>(error_code::entry_order) == 63);
  CHECK(npyguard::error_code_name(error_code::trailing_data) == "trailing_data");
  CHECK(static_cast<int>(error_code::trailing_data) == 29); // values are stable
  CHECK(npyguard::error_code_name(error_code::not_canonical) == "not_canonical");
  CHECK(static_cast<int>(error_code::not_canonical) == 30);
}
