// .npz member names: the rules SPEC-npz.md section 6 amended on 2026-11-26
// (issue 35), one SECTION a rule, each with the code, the offset and the
// member, and the look-alikes that must stay accepted. The older rules are
// in test_npz.cpp ("phase D: member names", "phase D: duplicate names").
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <utf8proc.h>

#include "core/utf8.hpp"
#include "npyguard/npz/validate.hpp"
#include "npz/names.hpp" // src/: the normalisation the rules use
#include "npz_support.hpp"
#include "support.hpp"
#include "zip_builder.hpp"

using npyguard::error_code;
using npyguard::npz::archive_result;
using namespace npyguard_test;

namespace {

const std::string ints = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 1, 12);
constexpr std::uint64_t central_name = 46; // a central header's name, after its fixed fields

archive_result check_zip(const std::string& bytes) {
  return npyguard::npz::validate_buffer(bytes.data(), bytes.size());
}

// A member with flag bit 11 (UTF-8), as numpy writes non-ASCII names.
zip_entry member(std::string name) {
  zip_entry e;
  e.name = std::move(name);
  e.data = ints;
  e.flags = 0x800;
  return e;
}

// `name` as a second member: bad_member_name at its first byte.
void require_refused(const std::string& name) {
  INFO("name " << name);
  const zip_archive zip = build_zip({member("first.npy"), member(name)});
  require_error(check_zip(zip.bytes), error_code::bad_member_name, zip.entries[1].central + central_name, name);
}

void require_accepted(const std::vector<std::string>& names) {
  std::vector<zip_entry> entries;
  for (const std::string& name : names) entries.push_back(member(name));
  const archive_result r = check_zip(build_zip(entries).bytes);
  INFO("first name " << names.front() << ": " << describe(r));
  REQUIRE(r.ok());
  REQUIRE(r.value().members.size() == names.size());
  CHECK(r.value().members.back().name == names.back());
}

// The names in order: duplicate_name at the last one's central header.
void require_duplicate(const std::vector<std::string>& names) {
  std::vector<zip_entry> entries;
  for (const std::string& name : names) entries.push_back(member(name));
  const zip_archive zip = build_zip(entries);
  INFO("last name " << names.back());
  require_error(check_zip(zip.bytes), error_code::duplicate_name, zip.entries.back().central, names.back());
}

std::string repeat(const std::string& text, std::size_t times) {
  std::string out;
  for (std::size_t i = 0; i < times; ++i) out += text;
  return out;
}

const std::string u0f73 = "\xe0\xbd\xb3"; // TIBETAN VOWEL SIGN II: decomposes to U+0F71 U+0F72, both non-starters
const std::string u0301 = "\xcc\x81";     // COMBINING ACUTE ACCENT (class 230)
const std::string u0344 = "\xcd\x84";     // COMBINING GREEK DIALYTIKA TONOS: decomposes to U+0308 U+0301
const std::string uff9e = "\xef\xbe\x9e"; // HALFWIDTH KATAKANA VOICED SOUND MARK: a starter, NFKD U+3099 (class 8)

} // namespace

TEST_CASE("member names: format and separator characters (Cf, Zl, Zp)", "[npz][names]") {
  for (const char* invisible : {"\xc2\xad",            // U+00AD SOFT HYPHEN
                                "\xe2\x80\x8b",        // U+200B ZERO WIDTH SPACE
                                "\xe2\x80\x8d",        // U+200D ZERO WIDTH JOINER
                                "\xe2\x80\xa8",        // U+2028 LINE SEPARATOR (Zl)
                                "\xe2\x80\xa9",        // U+2029 PARAGRAPH SEPARATOR (Zp)
                                "\xe2\x81\xa0",        // U+2060 WORD JOINER
                                "\xe2\x81\xa4",        // U+2064 INVISIBLE PLUS
                                "\xef\xbb\xbf",        // U+FEFF BYTE ORDER MARK
                                "\xd8\x80",            // U+0600 ARABIC NUMBER SIGN
                                "\xf3\xa0\x80\x81"}) { // U+E0001 LANGUAGE TAG
    require_refused(std::string("a") + invisible + ".npy");
    require_refused(std::string(invisible) + "a/b.npy");
  }
  // Visible spaces (Zs) and other marks stay accepted.
  require_accepted({"a\xc2\xa0_.npy", "a\xe3\x80\x80_.npy", "caf\xc3\xa9.npy", "e\xcc\x81.npy"});
}

TEST_CASE("member names: stream-safe, counted on the canonical decomposition", "[npz][names]") {
  SECTION("U+0F73 counts two") {
    require_accepted({"x" + repeat(u0f73, 15) + ".npy"}); // 30 non-starters
    require_refused("x" + repeat(u0f73, 16) + ".npy");    // 32
    require_refused("x" + repeat(u0301, 29) + u0f73 + ".npy");
  }
  SECTION("U+0344 counts two, U+0301 one") {
    require_accepted({"x" + repeat(u0344, 15) + ".npy", "y" + repeat(u0301, 30) + ".npy"});
    require_refused("x" + repeat(u0344, 15) + u0301 + ".npy");
    require_refused("x" + repeat(u0301, 31) + ".npy");
  }
  SECTION("Hangul syllables decompose into starters") {
    require_accepted({"\xed\x95\x9c\xea\xb5\xad\xec\x96\xb4.npy", "\xea\xb0\x80/\xeb\x82\x98.npy",
                      "\xed\x95\x9c" + repeat(u0301, 30) + ".npy"});
    require_refused("\xed\x95\x9c" + repeat(u0301, 31) + ".npy");
  }
  SECTION("the issue's name: x, 21843 x U+0F73, x (65,535 bytes), which numpy writes") {
    const std::string name = "x" + repeat(u0f73, 21843) + "x.npy";
    REQUIRE(name.size() == 65535);
    require_refused(name);
  }
  SECTION("names near the limit are accepted, up to 65,000 bytes") {
    std::string name;
    while (name.size() < 65000) name += "y" + repeat(u0f73, 15);
    require_accepted({name + ".npy"});
  }
  SECTION("the compatibility decomposition bounds the NFKC step") {
    // U+FF9E is a starter, so the canonical runs are 1 long; its NFKD is
    // the non-starter U+3099, so NFKC would see one run of them all.
    require_accepted({"x" + repeat(uff9e + u0301, 15) + ".npy"}); // 30 under NFKD
    require_refused("x" + repeat(uff9e + u0301, 16) + ".npy");    // 32
    require_refused("x" + repeat(uff9e, 31) + ".npy");
    require_refused("\xc2\xa8" + repeat(u0301, 30) + ".npy"); // U+00A8 is NFKD space + U+0308
    require_accepted({"\xc2\xa8" + repeat(u0301, 29) + ".npy"});
  }
}

TEST_CASE("member names: no component ends with a space or a dot", "[npz][names]") {
  for (const char* bad : {"dir /x.npy", "dir./x.npy", "a/b /c.npy", "a/b../c.npy", "a..npy", "a .npy", "d/x..npy",
                          "d/x .npy", "..../x.npy"}) {
    // "a..npy" is the key "a.", "a .npy" the key "a ": the key's components too.
    require_refused(bad);
  }
  require_accepted({"a.b.npy", "..a.npy", ".a.npy", "a. b.npy", "dir.d/x.npy", "a b/c d.npy", ". a/x.npy"});
}

TEST_CASE("member names: the NFKC form passes the path rules with the same components", "[npz][names]") {
  const std::string solidus = "\xef\xbc\x8f";   // U+FF0F FULLWIDTH SOLIDUS: '/'
  const std::string reverse = "\xef\xbc\xbc";   // U+FF3C FULLWIDTH REVERSE SOLIDUS: '\\'
  const std::string colon = "\xef\xbc\x9a";     // U+FF1A FULLWIDTH COLON: ':'
  const std::string full_stop = "\xef\xbc\x8e"; // U+FF0E FULLWIDTH FULL STOP: '.'
  const std::string two_dots = "\xe2\x80\xa5";  // U+2025 TWO DOT LEADER: ".."
  for (const std::string& bad : {".." + solidus + ".." + solidus + "x.npy", "a" + solidus + "b.npy",
                                 solidus + "x.npy", // an absolute path
                                 "a" + reverse + "b.npy", reverse + "x.npy", two_dots + "/x.npy",
                                 "x" + two_dots + ".npy", // the key "x..": a component ending in a dot
                                 full_stop + full_stop + "/x.npy", "c" + colon + "x.npy",
                                 std::string("\xef\xbc\xa3:x.npy"),    // U+FF23 FULLWIDTH C
                                 "\xef\xbd\x83" + colon + "/x.npy",    // U+FF43 FULLWIDTH c
                                 std::string("\xe2\x84\xaa:x.npy"),    // U+212A KELVIN SIGN: 'K' (canonical)
                                 std::string("\xe2\x84\x80.npy"),      // U+2100 ACCOUNT OF: "a/c"
                                 std::string("x\xe2\x92\x88/y.npy"),   // U+2488 DIGIT ONE FULL STOP: "1."
                                 std::string("dir\xe3\x80\x80/x.npy"), // U+3000 IDEOGRAPHIC SPACE: ' '
                                 std::string("dir\xc2\xa0/x.npy")}) {  // U+00A0 NO-BREAK SPACE: ' '
    require_refused(bad);
  }
  require_accepted({"dense/kernel" + colon + "0.npy", "dense/kernel:0.npy", "ab" + colon + "c.npy",
                    "\xef\xac\x81.npy", // U+FB01 LIGATURE FI: "fi"
                    "\xc2\xbd.npy",     // U+00BD: '1' U+2044 '2', a fraction slash, no separator
                    "x\xc2\xb2/y.npy", "\xef\xbc\xa1.npy", two_dots + "x.npy", "a" + full_stop + "b.npy"});
  // A CP437 name (no flag bit 11) goes through the same fold: byte 0xFF is
  // U+00A0 there, and a component ending in it folds to one ending in a space.
  zip_entry cp437;
  cp437.name = "dir\xff/x.npy";
  cp437.data = ints;
  const zip_archive zip = build_zip({cp437});
  require_error(check_zip(zip.bytes), error_code::bad_member_name, zip.entries[0].central + central_name,
                "dir\xc2\xa0/x.npy");
}

TEST_CASE("member names: no name is another's directory, on NFC forms", "[npz][names]") {
  SECTION("in either order") {
    require_duplicate({"a.npy", "a.npy/b.npy"});
    require_duplicate({"a.npy/b.npy", "a.npy"});
    require_duplicate({"x.npy", "b.npy", "x.npy/y/z.npy"});
    require_duplicate({"x.npy/y/z.npy", "b.npy", "x.npy"});
    require_duplicate({"d/a.npy/b/c.npy", "d/a.npy"});
    require_duplicate({"d/a.npy", "d/a.npy/b/c.npy"});
  }
  SECTION("after NFC: U+00E9 and e + U+0301 are one directory") {
    require_duplicate({"\xc3\xa9.npy", "e\xcc\x81.npy/x.npy"});
    require_duplicate({"e\xcc\x81.npy/x.npy", "\xc3\xa9.npy"});
  }
  SECTION("edges shared, then split") {
    // One edge "p.npy/q.npy/r.npy", split by the second name at "p.npy".
    require_duplicate({"p.npy/q.npy/r.npy", "p.npy/s.npy", "p.npy/q.npy"});
    require_duplicate({"p.npy/q.npy/r.npy", "p.npy/s.npy", "p.npy"});
    require_duplicate({"p.npy/q.npy/r.npy", "p.npy/qq.npy", "p.npy/q.npy/r.npy/t.npy"});
    require_duplicate({"p.npy/q.npy/r.npy", "p.npy/q.npy/s.npy", "p.npy/q.npy/r.npy"});
    require_accepted({"p.npy/q.npy/r.npy", "p.npy/q.npy/rr.npy", "p.npy/q.npyy/r.npy", "p.npy/q/r.npy",
                      "p.npy/q.np/r.npy", "p.np/q.npy"});
  }
  SECTION("accepted: directories that are no name, keys that are directories") {
    require_accepted({"a/b.npy", "a/c.npy", "a.npy", "a.npy.npy/c.npy"}); // "a.npy.npy/" is no name here
    require_accepted({"a.npy", "a.npyx/b.npy", "a.npy-x/b.npy", "a.np/b.npy", "b/a.npy"});
    require_accepted({"x.npy.npy"}); // alone: its key x.npy is no other member's name
  }
  SECTION("the key rule stays: a key that is another member's name") {
    require_duplicate({"a.npy", "a.npy.npy"});
    require_duplicate({"a.npy.npy", "a.npy"});
  }
}

TEST_CASE("member names: 60 KB names sharing a prefix, and thousands of components", "[npz][names]") {
  // Correctness only (the cost is measured with the command, see the report
  // of issue 35): every name distinct, then one name that clashes.
  const std::string prefix(60000, 'p');
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back(prefix + std::to_string(i) + ".npy");
  std::string deep;
  while (deep.size() < 60000) deep += "d/";
  deep += "e.npy/"; // 30,001 directories, the last one with a name that could be a file's
  for (int i = 0; i < 40; ++i) names.push_back(deep + std::to_string(i) + ".npy");
  for (int i = 0; i < 10; ++i) names.push_back(std::to_string(i) + "/" + deep + "x.npy");
  require_accepted(names);
  std::vector<std::string> clashing = names;
  clashing.push_back(prefix + "7.npy/x.npy"); // under member 7
  require_duplicate(clashing);
  clashing.back() = deep + "7.npy/x.npy"; // under member 47
  require_duplicate(clashing);
  clashing.back() = "3/" + deep + "x.npy"; // member 83 again
  require_duplicate(clashing);
  clashing.back() = deep.substr(0, deep.size() - 1); // "d/.../d/e.npy": the directory of members 40 to 79
  require_duplicate(clashing);
  clashing.back() = "3/" + deep.substr(0, deep.size() - 1); // the directory of member 83
  require_duplicate(clashing);
}

TEST_CASE("member names: the tree agrees with a pairwise check on random names", "[npz][names]") {
  // Components chosen so that names share and split edges in every way:
  // "a" prefixes "ab" inside a component, "a.npy" is both a last component
  // and a directory.
  const char* const parts[] = {"a", "ab", "a.npy", "ab.npy"};
  const char* const lasts[] = {"a.npy", "ab.npy"};
  std::uint64_t state = 42;
  const auto draw = [&state](std::uint64_t bound) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<std::size_t>((state >> 33) % bound);
  };
  const auto clashes = [](const std::string& x, const std::string& y) {
    const auto under = [](const std::string& name, const std::string& dir) {
      return name.size() > dir.size() && name.compare(0, dir.size(), dir) == 0 && name[dir.size()] == '/';
    };
    return x == y || under(x, y) || under(y, x);
  };
  int refused = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<std::string> names;
    std::size_t expected = 0; // index of the first name that clashes with an earlier one, 0: none
    for (std::size_t i = 0; i < 6; ++i) {
      std::string name;
      for (std::size_t depth = draw(4); depth > 0; --depth) name += std::string(parts[draw(4)]) + "/";
      name += lasts[draw(2)];
      names.push_back(name);
      for (std::size_t j = 0; j < i && expected == 0; ++j) expected = clashes(names[j], name) ? i : 0;
      if (expected != 0) break;
    }
    std::vector<zip_entry> entries;
    for (const std::string& name : names) entries.push_back(member(name));
    const zip_archive zip = build_zip(entries);
    const archive_result r = check_zip(zip.bytes);
    INFO("round " << round << ": " << describe(r));
    if (expected == 0) {
      CHECK(r.ok());
    } else {
      ++refused;
      REQUIRE_FALSE(r.ok());
      CHECK(r.failure().code == error_code::duplicate_name);
      CHECK(r.failure().offset == zip.entries[expected].central);
    }
  }
  CHECK(refused > 50); // both outcomes are exercised
  CHECK(refused < 350);
}

TEST_CASE("member names: Windows device names stay accepted", "[npz][names]") {
  // numpy never extracts; "aux" is a common key for auxiliary outputs.
  require_accepted({"aux.npy", "con.npy", "nul.npy", "com1.npy", "lpt1.npy", "prn.npy", "dir/aux.npy"});
}

TEST_CASE("member names: what numpy writes stays accepted", "[npz][names]") {
  // np.savez(f, **{'\u043a\u043b\u044e\u0447': ..., '\u65e5\u672c/x': ..., 'caf\u00e9': ...}), and
  // the look-alikes section 6 accepts on purpose.
  require_accepted({"\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87.npy", "\xe6\x97\xa5\xe6\x9c\xac/x.npy", "caf\xc3\xa9.npy",
                    "a.b.npy", "A.npy", "a.npy", "dense/kernel:0.npy", "layer1/weight.npy"});
  require_accepted({"x.npy.npy"});
}

namespace {

// utf8proc's own NFC or NFKC, the reference the names' fast path must equal.
std::string utf8proc_form(const std::string& text, bool compatibility) {
  utf8proc_uint8_t* normal = compatibility ? utf8proc_NFKC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()))
                                           : utf8proc_NFC(reinterpret_cast<const utf8proc_uint8_t*>(text.c_str()));
  REQUIRE(normal != nullptr);
  std::string out(reinterpret_cast<const char*>(normal));
  std::free(normal);
  return out;
}

std::string utf8(std::uint32_t c) {
  std::string out;
  npyguard::detail::append_utf8(out, c);
  return out;
}

void require_same_forms(const std::string& text) {
  INFO("text " << text);
  REQUIRE(npyguard::npz::detail::nfc(text) == utf8proc_form(text, false));
  REQUIRE(npyguard::npz::detail::nfkc(text) == utf8proc_form(text, true));
}

// The same through check_name, which builds the NFKC form while it scans
// and, where no compatibility decomposition differs, keeps it as the NFC
// form that nfc() then answers.
void require_same_checked_form(const std::string& text) {
  const std::string name = "n" + text + ".npy";
  INFO("name " << name);
  std::string key;
  (void)npyguard::npz::detail::check_name(reinterpret_cast<const unsigned char*>(name.data()), name.size(), true, name,
                                          0, key);
  REQUIRE(npyguard::npz::detail::nfc(name) == utf8proc_form(name, false));
}

} // namespace

TEST_CASE("member names: the fast NFC and NFKC give utf8proc's forms", "[npz][names][normalization]") {
  SECTION("every assigned code point of planes 0 and 1, after a starter and before marks") {
    std::size_t checked = 0;
    for (std::uint32_t c = 0x80; c < 0x20000; ++c) {
      if (c >= 0xD800 && c <= 0xDFFF) continue;
      if (utf8proc_category(static_cast<utf8proc_int32_t>(c)) == UTF8PROC_CATEGORY_CN) continue;
      // After 'a' (a first of many pairs), then a mark of class 230 and a mark of
      // class 220 (out of order); after a Hangul LV syllable (which takes a T jamo).
      require_same_forms("a" + utf8(c) + "\xcc\x81\xcc\xa3" + utf8(c));
      require_same_forms("\xea\xb0\x80" + utf8(c) + "x");
      // Between starters and after a mark of class 232 that composes with
      // nothing (U+0315): the name passes the NFC quick check, and is its
      // own form, exactly when `c` is NFC_Quick_Check=Yes and of class 0 or
      // at least 232.
      require_same_forms("b" + utf8(c) + "\xcc\x95" + utf8(c) + "b");
      // Segment boundaries (a character of class 0 whose decomposition
      // starts with a starter that composes with nothing before it starts a
      // segment; only segments that fail the quick check are built, and a
      // build that reaches a passing segment drops it again): `c` between
      // precomposed letters, then a second passing segment; `c` around
      // U+1E9B (a boundary that passes NFC's quick check and fails NFKC's);
      // runs of marks on both sides of `c` (one run to reorder and compose
      // when `c` is no boundary, two when it is); a jamo L that composes
      // with the V jamo after `c` unless `c` is a boundary.
      require_same_forms("\xc3\xa9" + utf8(c) + "\xc3\xa9" + "a");
      require_same_forms(utf8(c) + "\xe1\xba\x9b" + utf8(c));
      require_same_forms("e\xcc\x81\xcc\xa3" + utf8(c) +
                         "\xcc\xa3\xcc\x81\xcc\x95"
                         "e");
      require_same_checked_form("\xc3\xa9" + utf8(c) + "\xc3\xa9\xcc\xa3\xcc\x81");
      require_same_forms("\xe1\x84\x80" + utf8(c) + "\xe1\x85\xa1\xe1\x86\xa8");
      ++checked;
    }
    CHECK(checked > 80000); // 85,182 in Unicode 15
  }
  SECTION("random strings of look-alikes, marks, jamo and decomposing characters") {
    const std::uint32_t pool[] = {'a',    'e',    'K',    '.',    '/',     ' ',     ':',    0x00E9, 0x0301, 0x0323,
                                  0x0308, 0x0344, 0x0F71, 0x0F72, 0x0F73,  0x0F75,  0x0F77, 0x0958, 0x2126, 0x212A,
                                  0x1100, 0x1161, 0x11A7, 0x11A8, 0xAC00,  0xAC01,  0xD7A3, 0x3099, 0xFF9E, 0x00A8,
                                  0xFB01, 0x2025, 0xFF0F, 0xFF3C, 0xFF1A,  0xFF0E,  0x2488, 0x1E9B, 0x0CCA, 0x0CC2,
                                  0x0CC6, 0x0CD5, 0x05B0, 0x0591, 0x1D15E, 0x1D165, 0x0345, 0x03B1, 0x4E00, 0xFDFA,
                                  0x00E0, 0x1EA0, 0x1E9A, 0x0315, 0x0334,  0x212B,  0x0340, 0x2ADC};
    std::uint64_t state = 7;
    for (int round = 0; round < 20000; ++round) {
      std::string text;
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      for (std::size_t n = 1 + (state >> 60); n > 0; --n) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        text += utf8(pool[(state >> 33) % (sizeof pool / sizeof pool[0])]);
      }
      require_same_forms(text);
      require_same_checked_form(text);
    }
  }
}

TEST_CASE("member names: NFC, not NFKC, decides duplicates", "[npz][names]") {
  // U+FB01 (the ligature fi) is "fi" in NFKC only: both names stay. The NFKC
  // form check_name builds must never stand in for the NFC form.
  require_accepted({"\xef\xac\x81.npy", "fi.npy"});
  require_accepted({"fi.npy", "\xef\xac\x81.npy"});
  // The Kelvin sign is K in NFC already (a canonical singleton).
  require_duplicate(
      {"Ka"
       "\xef\xac\x81.npy",
       "\xe2\x84\xaa"
       "a"
       "\xef\xac\x81.npy"});
  // Where NFKC is NFC (no compatibility mapping), the duplicate is found either way.
  require_duplicate({"e\xcc\x81.npy", "\xc3\xa9.npy"});
  require_duplicate(
      {"x" + repeat(u0f73, 3) + ".npy", "x" + repeat("\xe0\xbd\xb1", 3) + repeat("\xe0\xbd\xb2", 3) + ".npy"});
  // A Hangul LV syllable and a trailing jamo compose to the LVT syllable.
  require_duplicate({"\xea\xb0\x81.npy", "\xea\xb0\x80\xe1\x86\xa8.npy"});
}
