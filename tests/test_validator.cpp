// The reusable validator (npyguard/npy/validator.hpp) and the parser's fast
// path (npy/parse.hpp): one validator reused across inputs gives the free
// functions' verdicts; the fast path builds the grammar's tree or defers to it.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "npy/ast_compare.hpp"
#include "npy/parse.hpp"
#include "npy/text.hpp"
#include "npy/type_string.hpp"
#include "support.hpp"

namespace {

using npyguard::error_code;
using npyguard_test::npy_file;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Inputs of every shape the model can take, accepted and rejected, in an
// order that makes each reuse different from the one before: the 164
// golden files, then structs that grow, shrink, nest and un-nest.
std::vector<std::string> mixed_inputs() {
  std::vector<std::string> inputs;
  std::vector<std::filesystem::path> golden;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(NPYGUARD_SOURCE_DIR) + "/tests/golden/files"))
    golden.push_back(entry.path());
  std::sort(golden.begin(), golden.end());
  for (const auto& path : golden) inputs.push_back(read_file(path));
  const std::string dicts[] = {
      "{'descr': [('a', '<i4'), ('b', [('c', '<f8'), ('d', '|u1', (2, 3))])], 'fortran_order': False, 'shape': (2,), }",
      "{'descr': '<f8', 'fortran_order': True, 'shape': (3, 4), }",
      "{'descr': [(('title one', 'x'), '<i2'), ('', '|V3'), ('y', [('z', '<u8')])], 'fortran_order': False, "
      "'shape': (), }",
      "{'descr': [('a', '<i4'), ('a', '<i8')], 'fortran_order': False, 'shape': (1,), }", // duplicate_field_name
      "{'descr': [('a', [('b', '<i4')]), ('c', '<f4')], 'fortran_order': False, 'shape': (1,), }",
      "{'descr': [('a', '<i4'), ('b', '<q8')], 'fortran_order': False, 'shape': (1,), }", // bad_descr
      "{'descr': [('a_name_longer_than_fifteen_bytes', '<i4'), ('" + std::string(300, 'n') +
          "', '<f8')], 'fortran_order': False, 'shape': (4,), }",
      "{'descr': '|u1', 'fortran_order': False, 'shape': (-1,), }", // negative_dimension
      "{'descr': [('x', '<f8', (2,)), ('t', '<M8[ms]')], 'fortran_order': False, 'shape': (5, 1), }",
  };
  for (const std::string& dict : dicts) {
    const std::string header = npyguard_test::padded_header(dict);
    // Data size from the free function's verdict, so that accepted ones
    // carry exactly their data.
    std::string file = npyguard_test::raw_file(header);
    const npyguard::result free = npyguard_test::check_bytes(file);
    if (free.ok()) file.append(free.value().nbytes, '\0');
    inputs.push_back(file);
  }
  return inputs;
}

} // namespace

TEST_CASE("a reused validator gives the free function's verdict on every input, in any order", "[validator]") {
  const std::vector<std::string> inputs = mixed_inputs();
  npyguard::validator v;
  std::size_t accepted = 0;
  for (int round = 0; round < 2; ++round) {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      // Forwards, then backwards: every model follows a different one.
      const std::string& input = round == 0 ? inputs[i] : inputs[inputs.size() - 1 - i];
      const npyguard::result expected = npyguard_test::check_bytes(input);
      const npyguard::result& got = v.validate_buffer(input.data(), input.size());
      INFO("input " << i << " round " << round << ": " << npyguard_test::describe_failure(expected));
      CHECK(got == expected);
      accepted += got.ok() ? 1u : 0u;
    }
  }
  CHECK(accepted > inputs.size()); // most are accepted, some are not
}

TEST_CASE("the validator's result stays until its next call; release frees what it holds", "[validator]") {
  const std::string big = npy_file(
      "{'descr': [('a', '<i4'), ('b', '<f8'), ('c', '|S3')], 'fortran_order': False, 'shape': (2,), }", 1, 2 * 15);
  const std::string bad = npy_file("{'descr': '<f8', 'fortran_order': 1, 'shape': (2,), }", 1, 16);
  npyguard::validator v;
  CHECK(v.memory_held() == 0);
  const npyguard::result& first = v.validate_buffer(big.data(), big.size());
  npyguard_test::require_ok(first);
  const npyguard::result copy = first;
  CHECK(v.memory_held() > 0);

  const npyguard::result& second = v.validate_buffer(bad.data(), bad.size());
  npyguard_test::require_error(second, error_code::bad_fortran_order, npyguard_test::offset_of(bad, ": 1", 2));
  const npyguard::result& third = v.validate_buffer(big.data(), big.size());
  CHECK(third == copy);
  CHECK(&third == &first); // one result, reused

  // Held memory does not grow with repetition.
  (void)v.validate_buffer(bad.data(), bad.size());
  const std::size_t held = v.memory_held();
  for (int i = 0; i < 100; ++i) {
    (void)v.validate_buffer(big.data(), big.size());
    (void)v.validate_buffer(bad.data(), bad.size());
  }
  CHECK(v.memory_held() == held);
  v.release();
  CHECK(v.memory_held() == 0);
  CHECK(v.validate_buffer(big.data(), big.size()) == copy);

  npyguard::validator moved = std::move(v);
  CHECK(moved.validate_buffer(big.data(), big.size()) == copy);
}

TEST_CASE("the validator's entry points match the free functions", "[validator]") {
  const std::string file = npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", 1, 6);
  const std::string path = "validator_entry_points.npy";
  npyguard_test::write_file(path, file);
  npyguard::validator v;
  CHECK(v.validate_file(path.c_str()) == npyguard::validate_file(path.c_str()));
  npyguard_test::require_error(v.validate_file("no/such/file.npy"), error_code::io_error, std::nullopt);

  npyguard_test::chunked_source stream(file, 7);
  npyguard_test::chunked_source stream_again(file, 7);
  CHECK(v.validate_stream(stream) == npyguard::validate_stream(stream_again));

  const std::string text = file.substr(10, file.size() - 10 - 6);
  CHECK(v.validate_header_text(text.data(), text.size(), 1) ==
        npyguard::validate_header_text(text.data(), text.size(), 1));
  npyguard_test::require_error(v.validate_header_text(text.data(), text.size(), 4), error_code::unsupported_version, 6);
  std::remove(path.c_str());
}

namespace {

// A source whose reads validate another file, on the same thread, with the
// free function: the thread's workspace is busy, so the nested call must
// get its own.
class reentrant_source final : public npyguard::random_access_source {
public:
  explicit reentrant_source(const std::string& bytes, const std::string& inner) : bytes_(bytes), inner_(inner) {}
  std::uint64_t size() const noexcept override { return bytes_.size(); }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    const npyguard::result nested = npyguard::validate_buffer(inner_.data(), inner_.size());
    nested_ok = nested_ok && nested.ok() && nested.value().descr.fields.size() == 2;
    const std::size_t n = std::min<std::size_t>(size, bytes_.size() - offset);
    std::memcpy(buffer, bytes_.data() + offset, n);
    return static_cast<std::ptrdiff_t>(n);
  }
  bool nested_ok = true;

private:
  const std::string& bytes_;
  const std::string& inner_;
};

} // namespace

TEST_CASE("a validation nested in a source's read gets a workspace of its own", "[validator]") {
  // An outer header longer than the first read, so a second read comes
  // after the workspace holds the first part.
  std::string dict = "{'descr': [";
  for (int i = 0; i < 400; ++i) dict += "('field" + std::to_string(i) + "', '<i4'), ";
  dict += "], 'fortran_order': False, 'shape': (1,), }";
  const std::string outer = npy_file(dict, 1, 400 * 4);
  const std::string inner =
      npy_file("{'descr': [('p', '<i4'), ('q', '<f8')], 'fortran_order': False, 'shape': (1,), }", 1, 12);
  reentrant_source source(outer, inner);
  const npyguard::result checked = npyguard::validate_source(source);
  npyguard_test::require_ok(checked);
  CHECK(checked.value().descr.fields.size() == 400);
  CHECK(source.nested_ok);
  CHECK(checked == npyguard_test::check_bytes(outer));
}

// ---------------------------------------------------------------------------
// The fast path against the grammar.
// ---------------------------------------------------------------------------

namespace {

struct fast_verdict {
  bool fast_accepts;
  bool grammar_accepts;
  bool same_tree;
};

fast_verdict compare_parsers(const std::string& text, unsigned version) {
  using namespace npyguard::detail;
  parse_settings settings;
  settings.utf8 = version == 3;
  settings.allow_long_suffix = version != 3;
  settings.base_offset = version == 1 ? 10 : 12;
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  REQUIRE_FALSE(check_header_text(bytes, text.size(), settings.utf8, settings.base_offset, settings.ascii_only));
  ast fast;
  ast grammar;
  const bool fast_ok = parse_header_text_fast(text.data(), text.size(), settings, fast);
  const bool grammar_ok = !parse_header_text_grammar(text.data(), text.size(), settings, grammar).has_value();
  return {fast_ok, grammar_ok, fast_ok && grammar_ok && same_tree(fast, grammar)};
}

// A 1.0 header both parsers accept, with the same tree.
void check_same_tree(const std::string& text) {
  INFO(text);
  const fast_verdict v = compare_parsers(text, 1);
  CHECK(v.grammar_accepts);
  CHECK(v.fast_accepts);
  CHECK(v.same_tree);
}

} // namespace

TEST_CASE("the fast path builds the grammar's tree on every accepted form", "[parse]") {
  const char* const accepted[] = {
      "{}\n",
      "{ }\n",
      "{'descr': '<f8', 'fortran_order': False, 'shape': (10, 3), }\n",
      "{\"descr\":\"<f8\",\"fortran_order\":True,\"shape\":()}\n",
      "{'a': (), 'b': (1,), 'c': (1, 2), 'd': (1, 2,), 'e': [], 'f': [1], 'g': [1, 2, ], }\n",
      "{'n': -0, 'm': 0L, 'k': 9223372036854775807, 'j': -12L}\n",
      "{'s': 'esc \\\\ \\' \\\" \\n \\r \\t \\x41 \\u00e9 \\U0001F600'}\n",
      "{'raw': 'tab\there \x01 \x7f'}\n",
      "{\t'x' :\r\n[ ( 'a' , '<i4' , ( 2 , ) ) ] ,\n}\n",
      "{'nested': [[[[('a', [('b', '<i4')])]]]]}\n",
      "{'descr': '<f8'}", // no padding at all (NPZ.jl)
  };
  for (const char* text : accepted) check_same_tree(text);
  // Latin-1 in 1.0 (transcoded), UTF-8 in 3.0 (kept).
  const fast_verdict latin1 = compare_parsers("{'caf\xe9': 'x'}\n", 1);
  CHECK((latin1.fast_accepts && latin1.same_tree));
  const fast_verdict utf8 = compare_parsers("{'caf\xc3\xa9': 'x'}\n", 3);
  CHECK((utf8.fast_accepts && utf8.same_tree));
}

TEST_CASE("the fast path defers every rejection to the grammar", "[parse]") {
  struct row {
    const char* text;
    unsigned version;
  };
  const row rejected[] = {
      {"{'descr': '<f8'}}", 1},            // text after the dict
      {"{'a': 01}\n", 1},                  // leading zero
      {"{'a': -}\n", 1},                   // no digits
      {"{'a': 1L}\n", 3},                  // L suffix in 3.0
      {"{'a': 9223372036854775808}\n", 1}, // integer_too_large
      {"{'a': (1)}\n", 1},                 // not a tuple
      {"{'a': [1,,]}\n", 1},
      {"{'a': 'open\n", 1},  // unterminated
      {"{'a': '\\q'}\n", 1}, // bad escape
      {"{'a': '\\x4'}\n", 1},
      {"{'a': '\\U00110000'}\n", 1}, // above U+10FFFF
      {"{'a': '\\ud800'}\n", 1},     // surrogate
      {"{'a': Tru}\n", 1},
      {"{'a' 1}\n", 1},
      {"{1: 2}\n", 1},
      {"{'a': 1,, }\n", 1},
      {"{'a': \x01}\n", 1}, // control character outside a string
      {"['a']\n", 1},
      {"", 1},
  };
  for (const row& r : rejected) {
    const std::string t(r.text);
    if (t.empty()) continue; // check_header_text refuses it first
    INFO(t);
    const fast_verdict v = compare_parsers(t, r.version);
    CHECK_FALSE(v.grammar_accepts);
    CHECK_FALSE(v.fast_accepts);
  }
}

TEST_CASE("text the fast path gives up on may hold more nodes than accepted text can", "[parse]") {
  // Accepted text holds at most a node per two bytes, and the tree is sized
  // up to that; an unclosed run of brackets is a node a byte, read before
  // the fast path gives up. (A corpus input once overran the tree here; the
  // sanitizer build of this test catches a return of that.)
  for (std::size_t brackets : {std::size_t{20}, std::size_t{32}}) {
    const std::string text = "{'a': " + std::string(brackets, '[') + "(3,),[[[\n";
    INFO(text);
    const fast_verdict v = compare_parsers(text, 1);
    CHECK_FALSE(v.grammar_accepts);
    CHECK_FALSE(v.fast_accepts);
  }
}

TEST_CASE("the fast path's field pairs build the grammar's tree, or defer to it", "[parse]") {
  // ('name', 'type') is read in one step (fast_parse.cpp string_pair); every
  // near miss goes the general way. Both must give the grammar's tree.
  const char* const accepted[] = {
      "{'d': [('a', 'b')]}\n",
      "{'d': [(\"a\",\"b\")]}\n",
      "{'d': [( 'a' , 'b' ) , ('c','d'),]}\n",
      "{'d': [('', ''), ('a', '<f8')]}\n",
      "{'d': [('a', 'b',)]}\n",                     // trailing comma
      "{'d': [('a', 'b', (2,))]}\n",                // a shape
      "{'d': [(('t', 'n'), 'b')]}\n",               // a title
      "{'d': [('a\\n', 'b'), ('c', '\\x41')]}\n",   // escapes
      "{'d': [('caf\xe9', 'b')]}\n",                // latin-1
      "{'d': [('a', [('b', 'c')])]}\n",             // nested
      "{'d': (('a', 'b'), ('c', 'd'))}\n",          // pairs in a tuple
      "{'d': [('a', 1), ('b', True), (1, 'a')]}\n", // not strings
      "{'d': [('a', 'b'\t)\n]}\n",
      "{'d': [('a', 'b')]}", // no padding
      "{'d': [('this name is longer than sixteen', 'b')]}\n",
  };
  for (const char* text : accepted) check_same_tree(text);
  const char* const rejected[] = {
      "{'d': [('a', 'b']}\n", "{'d': [('a' 'b')]}\n",   "{'d': [('a', 'b'}\n",
      "{'d': [('a', 'b\n",    "{'d': [('a',, 'b')]}\n", "{'d': [('a', 'b') ('c', 'd')]}\n",
  };
  for (const char* text : rejected) {
    const std::string t(text);
    INFO(t);
    const fast_verdict v = compare_parsers(t, 1);
    CHECK_FALSE(v.grammar_accepts);
    CHECK_FALSE(v.fast_accepts);
  }
}

TEST_CASE("the fast path stops at max_depth where the grammar does", "[parse]") {
  using namespace npyguard::detail;
  for (std::uint32_t depth : {1u, 2u, 31u, 32u, 33u}) {
    std::string text = "{'a': " + std::string(depth, '[') + std::string(depth, ']') + "}\n";
    parse_settings settings;
    settings.max_depth = 32;
    ast fast;
    ast grammar;
    const bool fast_ok = parse_header_text_fast(text.data(), text.size(), settings, fast);
    const auto failure = parse_header_text_grammar(text.data(), text.size(), settings, grammar);
    INFO("depth " << depth);
    CHECK(fast_ok == (depth <= 32));
    CHECK(failure.has_value() == (depth > 32));
    if (failure) CHECK(failure->code == npyguard::error_code::depth_exceeded);
    if (fast_ok) CHECK(same_tree(fast, grammar));
  }
  // A field pair's tuple counts as the lists and tuples do.
  for (std::uint32_t depth : {30u, 31u, 32u}) {
    std::string text = "{'a': " + std::string(depth, '[') + "('n', 't')" + std::string(depth, ']') + "}\n";
    parse_settings settings;
    settings.max_depth = 32;
    ast fast;
    ast grammar;
    const bool fast_ok = parse_header_text_fast(text.data(), text.size(), settings, fast);
    const auto failure = parse_header_text_grammar(text.data(), text.size(), settings, grammar);
    INFO("lists " << depth << " and a pair");
    CHECK(fast_ok == (depth < 32));
    CHECK(failure.has_value() == (depth >= 32));
    if (fast_ok) CHECK(same_tree(fast, grammar));
  }
}

// ---------------------------------------------------------------------------
// The common type strings' fast path against the general reader.
// ---------------------------------------------------------------------------

TEST_CASE("read_common_type_string reads what parse_type_string reads, or leaves it", "[parse][descr]") {
  using namespace npyguard::detail;
  // Every text of 2 to 5 characters over these: the orders, the kinds
  // (with ones the fast path leaves), digits and a stray letter.
  const std::string orders = "<>|=x";
  const std::string kinds = "biufcSVUMmOq";
  const std::string tails = "0123456789[";
  std::size_t read_fast = 0;
  const auto compare = [&](const std::string& text) {
    npyguard::dtype fast;
    fast.itemsize = 12345; // untouched when the fast path declines
    if (!read_common_type_string(text, fast)) {
      CHECK(fast.itemsize == 12345);
      return;
    }
    ++read_fast;
    npyguard::dtype general;
    type_string_failure why;
    INFO(text);
    REQUIRE(parse_type_string(text, general, why));
    CHECK(fast == general);
  };
  for (const char order : orders) {
    for (const char kind : kinds) {
      const std::string head{order, kind};
      compare(head);
      for (const char a : tails) {
        compare(head + a);
        for (const char b : tails) {
          compare(head + a + b);
          for (const char c : tails) compare(head + a + b + c);
        }
      }
    }
  }
  // Every accepted common form is read fast: b1 in 3 orders; i and u of 1
  // (3 orders) and 2, 4, 8 (2); f of 2, 4, 8, 16 (2); c of 8, 16, 32 (2);
  // S and V of 0 to 99 (3).
  CHECK(read_fast == 3 + 2 * (3 + 3 * 2) + 4 * 2 + 3 * 2 + 2 * 100 * 3);
}
