// Accept tables: header texts that SPEC.md declares valid, each with the model
// npyguard must report for it. Every expectation below is numpy 1.24's own
// reading of the same header (numpy.lib.format._read_array_header and
// repr(dtype_to_descr(dtype))). Assertions are on codes, offsets and model
// fields only, never on message text.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "npyguard/npyguard.hpp"
#include "support.hpp"

namespace {

using npyguard::byte_order;
using npyguard::dtype_kind;
using shape_t = std::vector<std::uint64_t>;

// The header dict as numpy writes it (without the padding spaces).
std::string header_text(const std::string& descr, const std::string& shape = "(3,)",
                        const std::string& fortran = "False") {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }\n";
}

std::uint64_t preamble_size(unsigned major) { return major == 1 ? 10U : 12U; }

std::uint64_t lowest_set_bit(std::uint64_t value) { return value & (~value + 1U); }

// Header text with every byte outside printable ASCII spelled \xHH, for INFO.
std::string printable(const std::string& text) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7F && byte != '\\') {
      out.push_back(c);
    } else {
      out += "\\x";
      out.push_back(hex[byte >> 4]);
      out.push_back(hex[byte & 0xF]);
    }
  }
  return out;
}

// Validates `text` as the header of a file of the given major version and
// checks the framing fields every accepted header must have. Returns the
// model, or nothing (after a failed CHECK) so that table loops go on to the
// next row and report every bad row in one run.
std::optional<npyguard::header> accept(const std::string& text, unsigned major, const npyguard::options& opts = {}) {
  const npyguard::result r = npyguard::validate_header_text(text.data(), text.size(), major, opts);
  INFO("version " << major << ".0, header text: " << printable(text));
  INFO(npyguard_test::describe_failure(r));
  CHECK(r.ok());
  if (!r.ok()) return std::nullopt;
  const npyguard::header& h = r.value();
  CHECK(h.major_version == major);
  CHECK(h.minor_version == 0);
  CHECK(h.header_length == text.size());
  CHECK(h.data_offset == preamble_size(major) + text.size());
  CHECK(h.data_alignment == lowest_set_bit(h.data_offset));
  return h;
}

void check_field(const npyguard::field& f, const std::string& name, std::uint64_t offset, std::uint64_t itemsize,
                 dtype_kind kind, const shape_t& subarray = {},
                 const std::optional<std::string>& title = std::nullopt) {
  INFO("field " << printable(name));
  CHECK(f.name == name);
  CHECK(f.title == title);
  CHECK(f.offset == offset);
  CHECK(f.itemsize == itemsize);
  CHECK(f.type.kind == kind);
  CHECK(f.subarray_shape == subarray);
}

const unsigned all_versions[] = {1U, 2U, 3U};

// ---------------------------------------------------------------------------
// Type strings (SPEC.md section 3, "Type strings")
// ---------------------------------------------------------------------------

struct type_row {
  std::string text; // as written in the header, without quotes
  dtype_kind kind;
  byte_order order;
  std::uint64_t itemsize;
  std::string repr; // numpy's str of the dtype (descr_repr without quotes)
  std::string unit; // datetime / timedelta only
  std::uint32_t multiplier;
};

type_row plain(std::string text, dtype_kind kind, byte_order order, std::uint64_t itemsize, std::string repr) {
  return type_row{std::move(text), kind, order, itemsize, std::move(repr), "", 1U};
}

std::vector<type_row> type_rows() {
  using K = dtype_kind;
  using B = byte_order;
  std::vector<type_row> rows;

  // Booleans and one-byte integers: any byte order, reported '|'.
  for (const char* order : {"|", "<", ">"}) {
    const std::string o = order;
    rows.push_back(plain(o + "b1", K::boolean, B::not_applicable, 1, "|b1"));
    rows.push_back(plain(o + "i1", K::signed_integer, B::not_applicable, 1, "|i1"));
    rows.push_back(plain(o + "u1", K::unsigned_integer, B::not_applicable, 1, "|u1"));
  }

  // Multi-byte numbers: '<' or '>'.
  for (const char* order : {"<", ">"}) {
    const std::string o = order;
    const B bo = o == "<" ? B::little : B::big;
    for (const char* size : {"2", "4", "8"}) {
      const auto n = std::stoull(size);
      rows.push_back(plain(o + "i" + size, K::signed_integer, bo, n, o + "i" + size));
      rows.push_back(plain(o + "u" + size, K::unsigned_integer, bo, n, o + "u" + size));
    }
    for (const char* size : {"2", "4", "8", "16"}) {
      rows.push_back(plain(o + "f" + size, K::floating, bo, std::stoull(size), o + "f" + size));
    }
    for (const char* size : {"8", "16", "32"}) {
      rows.push_back(plain(o + "c" + size, K::complex_floating, bo, std::stoull(size), o + "c" + size));
    }
  }

  // Bytes and raw void: '|', with '<' and '>' tolerated and reported as '|'.
  for (const char* order : {"|", "<", ">"}) {
    const std::string o = order;
    for (const char* size : {"0", "1", "2147483647"}) {
      rows.push_back(plain(o + "S" + size, K::bytes, B::not_applicable, std::stoull(size), std::string("|S") + size));
    }
    for (const char* size : {"0", "16", "2147483647"}) {
      rows.push_back(
          plain(o + "V" + size, K::raw_void, B::not_applicable, std::stoull(size), std::string("|V") + size));
    }
  }

  // UCS-4 text: SIZE characters of 4 bytes each.
  for (const char* order : {"<", ">"}) {
    const std::string o = order;
    const B bo = o == "<" ? B::little : B::big;
    for (const char* size : {"0", "1", "536870911"}) {
      rows.push_back(plain(o + "U" + size, K::unicode, bo, 4 * std::stoull(size), o + "U" + size));
    }
  }

  // Datetimes and timedeltas: generic, every unit, and multipliers.
  const char* units[] = {"", "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"};
  struct multiplied {
    const char* bracket; // as written
    const char* unit;
    std::uint32_t multiplier;
    const char* repr_bracket; // numpy's spelling
  };
  const multiplied multiples[] = {
      {"[10ms]", "ms", 10U, "[10ms]"},
      {"[1ms]", "ms", 1U, "[ms]"},
      {"[2147483647ms]", "ms", 2147483647U, "[2147483647ms]"},
      {"[25us]", "us", 25U, "[25us]"},
      {"[3D]", "D", 3U, "[3D]"},
  };
  for (const char* kind_letter : {"M", "m"}) {
    const std::string k = kind_letter;
    const K kind = k == "M" ? K::datetime : K::timedelta;
    for (const char* order : {"<", ">"}) {
      const std::string o = order;
      const B bo = o == "<" ? B::little : B::big;
      for (const char* unit : units) {
        const std::string u = unit;
        const std::string text = o + k + "8" + (u.empty() ? "" : "[" + u + "]");
        rows.push_back(type_row{text, kind, bo, 8, text, u, 1U});
      }
      for (const multiplied& m : multiples) {
        rows.push_back(
            type_row{o + k + "8" + m.bracket, kind, bo, 8, o + k + "8" + m.repr_bracket, m.unit, m.multiplier});
      }
    }
  }
  return rows;
}

void check_type_row(const type_row& row, unsigned version) {
  INFO("type string " << row.text);
  const auto h = accept(header_text("'" + row.text + "'"), version);
  if (!h) return;
  CHECK(h->descr.kind == row.kind);
  CHECK(h->descr.order == row.order);
  CHECK(h->descr.itemsize == row.itemsize);
  CHECK(npyguard::time_unit_name(h->descr.datetime_unit) == row.unit);
  CHECK(h->descr.datetime_multiplier == row.multiplier);
  CHECK(h->descr.fields.empty());
  CHECK(npyguard::descr_repr(h->descr) == "'" + row.repr + "'");
  CHECK(npyguard::type_string(h->descr) == row.repr);
  CHECK(h->shape == shape_t{3});
  CHECK_FALSE(h->fortran_order);
  CHECK(h->count == 3);
  CHECK(h->nbytes == 3 * row.itemsize);
  CHECK_FALSE(h->data_is_pickle);
}

} // namespace

TEST_CASE("every type string of the SPEC table is accepted with its model", "[accept][descr]") {
  const std::vector<type_row> rows = type_rows();
  REQUIRE(rows.size() > 100);
  for (const unsigned version : all_versions) {
    for (const type_row& row : rows) check_type_row(row, version);
  }
}

TEST_CASE("object dtypes are accepted with allow_object and reported as pickles", "[accept][descr][object]") {
  npyguard::options opts;
  opts.allow_object = true;
  for (const unsigned version : all_versions) {
    // numpy reads '|O4' and '|O8' as its own 'O' (8 bytes on x86-64).
    for (const char* text : {"|O", "|O4", "|O8"}) {
      INFO("type string " << text);
      const auto h = accept(header_text(std::string("'") + text + "'"), version, opts);
      if (!h) continue;
      CHECK(h->descr.kind == dtype_kind::object);
      CHECK(h->descr.order == byte_order::not_applicable);
      CHECK(h->descr.itemsize == 8);
      CHECK(npyguard::descr_repr(h->descr) == "'|O'");
      CHECK(h->data_is_pickle);
      CHECK(h->shape == shape_t{3});
      CHECK(h->count == 3);
    }
    {
      const auto h = accept(header_text("[('a', '<i4'), ('o', '|O')]"), version, opts);
      if (h) {
        CHECK(h->descr.kind == dtype_kind::structured);
        CHECK(h->descr.itemsize == 12);
        REQUIRE(h->descr.fields.size() == 2);
        check_field(h->descr.fields[0], "a", 0, 4, dtype_kind::signed_integer);
        check_field(h->descr.fields[1], "o", 4, 8, dtype_kind::object);
        CHECK(npyguard::descr_repr(h->descr) == "[('a', '<i4'), ('o', '|O')]");
        CHECK(h->data_is_pickle);
      }
    }
    {
      // 'O' at depth: inside a subarray of a struct.
      const auto h = accept(header_text("[('s', [('p', '|O')], (2,)), ('t', '<f2')]"), version, opts);
      if (h) {
        CHECK(h->descr.itemsize == 18);
        REQUIRE(h->descr.fields.size() == 2);
        check_field(h->descr.fields[0], "s", 0, 16, dtype_kind::structured, {2});
        check_field(h->descr.fields[1], "t", 16, 2, dtype_kind::floating);
        CHECK(npyguard::descr_repr(h->descr) == "[('s', [('p', '|O')], (2,)), ('t', '<f2')]");
        CHECK(h->data_is_pickle);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Structured dtypes (SPEC.md section 3, "Field lists")
// ---------------------------------------------------------------------------

TEST_CASE("structured: two simple fields", "[accept][struct]") {
  for (const unsigned version : all_versions) {
    const auto h = accept(header_text("[('a', '<i4'), ('b', '<f8')]"), version);
    if (!h) continue;
    CHECK(h->descr.kind == dtype_kind::structured);
    CHECK(h->descr.itemsize == 12);
    REQUIRE(h->descr.fields.size() == 2);
    check_field(h->descr.fields[0], "a", 0, 4, dtype_kind::signed_integer);
    check_field(h->descr.fields[1], "b", 4, 8, dtype_kind::floating);
    CHECK(h->descr.fields[0].type.order == byte_order::little);
    CHECK(h->descr.fields[1].type.itemsize == 8);
    CHECK(npyguard::descr_repr(h->descr) == "[('a', '<i4'), ('b', '<f8')]");
    CHECK(h->count == 3);
    CHECK(h->nbytes == 36);
  }
}

TEST_CASE("structured: nested three levels", "[accept][struct]") {
  const std::string descr = "[('outer', [('mid', [('x', '<i2'), ('y', '>f4')]), ('z', '|u1')]), ('w', '<i8')]";
  for (const unsigned version : all_versions) {
    const auto h = accept(header_text(descr), version);
    if (!h) continue;
    CHECK(h->descr.itemsize == 15);
    REQUIRE(h->descr.fields.size() == 2);
    const npyguard::field& outer = h->descr.fields[0];
    check_field(outer, "outer", 0, 7, dtype_kind::structured);
    check_field(h->descr.fields[1], "w", 7, 8, dtype_kind::signed_integer);
    CHECK(outer.type.itemsize == 7);
    REQUIRE(outer.type.fields.size() == 2);
    const npyguard::field& mid = outer.type.fields[0];
    check_field(mid, "mid", 0, 6, dtype_kind::structured);
    check_field(outer.type.fields[1], "z", 6, 1, dtype_kind::unsigned_integer);
    REQUIRE(mid.type.fields.size() == 2);
    check_field(mid.type.fields[0], "x", 0, 2, dtype_kind::signed_integer);
    check_field(mid.type.fields[1], "y", 2, 4, dtype_kind::floating);
    CHECK(mid.type.fields[1].type.order == byte_order::big);
    CHECK(npyguard::descr_repr(h->descr) == descr);
    CHECK(h->nbytes == 45);
  }
}

TEST_CASE("structured: titles", "[accept][struct]") {
  const std::string descr = "[(('Title A', 'a'), '<i4'), (('Title B', 'b'), '<f8')]";
  for (const unsigned version : all_versions) {
    const auto h = accept(header_text(descr), version);
    if (!h) continue;
    CHECK(h->descr.itemsize == 12);
    REQUIRE(h->descr.fields.size() == 2);
    check_field(h->descr.fields[0], "a", 0, 4, dtype_kind::signed_integer, {}, std::string("Title A"));
    check_field(h->descr.fields[1], "b", 4, 8, dtype_kind::floating, {}, std::string("Title B"));
    CHECK(npyguard::descr_repr(h->descr) == descr);
  }
  for (const unsigned version : all_versions) {
    // Titles inside a nested struct, the same name at two levels.
    const std::string nested = "[(('t', 'n'), [(('T2', 'n'), '<i2')])]";
    const auto h = accept(header_text(nested), version);
    if (!h) continue;
    REQUIRE(h->descr.fields.size() == 1);
    check_field(h->descr.fields[0], "n", 0, 2, dtype_kind::structured, {}, std::string("t"));
    REQUIRE(h->descr.fields[0].type.fields.size() == 1);
    check_field(h->descr.fields[0].type.fields[0], "n", 0, 2, dtype_kind::signed_integer, {}, std::string("T2"));
    CHECK(npyguard::descr_repr(h->descr) == nested);
  }
}

namespace {

struct padding_row {
  std::string descr; // as written
  std::uint64_t itemsize;
  std::vector<std::string> names;
  std::vector<std::uint64_t> offsets;
  std::string repr; // numpy's repr(dtype_to_descr(...))
};

} // namespace

TEST_CASE("structured: padding fields", "[accept][struct][padding]") {
  const std::vector<padding_row> rows = {
      // In the middle, at the start, at the end.
      {"[('a', '<i4'), ('', '|V4'), ('b', '<f8')]",
       16,
       {"a", "b"},
       {0, 8},
       "[('a', '<i4'), ('', '|V4'), ('b', '<f8')]"},
      {"[('', '|V4'), ('a', '<i2')]", 6, {"a"}, {4}, "[('', '|V4'), ('a', '<i2')]"},
      {"[('a', '<i2'), ('', '|V6')]", 8, {"a"}, {0}, "[('a', '<i2'), ('', '|V6')]"},
      {"[('', '|V4'), ('a', '<i2'), ('', '|V2')]", 8, {"a"}, {4}, "[('', '|V4'), ('a', '<i2'), ('', '|V2')]"},
      // numpy merges consecutive padding into one gap.
      {"[('a', '<i4'), ('', '|V4'), ('', '|V4'), ('b', '<f8')]",
       20,
       {"a", "b"},
       {0, 12},
       "[('a', '<i4'), ('', '|V8'), ('b', '<f8')]"},
      {"[('', '|V2'), ('', '|V2'), ('a', '<i4'), ('', '|V1'), ('', '|V3')]",
       12,
       {"a"},
       {4},
       "[('', '|V4'), ('a', '<i4'), ('', '|V4')]"},
      // Zero-size padding disappears.
      {"[('a', '<i4'), ('', '|V0'), ('b', '<i4')]", 8, {"a", "b"}, {0, 4}, "[('a', '<i4'), ('b', '<i4')]"},
      {"[('', '|V0')]", 0, {}, {}, "[]"},
      // A padding field with an empty subarray shape is still padding.
      {"[('a', '<i4'), ('', '|V4', ())]", 8, {"a"}, {0}, "[('a', '<i4'), ('', '|V4')]"},
      {"[('', '|V4', ())]", 4, {}, {}, "[('', '|V4')]"},
      // Only padding.
      {"[('', '|V16')]", 16, {}, {}, "[('', '|V16')]"},
  };
  for (const unsigned version : all_versions) {
    for (const padding_row& row : rows) {
      INFO("descr " << row.descr);
      const auto h = accept(header_text(row.descr), version);
      if (!h) continue;
      CHECK(h->descr.kind == dtype_kind::structured);
      CHECK(h->descr.itemsize == row.itemsize);
      REQUIRE(h->descr.fields.size() == row.names.size());
      for (std::size_t i = 0; i < row.names.size(); ++i) {
        CHECK(h->descr.fields[i].name == row.names[i]);
        CHECK(h->descr.fields[i].offset == row.offsets[i]);
      }
      CHECK(npyguard::descr_repr(h->descr) == row.repr);
      CHECK(h->nbytes == 3 * row.itemsize);
    }
  }
}

TEST_CASE("structured: subarray fields", "[accept][struct][subarray]") {
  for (const unsigned version : all_versions) {
    const std::string descr = "[('x', '<f4', (3,)), ('m', '<i2', (2, 3)), ('k', '|u1')]";
    const auto h = accept(header_text(descr), version);
    if (!h) continue;
    CHECK(h->descr.itemsize == 25);
    REQUIRE(h->descr.fields.size() == 3);
    check_field(h->descr.fields[0], "x", 0, 12, dtype_kind::floating, {3});
    check_field(h->descr.fields[1], "m", 12, 12, dtype_kind::signed_integer, {2, 3});
    check_field(h->descr.fields[2], "k", 24, 1, dtype_kind::unsigned_integer);
    CHECK(h->descr.fields[0].type.itemsize == 4);
    CHECK(h->descr.fields[1].type.itemsize == 2);
    CHECK(npyguard::descr_repr(h->descr) == descr);
  }
  for (const unsigned version : all_versions) {
    // A zero dimension makes the field empty; it still occupies no bytes.
    const std::string descr = "[('z', '<f8', (0, 4)), ('k', '|u1')]";
    const auto h = accept(header_text(descr), version);
    if (!h) continue;
    CHECK(h->descr.itemsize == 1);
    REQUIRE(h->descr.fields.size() == 2);
    check_field(h->descr.fields[0], "z", 0, 0, dtype_kind::floating, {0, 4});
    check_field(h->descr.fields[1], "k", 0, 1, dtype_kind::unsigned_integer);
    CHECK(npyguard::descr_repr(h->descr) == descr);
  }
}

TEST_CASE("structured: subarray of a struct", "[accept][struct][subarray]") {
  const std::string descr = "[('s', [('p', '<i4'), ('q', '|u1')], (2,)), ('t', '<f2')]";
  for (const unsigned version : all_versions) {
    const auto h = accept(header_text(descr), version);
    if (!h) continue;
    CHECK(h->descr.itemsize == 12);
    REQUIRE(h->descr.fields.size() == 2);
    const npyguard::field& s = h->descr.fields[0];
    check_field(s, "s", 0, 10, dtype_kind::structured, {2});
    check_field(h->descr.fields[1], "t", 10, 2, dtype_kind::floating);
    CHECK(s.type.itemsize == 5);
    REQUIRE(s.type.fields.size() == 2);
    check_field(s.type.fields[0], "p", 0, 4, dtype_kind::signed_integer);
    check_field(s.type.fields[1], "q", 4, 1, dtype_kind::unsigned_integer);
    CHECK(npyguard::descr_repr(h->descr) == descr);
  }
}

TEST_CASE("structured: shape () means no subarray", "[accept][struct][subarray]") {
  for (const unsigned version : all_versions) {
    const auto h = accept(header_text("[('a', '<i4', ()), ('b', '|u1')]"), version);
    if (!h) continue;
    CHECK(h->descr.itemsize == 5);
    REQUIRE(h->descr.fields.size() == 2);
    check_field(h->descr.fields[0], "a", 0, 4, dtype_kind::signed_integer);
    check_field(h->descr.fields[1], "b", 4, 1, dtype_kind::unsigned_integer);
    CHECK(npyguard::descr_repr(h->descr) == "[('a', '<i4'), ('b', '|u1')]");
  }
}

TEST_CASE("structured: the empty list is a struct of itemsize 0", "[accept][struct]") {
  for (const unsigned version : all_versions) {
    const auto h = accept(header_text("[]"), version);
    if (!h) continue;
    CHECK(h->descr.kind == dtype_kind::structured);
    CHECK(h->descr.itemsize == 0);
    CHECK(h->descr.fields.empty());
    CHECK(npyguard::descr_repr(h->descr) == "[]");
    CHECK(h->count == 3);
    CHECK(h->nbytes == 0);
  }
}

namespace {

struct name_row {
  std::string literal; // the name as written in the header (a Python string literal)
  std::string name;    // decoded, UTF-8
  std::string repr;    // numpy's repr of the name
};

} // namespace

TEST_CASE("structured: field names with quotes, backslashes and escapes", "[accept][struct][names]") {
  const std::vector<name_row> rows = {
      {"\"it's\"", "it's", "\"it's\""},
      {"'it\\'s'", "it's", "\"it's\""},
      {"'say \"hi\"'", "say \"hi\"", "'say \"hi\"'"},
      {"\"say \\\"hi\\\"\"", "say \"hi\"", "'say \"hi\"'"},
      {"'both\\'\"'", "both'\"", "'both\\'\"'"},
      {"\"both'\\\"\"", "both'\"", "'both\\'\"'"},
      {"'\"'", "\"", "'\"'"},
      {"'back\\\\slash'", "back\\slash", "'back\\\\slash'"},
      {"'tab\\there'", "tab\there", "'tab\\there'"},
      {"'new\\nline\\r'", "new\nline\r", "'new\\nline\\r'"},
      {"'\\x41\\x42'", "AB", "'AB'"},
      {"'\\x7f'", "\x7f", "'\\x7f'"},
      {"'caf\\xe9'", "caf\xC3\xA9", "'caf\xC3\xA9'"},
      {"'caf\\u00e9'", "caf\xC3\xA9", "'caf\xC3\xA9'"},
      {"'\\u6e29\\u5ea6'", "\xE6\xB8\xA9\xE5\xBA\xA6", "'\xE6\xB8\xA9\xE5\xBA\xA6'"},
      {"'\\U0001F600'", "\xF0\x9F\x98\x80", "'\xF0\x9F\x98\x80'"},
      {"'\\U0001f600'", "\xF0\x9F\x98\x80", "'\xF0\x9F\x98\x80'"},
      {"'\\u200b'", "\xE2\x80\x8B", "'\\u200b'"},
      // Python 3.12's repr (Unicode 15.0): U+1FAE8 SHAKING FACE, new in 15.0, is
      // printed; U+1FAE9 beside it is unassigned and U+13439 is a format
      // character new in 15.0, so both stay escaped. numpy 1.24 on Python 3.11
      // (Unicode 14) escapes all three (docs/deviations.md).
      {"'\\U0001FAE8'", "\xF0\x9F\xAB\xA8", "'\xF0\x9F\xAB\xA8'"},
      {"'\\U0001fae9'", "\xF0\x9F\xAB\xA9", "'\\U0001fae9'"},
      {"'\\U00013439'", "\xF0\x93\x90\xB9", "'\\U00013439'"},
      {"\"double\"", "double", "'double'"},
  };
  for (const unsigned version : all_versions) {
    for (const name_row& row : rows) {
      const std::string descr = "[(" + row.literal + ", '<i4'), ('b', '|u1')]";
      INFO("descr " << printable(descr));
      const auto h = accept(header_text(descr), version);
      if (!h) continue;
      REQUIRE(h->descr.fields.size() == 2);
      check_field(h->descr.fields[0], row.name, 0, 4, dtype_kind::signed_integer);
      check_field(h->descr.fields[1], "b", 4, 1, dtype_kind::unsigned_integer);
      CHECK(npyguard::descr_repr(h->descr) == "[(" + row.repr + ", '<i4'), ('b', '|u1')]");
    }
  }
}

TEST_CASE("structured: latin-1 names in versions 1.0 and 2.0", "[accept][struct][names]") {
  // Raw latin-1 bytes: every byte is one character; names come back as UTF-8.
  const std::string descr =
      "[('\xE9', '<i4'), ('\xFF"
      "t\xE9', '|u1')]";
  for (const unsigned version : {1U, 2U}) {
    const auto h = accept(header_text(descr), version);
    if (!h) continue;
    REQUIRE(h->descr.fields.size() == 2);
    check_field(h->descr.fields[0], "\xC3\xA9", 0, 4, dtype_kind::signed_integer);
    check_field(h->descr.fields[1], "\xC3\xBFt\xC3\xA9", 4, 1, dtype_kind::unsigned_integer);
    CHECK(npyguard::descr_repr(h->descr) == "[('\xC3\xA9', '<i4'), ('\xC3\xBFt\xC3\xA9', '|u1')]");
  }
}

TEST_CASE("structured: raw UTF-8 names in version 3.0", "[accept][struct][names]") {
  const std::string cjk = "\xE6\xB8\xA9\xE5\xBA\xA6"; // U+6E29 U+5EA6
  const std::string emoji = "\xF0\x9F\x98\x80";       // U+1F600
  const std::string e_acute = "\xC3\xA9";             // U+00E9
  const std::string descr = "[('" + cjk + "', '<f4'), ('" + emoji + "', '|u1'), (('" + e_acute + "', 'n'), '<i2')]";
  const auto h = accept(header_text(descr), 3);
  if (h) {
    REQUIRE(h->descr.fields.size() == 3);
    check_field(h->descr.fields[0], cjk, 0, 4, dtype_kind::floating);
    check_field(h->descr.fields[1], emoji, 4, 1, dtype_kind::unsigned_integer);
    check_field(h->descr.fields[2], "n", 5, 2, dtype_kind::signed_integer, {}, e_acute);
    CHECK(npyguard::descr_repr(h->descr) == descr);
  }
}

TEST_CASE("other writers: raw control characters inside strings", "[accept][struct][names][writers]") {
  // npyz and ndarray-npy's py_literal write these raw in field names, and
  // numpy 1.24 reads them (SPEC.md section 2). Every C0 control but NUL, LF
  // and CR, DEL, and C1: raw latin-1 bytes in 1.0/2.0, UTF-8 in 3.0.
  std::vector<unsigned> controls;
  for (unsigned c = 0x01; c < 0x20; ++c) {
    if (c != '\n' && c != '\r') controls.push_back(c);
  }
  controls.push_back(0x7F);
  for (unsigned c = 0x80; c <= 0x9F; ++c) controls.push_back(c);
  for (const unsigned c : controls) {
    for (const unsigned version : {1U, 2U, 3U}) {
      std::string raw(1, static_cast<char>(c)); // as written in the header
      std::string decoded = raw;                // the name as UTF-8
      if (c >= 0x80) {
        decoded = std::string{static_cast<char>(0xC2), static_cast<char>(c)};
        if (version == 3) raw = decoded;
      }
      INFO("control U+" << std::hex << c);
      for (const char quote : {'\'', '"'}) {
        const std::string name = std::string(1, quote) + "a" + raw + "b" + std::string(1, quote);
        const auto h = accept(header_text("[(" + name + ", '<i4')]", "()"), version);
        if (!h) continue;
        REQUIRE(h->descr.fields.size() == 1);
        check_field(h->descr.fields[0], "a" + decoded + "b", 0, 4, dtype_kind::signed_integer);
      }
    }
  }
  // numpy's repr escapes them, as np.save would write them.
  const auto h = accept(header_text("[('a\tb\x01\x7F\x85', '<i4'), (('t\x1B', 'n'), '|u1')]", "()"), 1);
  if (h) CHECK(npyguard::descr_repr(h->descr) == "[('a\\tb\\x01\\x7f\\x85', '<i4'), (('t\\x1b', 'n'), '|u1')]");
}

TEST_CASE("other writers: raw UTF-8 in a version 1.0 header is read as latin-1", "[accept][struct][names][writers]") {
  // Early npyz and npy-rs wrote UTF-8 into 1.0 headers; numpy decodes them
  // as latin-1, so 'é' (C3 A9) is the two characters U+00C3 U+00A9.
  const auto h = accept(header_text("[('\xC3\xA9t\xC3\xA9', '<f8')]", "(2,)"), 1);
  if (!h) return;
  REQUIRE(h->descr.fields.size() == 1);
  check_field(h->descr.fields[0], "\xC3\x83\xC2\xA9t\xC3\x83\xC2\xA9", 0, 8, dtype_kind::floating);
  CHECK(npyguard::descr_repr(h->descr) == "[('\xC3\x83\xC2\xA9t\xC3\x83\xC2\xA9', '<f8')]");
  // A C1 byte inside a UTF-8 sequence (U+0085 is C2 85) is a C1 character in latin-1.
  const auto nel = accept(header_text("[('\xC2\x85', '<f8')]", "(2,)"), 1);
  if (nel) CHECK(nel->descr.fields.at(0).name == "\xC3\x82\xC2\x85");
}

TEST_CASE("other writers: NPZ.jl headers end at '}' when no padding is needed", "[accept][writers]") {
  // NPZ.jl pads to 16 bytes with " "^(pad-1) * "\n" only when pad > 0.
  const std::string bytes = std::string("\x93NUMPY\x01\x00\x36\x00", 10) +
                            "{'descr': '<f8', 'fortran_order': True, 'shape': (), }" + std::string(8, '\0');
  const npyguard::result checked = npyguard_test::check_bytes(bytes);
  npyguard_test::require_ok(checked);
  CHECK(checked.value().data_offset == 64);
  CHECK(checked.value().shape.empty());
  CHECK(checked.value().fortran_order);
  // Julia arrays are column-major: NPZ.jl always writes fortran_order True.
  const std::string dict = "{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2, 2, 2, 2, 2), }";
  REQUIRE((10 + dict.size()) % 16 == 0);
  for (const unsigned version : all_versions) {
    const auto h = accept(dict, version);
    if (h) CHECK(h->nbytes == 512);
  }
  // The canonical profile still wants numpy's own bytes.
  npyguard::options canonical;
  canonical.canonical = true;
  const npyguard::result strict = npyguard_test::check_bytes(bytes, canonical);
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.failure().code == npyguard::error_code::not_canonical);
}

// ---------------------------------------------------------------------------
// White space, quotes, commas, key order (SPEC.md sections 2 and 3)
// ---------------------------------------------------------------------------

namespace {

struct layout_row {
  std::string text;
  std::string repr;
  shape_t shape;
  bool fortran_order;
  std::uint64_t itemsize;
};

} // namespace

TEST_CASE("white space, quote styles, commas and key order", "[accept][grammar]") {
  const std::vector<layout_row> rows = {
      // numpy's own layout.
      {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\n", "'<i4'", {3}, false, 4},
      // Double quotes everywhere.
      {"{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2, 2), }\n", "'<i4'", {2, 2}, false, 4},
      // Mixed quote styles, no spaces, no trailing comma.
      {"{\"shape\":(2,3),\t'descr' : \"<i2\",'fortran_order' :  True}\n", "'<i2'", {2, 3}, true, 2},
      // Tabs, newlines and carriage returns between tokens.
      {"{\n'descr'\t:\r'<i4',\r\n'fortran_order':\tFalse,\r'shape':\n(\n3\n,\n)\n}\n", "'<i4'", {3}, false, 4},
      {"{ 'descr' :\t'<f8' ,\t\t'fortran_order':False ,  'shape' : ( 3 , ) ,\t}\n", "'<f8'", {3}, false, 8},
      // No white space at all.
      {"{'descr':'<i4','fortran_order':False,'shape':(3,)}\n", "'<i4'", {3}, false, 4},
      // No trailing comma in the dict.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}\n", "'<f4'", {3}, false, 4},
      // Trailing comma in a multi-element shape.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3,), }\n", "'<f4'", {2, 3}, false, 4},
      // White space after the closing brace and before the final newline.
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }   \t \n", "'<f4'", {3}, false, 4},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\r\n", "'<f4'", {3}, false, 4},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }\n\n  \n", "'<f4'", {3}, false, 4},
      // Trailing commas and white space inside a field list.
      {"{'descr': [ ( 'a' , '<i4' , ( 2 , 3 , ) , ) , ( 'b' , '|u1' , ) , ], 'fortran_order': False, "
       "'shape': (1,), }\n",
       "[('a', '<i4', (2, 3)), ('b', '|u1')]",
       {1},
       false,
       25},
      {"{'descr': [('a', '<i4'),], 'fortran_order': False, 'shape': (1,), }\n", "[('a', '<i4')]", {1}, false, 4},
      {"{'descr': [\n  ('a', '<i4'),\n  ('b', '<f8')\n], 'fortran_order': False, 'shape': (1,), }\n",
       "[('a', '<i4'), ('b', '<f8')]",
       {1},
       false,
       12},
      // Titles with trailing comma.
      {"{'descr': [(('T', 'a',), '<i4',)], 'fortran_order': False, 'shape': (1,), }\n",
       "[(('T', 'a'), '<i4')]",
       {1},
       false,
       4},
      // fortran_order True.
      {"{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n", "'<f8'", {2, 3}, true, 8},
  };
  for (const unsigned version : all_versions) {
    for (const layout_row& row : rows) {
      const auto h = accept(row.text, version);
      if (!h) continue;
      CHECK(npyguard::descr_repr(h->descr) == row.repr);
      CHECK(h->shape == row.shape);
      CHECK(h->fortran_order == row.fortran_order);
      CHECK(h->descr.itemsize == row.itemsize);
    }
  }
}

TEST_CASE("the three keys in every order", "[accept][grammar][keys]") {
  const std::string items[] = {"'descr': '>u2'", "'fortran_order': True", "'shape': (4, 5)"};
  const int orders[][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const unsigned version : all_versions) {
    for (const auto& order : orders) {
      for (const bool trailing_comma : {false, true}) {
        std::string text = "{";
        for (int i = 0; i < 3; ++i) {
          if (i) text += ", ";
          text += items[order[i]];
        }
        text += trailing_comma ? ", }\n" : "}\n";
        const auto h = accept(text, version);
        if (!h) continue;
        CHECK(h->descr.kind == dtype_kind::unsigned_integer);
        CHECK(h->descr.order == byte_order::big);
        CHECK(h->descr.itemsize == 2);
        CHECK(h->fortran_order);
        CHECK(h->shape == shape_t{4, 5});
        CHECK(h->count == 20);
        CHECK(h->nbytes == 40);
      }
    }
  }
}

namespace {

struct shape_row {
  std::string literal;
  shape_t shape;
  std::uint64_t count;
};

} // namespace

TEST_CASE("shapes: scalar, zero dimensions, large dimensions", "[accept][shape]") {
  const std::vector<shape_row> rows = {
      {"()", {}, 1},
      {"(1,)", {1}, 1},
      {"(0,)", {0}, 0},
      {"(0, 0)", {0, 0}, 0},
      {"(3, 0, 2)", {3, 0, 2}, 0},
      // Empty arrays whose other dimensions are huge: numpy accepts them.
      {"(0, 1099511627776)", {0, 1099511627776ULL}, 0},
      {"(1099511627776, 0, 1048576)", {1099511627776ULL, 0, 1048576ULL}, 0},
      {"(1000000, 1000000)", {1000000, 1000000}, 1000000000000ULL},
      {"(2, 1, 3, 2)", {2, 1, 3, 2}, 12},
      {"(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)", shape_t(16, 1), 1},
  };
  for (const unsigned version : all_versions) {
    for (const shape_row& row : rows) {
      INFO("shape " << row.literal);
      const auto h = accept(header_text("'|u1'", row.literal), version);
      if (!h) continue;
      CHECK(h->shape == row.shape);
      CHECK(h->count == row.count);
      CHECK(h->nbytes == row.count);
    }
    {
      const auto h = accept(header_text("'<c16'", "()"), version);
      if (h) {
        CHECK(h->shape.empty());
        CHECK(h->count == 1);
        CHECK(h->nbytes == 16);
      }
    }
    {
      const auto h = accept(header_text("[('a', '<i4'), ('b', '<f8')]", "(3, 0, 2)"), version);
      if (h) {
        CHECK(h->count == 0);
        CHECK(h->nbytes == 0);
        CHECK(h->descr.itemsize == 12);
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Legacy writers (SPEC.md sections 1 and 2)
// ---------------------------------------------------------------------------

TEST_CASE("legacy: Python 2 'L' suffix in versions 1.0 and 2.0", "[accept][legacy]") {
  for (const unsigned version : {1U, 2U}) {
    {
      const auto h = accept(header_text("'<i8'", "(2L, 3L)"), version);
      if (h) {
        CHECK(h->shape == shape_t{2, 3});
        CHECK(h->count == 6);
        CHECK(h->nbytes == 48);
      }
    }
    {
      const auto h = accept(header_text("'<i8'", "(3L,)"), version);
      if (h) CHECK(h->shape == shape_t{3});
    }
    {
      const auto h = accept(header_text("'<i8'", "(0L, 5)"), version);
      if (h) {
        CHECK(h->shape == shape_t{0, 5});
        CHECK(h->count == 0);
      }
    }
    {
      // Integers anywhere in the header, also in a field's subarray shape.
      const auto h = accept(header_text("[('a', '<i4', (2L, 3L))]", "(1L,)"), version);
      if (h) {
        REQUIRE(h->descr.fields.size() == 1);
        check_field(h->descr.fields[0], "a", 0, 24, dtype_kind::signed_integer, {2, 3});
        CHECK(npyguard::descr_repr(h->descr) == "[('a', '<i4', (2, 3))]");
        CHECK(h->shape == shape_t{1});
      }
    }
  }
}

namespace {

// `dict` padded with spaces so that preamble + text is `total` bytes, then '\n'.
std::string padded(const std::string& dict, unsigned major, std::size_t total) {
  const std::size_t preamble = major == 1 ? 10 : 12;
  REQUIRE(preamble + dict.size() + 1 <= total);
  return dict + std::string(total - preamble - dict.size() - 1, ' ') + "\n";
}

} // namespace

TEST_CASE("legacy: data offsets aligned to 16, 64 or nothing", "[accept][legacy][alignment]") {
  const std::string dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }";
  struct alignment_row {
    unsigned major;
    std::size_t total;
    std::uint64_t alignment;
  };
  const alignment_row rows[] = {
      {1, 80, 16},                               // old numpy and cnpy: 16-byte alignment
      {1, 96, 32},  {1, 112, 16}, {1, 128, 128}, // numpy >= 1.14: a multiple of 64
      {1, 192, 64}, {2, 80, 16},  {2, 128, 128}, {3, 80, 16}, {3, 192, 64},
  };
  for (const alignment_row& row : rows) {
    INFO("version " << row.major << ", data offset " << row.total);
    const auto h = accept(padded(dict, row.major, row.total), row.major);
    if (!h) continue;
    CHECK(h->data_offset == row.total);
    CHECK(h->data_alignment == row.alignment);
    CHECK(h->shape == shape_t{2, 3});
    CHECK(h->nbytes == 48);
  }
  for (const unsigned version : all_versions) {
    // No padding at all: the dict directly followed by '\n'.
    const std::string text = "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }\n";
    const auto h = accept(text, version);
    if (!h) continue;
    CHECK(h->data_offset == preamble_size(version) + 58);
    CHECK(h->header_length == 58);
    CHECK(h->data_alignment == (version == 1 ? 4U : 2U));
    CHECK(h->nbytes == 20);
  }
}

// ---------------------------------------------------------------------------
// Whole files through validate_buffer (SPEC.md sections 1 and 5)
// ---------------------------------------------------------------------------

namespace {

std::string make_file(unsigned major, const std::string& text, std::uint64_t data_bytes) {
  std::string out = "\x93NUMPY";
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  for (std::size_t i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<char>((text.size() >> (8 * i)) & 0xFFU));
  }
  out += text;
  for (std::uint64_t i = 0; i < data_bytes; ++i) out.push_back(static_cast<char>(i * 37 % 251));
  return out;
}

struct file_row {
  unsigned major;
  std::string text;
  std::uint64_t nbytes;
  std::string repr;
};

} // namespace

TEST_CASE("whole files of size data_offset + nbytes pass validate_buffer", "[accept][buffer]") {
  const std::string f8_dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string struct_dict =
      "{'descr': [('a', '<i4'), ('', '|V4'), ('b', '>f8')], 'fortran_order': True, 'shape': (2, 2), }";
  const std::string utf8_dict =
      "{'descr': [('\xE6\xB8\xA9\xE5\xBA\xA6', '<f4')], 'fortran_order': False, 'shape': (3,), }";
  const std::string empty_dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (0, 7), }";
  const std::vector<file_row> rows = {
      {1, padded(f8_dict, 1, 128), 48, "'<f8'"},
      {2, padded(f8_dict, 2, 128), 48, "'<f8'"},
      {3, padded(f8_dict, 3, 128), 48, "'<f8'"},
      {1, padded(f8_dict, 1, 80), 48, "'<f8'"},
      {1, padded(struct_dict, 1, 128), 64, "[('a', '<i4'), ('', '|V4'), ('b', '>f8')]"},
      {2, padded(struct_dict, 2, 192), 64, "[('a', '<i4'), ('', '|V4'), ('b', '>f8')]"},
      {3, padded(utf8_dict, 3, 128), 12, "[('\xE6\xB8\xA9\xE5\xBA\xA6', '<f4')]"},
      {1, padded(empty_dict, 1, 128), 0, "'<i2'"},
      {3, padded(empty_dict, 3, 128), 0, "'<i2'"},
      {1, f8_dict + "\n", 48, "'<f8'"},
  };
  for (const file_row& row : rows) {
    const std::string file = make_file(row.major, row.text, row.nbytes);
    INFO("version " << row.major << ", header text: " << printable(row.text));
    const npyguard::result r = npyguard::validate_buffer(file.data(), file.size());
    INFO(npyguard_test::describe_failure(r));
    CHECK(r.ok());
    if (!r.ok()) continue;
    const npyguard::header& h = r.value();
    const std::uint64_t data_offset = preamble_size(row.major) + row.text.size();
    CHECK(h.major_version == row.major);
    CHECK(h.minor_version == 0);
    CHECK(h.header_length == row.text.size());
    CHECK(h.data_offset == data_offset);
    CHECK(h.data_alignment == lowest_set_bit(data_offset));
    CHECK(h.nbytes == row.nbytes);
    CHECK(h.data_offset + h.nbytes == file.size());
    CHECK(npyguard::descr_repr(h.descr) == row.repr);
    CHECK_FALSE(h.data_is_pickle);
  }
}

TEST_CASE("a header accepted alone is accepted in a whole file with the same model", "[accept][buffer]") {
  const std::string descr = "[('x', '<f4', (3,)), (('T', 'm'), '<i2', (2, 3)), ('', '|V3'), ('k', '|u1')]";
  for (const unsigned version : all_versions) {
    const std::string dict = "{'descr': " + descr + ", 'fortran_order': False, 'shape': (2, 1), }";
    const std::string text = padded(dict, version, 192);
    const auto alone = accept(text, version);
    if (!alone) continue;
    const std::string file = make_file(version, text, alone->nbytes);
    const npyguard::result r = npyguard::validate_buffer(file.data(), file.size());
    INFO(npyguard_test::describe_failure(r));
    REQUIRE(r.ok());
    const npyguard::header& h = r.value();
    CHECK(h.data_offset == 192);
    CHECK(h.data_offset == alone->data_offset);
    CHECK(h.header_length == alone->header_length);
    CHECK(h.shape == alone->shape);
    CHECK(h.nbytes == alone->nbytes);
    CHECK(h.nbytes == 2 * 28);
    CHECK(npyguard::descr_repr(h.descr) == npyguard::descr_repr(alone->descr));
    CHECK(npyguard::descr_repr(h.descr) ==
          "[('x', '<f4', (3,)), (('T', 'm'), '<i2', (2, 3)), ('', '|V3'), ('k', '|u1')]");
  }
}
