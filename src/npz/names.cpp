#include "npz/names.hpp"

#include <algorithm>
#include <cstring>
#include <deque>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#include <utf8proc.h>

#include "core/hex.hpp"
#include "core/keyed_hash.hpp"
#include "core/utf8.hpp"

namespace npyguard::npz::detail {

namespace {

// UAX #15's stream-safe limit on non-starters in a row.
constexpr std::size_t max_non_starters = 30;
// Longest full decomposition in Unicode 15: 18 code points (U+FDFA, compatibility).
constexpr utf8proc_ssize_t decomposition_room = 18;

constexpr std::string_view npy_suffix = ".npy";

constexpr std::uint16_t cp437_high[128] = {
#include "npz/cp437.inc"
};

// The code point at text[i] of a name that decoded as UTF-8; advances i.
// Inlined: the per-character loops call it, and a call costs as much as it.
[[gnu::always_inline]] inline std::uint32_t next_code_point(std::string_view text, std::size_t& i) noexcept {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data());
  if (bytes[i] < 0x80) return bytes[i++];
  const auto step = npyguard::detail::decode_utf8(bytes + i, text.size() - i);
  i += step.length == 0 ? 1 : step.length; // never 0: the name decoded
  return step.code_point;
}

[[nodiscard]] bool is_ascii(std::string_view text) noexcept {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

// A code point that reads differently to a person than to the parser, or
// that zipfile's NUL cut would hide behind (SPEC-npz.md section 6).
[[nodiscard]] bool forbidden_character(std::uint32_t c) noexcept {
  if (c <= 0x1F || (c >= 0x7F && c <= 0x9F) || c == '\\') return true;
  return c == 0x061C || c == 0x200E || c == 0x200F || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

// The character as Python's repr escapes it: \x7f, \u202e, \U0001f600.
[[nodiscard]] std::string code_point_text(std::uint32_t c) {
  std::string text = c < 0x100 ? "\\x" : c < 0x10000 ? "\\u" : "\\U";
  npyguard::detail::append_hex(text, c, c < 0x100 ? 2 : c < 0x10000 ? 4 : 8);
  return text;
}

error name_error(std::uint64_t at, std::string why) {
  return error{error_code::bad_member_name, at, "the name " + std::move(why)};
}

std::string forbidden_text(std::uint32_t c) {
  return c == 0 ? "holds a NUL (zipfile cuts the name there)"
         : c == '\\'
             ? "holds a backslash"
             : "holds the character " + code_point_text(c) + " (a control or bidirectional formatting character)";
}

// Hangul syllables decompose, and compose again, by arithmetic (UAX #15,
// "Hangul"), never through the property tables.
constexpr std::uint32_t hangul_first = 0xAC00;
constexpr std::uint32_t hangul_last = 0xD7A3;

[[nodiscard]] bool hangul_syllable(std::uint32_t c) noexcept { return c >= hangul_first && c <= hangul_last; }

// Whether utf8proc's composition (utf8proc_normalize_utf32 with
// UTF8PROC_COMPOSE, the step after decomposition and reordering in
// utf8proc_NFC and utf8proc_NFKC) can join `c` to the starter before it: a
// Hangul vowel or trailing jamo (utf8proc takes U+11A7 as a trailing jamo of
// index 0, so it is one here too), or a character the composition table
// lists second in a pair. Exactly the condition of utf8proc's loop.
[[nodiscard]] bool composes_with_previous(std::uint32_t c, const utf8proc_property_t& p) noexcept {
  if ((c >= 0x1161 && c <= 0x1175) || (c >= 0x11A7 && c <= 0x11C2)) return true;
#if UTF8PROC_VERSION_MAJOR > 2 || (UTF8PROC_VERSION_MAJOR == 2 && UTF8PROC_VERSION_MINOR >= 9)
  return p.comb_issecond != 0;
#else
  return p.comb_index != UINT16_MAX && p.comb_index >= 0x8000;
#endif
}

// What one pass over a non-ASCII name finds, for the rules in the table's
// order and for the normalisations the later rules need.
//
// `nfc_inert`: UAX #15's quick check (section 9) answers Yes for NFC:
// every character is NFC_Quick_Check=Yes (never second in a composition
// pair, as composes_with_previous says, which with utf8proc includes
// U+11A7; and its own NFC form: no canonical decomposition, or one that
// composes back into the character, which excludes composition exclusions,
// singletons and decompositions into non-starters; character_table::fill
// finds both with utf8proc) and no combining class other than 0 follows a
// higher one. Then the name is its own NFC form (UAX #15: a string whose
// quick check is Yes is normalised), which is what lets a name of
// precomposed letters (Latin with accents, Hangul syllables) skip
// normalisation. `nfkc_inert`: the same for NFKC: every character is also
// without a compatibility decomposition (its compatibility decomposition
// is its canonical one), so the NFKC form is the NFC form, the name itself.
// The differential test in test_npz_names.cpp checks both against
// utf8proc_NFC and utf8proc_NFKC on every code point of planes 0 and 1.
struct name_scan {
  std::optional<std::uint32_t> forbidden; // the first forbidden character
  std::optional<std::uint32_t> invisible; // the first Cf, Zl or Zp character
  bool canonical_runs_exceeded = false;   // > 30 non-starters in a row, canonical decomposition
  bool compatibility_runs_exceeded = false;
  bool nfc_inert = true;
  bool nfkc_inert = true;
  bool compatibility_differs = false; // some character's compatibility decomposition is not its canonical one
};

// One character's full decomposition (canonical or compatibility), as
// utf8proc_decompose_char writes it (a character without one is its own),
// with each part's combining class and whether any part can compose with
// the starter before it.
struct decomposition {
  std::uint8_t count;
  bool composes;
  // Its runs of non-starters, for counting them a character at a time: the
  // non-starters before its first starter (all of them without one), after
  // its last, and the longest run between.
  bool has_starter;
  bool ordered; // no starter, the classes never go down: a piece of a run, appended whole
  std::uint8_t leading;
  std::uint8_t trailing;
  std::uint8_t inner;
  utf8proc_int32_t parts[decomposition_room];
  std::uint8_t classes[decomposition_room];
};

// What the rules need of one non-ASCII character, from utf8proc once.
struct character_facts {
  std::uint32_t character = 0xFFFFFFFFu; // none yet; the rest is set when it is filled
  bool invisible;                        // Cf, Zl or Zp
  bool unknown;                          // utf8proc has no decomposition for it: not a Unicode 15 code point
  std::uint8_t combining_class;
  bool nfc_yes;               // NFC_Quick_Check=Yes: never second in a pair, and its own NFC form
  bool nfkc_yes;              // NFKC_Quick_Check=Yes: nfc_yes, and no compatibility decomposition
  bool compatibility_differs; // its compatibility decomposition is not its canonical one
  // A boundary of the NFC (NFKC) form (segmented_form): combining class 0,
  // and its canonical (compatibility) decomposition starts with a starter
  // that composes with nothing before it. Whether it passes the quick check
  // is another matter: U+1E9B is a boundary of NFKC, and fails it.
  bool nfc_boundary;
  bool nfkc_boundary;
  // Its NFC (NFKC) form alone, as UTF-8, for a boundary that fails the
  // quick check and is a segment by itself (U+1E9B before a letter): 0
  // bytes when it is longer than the room, or not needed.
  std::uint8_t nfc_alone_size;
  std::uint8_t nfkc_alone_size;
  char nfc_alone[14];
  char nfkc_alone[14];
  decomposition canonical;
  decomposition compatibility;
};

// The facts of the characters the thread's names use, each looked up in
// utf8proc once a thread, not once a name: a name of hundreds of distinct
// decomposing characters (random accented Latin) would otherwise pay two
// utf8proc decompositions for most of its characters. Plain characters (a
// starter without a decomposition that never composes with the one before
// it: most characters of most scripts) and Hangul syllables (decomposed by
// arithmetic, point_builder::add_hangul) are never kept, so the table holds
// at most the few thousand other characters of Unicode (about 200 bytes
// each); past `max_entries` (8,192: at most about 1.6 MB a thread) it is
// emptied before the next name. Open addressing over code points: an
// attacker chooses no keys outside that fixed set, and the slot of each is
// keyed (home()). Entries never move while a name is scanned.
class character_table {
public:
  // The table of the calling thread, emptied first if it has grown past its bound.
  static character_table& for_name() {
    static thread_local character_table table;
    if (table.entries_.size() > max_entries) table.clear();
    return table;
  }

  // The facts of `c`, or nullptr for a plain character. `invisible` is set
  // for a plain character (the facts hold it for the others). Not for
  // Hangul syllables (point_builder::add_hangul).
  const character_facts* get(std::uint32_t c, bool& invisible) {
    // The characters seen last, direct-mapped: a name repeats its few
    // decomposing characters, and a plain character costs one compare here.
    slot& recent = recent_[(c ^ (c >> 6)) & (recent_size - 1)];
    if (recent.facts != nullptr && recent.character == c) return recent.facts;
    // A plain character is told by its properties alone, never looked for
    // in the table: most names are made of them.
    const utf8proc_property_t& p = *utf8proc_get_property(static_cast<utf8proc_int32_t>(c));
    if (p.decomp_seqindex == UINT16_MAX && p.combining_class == 0 && !hangul_syllable(c) &&
        !composes_with_previous(c, p)) {
      invisible = p.category == UTF8PROC_CATEGORY_CF || p.category == UTF8PROC_CATEGORY_ZL ||
                  p.category == UTF8PROC_CATEGORY_ZP;
      return nullptr;
    }
    if (slots_.empty()) resize(64);
    std::size_t at = home(c);
    for (; slots_[at].facts != nullptr; at = (at + 1) & (slots_.size() - 1)) {
      if (slots_[at].character == c) {
        recent = slots_[at];
        return recent.facts;
      }
    }
    entries_.emplace_back();
    character_facts* const facts = &entries_.back();
    fill(c, p, *facts);
    slots_[at] = slot{c, facts};
    recent = slots_[at];
    if (2 * entries_.size() > slots_.size()) resize(2 * slots_.size());
    return facts;
  }

private:
  static constexpr std::size_t max_entries = 8192;

  // A code point's first slot: multiply-shift under an odd multiplier drawn
  // from the process's hash key (the product's top bits; open addressing,
  // linear probing). A public multiplier would let names be made of
  // characters chosen offline to crowd one run of slots, and every lookup
  // of them would walk it; a random one is 2-universal.
  [[nodiscard]] std::size_t home(std::uint32_t c) const noexcept {
    return static_cast<std::size_t>((std::uint64_t{c} * multiplier_) >> shift_);
  }

  character_table() : multiplier_(npyguard::detail::process_hash_key().k1 | 1u) {}

  void clear() {
    entries_.clear();
    slots_.clear();
    std::fill(std::begin(recent_), std::end(recent_), slot{});
  }
  // `size` slots (a power of two), every entry placed again.
  void resize(std::size_t size) {
    slots_.assign(size, slot{});
    shift_ = 64;
    for (std::size_t n = size; n > 1; n >>= 1) --shift_;
    for (const character_facts& facts : entries_) {
      std::size_t at = home(facts.character);
      while (slots_[at].facts != nullptr) at = (at + 1) & (size - 1);
      slots_[at] = slot{facts.character, &facts};
    }
  }

  static void decompose(std::uint32_t c, bool compatibility, decomposition& out, bool& unknown) noexcept {
    const auto options = static_cast<utf8proc_option_t>(UTF8PROC_DECOMPOSE | (compatibility ? UTF8PROC_COMPAT : 0));
    int boundary_class = 0; // unused without UTF8PROC_CHARBOUND
    utf8proc_ssize_t count = utf8proc_decompose_char(static_cast<utf8proc_int32_t>(c), out.parts, decomposition_room,
                                                     options, &boundary_class);
    if (count < 0 || count > decomposition_room) { // keep the character itself, and refuse the name
      unknown = true;
      out.parts[0] = static_cast<utf8proc_int32_t>(c);
      count = 1;
    }
    out.count = static_cast<std::uint8_t>(count);
    out.composes = false;
    out.has_starter = false;
    out.leading = 0;
    out.inner = 0;
    std::uint8_t run = 0;
    for (utf8proc_ssize_t k = 0; k < count; ++k) {
      const utf8proc_property_t& p = *utf8proc_get_property(out.parts[k]);
      out.classes[k] = static_cast<std::uint8_t>(p.combining_class);
      out.composes = out.composes || composes_with_previous(static_cast<std::uint32_t>(out.parts[k]), p);
      if (out.classes[k] != 0) {
        ++run;
        continue;
      }
      if (out.has_starter) out.inner = std::max(out.inner, run);
      if (!out.has_starter) out.leading = run;
      out.has_starter = true;
      run = 0;
    }
    if (!out.has_starter) out.leading = run;
    out.trailing = run;
    out.ordered = count > 0 && !out.has_starter && std::is_sorted(out.classes, out.classes + count);
  }

  static void fill(std::uint32_t c, const utf8proc_property_t& p, character_facts& slot) noexcept {
    slot.character = c;
    slot.invisible =
        p.category == UTF8PROC_CATEGORY_CF || p.category == UTF8PROC_CATEGORY_ZL || p.category == UTF8PROC_CATEGORY_ZP;
    slot.unknown = false;
    slot.combining_class = static_cast<std::uint8_t>(p.combining_class);
    const bool decomposes = p.decomp_seqindex != UINT16_MAX;
    decompose(c, false, slot.canonical, slot.unknown);
    if (decomposes) {
      decompose(c, true, slot.compatibility, slot.unknown);
    } else {
      slot.compatibility = slot.canonical;
    }
    slot.compatibility_differs =
        slot.canonical.count != slot.compatibility.count ||
        !std::equal(slot.canonical.parts, slot.canonical.parts + slot.canonical.count, slot.compatibility.parts);
    // Its own NFC form: no canonical decomposition, or one that utf8proc's
    // composition (as utf8proc_NFC runs it) joins back into the character; a
    // composition exclusion, a singleton or a decomposition into
    // non-starters does not.
    bool own_form = true;
    if (decomposes && p.decomp_type == 0) {
      utf8proc_int32_t parts[decomposition_room];
      std::copy(slot.canonical.parts, slot.canonical.parts + slot.canonical.count, parts);
      const utf8proc_ssize_t composed = utf8proc_normalize_utf32(
          parts, slot.canonical.count, static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE));
      own_form = composed == 1 && parts[0] == static_cast<utf8proc_int32_t>(c);
    }
    slot.nfc_yes = own_form && !composes_with_previous(c, p) && !slot.unknown;
    slot.nfkc_yes = slot.nfc_yes && !slot.compatibility_differs;
    slot.nfc_boundary = slot.combining_class == 0 && starts_segment(slot.canonical);
    slot.nfkc_boundary = slot.combining_class == 0 && starts_segment(slot.compatibility);
    alone(c, false, slot.nfc_boundary && !slot.nfc_yes, slot.nfc_alone_size, slot.nfc_alone);
    alone(c, true, slot.nfkc_boundary && !slot.nfkc_yes, slot.nfkc_alone_size, slot.nfkc_alone);
  }

  // utf8proc's form of `c` alone, where `needed`.
  template <std::size_t room>
  static void alone(std::uint32_t c, bool compatibility, bool needed, std::uint8_t& size, char (&out)[room]) noexcept {
    size = 0;
    if (!needed) return;
    utf8proc_uint8_t text[5] = {0, 0, 0, 0, 0};
    if (utf8proc_encode_char(static_cast<utf8proc_int32_t>(c), text) <= 0) return;
    utf8proc_uint8_t* const form = compatibility ? utf8proc_NFKC(text) : utf8proc_NFC(text);
    if (form == nullptr) return;
    const std::size_t length = std::strlen(reinterpret_cast<const char*>(form));
    if (length > 0 && length <= room) {
      std::memcpy(out, form, length);
      size = static_cast<std::uint8_t>(length);
    }
    std::free(form);
  }

  // The first part stops reordering (a starter) and composition (utf8proc's
  // loop takes it as the new starter): nothing after it reaches back.
  static bool starts_segment(const decomposition& whole) noexcept {
    return whole.classes[0] == 0 &&
           !composes_with_previous(static_cast<std::uint32_t>(whole.parts[0]), *utf8proc_get_property(whole.parts[0]));
  }

  struct slot {
    std::uint32_t character = 0;
    const character_facts* facts = nullptr; // null: empty
  };
  std::deque<character_facts> entries_; // never move: a pointer stays valid while the table grows
  std::vector<slot> slots_;             // the key beside its facts: a hit reads one slot
  unsigned shift_ = 64;                 // 64 - log2(slots_.size())
  std::uint64_t multiplier_;            // odd, from the process's hash key
  static constexpr std::size_t recent_size = 64;
  slot recent_[recent_size] = {};
};

// A run of non-starters in a decomposition: more than 30 (UAX #15's
// stream-safe limit) make the reordering quadratic.
class run_counter {
public:
  void starter() noexcept { run_ = 0; }
  // The same count as one part at a time, from the decomposition's summary.
  void add(const decomposition& parts) noexcept {
    run_ += parts.leading;
    bool over = run_ > max_non_starters;
    if (parts.has_starter) {
      run_ = parts.trailing;
      over = over || parts.inner > max_non_starters || run_ > max_non_starters;
    }
    exceeded_ = exceeded_ || over;
  }
  [[nodiscard]] bool exceeded() const noexcept { return exceeded_; }

private:
  std::size_t run_ = 0;
  bool exceeded_ = false;
};

// The character rules in the table's order: forbidden characters, then
// invisible ones (none is ASCII).
std::optional<std::string> character_problem(std::string_view name, bool ascii, const name_scan& scan) {
  if (ascii) {
    for (const char c : name) {
      if (forbidden_character(static_cast<unsigned char>(c))) return forbidden_text(static_cast<unsigned char>(c));
    }
    return std::nullopt;
  }
  if (scan.forbidden) return forbidden_text(*scan.forbidden);
  if (scan.invisible) {
    return "holds the character " + code_point_text(*scan.invisible) +
           " (a format or separator character, invisible in a listing)";
  }
  return std::nullopt;
}

// Puts points[0, size), a run of non-starters out of order, in canonical order: a
// stable sort by combining class, as utf8proc's reordering (it swaps
// neighbours whose classes are out of order, the swaps of an insertion sort,
// so the order is the same). Runs are at most 30 long in a name check_name
// accepted. With at most four distinct classes (two for U+0F73's parts) one
// pass a class picks them in order; else an insertion sort on packed
// (class, code point) words. `classes` is left as it was: no one reads a
// sorted run's classes.
void order_run(utf8proc_int32_t* points, const std::uint8_t* classes, std::size_t size) {
  // The classes present, as a 256-bit set: read in ascending order below.
  std::uint64_t present[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < size; ++i) present[classes[i] >> 6] |= std::uint64_t{1} << (classes[i] & 63);
  std::size_t kinds = 0;
  for (const std::uint64_t word : present) {
    for (std::uint64_t left = word; left != 0 && kinds <= 4; left &= left - 1) ++kinds; // stops past four
  }
  constexpr std::size_t held_size = 2 * max_non_starters;
  if (kinds <= 4 && size <= held_size) { // one pass a class, in ascending order
    utf8proc_int32_t picked[held_size + 1];
    std::size_t at = 0;
    for (std::size_t word = 0; word < 4; ++word) {
      for (std::uint64_t left = present[word]; left != 0; left &= left - 1) {
        const auto wanted = static_cast<std::uint8_t>(word * 64 + static_cast<std::size_t>(__builtin_ctzll(left)));
        for (std::size_t i = 0; i < size; ++i) { // written always, kept when the class matches
          picked[at] = points[i];
          at += classes[i] == wanted ? 1 : 0;
        }
      }
    }
    std::copy(picked, picked + size, points);
    return;
  }
  std::uint64_t held[held_size];
  std::vector<std::uint64_t> spilled; // a longer run (a name check_name did not see)
  std::uint64_t* words = held;
  if (size > held_size) {
    spilled.resize(size);
    words = spilled.data();
  }
  for (std::size_t i = 0; i < size; ++i)
    words[i] = std::uint64_t{classes[i]} << 32 | static_cast<std::uint32_t>(points[i]);
  for (std::size_t i = 1; i < size; ++i) {
    const std::uint64_t word = words[i];
    std::size_t j = i;
    for (; j > 0 && (words[j - 1] >> 32) > (word >> 32); --j) words[j] = words[j - 1];
    words[j] = word;
  }
  for (std::size_t i = 0; i < size; ++i) points[i] = static_cast<utf8proc_int32_t>(words[i] & 0xFFFFFFFFu);
}

// A normal form's code points, built a character at a time: each character
// is decomposed as utf8proc_decompose_char does, with the parts' combining
// classes kept (character_table); each run of non-starters is put in order
// once it ends (order_run); finish() then composes, only when some part can
// compose with the starter before it (composes_with_previous, the condition
// of utf8proc's own composition loop: without such a part that loop changes
// nothing), with utf8proc_normalize_utf32 and the options utf8proc_NFC
// (utf8proc_NFKC) pass it, and writes UTF-8. The result is the code points
// utf8proc_NFC (utf8proc_NFKC) gives, in fewer steps. Linear in the name
// when its runs are bounded. The buffers are the thread's, reused.
class point_builder {
public:
  explicit point_builder(bool compatibility) noexcept
      : compatibility_(compatibility),
        points_(points_buffer_.data()),
        classes_(classes_buffer_.data()),
        capacity_(points_buffer_.size()) {}
  point_builder(const point_builder&) = delete;
  point_builder& operator=(const point_builder&) = delete;

  // `facts`: the character's (nullptr for ASCII and plain starters). The
  // state is read into locals and written back once: the classes are bytes,
  // and every store of one would otherwise make the compiler read the
  // members again.
  void add(std::uint32_t c, const character_facts* facts) {
    if (capacity_ - size_ < static_cast<std::size_t>(decomposition_room)) grow();
    utf8proc_int32_t* const points = points_;
    std::uint8_t* const classes = classes_;
    std::size_t size = size_;
    std::size_t run_begin = run_begin_;
    bool sorted = sorted_;
    std::uint8_t last_class = last_class_;
    const auto put = [&](utf8proc_int32_t part, std::uint8_t combining_class) {
      if (combining_class == 0) { // a starter ends the run before it
        if (!sorted) order_run(points + run_begin, classes + run_begin, size - run_begin);
        sorted = true;
        last_class = 0;
        points[size] = part;
        classes[size++] = 0;
        run_begin = size;
        return;
      }
      sorted = sorted && last_class <= combining_class;
      last_class = combining_class;
      points[size] = part;
      classes[size++] = combining_class;
    };
    if (facts == nullptr) {
      put(static_cast<utf8proc_int32_t>(c), 0);
    } else {
      const decomposition& whole = compatibility_ ? facts->compatibility : facts->canonical;
      composes_ = composes_ || whole.composes;
      if (whole.ordered) { // non-starters in order (a mark, U+0344, U+0F73): copied whole
        for (std::size_t k = 0; k < whole.count; ++k) {
          points[size + k] = whole.parts[k];
          classes[size + k] = whole.classes[k];
        }
        sorted = sorted && last_class <= whole.classes[0];
        last_class = whole.classes[whole.count - 1];
        size += whole.count;
      } else {
        for (std::size_t k = 0; k < whole.count; ++k) put(whole.parts[k], whole.classes[k]);
      }
    }
    size_ = size;
    run_begin_ = run_begin;
    sorted_ = sorted;
    last_class_ = last_class;
  }

  // A Hangul syllable: its jamo, L V or L V T, all starters, by UAX #15's
  // arithmetic (what utf8proc_decompose_char writes, both kinds); the V can
  // compose with the L.
  // Puts the last run in order and gives the number of code points, a mark
  // that cut() can go back to: a boundary is about to be added.
  std::size_t seal() {
    if (!sorted_) order_run(points_ + run_begin_, classes_ + run_begin_, size_ - run_begin_);
    sorted_ = true;
    last_class_ = 0;
    run_begin_ = size_;
    return size_;
  }

  // Drops what was added after seal() gave `mark`.
  void cut(std::size_t mark) noexcept {
    size_ = mark;
    run_begin_ = mark;
    sorted_ = true;
    last_class_ = 0;
  }

  void add_hangul(std::uint32_t c) {
    if (capacity_ - size_ < static_cast<std::size_t>(decomposition_room)) grow();
    if (!sorted_) order_run(points_ + run_begin_, classes_ + run_begin_, size_ - run_begin_);
    sorted_ = true;
    last_class_ = 0;
    const std::uint32_t index = c - hangul_first;
    const std::uint32_t trailing = index % 28;
    points_[size_] = static_cast<utf8proc_int32_t>(0x1100 + index / 588);
    classes_[size_++] = 0;
    points_[size_] = static_cast<utf8proc_int32_t>(0x1161 + (index % 588) / 28);
    classes_[size_++] = 0;
    if (trailing != 0) {
      points_[size_] = static_cast<utf8proc_int32_t>(0x11A7 + trailing);
      classes_[size_++] = 0;
    }
    run_begin_ = size_;
    composes_ = true;
  }

  // Writes the form of the characters added since the last finish into
  // `out` from `used` on (`out` grows, doubling, when it lacks the room),
  // advances `used` past it, and starts again with none.
  void finish(std::string& out, std::size_t& used) {
    if (!sorted_) order_run(points_ + run_begin_, classes_ + run_begin_, size_ - run_begin_);
    std::size_t length = size_;
    if (composes_) {
      const utf8proc_ssize_t composed = utf8proc_normalize_utf32(
          points_, static_cast<utf8proc_ssize_t>(length),
          static_cast<utf8proc_option_t>(UTF8PROC_COMPOSE | UTF8PROC_STABLE | (compatibility_ ? UTF8PROC_COMPAT : 0)));
      if (composed < 0) throw std::length_error("normalize");
      length = static_cast<std::size_t>(composed);
    }
    // At most 4 bytes a code point: one pass. `out` is a buffer reused from
    // name to name, so this seldom allocates.
    if (out.size() - used < 4 * length) out.resize(std::max(2 * out.size(), used + 4 * length));
    char* const begin = &out[0];
    char* at = begin + used;
    for (std::size_t k = 0; k < length; ++k) at = put_utf8(at, static_cast<std::uint32_t>(points_[k]));
    used = static_cast<std::size_t>(at - begin);
    size_ = 0;
    run_begin_ = 0;
    sorted_ = true;
    last_class_ = 0;
    composes_ = false;
  }

private:
  static char* put_utf8(char* at, std::uint32_t c) noexcept {
    if (c < 0x80) {
      *at++ = static_cast<char>(c);
    } else if (c < 0x800) {
      *at++ = static_cast<char>(0xC0 | (c >> 6));
      *at++ = static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      *at++ = static_cast<char>(0xE0 | (c >> 12));
      *at++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *at++ = static_cast<char>(0x80 | (c & 0x3F));
    } else {
      *at++ = static_cast<char>(0xF0 | (c >> 18));
      *at++ = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      *at++ = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      *at++ = static_cast<char>(0x80 | (c & 0x3F));
    }
    return at;
  }
  void grow() {
    const std::size_t wanted = std::max<std::size_t>(2 * capacity_, size_ + decomposition_room);
    points_buffer_.resize(wanted);
    classes_buffer_.resize(wanted);
    points_ = points_buffer_.data();
    classes_ = classes_buffer_.data();
    capacity_ = wanted;
  }

  // The thread's buffers, reused from name to name; [0, size_) in use.
  static thread_local std::vector<utf8proc_int32_t> points_buffer_;
  static thread_local std::vector<std::uint8_t> classes_buffer_;
  bool compatibility_;
  utf8proc_int32_t* points_;
  std::uint8_t* classes_;
  std::size_t capacity_;
  bool composes_ = false;
  std::size_t size_ = 0;
  std::size_t run_begin_ = 0;   // where the current run of non-starters begins
  bool sorted_ = true;          // the current run's classes never go down
  std::uint8_t last_class_ = 0; // of the current run's last part
};

thread_local std::vector<utf8proc_int32_t> point_builder::points_buffer_;
thread_local std::vector<std::uint8_t> point_builder::classes_buffer_;

// A name's NFC (NFKC) form, built a segment at a time. UAX #15 (section 9):
// a character of combining class 0 whose canonical (compatibility)
// decomposition starts with a starter that composes with nothing before it
// (character_facts::nfc_boundary; ASCII, Hangul syllables and plain
// starters are such characters) is a boundary: nothing before it reorders
// or composes with anything from it on, so the normal form of a string is
// the concatenation of the normal forms of the segments that start at its
// boundaries (and at its start). A segment whose characters pass the quick
// check (in order) is its own form and is copied as it is; a failing
// character that is a segment by itself (U+1E9B between letters) is
// replaced by its form alone, kept in its facts; other failing segments
// are decomposed, reordered and composed (point_builder), runs of them as
// one. So a name of precomposed letters with compatibility characters
// among them is copied, not built. A character is decoded at most twice
// and built at most once, so a name whose segments all fail costs what
// building the whole name did. The output is a buffer of the thread's,
// handed over by finish().
template <bool compatibility>
class segmented_form {
public:
  segmented_form(std::string_view name, character_table& table) noexcept
      : points_(compatibility), name_(name), table_(table) {}

  // The character `c` at name[start, ...), with its facts (nullptr for
  // ASCII, Hangul syllables and plain starters) and whether its class keeps
  // the quick check's order (no class but 0 after a higher one). Characters
  // come in the name's order. Outside a build, a character that passes
  // costs a compare or two (most names are such characters); inside one, a
  // character that is no boundary goes straight to the builder.
  void add(std::size_t start, std::uint32_t c, const character_facts* facts, bool in_order) {
    if (facts == nullptr) { // ASCII, a Hangul syllable, a plain starter: a boundary that passes
      if (state_ != state::idle) {
        at_boundary_or_failure(start, c, facts, true, true);
      } else {
        segment_begin_ = start;
      }
      return;
    }
    const bool boundary = compatibility ? facts->nfkc_boundary : facts->nfc_boundary;
    const bool passes = (compatibility ? facts->nfkc_yes : facts->nfc_yes) && in_order;
    if (state_ == state::idle && passes) {
      if (boundary) segment_begin_ = start;
    } else if (state_ == state::building && !(boundary && passes)) { // the build goes on
      passing_ = passing_ && passes;
      put(c, facts);
    } else {
      at_boundary_or_failure(start, c, facts, boundary, passes);
    }
  }

  // True when every segment passed: the name is its own form, and `out`
  // is left alone. Else `out` is the form.
  bool finish(std::string& out) {
    if (!started_) return true;
    if (state_ == state::alone) put_alone(name_.size());
    if (passing_) points_.cut(passing_mark_);
    if (state_ == state::building) close(passing_ ? passing_begin_ : name_.size());
    copy_to(name_.size());
    buffer_.resize(used_);
    out.swap(buffer_);
    return false;
  }

private:
  // A character that fails, or a boundary while a segment is built. A
  // build goes on across boundaries until a whole segment after it passes:
  // segments that fail one after another (U+1E9B repeated, runs of U+0344
  // after a letter) are built as one, as the whole name was, and a passing
  // segment built on the way is dropped again (point_builder::cut) and
  // copied.
  [[gnu::noinline]] void at_boundary_or_failure(std::size_t start, std::uint32_t c, const character_facts* facts,
                                                bool boundary, bool passes) {
    if (state_ == state::alone) { // the character before is a segment by itself, unless this one joins it
      if (boundary) {
        put_alone(start);
      } else {
        open(start);
      }
    }
    if (state_ == state::building && boundary && passes) {
      if (passing_) { // the segment from passing_begin_ to here passed
        points_.cut(passing_mark_);
        close(passing_begin_);
      } else {
        passing_ = true;
        passing_begin_ = start;
        passing_mark_ = points_.seal();
      }
    }
    if (state_ == state::building) {
      passing_ = passing_ && passes;
      put(c, facts);
      return;
    }
    if (boundary) segment_begin_ = start;
    if (passes) return;
    if (boundary && (compatibility ? facts->nfkc_alone_size : facts->nfc_alone_size) != 0) {
      started_ = true;
      state_ = state::alone;
      alone_facts_ = facts;
      return;
    }
    open(start);
    put(c, facts);
  }

  // The character at segment_begin_, a segment by itself, ends at `end`:
  // its form alone, kept in its facts.
  void put_alone(std::size_t end) {
    copy_to(segment_begin_);
    const std::size_t size = compatibility ? alone_facts_->nfkc_alone_size : alone_facts_->nfc_alone_size;
    if (buffer_.size() - used_ < size) buffer_.resize(std::max(2 * buffer_.size(), used_ + size));
    std::memcpy(&buffer_[0] + used_, compatibility ? alone_facts_->nfkc_alone : alone_facts_->nfc_alone, size);
    used_ += size;
    written_ = end;
    state_ = state::idle;
  }

  void put(std::uint32_t c, const character_facts* facts) {
    if (c >= 0x80 && hangul_syllable(c)) {
      points_.add_hangul(c);
    } else {
      points_.add(c, facts);
    }
  }

  // The segment that began at segment_begin_ fails the quick check at
  // `start`: the passing text before the segment is copied, and the
  // segment's characters so far built.
  void open(std::size_t start) {
    started_ = true;
    copy_to(segment_begin_);
    for (std::size_t i = segment_begin_; i < start;) {
      const std::uint32_t earlier = next_code_point(name_, i);
      bool ignored = false;
      put(earlier, earlier < 0x80 || hangul_syllable(earlier) ? nullptr : table_.get(earlier, ignored));
    }
    state_ = state::building;
  }

  void close(std::size_t end) {
    points_.finish(buffer_, used_);
    written_ = end;
    state_ = state::idle;
    passing_ = false;
  }

  // name[written_, end), which passed, copied as it is.
  void copy_to(std::size_t end) {
    const std::size_t size = end - written_;
    if (buffer_.size() - used_ < size) buffer_.resize(std::max(2 * buffer_.size(), used_ + size));
    std::memcpy(&buffer_[0] + used_, name_.data() + written_, size);
    used_ += size;
    written_ = end;
  }

  static thread_local std::string buffer_; // reused from name to name
  point_builder points_;
  std::string_view name_;
  character_table& table_;
  std::size_t segment_begin_ = 0; // where the current segment begins
  std::size_t written_ = 0;       // name[0, written_) is in buffer_ in its form, as buffer_[0, used_)
  std::size_t used_ = 0;
  bool started_ = false; // some segment failed: buffer_ is in use
  enum class state : std::uint8_t {
    idle,     // no segment is built
    alone,    // the character at segment_begin_ fails, and may be a segment by itself (alone_facts_)
    building, // the segments from segment_begin_ on are being built
  };
  state state_ = state::idle;
  const character_facts* alone_facts_ = nullptr;
  bool passing_ = false; // the build's last segment, from passing_begin_, passes so far
  std::size_t passing_begin_ = 0;
  std::size_t passing_mark_ = 0; // the build's code points before it
};

template <bool compatibility>
thread_local std::string segmented_form<compatibility>::buffer_;

// The name's NFC form (`compatibility`: its NFKC form) into `out`, unless
// the name is its own form (then true, and `out` is left alone): one pass.
template <bool compatibility>
bool normalize(std::string_view name, character_table& table, std::string& out) {
  segmented_form<compatibility> form(name, table);
  std::uint8_t last_class = 0;
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t start = i;
    const std::uint32_t c = next_code_point(name, i);
    bool invisible = false;
    const character_facts* facts = c < 0x80 || hangul_syllable(c) ? nullptr : table.get(c, invisible);
    const std::uint8_t combining_class = facts == nullptr ? 0 : facts->combining_class;
    form.add(start, c, facts, combining_class == 0 || last_class <= combining_class);
    last_class = combining_class;
  }
  return form.finish(out);
}

// One pass over a non-ASCII name, each character looked up in the thread's
// table. With `folding` the pass also builds the name's NFKC form, the
// segments that fail the quick check only (a name that is its own form
// builds nothing), and stops once a run of the compatibility decomposition
// passes 30 (the name is refused before its NFKC form is needed, and the
// run is never sorted).
name_scan scan_name(std::string_view name, character_table& table, segmented_form<true>* folding = nullptr) {
  name_scan scan;
  run_counter canonical;
  run_counter compatibility;
  bool unknown = false;
  std::uint8_t last_class = 0; // of the character before, for the quick check's order
  for (std::size_t i = 0; i < name.size();) {
    const std::size_t start = i;
    const std::uint32_t c = next_code_point(name, i);
    if (!scan.forbidden && forbidden_character(c)) scan.forbidden = c;
    const bool hangul = c >= 0x80 && hangul_syllable(c);
    bool invisible = false;
    const character_facts* facts = c < 0x80 || hangul ? nullptr : table.get(c, invisible);
    bool in_order = true;
    if (facts == nullptr) { // ASCII, a Hangul syllable (jamo, all starters) or a plain starter
      if (invisible && !scan.invisible) scan.invisible = c;
      canonical.starter();
      compatibility.starter();
      last_class = 0;
    } else {
      if (facts->invisible && !scan.invisible) scan.invisible = c;
      const std::uint8_t combining_class = facts->combining_class;
      in_order = combining_class == 0 || last_class <= combining_class;
      last_class = combining_class;
      scan.nfc_inert = scan.nfc_inert && facts->nfc_yes && in_order;
      scan.nfkc_inert = scan.nfkc_inert && facts->nfkc_yes && in_order;
      scan.compatibility_differs = scan.compatibility_differs || facts->compatibility_differs;
      unknown = unknown || facts->unknown;
      canonical.add(facts->canonical);
      compatibility.add(facts->compatibility);
    }
    if (folding != nullptr && !compatibility.exceeded()) folding->add(start, c, facts, in_order);
  }
  scan.nfkc_inert = scan.nfkc_inert && scan.nfc_inert;
  scan.canonical_runs_exceeded = canonical.exceeded() || unknown;
  scan.compatibility_runs_exceeded = compatibility.exceeded() || unknown;
  return scan;
}

// Without flag bit 11 the bytes are CP437 to numpy, but a lenient UTF-8
// reader would take an overlong form for '.' or '/'.
[[nodiscard]] std::optional<std::size_t> overlong_lead(const unsigned char* raw, std::size_t length) noexcept {
  for (std::size_t i = 0; i < length; ++i) {
    const unsigned char b = raw[i];
    if (b == 0xC0 || b == 0xC1) return i;
    if (i + 1 < length && ((b == 0xE0 && raw[i + 1] >= 0x80 && raw[i + 1] <= 0x9F) ||
                           (b == 0xF0 && raw[i + 1] >= 0x80 && raw[i + 1] <= 0x8F))) {
      return i;
    }
  }
  return std::nullopt;
}

// '\\' separates too: the name itself holds none, and in its NFKC form one
// (from U+FF3C) is a separator to a Windows consumer.
[[nodiscard]] bool separator(char c) noexcept { return c == '/' || c == '\\'; }

// The first separator ('/' or '\\') in path[from, end), or npos: eight
// bytes at a time, so that a long component costs a word a step and a short
// one no call.
[[nodiscard]] std::size_t next_separator(std::string_view path, std::size_t from) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101u;
  constexpr std::uint64_t highs = 0x8080808080808080u;
  const auto has_zero_byte = [](std::uint64_t word) { return ((word - ones) & ~word & highs) != 0; };
  std::size_t i = from;
  for (; i + 8 <= path.size(); i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, path.data() + i, sizeof word);
    if (has_zero_byte(word ^ ('/' * ones)) || has_zero_byte(word ^ ('\\' * ones))) break;
  }
  for (; i < path.size(); ++i) {
    if (separator(path[i])) return i;
  }
  return std::string_view::npos;
}

// The first component of `path` that is empty, "." or "..", the first that
// ends in a space or a dot (Windows drops those: "dir./x.npy" is
// "dir/x.npy" there), where the last component starts, and how many
// components there are. One pass.
struct component_scan {
  std::optional<std::string_view> bad;
  std::optional<std::string_view> trailing;
  std::size_t last_begin = 0;
  std::size_t count = 0;
};

void scan_component(std::string_view component, component_scan& scan) noexcept {
  const bool dots = component.size() <= 2 && component.find_first_not_of('.') == std::string_view::npos;
  if (dots && !scan.bad) scan.bad = component; // "", "." or ".."
  const char last = component.empty() ? '/' : component.back();
  if ((last == ' ' || last == '.') && !scan.trailing) scan.trailing = component;
  ++scan.count;
}

[[nodiscard]] component_scan scan_components(std::string_view path) noexcept {
  component_scan scan;
  std::size_t begin = 0;
  for (std::size_t end = next_separator(path, 0); end != std::string_view::npos; end = next_separator(path, begin)) {
    scan_component(path.substr(begin, end - begin), scan);
    begin = end + 1;
  }
  scan_component(path.substr(begin), scan);
  scan.last_begin = begin;
  return scan;
}

// The path rules of section 6 on a name that ends in ".npy" and on its key
// (the name without it): "...npy" is the key "..", "a..npy" the key "a.".
// The key's components are the name's but for the last, so the name is
// scanned once and the key's last component on its own. A phrase for
// "the name ...", or nullopt.
std::optional<std::string> path_problem(std::string_view name, std::size_t* components = nullptr) {
  const std::string_view key = name.substr(0, name.size() - npy_suffix.size());
  if (key.empty()) return "is \".npy\" alone: its key would be empty";
  if (separator(name.front())) return "is an absolute path";
  if (name.size() >= 2 && name[1] == ':' &&
      ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'))) {
    return "starts with a drive letter";
  }
  const component_scan in_name = scan_components(name);
  // ".npy" holds no separator: the key's last component starts where the name's does.
  component_scan in_key;
  scan_component(key.substr(in_name.last_begin), in_key);
  const auto bad = [](std::string_view component, const char* whose) {
    return component.empty() ? "has an empty path component" + std::string(whose)
                             : "has a \"" + std::string(component) + "\" path component" + whose;
  };
  const auto trailing = [](std::string_view component, const char* whose) {
    return "has a path component ending in " + std::string(component.back() == ' ' ? "a space" : "a dot") + whose +
           " (Windows drops it)";
  };
  if (components != nullptr) *components = in_name.count;
  if (in_name.bad) return bad(*in_name.bad, "");
  if (in_key.bad) return bad(*in_key.bad, " in its key");
  if (in_name.trailing) return trailing(*in_name.trailing, "");
  if (in_key.trailing) return trailing(*in_key.trailing, " in its key");
  return std::nullopt;
}

// What check_name found of the last name it checked, for nfc(), which
// central.cpp calls next on the same name: the name is its own NFC form
// (`own`), or `text` is its NFC form. Kept only with the name it is for,
// compared byte for byte, so it can never answer for another name.
struct normal_form {
  std::string name;
  bool own = false;
  std::string text;
};
thread_local normal_form last_normal;

void remember(std::string_view name, bool own) {
  last_normal.name.assign(name);
  last_normal.own = own;
}

// The NFKC form of a name, the fold a consumer (or Windows' best-fit code
// pages) may apply, must not make a separator, a "..", a drive letter or a
// component end that the name does not have. Checked after the name's own
// path rules, on a non-ASCII name only (ASCII is its own NFKC form), and
// only when the scan could not show that the name is its own NFKC form (then
// the name's own path rules, already passed, are these).
std::optional<std::string> folded_path_problem(std::string_view name, std::size_t components, const name_scan& scan,
                                               segmented_form<true>& folding) {
  if (scan.nfkc_inert) return std::nullopt;
  last_normal.name.clear(); // until this name's NFC form is known
  // The canonical run bounds NFC, not NFKC: U+FF9E is a starter whose
  // compatibility decomposition is the non-starter U+3099, so U+FF9E U+0301
  // repeated is one run to NFKC's reordering.
  if (scan.compatibility_runs_exceeded) {
    return "has more than " + std::to_string(max_non_starters) +
           " non-starters in a row in its compatibility decomposition (Unicode's stream-safe limit, for NFKC)";
  }
  std::string& folded = last_normal.text;
  if (folding.finish(folded)) folded.assign(name); // not reached: the scan found a segment that fails
  // Where every compatibility decomposition is the canonical one the NFKC
  // form is the NFC form (the same composition of the same code points).
  if (!scan.compatibility_differs) remember(name, false);
  // NFKC leaves the final ".npy" alone: nothing composes with a '.'.
  if (folded.size() < npy_suffix.size() ||
      std::string_view(folded).substr(folded.size() - npy_suffix.size()) != npy_suffix) {
    return "does not end in \".npy\" in its NFKC form";
  }
  std::size_t folded_components = 0;
  if (auto why = path_problem(folded, &folded_components)) return "in its NFKC form (a look-alike fold) " + *why;
  if (folded_components != components) {
    return "gains a path separator in its NFKC form (a look-alike of '/' or '\\')";
  }
  return std::nullopt;
}

} // namespace

bool decode_name(const unsigned char* raw, std::size_t length, bool utf8_flag, std::string& decoded) {
  decoded.clear();
  if (utf8_flag) { // strict UTF-8 is its own decoding: checked, then copied whole
    for (std::size_t i = 0; i < length;) {
      if (raw[i] < 0x80) {
        ++i;
        continue;
      }
      const auto step = npyguard::detail::decode_utf8(raw + i, length - i);
      if (step.length == 0) return false;
      i += step.length;
    }
    decoded.assign(reinterpret_cast<const char*>(raw), length);
    return true;
  }
  decoded.reserve(length);
  for (std::size_t i = 0; i < length;) {
    const unsigned char b = raw[i];
    if (b < 0x80) {
      decoded.push_back(static_cast<char>(b));
      ++i;
    } else {
      npyguard::detail::append_utf8(decoded, cp437_high[b - 0x80]);
      ++i;
    }
  }
  return true;
}

namespace {

// check_name's rules; `table` and `folding` are null for an ASCII name.
std::optional<error> check_rules(const unsigned char* raw, std::size_t length, bool utf8_flag, std::string_view name,
                                 std::uint64_t at, std::string& key, character_table* table,
                                 segmented_form<true>* folding) {
  const bool ascii = table == nullptr;
  const name_scan scan = ascii ? name_scan{} : scan_name(name, *table, folding);
  if (auto why = character_problem(name, ascii, scan)) return name_error(at, std::move(*why));
  if (scan.canonical_runs_exceeded) {
    return name_error(at, "has more than " + std::to_string(max_non_starters) +
                              " non-starters in a row in its canonical decomposition (Unicode's stream-safe limit)");
  }
  if (!utf8_flag) {
    if (auto index = overlong_lead(raw, length)) {
      return name_error(at, "holds the bytes of an overlong UTF-8 form at byte " + std::to_string(*index) +
                                " (without flag bit 11 numpy reads CP437, a lenient UTF-8 reader another name)");
    }
  }
  if (name.size() < npy_suffix.size() || name.substr(name.size() - npy_suffix.size()) != npy_suffix) {
    return error{error_code::not_npy_member, at, "the name does not end in \".npy\" (every member must be an array)"};
  }
  std::size_t components = 0;
  if (auto why = path_problem(name, &components)) return name_error(at, std::move(*why));
  if (!ascii) {
    if (auto why = folded_path_problem(name, components, scan, *folding)) return name_error(at, std::move(*why));
    if (scan.nfc_inert) remember(name, true); // after the NFKC form, which may have been remembered as the NFC one
  }
  key.assign(name.substr(0, name.size() - npy_suffix.size()));
  return std::nullopt;
}

} // namespace

std::optional<error> check_name(const unsigned char* raw, std::size_t length, bool utf8_flag,
                                const std::string& decoded, std::uint64_t at, std::string& key) {
  if (is_ascii(decoded)) return check_rules(raw, length, utf8_flag, decoded, at, key, nullptr, nullptr);
  character_table& table = character_table::for_name();
  segmented_form<true> folding(decoded, table);
  return check_rules(raw, length, utf8_flag, decoded, at, key, &table, &folding);
}

std::string_view nfc(const std::string& decoded) {
  if (is_ascii(decoded)) return decoded;
  if (!last_normal.name.empty() && last_normal.name == decoded) {
    last_normal.name.clear();
    if (last_normal.own) return decoded;
    return last_normal.text;
  }
  last_normal.name.clear(); // its text is taken for this form
  if (normalize<false>(decoded, character_table::for_name(), last_normal.text)) return decoded;
  return last_normal.text;
}

std::string_view nfkc(const std::string& decoded) {
  if (is_ascii(decoded)) return decoded;
  last_normal.name.clear(); // its text is taken for this form
  if (normalize<true>(decoded, character_table::for_name(), last_normal.text)) return decoded;
  return last_normal.text;
}

// --- path_tree -------------------------------------------------------------

std::string_view path_tree::path(const node& n) const noexcept {
  return std::string_view(blocks_[static_cast<std::size_t>(n.begin >> 32)].get() + (n.begin & 0xFFFFFFFFu), n.length);
}

std::size_t path_tree::edge_start(const node& n) const noexcept {
  return n.parent == 0 ? 0 : std::size_t{nodes_[n.parent].length} + 1;
}

// SipHash of the component, then of (parent, that hash): a child's key
// cannot be predicted without the process's key, whatever its parent.
std::uint64_t path_tree::child_key(std::uint32_t parent, std::string_view component) noexcept {
  const std::uint64_t words[2] = {parent, npyguard::detail::keyed_hash(component)};
  char bytes[sizeof words];
  std::memcpy(bytes, words, sizeof words);
  return npyguard::detail::keyed_hash(std::string_view(bytes, sizeof bytes));
}

// The child of `parent` whose edge starts with the whole `component`.
std::uint32_t path_tree::find_child(std::uint32_t parent, std::string_view component, std::uint64_t key) const {
  if (slots_.empty()) return no_node;
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t slot = key & mask;; slot = (slot + 1) & mask) {
    const std::uint32_t held = slots_[slot];
    if (held == 0) return no_node;
    const node& n = nodes_[held - 1];
    if (n.key != key || n.parent != parent) continue;
    const std::string_view edge = path(n).substr(edge_start(n));
    if (edge.substr(0, component.size()) == component &&
        (edge.size() == component.size() || edge[component.size()] == '/')) {
      return held - 1;
    }
  }
}

void path_tree::index(std::uint32_t id) {
  if (nodes_.size() * 2 > slots_.size()) { // the root is never indexed: load stays below 1/2
    std::vector<std::uint32_t> slots(slots_.empty() ? 16 : slots_.size() * 2, 0);
    const std::size_t mask = slots.size() - 1;
    for (std::uint32_t held : slots_) {
      if (held == 0) continue;
      std::size_t slot = nodes_[held - 1].key & mask;
      while (slots[slot] != 0) slot = (slot + 1) & mask;
      slots[slot] = held;
    }
    slots_ = std::move(slots);
  }
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = nodes_[id].key & mask;
  while (slots_[slot] != 0) slot = (slot + 1) & mask;
  slots_[slot] = id + 1;
}

// Points the slot of `id` at `replacement`, which has the same key.
void path_tree::reindex(std::uint32_t id, std::uint32_t replacement) {
  const std::size_t mask = slots_.size() - 1;
  std::size_t slot = nodes_[id].key & mask;
  while (slots_[slot] != id + 1) slot = (slot + 1) & mask;
  slots_[slot] = replacement + 1;
}

// Blocks of 4 KiB doubling to 256 KiB (a longer name gets one of its own),
// left uninitialised: a name's bytes are copied once and never move, where
// one growing string copied them again at each doubling, into memory the
// kernel had to fault in again.
std::uint64_t path_tree::store(std::string_view name) {
  if (blocks_.empty() || block_left_ < name.size()) {
    if (blocks_.size() >= 0xFFFFFFFFu) throw std::length_error("path_tree");
    constexpr std::size_t first_block = 4096;
    constexpr std::size_t largest_block = std::size_t{256} * 1024;
    block_size_ = blocks_.empty() ? first_block : std::min(largest_block, 2 * block_size_);
    const std::size_t size = std::max(block_size_, name.size());
    blocks_.emplace_back(new char[size]);
    block_used_ = 0;
    block_left_ = size;
  }
  const std::uint64_t at = std::uint64_t{blocks_.size() - 1} << 32 | block_used_;
  std::memcpy(blocks_.back().get() + block_used_, name.data(), name.size());
  block_used_ += name.size();
  block_left_ -= name.size();
  return at;
}

std::uint32_t path_tree::add_node(const node& n) {
  if (nodes_.size() >= no_node) throw std::length_error("path_tree");
  nodes_.push_back(n);
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

std::optional<path_tree::clash> path_tree::add(std::string_view name, std::size_t member, std::string_view* stored) {
  if (nodes_.empty()) nodes_.push_back(node{});
  std::uint32_t at = 0;  // the deepest node whose path is a directory of `name`
  std::size_t start = 0; // where the rest of `name` below it starts
  for (;;) {
    const std::string_view rest = name.substr(start);
    const std::string_view component = rest.substr(0, rest.find('/'));
    const std::uint64_t key = child_key(at, component);
    const std::uint32_t child = find_child(at, component, key);
    if (child == no_node) {
      const std::uint32_t leaf =
          add_node(node{store(name), static_cast<std::uint32_t>(name.size()), at, key, member, true});
      index(leaf);
      if (stored != nullptr) *stored = path(nodes_[leaf]);
      return std::nullopt;
    }
    const node found = nodes_[child];
    const std::string_view edge = path(found).substr(edge_start(found));
    std::size_t same = component.size(); // bytes of the edge that `rest` repeats
    while (same < edge.size() && same < rest.size() && edge[same] == rest[same]) ++same;
    if (same == edge.size()) {
      if (same == rest.size())
        return clash{found.is_file ? clash_kind::same_name : clash_kind::above_earlier, found.member};
      if (rest[same] == '/') {
        if (found.is_file) return clash{clash_kind::under_earlier, found.member};
        at = child;
        start += same + 1;
        continue;
      }
    } else if (same == rest.size() && edge[same] == '/') {
      return clash{clash_kind::above_earlier, found.member};
    }
    // The paths part inside a component of the edge, which holds a '/'
    // after its first component (the first matched whole): split the edge
    // at the last '/' both share, under a new directory node.
    const std::size_t split = edge.rfind('/', same - 1);
    const std::uint32_t middle = add_node(
        node{found.begin, static_cast<std::uint32_t>(edge_start(found) + split), at, found.key, found.member, false});
    reindex(child, middle);
    const std::string_view moved = edge.substr(split + 1);
    nodes_[child].parent = middle;
    nodes_[child].key = child_key(middle, moved.substr(0, moved.find('/')));
    index(child);
    const std::string_view own = rest.substr(split + 1);
    const std::uint64_t own_key = child_key(middle, own.substr(0, own.find('/')));
    const std::uint32_t leaf =
        add_node(node{store(name), static_cast<std::uint32_t>(name.size()), middle, own_key, member, true});
    index(leaf);
    if (stored != nullptr) *stored = path(nodes_[leaf]);
    return std::nullopt;
  }
}

} // namespace npyguard::npz::detail
