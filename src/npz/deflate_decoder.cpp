#include "npz/deflate_decoder.hpp"

#include <algorithm>
#include <array>
#include <cstring>

// A dynamic header's code lengths by AVX-512 VBMI and VBMI2 where the
// processor has them (decode_singles_vbmi, walk_units_vbmi, sort_vbmi). Not
// under MemorySanitizer, which does not follow the vector instructions.
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define NPYGUARD_DEFLATE_MSAN 1
#endif
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(NPYGUARD_DEFLATE_MSAN)
#define NPYGUARD_DEFLATE_VBMI 1
// GCC 12's AVX-512 intrinsics start from _mm512_undefined_epi32(), a
// variable initialised with itself, which -Wuninitialized reports where
// they are inlined.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#define NPYGUARD_DEFLATE_VBMI 0
#endif

namespace npyguard::npz::detail {

namespace {

// A decode table entry, 32 bits:
//   bits 0-7    the bits this lookup consumes: the code's length at this
//               level (a subtable pointer: the root table's index bits)
//   bits 8-11   the extra bits that follow a length or distance code (a
//               subtable pointer: the subtable's index bits)
//   bit 12      a literal            bit 13  end of block
//   bit 14      a code zlib rejects when it is decoded (length symbols 286
//               and 287, distances 30 and 31, the unused half of a one-code
//               or empty code)
//   bit 15      a pointer to a subtable
//   bits 16-31  the literal, the base length or distance, the code length
//               (code length code), or the subtable's first index
constexpr std::uint32_t literal_flag = 1U << 12;
constexpr std::uint32_t end_of_block_flag = 1U << 13;
constexpr std::uint32_t invalid_flag = 1U << 14;
constexpr std::uint32_t subtable_flag = 1U << 15;

constexpr unsigned code_bits(std::uint32_t entry) noexcept { return entry & 0xFFU; }
constexpr unsigned extra_bits(std::uint32_t entry) noexcept { return (entry >> 8) & 0xFU; }
constexpr unsigned entry_value(std::uint32_t entry) noexcept { return entry >> 16; }
constexpr std::uint64_t low_bits(unsigned count) noexcept { return (std::uint64_t{1} << count) - 1; }

constexpr unsigned max_code_length = 15;
constexpr unsigned litlen_symbols = 288; // 286 and 287 exist in fixed blocks only
constexpr unsigned distance_symbols = 32;
constexpr unsigned precode_symbols = 19;
// The code length code's table is indexed by 7 bits, its longest code.
constexpr unsigned precode_index_bits = 7;
// Where a code length code entry holds what its symbol sets, and the code's
// length (bits 0-7 are the bits its unit takes: the code's length and, for a
// repeat, its extra bits); filling the table adds the code's length times
// precode_length_unit.
constexpr unsigned precode_symbol_at = 8;
constexpr unsigned precode_length_at = 16;
constexpr std::uint32_t precode_length_unit = 1U | 1U << precode_length_at;
// A code length code entry with this bit is a repeat (symbols 16-18); with
// this one too, a repeat of the previous length (16), else of zeros.
constexpr std::uint32_t repeat_flag = 16U << precode_symbol_at;
constexpr unsigned previous_flag_at = precode_symbol_at + 5;
constexpr std::uint32_t previous_flag = 1U << previous_flag_at;
// The bits a code length code's unit takes, as a shift count: an x86 shift
// takes its count modulo 64 (so the compiler leaves the mask out), and a
// unit takes at most 14 bits.
constexpr unsigned precode_used(std::uint32_t entry) noexcept { return entry & 63U; }
// The length a single length sets (for a repeat: its flags, shifted down).
constexpr unsigned precode_symbol(std::uint32_t entry) noexcept { return (entry >> precode_symbol_at) & 0xFFU; }
// The code's length (at most 7).
constexpr unsigned precode_length(std::uint32_t entry) noexcept { return (entry >> precode_length_at) & 0xFU; }
// The lengths a unit sets, from its entry and the bits it starts at: the
// least count and the extra bits under their mask (none for a single
// length), with no branch on the kind.
constexpr unsigned precode_count(std::uint32_t entry, std::uint64_t bits) noexcept {
  return ((entry >> 20) & 0xFU) + static_cast<unsigned>((bits >> precode_length(entry)) & (entry >> 24));
}
// A code length with its extra bits: at most 7 + 7 bits.
constexpr unsigned max_code_length_unit = 14;
// A dynamic block's units (literals, matches, the end of block) decoded a
// bit at a time before its tables are built: a block of at most this many
// builds none. Each costs about 130 instructions more than a unit decoded by
// table, and a block of one more unit pays for them and the tables (a
// maximal tree's about 2,800), so that a large number would only move the
// worst case (a block of one unit more) up.
constexpr unsigned first_units_before_tables = 4;
// A unit (a length/distance pair: 15 + 5 + 15 + 13 bits) fits in what a
// refill leaves in the bit buffer (at least 56 bits while input remains).
constexpr unsigned max_unit_bits = 48;
// The output room for copying a match in 8-byte steps (up to 7 bytes past
// its end).
constexpr std::ptrdiff_t fast_output_room = 258 + 64;
constexpr std::ptrdiff_t fast_input_room = 8;

// RFC 1951 section 3.2.5.
constexpr std::uint16_t length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                           31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr std::uint8_t length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                           2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr std::uint16_t distance_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                             33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                             1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr std::uint8_t distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
// The order in which a dynamic header lists the code length code's lengths.
constexpr std::uint8_t precode_order[precode_symbols] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                                         11, 4,  12, 3, 13, 2, 14, 1, 15};

// Bit reversal of 10-bit numbers: a root table is indexed by codewords
// bit-reversed (deflate sends codes most significant bit first), and a
// canonical code counts up in natural order.
constexpr unsigned max_root_bits = 10;
static_assert(deflate_decoder::litlen_root_bits <= max_root_bits &&
              deflate_decoder::distance_root_bits <= max_root_bits);
constexpr std::array<std::uint16_t, 1U << max_root_bits> make_reversed() noexcept {
  std::array<std::uint16_t, 1U << max_root_bits> reversed{};
  for (unsigned value = 0; value < reversed.size(); ++value) {
    unsigned result = 0;
    for (unsigned bit = 0; bit < max_root_bits; ++bit) result |= ((value >> bit) & 1U) << (max_root_bits - 1 - bit);
    reversed[value] = static_cast<std::uint16_t>(result);
  }
  return reversed;
}
constexpr std::array<std::uint16_t, 1U << max_root_bits> reversed_bits = make_reversed();

// `code`'s low `length` bits in reverse order (any length up to 15).
unsigned reverse(unsigned code, unsigned length) noexcept {
  unsigned result = 0;
  for (unsigned bit = 0; bit < length; ++bit) result |= ((code >> bit) & 1U) << (length - 1 - bit);
  return result;
}

enum class code_kind { precode, litlen, distance };

// What decoding `symbol` gives, less its code length. The code length code's
// entries differ: bits 0-7 the bits the unit takes (here a repeat's extra
// bits, to which the code's length is added), bits 8-15 the length a single
// length sets (0-15), or for a repeat repeat_flag, and previous_flag for
// symbol 16 (no other bit: the low 4 bits are a repeat's value, 0, to which
// the previous length is ORed for 16, with no branch on the symbol), bits
// 16-19 the code's length (added), bits 20-23 the least count of the lengths
// the unit sets (1 for a single length) and bits 24-31 the mask of its extra
// bits (0 for a single length): a unit of either kind is decoded the same
// way (precode_count). A repeat's whole width in one field, the low byte,
// keeps the extra bits' width off the bit buffer's dependency chain, and the
// low byte is a shift count as it is.
constexpr std::uint32_t symbol_result(code_kind kind, unsigned symbol) noexcept {
  if (kind == code_kind::precode) {
    if (symbol < 16) return 1U << 20 | symbol << precode_symbol_at;
    const unsigned extra = symbol == 16 ? 2 : symbol == 17 ? 3 : 7;
    const unsigned least = symbol == 18 ? 11 : 3;
    return ((1U << extra) - 1) << 24 | least << 20 | (symbol == 16 ? repeat_flag | previous_flag : repeat_flag) | extra;
  }
  if (kind == code_kind::distance) {
    if (symbol >= 30) return invalid_flag;
    return std::uint32_t{distance_base[symbol]} << 16 | std::uint32_t{distance_extra[symbol]} << 8;
  }
  if (symbol < 256) return literal_flag | symbol << 16;
  if (symbol == 256) return end_of_block_flag;
  if (symbol >= 286) return invalid_flag;
  return std::uint32_t{length_base[symbol - 257]} << 16 | std::uint32_t{length_extra[symbol - 257]} << 8;
}

// The same, one table per kind, so that filling a table costs no branch.
struct symbol_results {
  std::array<std::uint32_t, litlen_symbols> litlen{};
  std::array<std::uint32_t, distance_symbols> distance{};
  std::array<std::uint32_t, precode_symbols> precode{};
};
constexpr symbol_results make_symbol_results() noexcept {
  symbol_results results;
  for (unsigned symbol = 0; symbol < litlen_symbols; ++symbol) {
    results.litlen[symbol] = symbol_result(code_kind::litlen, symbol);
  }
  for (unsigned symbol = 0; symbol < distance_symbols; ++symbol) {
    results.distance[symbol] = symbol_result(code_kind::distance, symbol);
  }
  for (unsigned symbol = 0; symbol < precode_symbols; ++symbol) {
    results.precode[symbol] = symbol_result(code_kind::precode, symbol);
  }
  return results;
}
constexpr symbol_results all_results = make_symbol_results();

constexpr const std::uint32_t* results_of(code_kind kind) noexcept {
  return kind == code_kind::litlen     ? all_results.litlen.data()
         : kind == code_kind::distance ? all_results.distance.data()
                                       : all_results.precode.data();
}

// The canonical code's next codeword, bit-reversed as the table is indexed
// (deflate sends codes most significant bit first): incrementing the
// reversed number sets its highest clear bit and clears the bits above.
// `codeword` is not the last (all ones) codeword of `length` bits.
unsigned next_codeword_of(unsigned codeword, unsigned length) noexcept {
  const unsigned flipped = codeword ^ static_cast<unsigned>(low_bits(length));
  const unsigned bit = 1U << (31 - static_cast<unsigned>(__builtin_clz(flipped)));
  return (codeword & (bit - 1)) | bit;
}

// How many symbols have each code length (0 to 15).
using length_counts = std::array<unsigned, max_code_length + 1>;

// The code lengths zlib's inftrees.c accepts: neither over-subscribed nor
// incomplete, except (literal/length and distance codes) one code of one
// bit, and (code length and distance codes) no code at all.
enum class code_shape { invalid, empty, single, complete };

code_shape shape_of(code_kind kind, const unsigned* counts, unsigned longest) noexcept {
  if (longest == 0) return kind == code_kind::litlen ? code_shape::invalid : code_shape::empty;
  int left = 1; // codewords of the current length still free
  for (unsigned length = 1; length <= max_code_length; ++length) {
    left = 2 * left - static_cast<int>(counts[length]);
    if (left < 0) return code_shape::invalid; // over-subscribed
  }
  if (left == 0) return code_shape::complete;
  return kind != code_kind::precode && longest == 1 ? code_shape::single : code_shape::invalid;
}

// A code's symbols by length, as the table build takes them: those of
// length n are buckets[n * stride] onwards, counts[n] of them, in symbol
// order (RFC 1951's canonical order within a length).
struct code_symbols {
  const unsigned* counts; // max_code_length + 1 of them
  const std::uint16_t* buckets;
  std::size_t stride;

  [[nodiscard]] const std::uint16_t* of_length(unsigned length) const noexcept { return buckets + length * stride; }
};

// The root table for codes of at most `root` bits: each length's codewords
// at the table size of that length, then the table doubled, as the high
// index bits do not matter to a shorter code (libdeflate's way). The
// codeword counts up in natural order and is reversed by table, so that no
// step waits on the one before. Returns false when codes longer than the
// root remain, with the first one's length and reversed codeword.
bool fill_root(const std::uint32_t* results, const code_symbols& code, std::uint32_t* table, unsigned root,
               unsigned& next_length, unsigned& next_codeword) noexcept {
  unsigned length = 1;
  while (code.counts[length] == 0) ++length;
  std::size_t table_end = std::size_t{1} << length;
  unsigned codeword = 0; // the next codeword, most significant bit first
  for (;;) {
    const unsigned count = code.counts[length];
    const std::uint16_t* const symbols = code.of_length(length);
    const unsigned shift = max_root_bits - length;
    const std::uint16_t* at = reversed_bits.data() + (std::size_t{codeword} << shift);
    const std::size_t step = std::size_t{1} << shift;
    const std::uint32_t length_bits = length;
    const std::uint16_t* symbol = symbols;
    for (unsigned pairs = count / 2; pairs != 0; --pairs, symbol += 2, at += 2 * step) {
      const std::uint32_t one = results[symbol[0]] | length_bits;
      const std::uint32_t two = results[symbol[1]] | length_bits;
      table[at[0]] = one;
      table[at[step]] = two;
    }
    if ((count & 1) != 0) table[*at] = results[*symbol] | length_bits;
    codeword += count;
    if (codeword == table_end) { // every codeword of this length used: the code is complete
      for (; length < root; ++length, table_end *= 2) std::memcpy(table + table_end, table, table_end * 4);
      return true;
    }
    do {
      codeword <<= 1;
      if (++length <= root) {
        std::memcpy(table + table_end, table, table_end * 4);
        table_end *= 2;
      }
    } while (code.counts[length] == 0); // a longer code remains: the code is not complete yet
    if (length > root) {
      next_length = length;
      next_codeword = reverse(codeword, length);
      return false;
    }
  }
}

// Codes longer than the root: each run of codewords sharing their first
// `root` bits gets a subtable just big enough for them (libdeflate's way).
bool fill_subtables(const std::uint32_t* results, const code_symbols& code, std::uint32_t* table, std::size_t capacity,
                    unsigned root, unsigned length, unsigned codeword) noexcept {
  const unsigned root_mask = static_cast<unsigned>(low_bits(root));
  std::size_t table_end = std::size_t{1} << root;
  std::size_t subtable_start = 0;
  unsigned prefix = ~0U;
  const std::uint16_t* symbols = code.of_length(length);
  unsigned left = code.counts[length];
  for (;;) {
    if ((codeword & root_mask) != prefix) {
      prefix = codeword & root_mask;
      unsigned sub_bits = length - root;
      for (unsigned used = left; used < (1U << sub_bits);) {
        ++sub_bits;
        used = 2 * used + code.counts[root + sub_bits];
      }
      subtable_start = table_end;
      table_end += std::size_t{1} << sub_bits;
      if (table_end > capacity) return false; // not reached: capacity is zlib's proven bound
      table[prefix] = subtable_flag | static_cast<std::uint32_t>(subtable_start) << 16 | sub_bits << 8 | root;
    }
    const std::uint32_t entry = results[*symbols++] | (length - root);
    const std::size_t stride = std::size_t{1} << (length - root);
    for (std::size_t i = subtable_start + (codeword >> root); i < table_end; i += stride) table[i] = entry;
    if (codeword == low_bits(length)) return true;
    codeword = next_codeword_of(codeword, length);
    if (--left == 0) {
      while (code.counts[++length] == 0) {}
      left = code.counts[length];
      symbols = code.of_length(length);
    }
  }
}

// A counting sort of `symbols` code lengths into buckets of `stride` (the
// tables built once).
code_symbols sort_into(const std::uint8_t* lengths, unsigned symbols, std::uint16_t* buckets, std::size_t stride,
                       length_counts& counts) noexcept {
  counts.fill(0);
  for (unsigned symbol = 0; symbol < symbols; ++symbol) {
    const unsigned length = lengths[symbol];
    buckets[length * stride + counts[length]++] = static_cast<std::uint16_t>(symbol);
  }
  return {counts.data(), buckets, stride};
}

unsigned longest_of(const code_symbols& code) noexcept {
  unsigned longest = max_code_length;
  while (longest != 0 && code.counts[longest] == 0) --longest;
  return longest;
}

code_shape shape_of(code_kind kind, const code_symbols& code) noexcept {
  return shape_of(kind, code.counts, longest_of(code));
}

// Fills the decode table of a code of a shape zlib accepts from its symbols
// by length. `root` receives the root table's index bits: at most
// `max_root`, the longest code's length if shorter. False: more room needed
// than `capacity` (not reached: it is zlib's proven bound).
bool fill_table(code_kind kind, code_shape shape, const code_symbols& code, std::uint32_t* table, std::size_t capacity,
                unsigned max_root, unsigned& root) noexcept {
  switch (shape) {
    case code_shape::invalid: return false; // not reached: checked before
    case code_shape::empty:
      // zlib's table for no codes: one bit, then an error when decoded.
      root = 1;
      table[0] = table[1] = invalid_flag | 1U;
      return true;
    case code_shape::single:
      root = 1;
      table[0] = results_of(kind)[code.of_length(1)[0]] | 1U;
      table[1] = invalid_flag | 1U;
      return true;
    case code_shape::complete: break;
  }
  unsigned length = 0;
  unsigned codeword = 0;
  const std::uint32_t* results = results_of(kind);
  root = std::min(max_root, longest_of(code));
  return fill_root(results, code, table, root, length, codeword) ||
         fill_subtables(results, code, table, capacity, root, length, codeword);
}

// Builds the decode table of a code from its symbols by length, or returns
// false for a set of lengths zlib rejects.
bool build_table(code_kind kind, const code_symbols& code, std::uint32_t* table, std::size_t capacity,
                 unsigned max_root, unsigned& root) noexcept {
  const code_shape shape = shape_of(kind, code);
  return shape != code_shape::invalid && fill_table(kind, shape, code, table, capacity, max_root, root);
}

// What a complete code's table gives for `bits` (the result of the symbol,
// without the length bits), and in `length` the code's length: the
// canonical code decoded a bit at a time (RFC 1951 section 3.2.2), for a
// block's first units, before its tables are built. With the bits past the
// input's end zero, the same code as the table's lookup.
// `shortest`: the code's shortest length, whose first codeword is 0 (at
// most 8 for a complete code of at most 288 symbols).
std::uint32_t decode_canonical(code_kind kind, const code_symbols& code, unsigned shortest, std::uint64_t bits,
                               unsigned& length) noexcept {
  unsigned n = shortest;
  unsigned codeword = reversed_bits[(bits & low_bits(n)) << (max_root_bits - n)]; // most significant bit first
  bits >>= n;
  unsigned first = 0; // the first codeword of n bits
  for (;;) {
    const unsigned count = code.counts[n];
    if (codeword - first < count) { // codeword >= first: no shorter code matched
      length = n;
      return results_of(kind)[code.of_length(n)[codeword - first]];
    }
    if (n == max_code_length) break;
    first = (first + count) << 1;
    codeword = codeword << 1 | static_cast<unsigned>(bits & 1);
    bits >>= 1;
    ++n;
  }
  length = max_code_length; // not reached: every 15 bits hold a codeword of a complete code
  return invalid_flag;
}

// A table lookup; `length` receives the code's full length in bits.
inline std::uint32_t lookup(const std::uint32_t* table, unsigned root, std::uint64_t bits, unsigned& length) noexcept {
  std::uint32_t entry = table[bits & low_bits(root)];
  length = code_bits(entry);
  if ((entry & subtable_flag) != 0) {
    entry = table[entry_value(entry) + ((bits >> root) & low_bits(extra_bits(entry)))];
    length += code_bits(entry);
  }
  return entry;
}

// A block's literals several a lookup where its literal/length code has a
// literal of at most short_literal_bits: a lookup of one literal takes about
// as long whatever its code's length, so that a stream of such literals
// (8 a compressed byte for codes of one bit) would cost several times what
// ordinary data does per compressed byte. deflate_decoder::packed_ is
// indexed by the next packed_index_bits bits (with vectors;
// packed_scalar_bits without, as its build costs about a lookup an entry);
// an entry, 64 bits:
//   bits 0-3    the bits its literals take (a shift count)
//   bits 4-7    how many literals (0: none, the literal/length table then)
//   bits 8-55   the literals, the first in bits 8-15
// the literals whose codes lie one after the other whole in the index
// bits, as many as there are (at most 6). An entry stops at a code that is
// not a literal or does not fit, which the next lookup takes: two lookups
// in a row take more than the index bits, or give a length code.
constexpr unsigned packed_index_bits = 6;
constexpr unsigned packed_scalar_bits = 4;
constexpr unsigned short_literal_bits = 3;
constexpr unsigned packed_a_refill = 4;
static_assert(packed_a_refill * packed_index_bits <= 56, "a refill's entries need no check of the bit count");
constexpr std::uint64_t packed_used(std::uint64_t entry) noexcept { return entry & 15U; }
constexpr std::uint64_t packed_count(std::uint64_t entry) noexcept { return (entry >> 4) & 15U; }

// A block whose matches are short has them several a lookup too, once it
// has had a trigger's number of them the ordinary way (a lookup of a
// match's length code, then of its distance code: about 14 cycles a match
// on the bit buffer's chain, so that matches of 2 bits, a length code and a
// distance code of 1 bit each, cost 8 times what ordinary data does per
// compressed byte: 23 ns, against 4.2 where their runs are packed). The
// runs are built then, and a block just past the trigger pays for them and
// gains nothing: the trigger balances that build against the matches
// before it (inflate_bench's trigger_N, blocks of N such matches with the
// smallest header for them, the first 4 decoded before the tables). The
// build: with vectors add_runs_vbmi (6 index bits, about 140 cycles),
// without add_runs (4 index bits, about as long); the scalar build of 6
// index bits took about 550 cycles, and the trigger was 512, where the
// block just past it (trigger_518) cost 22.9 ns a compressed byte. At 16
// the worst block is trigger_20: 19.5 ns with vectors (at 8, trigger_14
// 20.0; at 32, trigger_36 20.4), 20.5 without (22.0 at 512). Blocks of
// fewer matches cost 15-17 ns, what their headers cost. An entry that ends
// in a run, bit 63 set:
//   bits 0-3    the bits the whole entry takes
//   bits 4-7    how many literals before the run (0-2)
//   bits 8-23   those literals
//   bits 24-33  the run's length
//   bits 34-49  its distance
// a run: the matches whose codes lie whole in the index bits after the
// literals, one after the other at the same distance (one match of their
// lengths together: a copy goes on as the one before left off). An entry
// of no literals may hold a second run at another distance, bit 62 set:
//   bits 8-17   the second run's length
//   bits 50-61  its distance
// (matches at distances 1 and 2 in turn: 14.9 to 10.2 ns a compressed
// byte). At most packed_index_bits / 2 matches of 258 bytes in all.
constexpr unsigned run_trigger = 16;
constexpr std::uint64_t run_never = ~std::uint64_t{0};
constexpr unsigned packed_run_literals = 2;
constexpr unsigned packed_length_at = 24;
constexpr unsigned packed_distance_at = 34;
constexpr std::uint64_t packed_run_flag = std::uint64_t{1} << 63;
constexpr std::uint64_t packed_second_flag = std::uint64_t{1} << 62;
constexpr unsigned packed_second_length_at = 8;
constexpr unsigned packed_second_distance_at = 50;
constexpr std::uint64_t packed_second_length(std::uint64_t entry) noexcept {
  return (entry >> packed_second_length_at) & 1023U;
}
constexpr std::uint64_t packed_second_distance(std::uint64_t entry) noexcept {
  return (entry >> packed_second_distance_at) & 0xFFFU;
}
constexpr std::uint64_t packed_run_length(std::uint64_t entry) noexcept { return (entry >> packed_length_at) & 1023U; }
constexpr std::uint64_t packed_run_distance(std::uint64_t entry) noexcept {
  return (entry >> packed_distance_at) & 0xFFFFU;
}
// A run's stores from where its entry starts: the literals' 8 bytes, up to
// 3 * 258 bytes of matches and 8 bytes past them.
constexpr std::ptrdiff_t packed_run_room = 1024;
static_assert(packed_run_literals + (packed_index_bits / 2) * 258 + 8 <= packed_run_room, "a run's stores fit");
// Where every entry of a refill fits whatever it holds: room for all their
// stores, and output enough that no distance reaches before it.
constexpr std::ptrdiff_t packed_open_room = packed_a_refill * packed_run_room;
constexpr std::ptrdiff_t packed_open_done = 32768;
// Whether an entry holds anything (literals or a run).
constexpr bool packed_any(std::uint64_t entry) noexcept { return (entry & (packed_run_flag | 0xF0U)) != 0; }
// Whether the fast loop takes `entry` by packed_ with `done` bytes of this
// call's output before it and `room` after: literals with room for their 8
// bytes, or runs with room for their stores and their distances within
// this call's output (the distances read only in its first 32 KiB).
inline bool packed_fits(std::uint64_t entry, std::ptrdiff_t done, std::ptrdiff_t room) noexcept {
  if ((entry & packed_run_flag) == 0) return packed_count(entry) != 0 && room >= 8;
  if (room < packed_run_room) return false;
  if (done >= packed_open_done) return true; // no distance reaches past this call's output
  return static_cast<std::ptrdiff_t>(packed_run_distance(entry)) <=
             done + static_cast<std::ptrdiff_t>(packed_count(entry)) &&
         static_cast<std::ptrdiff_t>(packed_second_distance(entry)) <=
             done + static_cast<std::ptrdiff_t>(packed_run_length(entry));
}

// One match whose codes (and extra bits) lie whole in the low `avail` bits
// of `bits`, the bits above them 0: its length, distance and the bits it
// takes; bits 0 if none.
struct short_match {
  unsigned length = 0;
  unsigned distance = 0;
  unsigned bits = 0;
};
short_match match_in(const std::uint32_t* litlen, unsigned litlen_root, const std::uint32_t* distances,
                     unsigned distance_root, std::uint64_t bits, unsigned avail) noexcept {
  const std::uint32_t entry = litlen[bits & low_bits(litlen_root)];
  if ((entry & (literal_flag | end_of_block_flag | invalid_flag | subtable_flag)) != 0) return {};
  unsigned used = code_bits(entry) + extra_bits(entry);
  if (used > avail) return {};
  const unsigned length =
      entry_value(entry) + static_cast<unsigned>((bits >> code_bits(entry)) & low_bits(extra_bits(entry)));
  bits >>= used;
  const std::uint32_t far = distances[bits & low_bits(distance_root)];
  if ((far & (invalid_flag | subtable_flag)) != 0) return {};
  used += code_bits(far) + extra_bits(far);
  if (used > avail) return {};
  return {length, entry_value(far) + static_cast<unsigned>((bits >> code_bits(far)) & low_bits(extra_bits(far))), used};
}

// Adds to packed_'s entries of at most packed_run_literals literals the run
// that follows them in their index bits, if any; whether one was added.
bool add_runs(const std::uint32_t* litlen, unsigned litlen_root, const std::uint32_t* distances, unsigned distance_root,
              unsigned index_bits, std::uint64_t* packed) noexcept {
  // The match at the start of each value of the index bits, once: a match
  // after n bits of an index is the one at the start of index >> n if it
  // takes no more than the index bits left (those above are 0 there).
  std::array<short_match, std::size_t{1} << packed_index_bits> starts;
  const unsigned size = 1U << index_bits;
  bool some = false;
  for (unsigned bits = 0; bits < size; ++bits) {
    starts[bits] = match_in(litlen, litlen_root, distances, distance_root, bits, index_bits);
    some = some || starts[bits].bits != 0;
  }
  if (!some) return false;
  const auto match_at = [&](unsigned bits, unsigned used) {
    const short_match& found = starts[bits];
    return found.bits <= index_bits - used ? found : short_match{};
  };
  // The run that `start` begins after `used` bits of `index`: its length,
  // `used` moved past it, and the match after it (bits 0 if none).
  struct run_end {
    std::uint64_t length;
    short_match next;
  };
  const auto run_from = [&](short_match start, unsigned index, unsigned& used) {
    run_end run{0, start};
    for (; run.next.bits != 0 && run.next.distance == start.distance; run.next = match_at(index >> used, used)) {
      run.length += run.next.length;
      used += run.next.bits;
    }
    return run;
  };
  bool any = false;
  for (unsigned index = 0; index < size; ++index) {
    const std::uint64_t entry = packed[index];
    if (packed_count(entry) > packed_run_literals) continue;
    auto used = static_cast<unsigned>(packed_used(entry));
    const short_match first = match_at(index >> used, used);
    if (first.bits == 0) continue;
    const run_end run = run_from(first, index, used);
    std::uint64_t second = 0;
    // (A second run's distance fits its 12 bits: with a length code and a
    // match before it in the index bits, its code and extra bits take at
    // most 5, a distance of at most 48.)
    if (packed_count(entry) == 0 && run.next.bits != 0 && run.next.distance <= 0xFFFU) {
      const run_end more = run_from(run.next, index, used);
      second = more.length << packed_second_length_at | std::uint64_t{run.next.distance} << packed_second_distance_at |
               packed_second_flag;
    }
    packed[index] = (entry & 0xFFFFF0U) | used | run.length << packed_length_at |
                    std::uint64_t{first.distance} << packed_distance_at | packed_run_flag | second;
    any = true;
  }
  return any;
}

// The length of the literal/length table's (root index bits `root`)
// shortest literal code if it is at most `shortest` bits
// (short_literal_bits at most), else 0. (Random float64 has one of 3 bits,
// 0x3F, the exponent's high byte: with vectors its blocks take packed_
// too, which costs the whole check about 0.3% more than leaving them out;
// a rule that left them out would leave out a run of one such literal
// too.)
unsigned shortest_literal(const std::uint32_t* table, unsigned root, unsigned shortest) noexcept {
  const unsigned mask = static_cast<unsigned>(low_bits(root));
  unsigned found = 0;
  for (unsigned index = 0; index < (1U << short_literal_bits); ++index) {
    const std::uint32_t entry = table[index & mask];
    if ((entry & literal_flag) != 0 && code_bits(entry) <= shortest && (found == 0 || code_bits(entry) < found)) {
      found = code_bits(entry);
    }
  }
  return found;
}

// deflate_decoder::packed_ (`index_bits` of index) from the literal/length
// table: the entries for r index bits, r = 1 to index_bits in turn, each
// from a literal that fits in r bits and the entry of the r - n bits after
// its n.
void build_packed_table(const std::uint32_t* table, unsigned root, unsigned index_bits, std::uint64_t* out) noexcept {
  // The entries of r bits from (1 << r) - 1 on, each written before it is
  // read (the one of no bits: none).
  std::array<std::uint64_t, (2U << packed_index_bits) - 1> sized; // NOLINT(cppcoreguidelines-pro-type-member-init)
  sized[0] = 0;
  const unsigned mask = static_cast<unsigned>(low_bits(root));
  for (unsigned r = 1; r <= index_bits; ++r) {
    std::uint64_t* const to = sized.data() + (1U << r) - 1;
    for (unsigned bits = 0; bits < (1U << r); ++bits) {
      const std::uint32_t entry = table[bits & mask]; // root >= r, or the code has no longer code
      const unsigned length = code_bits(entry);
      std::uint64_t packed = 0;
      if ((entry & literal_flag) != 0 && length <= r) {
        const std::uint64_t rest = sized[(1U << (r - length)) - 1 + (bits >> length)];
        packed = (rest & ~std::uint64_t{0xFF}) << 8 | std::uint64_t{entry_value(entry)} << 8 |
                 ((rest & 0xFFU) + length + 16);
      }
      to[bits] = packed;
    }
  }
  std::copy_n(sized.data() + (1U << index_bits) - 1, 1U << index_bits, out);
}

inline std::uint64_t load_le64(const unsigned char* bytes) noexcept {
  std::uint64_t word = 0;
  std::memcpy(&word, bytes, sizeof word);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  word = __builtin_bswap64(word);
#endif
  return word;
}

// Copies `length` bytes from `distance` back, byte by byte where they
// overlap (a distance shorter than the length repeats the pattern).
inline void copy_within(unsigned char* out, std::size_t distance, std::size_t length) noexcept {
  const unsigned char* from = out - distance;
  if (distance == 1) {
    std::memset(out, *from, length);
    return;
  }
  for (std::size_t i = 0; i < length; ++i) out[i] = from[i];
}

// The same for a distance of 1 to 7 where there is room for 8 bytes past
// the match (the fast loop): the pattern (the `distance` bytes before)
// repeated across 8 bytes in a register by one multiplication and stored
// at each whole number of periods (at least 5 bytes), in place of a byte
// loop whose loads wait on the store before. The pattern is read by a load
// no wider than it needs (1, 2, 4 or 8 bytes), which the one store before
// it holds whole where that was a match of up to `distance` bytes: a load
// that takes bytes from two stores in flight waits for both to reach the
// cache (match_run_10_2, 10 bytes at distance 2: 7.9 to 4.9 ns a
// compressed byte). A distance of 1 past 32 bytes is a memset (faster on
// long runs of zeros).
struct pattern_of_distance {
  std::uint64_t mask;   // the pattern's bytes
  std::uint64_t repeat; // a 1 at the start of each period
  std::uint8_t step;    // the whole periods in 8 bytes
};
constexpr std::array<pattern_of_distance, 8> patterns = [] {
  std::array<pattern_of_distance, 8> table{};
  for (unsigned distance = 1; distance < 8; ++distance) {
    table[distance].mask = low_bits(8 * distance);
    for (unsigned at = 0; at < 64; at += 8 * distance) table[distance].repeat |= std::uint64_t{1} << at;
    table[distance].step = static_cast<std::uint8_t>(distance * (8 / distance));
  }
  return table;
}();
inline void copy_pattern(unsigned char* out, std::size_t distance, std::size_t length) noexcept {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  copy_within(out, distance, length);
#else
  if (distance == 1) {
    if (length > 32) {
      std::memset(out, out[-1], length);
      return;
    }
    const std::uint64_t run = std::uint64_t{out[-1]} * patterns[1].repeat;
    for (std::size_t at = 0; at < length; at += 8) std::memcpy(out + at, &run, 8);
    return;
  }
  const pattern_of_distance& shape = patterns[distance];
  std::uint64_t source = 0;
  if (distance == 2) {
    std::uint16_t two = 0;
    std::memcpy(&two, out - 2, 2);
    source = two;
  } else if (distance <= 4) {
    std::uint32_t four = 0;
    std::memcpy(&four, out - distance, 4);
    source = four;
  } else {
    source = load_le64(out - distance);
  }
  const std::uint64_t pattern = (source & shape.mask) * shape.repeat; // no carry: no overlap
  const std::size_t step = shape.step;
  for (std::size_t at = 0; at < length; at += step) std::memcpy(out + at, &pattern, 8);
#endif
}

// A match within this call's output with room for 8 bytes past it (the
// fast loop).
inline void copy_fast(unsigned char* out, std::size_t distance, std::size_t length) noexcept {
  if (distance < 8) {
    copy_pattern(out, distance, length);
    return;
  }
  const unsigned char* from = out - distance;
  unsigned char* to = out;
  unsigned char* const end = out + length;
  do {
    std::memcpy(to, from, 8);
    to += 8;
    from += 8;
  } while (to < end);
}

// The first `filled` entries of a code length code's table copied after
// them (a shorter code's entries for the longer index).
inline void double_precode_table(std::uint32_t* table, std::size_t filled) noexcept {
  if (filled >= 4) {
    for (std::size_t at = 0; at < filled; at += 4) std::memcpy(table + filled + at, table + at, 16);
  } else {
    for (std::size_t at = 0; at < filled; ++at) table[filled + at] = table[at];
  }
}

// The code length code's table (1 << precode_index_bits entries) from its 19
// lengths (0-7), or false for lengths zlib rejects: over-subscribed or
// incomplete, except no code at all. The symbols are put in canonical order
// with the count of each length a byte of one register (a count kept in
// memory per length makes each symbol wait on the last of its length), then
// stored by length, the table doubled in between (fill_root's way, with
// copies of fixed size). `indices` receives each code's index in the table
// (its reversed codeword), `coded` how many codes there are.
bool build_precode_table(const std::uint8_t* lengths, std::uint32_t* table, std::uint8_t* indices,
                         unsigned& coded) noexcept {
  constexpr unsigned size = 1U << precode_index_bits;
  static_assert(precode_index_bits == 7, "lengths 0-7: a byte each in a 64-bit register");
  const auto byte_of = [](std::uint64_t bytes, unsigned at) {
    return static_cast<unsigned>((bytes >> (8 * at)) & 0xFFU);
  };
  std::uint64_t counts = 0; // byte n: the symbols of length n so far
  std::array<std::uint8_t, precode_symbols> rank{};
  for (unsigned symbol = 0; symbol < precode_symbols; ++symbol) {
    const unsigned length = lengths[symbol];
    rank[symbol] = static_cast<std::uint8_t>(byte_of(counts, length));
    counts += std::uint64_t{1} << (8 * length);
  }
  unsigned used = 0;        // the entries the codes take: `size` for a complete code
  std::uint64_t starts = 0; // byte n: where the symbols of length n start in canonical order
  coded = 0;
  for (unsigned length = 1; length <= precode_index_bits; ++length) {
    used += byte_of(counts, length) << (precode_index_bits - length);
    starts |= std::uint64_t{coded} << (8 * length);
    coded += byte_of(counts, length);
  }
  if (used == 0) {
    coded = 0;
    // zlib's table for no codes: one bit, then a length of 0 when decoded.
    std::fill_n(table, size, all_results.precode[0] + precode_length_unit);
    return true;
  }
  if (used != size) return false; // over-subscribed or incomplete
  starts |= coded;                // the uncoded symbols after the coded ones, never read
  std::array<std::uint8_t, std::size_t{2} * precode_symbols> order{};
  for (unsigned symbol = 0; symbol < precode_symbols; ++symbol) {
    order[byte_of(starts, lengths[symbol]) + rank[symbol]] = static_cast<std::uint8_t>(symbol);
  }
  // Each length's codewords at the table size of that length, then the
  // table doubled: what lies past a code shorter than the table is
  // overwritten by a longer one, as the code is complete.
  unsigned length = 1;
  while (byte_of(counts, length) == 0) ++length;
  std::size_t filled = std::size_t{1} << length;
  unsigned codeword = 0; // the next codeword, most significant bit first
  const std::uint8_t* symbol = order.data();
  for (;;) {
    const unsigned n = byte_of(counts, length);
    const std::uint32_t length_bits = length * precode_length_unit;
    for (unsigned i = 0; i < n; ++i, ++codeword) {
      const unsigned index = reversed_bits[codeword << (max_root_bits - length)];
      *indices++ = static_cast<std::uint8_t>(index);
      table[index] = all_results.precode[*symbol++] + length_bits;
    }
    if (length == precode_index_bits) return true;
    double_precode_table(table, filled);
    filled *= 2;
    codeword <<= 1;
    ++length;
  }
}

// Eight copies of a code length at `to` (a repeat stores eight whatever its
// count: deflate_decoder::lengths_ has room past the last length).
inline void store_length_run(std::uint8_t* to, std::uint8_t value) noexcept {
  const std::uint64_t run = value * std::uint64_t{0x0101010101010101};
  std::memcpy(to, &run, sizeof run);
}

// The eight symbol numbers from `symbol` on at `to`, four to a 64-bit word
// (no carry from one to the next: a symbol is below 288), for a repeat's
// bucket entries (a bucket has room for eight past its last symbol).
inline void store_symbol_run(std::uint16_t* to, std::size_t symbol) noexcept {
  const std::uint64_t lanes = symbol * std::uint64_t{0x0001000100010001};
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  const std::uint64_t low = lanes + 0x0000000100020003;
  const std::uint64_t high = lanes + 0x0004000500060007;
#else
  const std::uint64_t low = lanes + 0x0003000200010000;
  const std::uint64_t high = lanes + 0x0007000600050004;
#endif
  std::memcpy(to, &low, sizeof low);
  std::memcpy(to + 4, &high, sizeof high);
}

// The pair table (deflate_decoder::pairs_), indexed as the code length
// code's table is: the single length or two single lengths whose codes lie
// whole in the 7 index bits. Bits 0-5 the bits taken, bits 8-11 the first
// length, bits 12-15 the second (0 when there is none: its bucket store
// goes past the end of bucket 0, which no table reads, and counts for
// nothing), pair_second when there is a second, or pair_repeat alone when
// the first code is a repeat (decoded the other way).
constexpr std::uint32_t pair_second = 1U << 16;
constexpr std::uint32_t pair_repeat = 1U << 31;
constexpr unsigned pair_first_at = 8;
constexpr unsigned pair_second_at = 12;

// Fills the pair table from the code length code's table and its codes'
// indices in it (build_precode_table's `indices`). The entries of a first
// code of n bits are every 2^n-th from its index; the rest of their bits
// index the code length table's first 2^(7 - n) entries, whose code is the
// second where it is a single length of at most 7 - n bits. What a second
// adds to the first's entry depends on n only: one row per length, each
// entry then one addition.
[[gnu::noinline]] void build_pair_table(const std::uint32_t* precode, const std::uint8_t* at, unsigned coded,
                                        std::uint32_t* pairs) noexcept {
  constexpr unsigned half = 1U << (precode_index_bits - 1);
  // rows[room]: what the second adds where room bits are left (its bits,
  // its length, pair_second), 0 where it does not fit or is a repeat;
  // computed for the rooms the codes leave.
  std::array<std::array<std::uint32_t, half>, precode_index_bits> rows;
  unsigned rows_made = 0; // bit n: rows[n] made
  for (unsigned code = 0; code < coded; ++code) {
    const unsigned first = at[code];
    const std::uint32_t entry = precode[first];
    const unsigned length = precode_length(entry);
    const unsigned entries = (1U << precode_index_bits) >> length;
    std::uint32_t* const out = pairs + first;
    if ((entry & repeat_flag) != 0) {
      for (unsigned i = 0; i < entries; ++i) out[i << length] = pair_repeat;
      continue;
    }
    const unsigned room = precode_index_bits - length;
    std::uint32_t* const row = rows[room].data();
    if ((rows_made & (1U << room)) == 0) {
      rows_made |= 1U << room;
      for (unsigned i = 0; i < entries; ++i) { // vectorised
        const std::uint32_t second = precode[i];
        const bool fits = (second & repeat_flag) == 0 && precode_used(second) <= room;
        row[i] = fits ? precode_used(second) | (precode_symbol(second) & 15U) << pair_second_at | pair_second : 0;
      }
    }
    const std::uint32_t single = length | (precode_symbol(entry) & 15U) << pair_first_at;
    for (unsigned i = 0; i < entries; ++i) out[i << length] = single + row[i];
  }
}

// A block's first single lengths are decoded one at a time; after this many
// (and the rest of their refill) the pair table is built if they took at
// most pair_trial_bits each on average, and pairs are used for the rest of
// the block unless they stop paying: a refill's eight lookups giving fewer
// than 12 lengths, or a repeat within a refill's first 4.
constexpr int pair_trial_lengths = 16;
constexpr unsigned pair_trial_bits = 3;
// deflate_decoder::pair_countdown_: the trial's lengths to go (above 0),
// pairs in use (0), or none for the rest of the block (pairs_off).
constexpr int pairs_on = 0;
constexpr int pairs_off = -1;

// One code's lengths (the literal/length code's or the distance code's) as
// the fast loop below decodes them.
struct length_code {
  const std::uint32_t* precode; // the code length code's table
  std::uint8_t* lengths;        // every length of the header
  unsigned first;               // the code's first symbol in `lengths`
  unsigned end;                 // the code's symbols
  std::uint16_t* sorted;        // the buckets by length, and where each goes on
  std::size_t* tail;
  std::uint32_t* pairs;   // the pair table, built here
  const std::uint8_t* at; // build_pair_table's `at` and `coded`
  unsigned coded;
  int* pair_countdown;  // deflate_decoder::pair_countdown_
  unsigned* trial_bits; // the bits the block's single lengths took before the pair table
  // deflate_decoder::vector_precode_, built in place of the pair table, or
  // null where vectors are off; then also deflate_decoder::walk_precode_
  // (walk_units_vbmi) and the start of this call's input.
  std::uint8_t* vector_precode;
  std::uint8_t* walk_precode;
  const unsigned char* in_begin;
  struct walk_state* walk;
};

// Single lengths two a lookup with the pair table (a refill's eight
// lookups take at most 56 bits) while 8 input bytes remain and 16 lengths
// of the code, then one lookup a refill while 2 remain: the first length's
// bucket entry and the second's (bucket 0 for none), the second's one
// further on when both go to one bucket (so that it waits on no store of
// the first), and two lengths stored whatever the count (the lengths have
// room; a second of none stores a 0 that the next length overwrites). Stops before a repeat, and sets `countdown` to
// pairs_off where pairs do not pay: a refill's eight lookups giving fewer
// than 12 lengths, or a repeat within its first four. Returns the next
// symbol.
constexpr std::size_t pair_room = 16;
[[gnu::noinline]] std::size_t decode_pairs(const length_code& code, std::size_t symbol, const unsigned char*& in_at,
                                           const unsigned char* in_end, std::uint64_t& bit_buffer, unsigned& bit_count,
                                           int& countdown) noexcept {
  constexpr std::uint64_t index_mask = low_bits(precode_index_bits);
  const std::uint32_t* const pairs = code.pairs;
  std::uint8_t* const lengths = code.lengths + code.first;
  std::uint16_t* const sorted = code.sorted;
  std::size_t* const tail = code.tail;
  const std::size_t end = code.end;
  const unsigned char* in = in_at;
  std::uint64_t bits = bit_buffer;
  unsigned count = bit_count;
  const auto pair_unit = [&](std::uint32_t entry) {
    const unsigned first = (entry >> pair_first_at) & 15U;
    const unsigned second = (entry >> pair_second_at) & 15U;
    const std::size_t count_of_second = (entry >> 16) & 1U;
    bits >>= precode_used(entry);
    count -= precode_used(entry);
    const auto two = static_cast<std::uint16_t>(first | second << 8);
    std::memcpy(lengths + symbol, &two, sizeof two);
    const std::size_t at = tail[first];
    const std::size_t next = tail[second] + (first == second ? 1 : 0);
    sorted[at] = static_cast<std::uint16_t>(symbol);
    sorted[next] = static_cast<std::uint16_t>(symbol + 1);
    tail[first] = at + 1;
    tail[second] = next + count_of_second;
    symbol += 1 + count_of_second;
  };
  static_assert(8 * precode_index_bits <= 56 && std::size_t{16} <= pair_room, "a refill's lookups need no check");
  bool stopped = false; // at a repeat, or pairs off
  while (end - symbol >= pair_room && in_end - in >= fast_input_room) {
    bits |= load_le64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    const std::size_t group = symbol;
    unsigned lookup = 0;
#pragma GCC unroll 8
    for (; lookup < 8; ++lookup) {
      const std::uint32_t entry = pairs[bits & index_mask];
      if ((entry & pair_repeat) != 0) break;
      pair_unit(entry);
    }
    if (lookup < 8 ? lookup < 4 : symbol - group < 12) countdown = pairs_off;
    if (lookup < 8 || countdown == pairs_off) {
      stopped = true;
      break;
    }
  }
  // The code's last lengths, a lookup a refill.
  while (!stopped && end - symbol >= 2 && in_end - in >= fast_input_room) {
    bits |= load_le64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    const std::uint32_t entry = pairs[bits & index_mask];
    if ((entry & pair_repeat) != 0) break;
    pair_unit(entry);
  }
  in_at = in;
  bit_buffer = bits;
  bit_count = count;
  return symbol;
}

#if NPYGUARD_DEFLATE_VBMI

#define NPYGUARD_VBMI [[gnu::target("avx512f,avx512bw,avx512vbmi,avx512vbmi2,bmi,bmi2,popcnt")]]

// build_precode_table with the symbols of each length found at once, a mask
// of them by VPCMPEQB (in place of its counts, ranks and canonical order,
// three loops over the symbols), then taken in order from the masks: the
// same table, indices and count.
// `all`: the 19 lengths in bytes 0-18, in symbol order, zeros above.
NPYGUARD_VBMI bool build_precode_table_vbmi(__m512i all, std::uint32_t* table, std::uint8_t* indices,
                                            unsigned& coded) noexcept {
  constexpr unsigned size = 1U << precode_index_bits;
  std::array<std::uint32_t, precode_index_bits + 1> of_length{};
  unsigned used = 0; // the entries the codes take: `size` for a complete code
  coded = 0;
  for (unsigned length = 1; length <= precode_index_bits; ++length) {
    of_length[length] =
        static_cast<std::uint32_t>(_mm512_cmpeq_epi8_mask(all, _mm512_set1_epi8(static_cast<char>(length))));
    const auto n = static_cast<unsigned>(_mm_popcnt_u32(of_length[length]));
    used += n << (precode_index_bits - length);
    coded += n;
  }
  if (used == 0) {
    coded = 0;
    // zlib's table for no codes: one bit, then a length of 0 when decoded.
    std::fill_n(table, size, all_results.precode[0] + precode_length_unit);
    return true;
  }
  if (used != size) return false; // over-subscribed or incomplete
  unsigned length = 1;
  while (of_length[length] == 0) ++length;
  std::size_t filled = std::size_t{1} << length;
  unsigned codeword = 0; // the next codeword, most significant bit first
  for (;;) {
    const std::uint32_t length_bits = length * precode_length_unit;
    for (std::uint32_t symbols = of_length[length]; symbols != 0; symbols &= symbols - 1, ++codeword) {
      const unsigned index = reversed_bits[codeword << (max_root_bits - length)];
      *indices++ = static_cast<std::uint8_t>(index);
      table[index] = all_results.precode[static_cast<unsigned>(__builtin_ctz(symbols))] + length_bits;
    }
    if (length == precode_index_bits) return true;
    double_precode_table(table, filled);
    filled *= 2;
    codeword <<= 1;
    ++length;
  }
}

// The same from the lengths as read (`count` of 3 bits each, the first at
// bit 0 of `bits`), taken apart by VPMULTISHIFTQB and put in symbol order
// by VPERMB: no store of them, whose load would wait for the stores to be
// written.
NPYGUARD_VBMI bool build_precode_table_vbmi(std::uint64_t bits, unsigned count, std::uint32_t* table,
                                            std::uint8_t* indices, unsigned& coded) noexcept {
  alignas(64) static constexpr std::array<std::uint8_t, 64> field_at = [] {
    std::array<std::uint8_t, 64> at{};
    for (std::size_t i = 0; i < precode_symbols; ++i) at[i] = static_cast<std::uint8_t>(3 * i);
    return at;
  }();
  alignas(64) static constexpr std::array<std::uint8_t, 64> read_at = [] {
    std::array<std::uint8_t, 64> at{};
    for (std::size_t i = 0; i < precode_symbols; ++i) at[precode_order[i]] = static_cast<std::uint8_t>(i);
    return at;
  }();
  const __m512i fields = _mm512_and_si512(
      _mm512_multishift_epi64_epi8(_mm512_load_si512(field_at.data()), _mm512_set1_epi64(static_cast<long long>(bits))),
      _mm512_set1_epi8(7));
  const __m512i read = _mm512_maskz_mov_epi8(_bzhi_u64(~std::uint64_t{0}, count), fields);
  const __m512i all = _mm512_maskz_permutexvar_epi8(low_bits(precode_symbols), _mm512_load_si512(read_at.data()), read);
  return build_precode_table_vbmi(all, table, indices, coded);
}

NPYGUARD_VBMI bool build_precode_table_vbmi(const std::uint8_t* lengths, std::uint32_t* table, std::uint8_t* indices,
                                            unsigned& coded) noexcept {
  return build_precode_table_vbmi(_mm512_maskz_loadu_epi8(low_bits(precode_symbols), lengths), table, indices, coded);
}

// Bytes 0 to `bytes` - 1 of 64 code length code entries from `entries` on,
// byte k in byte[k]: 0 the bits the unit takes (bits 0-5), 1 the length a
// single length sets or a repeat's flags (16; 32 more for a repeat of the
// previous length), 2 the code's length and above it a repeat's least
// count, 3 the mask of its extra bits. VPERMI2B takes byte k of 32 entries
// from each pair of vectors of 16; the second 32 are blended in. In place
// of a conversion of each vector of 16 entries to 16 bytes for each table
// made from them.
template <unsigned bytes>
NPYGUARD_VBMI inline void entry_bytes(const std::uint32_t* entries, __m512i* byte) noexcept {
  static_assert(precode_symbol_at == 8 && precode_length_at == 16, "an entry's fields in bytes 1 and 2");
  alignas(64) static constexpr std::array<std::array<std::uint8_t, 64>, 4> byte_at = [] {
    std::array<std::array<std::uint8_t, 64>, 4> at{};
    for (std::size_t k = 0; k < 4; ++k) {
      for (std::size_t j = 0; j < 64; ++j) at[k][j] = static_cast<std::uint8_t>(4 * (j % 32) + k);
    }
    return at;
  }();
  constexpr __mmask64 second = 0xFFFFFFFF00000000U;
  const __m512i e0 = _mm512_loadu_si512(entries);
  const __m512i e1 = _mm512_loadu_si512(entries + 16);
  const __m512i e2 = _mm512_loadu_si512(entries + 32);
  const __m512i e3 = _mm512_loadu_si512(entries + 48);
  for (unsigned k = 0; k < bytes; ++k) {
    const __m512i index = _mm512_load_si512(byte_at[k].data());
    byte[k] = _mm512_mask_blend_epi8(second, _mm512_permutex2var_epi8(e0, index, e1),
                                     _mm512_permutex2var_epi8(e2, index, e3));
  }
}

// build_packed_table with the steps of all 64 entries at once (`steps`: at
// most packed_index_bits, the most literals an entry holds): lane k
// decodes index bits packed_lane_bits[k] (VPMULTISHIFTQB takes the bits
// from any position of them; VPERMB looks up the code starting there in the
// table's first 64 entries as bytes), each entry a byte a step (its bits
// and count, then its literals), the bytes then put side by side by three
// rounds of unpacking. The lanes are ordered so that unpacking leaves the
// entries in index order: unpacking bytes, words and double words of eight
// vectors leaves in vector o, quadword 2L + i (128-bit lane L), lane
// 16L + 2o + i, which is given the index 8o + 2L + i.
alignas(64) constexpr std::array<std::uint8_t, 64> packed_lane_bits = [] {
  std::array<std::uint8_t, 64> bits{};
  for (std::size_t lane = 0; lane < 4; ++lane) {
    for (std::size_t o = 0; o < 8; ++o) {
      for (std::size_t i = 0; i < 2; ++i) bits[16 * lane + 2 * o + i] = static_cast<std::uint8_t>(8 * o + 2 * lane + i);
    }
  }
  return bits;
}();
// The bytes 0-63, each lane's own number (a bit position, an index).
alignas(64) constexpr std::array<std::uint8_t, 64> byte_positions = [] {
  std::array<std::uint8_t, 64> iota{};
  for (std::size_t i = 0; i < 64; ++i) iota[i] = static_cast<std::uint8_t>(i);
  return iota;
}();
// The words 0-31, each 16-bit lane's own number.
alignas(64) constexpr std::array<std::uint16_t, 32> word_positions = [] {
  std::array<std::uint16_t, 32> iota{};
  for (std::size_t i = 0; i < 32; ++i) iota[i] = static_cast<std::uint16_t>(i);
  return iota;
}();
NPYGUARD_VBMI void build_packed_table_vbmi(const std::uint32_t* table, unsigned root, unsigned steps,
                                           std::uint64_t* out) noexcept {
  static_assert(packed_index_bits == 6 && literal_flag == 1U << 12, "64 entries; a literal's flag in byte 1");
  // Bytes 0-2 of the entries of index bits 0-63: the table's first 64, or
  // with a root of fewer bits, its 2^root repeated (byte k of entry i & mask
  // from the first 32 by VPERMI2B).
  __m512i byte[3]; // NOLINT(modernize-avoid-c-arrays): std::array drops the vector's alignment attribute
  if (root >= packed_index_bits) {
    entry_bytes<3>(table, byte);
  } else {
    const __m512i entry = _mm512_slli_epi16(
        _mm512_and_si512(_mm512_load_si512(byte_positions.data()), _mm512_set1_epi8(static_cast<char>(low_bits(root)))),
        2); // no carry: below 64
    const __m512i low = _mm512_loadu_si512(table);
    const __m512i high = _mm512_loadu_si512(table + 16);
    for (unsigned k = 0; k < 3; ++k) {
      byte[k] = _mm512_permutex2var_epi8(low, _mm512_add_epi8(entry, _mm512_set1_epi8(static_cast<char>(k))), high);
    }
  }
  // A literal's code length (above 6 for a longer literal), 15 for any other code.
  const __m512i code_length =
      _mm512_mask_blend_epi8(_mm512_test_epi8_mask(byte[1], _mm512_set1_epi8(0x10)), _mm512_set1_epi8(15), byte[0]);
  const __m512i value = byte[2];
  alignas(64) static constexpr std::array<std::uint8_t, 64> byte_bits = [] {
    std::array<std::uint8_t, 64> at{};
    for (std::size_t i = 0; i < 64; ++i) at[i] = static_cast<std::uint8_t>(8 * (i % 8));
    return at;
  }();
  const __m512i lanes = _mm512_load_si512(packed_lane_bits.data());
  const __m512i bit_of_byte = _mm512_load_si512(byte_bits.data());
  const __m512i width = _mm512_set1_epi8(static_cast<char>(packed_index_bits));
  // `at`: the bits the lane's codes take so far, on past the index bits
  // once a code does not fit (each code takes at least one bit, so it stays
  // past them): only `at` waits on the step before, the rest is off the
  // chain.
  __m512i at = _mm512_setzero_si512();
  __m512i used = _mm512_setzero_si512();
  __m512i count = _mm512_setzero_si512();
  __m512i plane[8]; // NOLINT(modernize-avoid-c-arrays): as above
  for (unsigned step = 0; step < steps; ++step) {
    // The bits from `at` on (those above the index bits are not its: a
    // code that fits lies whole below them, and one that does not is
    // longer whatever they are).
    const __m512i next = _mm512_multishift_epi64_epi8(_mm512_add_epi8(bit_of_byte, at), lanes);
    at = _mm512_add_epi8(at, _mm512_permutexvar_epi8(next, code_length)); // at most 6 + 6 * 15
    const __mmask64 fits = _mm512_cmple_epu8_mask(at, width);
    plane[step + 1] = _mm512_maskz_permutexvar_epi8(fits, next, value);
    used = _mm512_mask_mov_epi8(used, fits, at);
    count = _mm512_mask_add_epi8(count, fits, count, _mm512_set1_epi8(1));
  }
  plane[0] = _mm512_or_si512(used, _mm512_slli_epi16(count, 4)); // no carry: both below 16
  for (unsigned step = steps; step < packed_index_bits + 1; ++step) plane[step + 1] = _mm512_setzero_si512();
  __m512i word[8]; // NOLINT(modernize-avoid-c-arrays): as above
  for (std::size_t i = 0; i < 4; ++i) {
    word[2 * i] = _mm512_unpacklo_epi8(plane[2 * i], plane[2 * i + 1]);
    word[2 * i + 1] = _mm512_unpackhi_epi8(plane[2 * i], plane[2 * i + 1]);
  }
  __m512i dword[8]; // NOLINT(modernize-avoid-c-arrays): as above
  for (std::size_t half = 0; half < 2; ++half) {
    const std::size_t first = 4 * half;
    dword[first] = _mm512_unpacklo_epi16(word[first], word[first + 2]);
    dword[first + 1] = _mm512_unpackhi_epi16(word[first], word[first + 2]);
    dword[first + 2] = _mm512_unpacklo_epi16(word[first + 1], word[first + 3]);
    dword[first + 3] = _mm512_unpackhi_epi16(word[first + 1], word[first + 3]);
  }
  for (std::size_t i = 0; i < 4; ++i) {
    _mm512_store_si512(out + 16 * i, _mm512_unpacklo_epi32(dword[i], dword[i + 4]));
    _mm512_store_si512(out + 16 * i + 8, _mm512_unpackhi_epi32(dword[i], dword[i + 4]));
  }
}

// The low halves and the values of a table's first 64 entries.
NPYGUARD_VBMI inline void entry_halves(const std::uint32_t* table, __m512i* low, __m512i* value) noexcept {
  const __m512i even = _mm512_slli_epi16(_mm512_load_si512(word_positions.data()), 1);
  const __m512i odd = _mm512_add_epi16(even, _mm512_set1_epi16(1));
  for (std::size_t k = 0; k < 2; ++k) {
    const __m512i first = _mm512_loadu_si512(table + 32 * k);
    const __m512i second = _mm512_loadu_si512(table + 32 * k + 16);
    low[k] = _mm512_permutex2var_epi16(first, even, second);
    value[k] = _mm512_permutex2var_epi16(first, odd, second);
  }
}
// Lane i of a 64-lane table of 16-bit values (two vectors) at index[i] (0-63).
NPYGUARD_VBMI inline __m512i at_index(const __m512i* table, __m512i index) noexcept {
  return _mm512_permutex2var_epi16(table[0], index, table[1]);
}
// A code's bits and the value of its extra bits: from the low half of its
// entry and the bits it starts at.
struct vector_code {
  __m512i used;
  __m512i extra_value;
};
NPYGUARD_VBMI inline vector_code code_of(__m512i low, __m512i bits) noexcept {
  const __m512i one = _mm512_set1_epi16(1);
  const __m512i code = _mm512_and_si512(low, _mm512_set1_epi16(0xFF));
  const __m512i extra = _mm512_and_si512(_mm512_srli_epi16(low, 8), _mm512_set1_epi16(0xF));
  const __m512i value =
      _mm512_and_si512(_mm512_srlv_epi16(bits, code), _mm512_sub_epi16(_mm512_sllv_epi16(one, extra), one));
  return {_mm512_add_epi16(code, extra), value};
}
// Indices that interleave two vectors of `lanes` lanes by halves: lane 2i
// of half h takes lane (lanes / 2) h + i of the first, lane 2i + 1 the
// same lane of the second (VPERMI2W for 16-bit lanes, VPERMI2D for 32-bit).
template <typename lane_type, std::size_t lanes>
constexpr std::array<std::array<lane_type, lanes>, 2> interleaved() noexcept {
  std::array<std::array<lane_type, lanes>, 2> at{};
  for (std::size_t half = 0; half < 2; ++half) {
    for (std::size_t lane = 0; lane < lanes; ++lane) {
      at[half][lane] = static_cast<lane_type>(lanes / 2 * half + lane / 2 + lanes * (lane % 2));
    }
  }
  return at;
}
alignas(64) constexpr std::array<std::array<std::uint16_t, 32>, 2> interleaved_words = interleaved<std::uint16_t, 32>();
alignas(64) constexpr std::array<std::array<std::uint32_t, 16>, 2> interleaved_dwords =
    interleaved<std::uint32_t, 16>();
// Bits 0-15 of 32 packed_ entries.
NPYGUARD_VBMI inline __m512i entry_heads(const std::uint64_t* entries) noexcept {
  const __m256i first =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi64_epi16(_mm512_load_si512(entries))),
                              _mm512_cvtepi64_epi16(_mm512_load_si512(entries + 8)), 1);
  const __m256i second =
      _mm256_inserti128_si256(_mm256_castsi128_si256(_mm512_cvtepi64_epi16(_mm512_load_si512(entries + 16))),
                              _mm512_cvtepi64_epi16(_mm512_load_si512(entries + 24)), 1);
  return _mm512_inserti64x4(_mm512_castsi256_si512(first), second, 1);
}
// add_runs with vectors, for packed_index_bits of index: the same entries
// at a fraction of the cost, so that a block pays for them after fewer
// matches. Lanes are 16 bits, 32 indices a vector; each table's first 64
// entries are split into their low halves (code bits, extra bits, flags)
// and their values, two vectors each, so that the entry of any index 0-63
// is one VPERMI2W. First each index value's match (starts: its length, and
// its bits with its distance above them), then every entry's runs at once
// in three steps (a match takes at least 2 of the 6 bits). Returns false,
// packed untouched, where no match fits; else builds packed's literal
// entries first unless `literals_built`.
NPYGUARD_VBMI bool add_runs_vbmi(const std::uint32_t* litlen, unsigned litlen_root, const std::uint32_t* distances,
                                 unsigned distance_root, bool literals_built, std::uint64_t* packed) noexcept {
  static_assert(packed_index_bits == 6 && packed_run_literals == 2, "64 entries, at most three matches");
  static_assert((literal_flag | end_of_block_flag | invalid_flag | subtable_flag) == 0xF000U, "flags in bits 12-15");
  __m512i litlen_low[2];   // NOLINT(modernize-avoid-c-arrays): std::array drops the vector's alignment attribute
  __m512i litlen_value[2]; // NOLINT(modernize-avoid-c-arrays): as above
  __m512i far_low[2];      // NOLINT(modernize-avoid-c-arrays): as above
  __m512i far_value[2];    // NOLINT(modernize-avoid-c-arrays): as above
  entry_halves(litlen, litlen_low, litlen_value);
  entry_halves(distances, far_low, far_value);
  const __m512i iota = _mm512_load_si512(word_positions.data());
  const __m512i width = _mm512_set1_epi16(static_cast<short>(packed_index_bits));
  const __m512i litlen_mask = _mm512_set1_epi16(static_cast<short>(low_bits(std::min(litlen_root, packed_index_bits))));
  const __m512i far_mask = _mm512_set1_epi16(static_cast<short>(low_bits(std::min(distance_root, packed_index_bits))));
  // starts: lane v, the match at the start of index value v that takes
  // at most the index bits: its length, and its bits | its distance << 3
  // (at most 64: its code and extra bits take at most 5); 0 if none.
  __m512i start_length[2]; // NOLINT(modernize-avoid-c-arrays): as above
  __m512i start_bits[2];   // NOLINT(modernize-avoid-c-arrays): as above
  __mmask32 some = 0;
  for (std::size_t k = 0; k < 2; ++k) {
    const __m512i bits = _mm512_add_epi16(iota, _mm512_set1_epi16(static_cast<short>(32 * k)));
    const __m512i entry_at = _mm512_and_si512(bits, litlen_mask);
    const __m512i entry = at_index(litlen_low, entry_at);
    const vector_code length = code_of(entry, bits);
    const __m512i rest = _mm512_srlv_epi16(bits, length.used);
    const __m512i far = at_index(far_low, _mm512_and_si512(rest, far_mask));
    const vector_code distance = code_of(far, rest);
    const __m512i used = _mm512_add_epi16(length.used, distance.used);
    const __mmask32 fits =
        _mm512_cmple_epu16_mask(used, width) &
        ~_mm512_test_epi16_mask(entry, _mm512_set1_epi16(static_cast<short>(0xF000))) &
        ~_mm512_test_epi16_mask(far, _mm512_set1_epi16(static_cast<short>(invalid_flag | subtable_flag)));
    start_length[k] = _mm512_maskz_add_epi16(fits, at_index(litlen_value, entry_at), length.extra_value);
    const __m512i value = _mm512_add_epi16(at_index(far_value, _mm512_and_si512(rest, far_mask)), distance.extra_value);
    start_bits[k] = _mm512_maskz_mov_epi16(fits, _mm512_or_si512(used, _mm512_slli_epi16(value, 3)));
    some |= fits;
  }
  if (some == 0) return false;
  if (!literals_built) build_packed_table_vbmi(litlen, litlen_root, packed_index_bits, packed);
  const __m512i nibble = _mm512_set1_epi16(0xF);
  const __m512i seven = _mm512_set1_epi16(7);
  for (std::size_t k = 0; k < 2; ++k) {
    std::uint64_t* const entries = packed + 32 * k;
    const __m512i index = _mm512_add_epi16(iota, _mm512_set1_epi16(static_cast<short>(32 * k)));
    const __m512i head = entry_heads(entries);
    const __m512i count = _mm512_and_si512(_mm512_srli_epi16(head, 4), nibble);
    __m512i used = _mm512_and_si512(head, nibble);
    const __mmask32 open = _mm512_cmple_epu16_mask(count, _mm512_set1_epi16(packed_run_literals));
    const __mmask32 no_literals = _mm512_testn_epi16_mask(count, count);
    // The match after `used` bits of each index, if it fits in the rest.
    __m512i length = _mm512_setzero_si512();
    __m512i distance = _mm512_setzero_si512();
    __m512i second_length = _mm512_setzero_si512();
    __m512i second_distance = _mm512_setzero_si512();
    __mmask32 in_first = open;
    __mmask32 in_second = 0;
    __mmask32 first = 0;
    __mmask32 seconds = 0;
    for (unsigned step = 0; step < packed_index_bits / 2; ++step) {
      const __m512i at = _mm512_srlv_epi16(index, used);
      const __m512i match_bits = at_index(start_bits, at);
      const __m512i match_used = _mm512_and_si512(match_bits, seven);
      const __m512i match_distance = _mm512_srli_epi16(match_bits, 3);
      const __m512i match_length = at_index(start_length, at);
      const __mmask32 fits = _mm512_test_epi16_mask(match_used, match_used) &
                             _mm512_cmple_epu16_mask(_mm512_add_epi16(used, match_used), width);
      __mmask32 more_first = 0;
      __mmask32 start_second = 0;
      if (step == 0) {
        more_first = in_first & fits;
        first = more_first;
        distance = match_distance;
      } else {
        const __mmask32 same = _mm512_cmpeq_epi16_mask(match_distance, distance);
        more_first = in_first & fits & same;
        start_second = in_first & fits & ~same & no_literals;
      }
      const __mmask32 more_second = in_second & fits & _mm512_cmpeq_epi16_mask(match_distance, second_distance);
      length = _mm512_mask_add_epi16(length, more_first, length, match_length);
      second_distance = _mm512_mask_mov_epi16(second_distance, start_second, match_distance);
      second_length = _mm512_mask_add_epi16(second_length, start_second | more_second, second_length, match_length);
      used = _mm512_mask_add_epi16(used, more_first | start_second | more_second, used, match_used);
      in_first = more_first;
      in_second = start_second | more_second;
      seconds |= start_second;
    }
    if (first == 0) continue;
    // The 16-bit pieces of each entry (bits 0-15, 16-31, 32-47, 48-63):
    // its bits | the second run's length << 8 (its literals' count and
    // literals are put back from the entry), the second run's length above
    // 8 bits | the run's length << 8, the rest of the run's length | its
    // distance << 2, the second run's distance << 2 and the flags; side by
    // side as the halves of 32-bit lanes, then those as the halves of
    // 64-bit lanes.
    const __m512i piece0 = _mm512_or_si512(used, _mm512_slli_epi16(second_length, 8));
    const __m512i piece1 = _mm512_or_si512(_mm512_srli_epi16(second_length, 8), _mm512_slli_epi16(length, 8));
    const __m512i piece2 = _mm512_or_si512(_mm512_srli_epi16(length, 8), _mm512_slli_epi16(distance, 2));
    const __m512i piece3 = _mm512_mask_blend_epi16(
        seconds, _mm512_set1_epi16(static_cast<short>(packed_run_flag >> 48)),
        _mm512_or_si512(_mm512_set1_epi16(static_cast<short>((packed_run_flag | packed_second_flag) >> 48)),
                        _mm512_slli_epi16(second_distance, 2)));
    for (std::size_t half = 0; half < 2; ++half) {
      const __m512i words = _mm512_load_si512(interleaved_words[half].data());
      const __m512i low = _mm512_permutex2var_epi16(piece0, words, piece1);
      const __m512i high = _mm512_permutex2var_epi16(piece2, words, piece3);
      for (std::size_t quarter = 0; quarter < 2; ++quarter) {
        const std::size_t group = 2 * half + quarter;
        const __m512i runs =
            _mm512_permutex2var_epi32(low, _mm512_load_si512(interleaved_dwords[quarter].data()), high);
        const __m512i entry = _mm512_load_si512(entries + 8 * group);
        _mm512_mask_storeu_epi64(entries + 8 * group, static_cast<__mmask8>(first >> (8 * group)),
                                 _mm512_or_si512(runs, _mm512_and_si512(entry, _mm512_set1_epi64(0xFFFFF0))));
      }
    }
  }
  return true;
}

// deflate_decoder::vector_precode_ from the code length code's table: bytes
// 0-127 the bits a single length's unit takes (its code's length, 1-7), or
// 64 and more for a repeat; bytes 128-255 the length it sets.
NPYGUARD_VBMI void build_vector_precode(const std::uint32_t* precode, std::uint8_t* out) noexcept {
  static_assert(repeat_flag == 1U << 12, "a repeat's flag, bit 4 of byte 1, moves to bit 6");
  for (std::size_t half = 0; half < 2; ++half) {
    __m512i byte[2]; // NOLINT(modernize-avoid-c-arrays): std::array drops the vector's alignment attribute
    entry_bytes<2>(precode + 64 * half, byte);
    const __m512i repeat = _mm512_slli_epi16(_mm512_and_si512(byte[1], _mm512_set1_epi8(16)), 2); // no carry
    const __m512i used = _mm512_or_si512(_mm512_and_si512(byte[0], _mm512_set1_epi8(63)), repeat);
    _mm512_storeu_si512(out + 64 * half, used);
    _mm512_storeu_si512(out + 128 + 64 * half, _mm512_and_si512(byte[1], _mm512_set1_epi8(15)));
  }
}

// The chain of codes through the bit positions of a refill, from `next`
// (each position's next code's position, a code whole where that is at
// most `count`): `code_at`, the k-th code's position in lane k, by doubling
// (the lanes from 2^s on from those below by the jump of 2^s codes; past
// beyond the last whole code), and `exit`, the end of the last whole code,
// found apart by squaring a map in which a position without a whole code
// stays where it is (six squarings take 64 steps): the next refill waits
// on that alone. The codes are the lanes whose position is below the exit.
struct code_chain {
  __m512i code_at;
  unsigned exit;
};
NPYGUARD_VBMI inline code_chain follow_codes(__m512i iota, __m512i next, unsigned count) noexcept {
  const __m512i past = _mm512_set1_epi8(64);
  const __mmask64 whole = _mm512_cmple_epu8_mask(next, _mm512_set1_epi8(static_cast<char>(count)));
  code_chain chain{};
  __m512i stay = _mm512_mask_blend_epi8(whole, iota, next);
  for (unsigned s = 0; s < 6; ++s) stay = _mm512_permutexvar_epi8(stay, stay);
  chain.exit = static_cast<unsigned>(_mm_cvtsi128_si32(_mm512_castsi512_si128(stay))) & 0xFFU;
  __m512i jump = _mm512_mask_blend_epi8(whole, past, next); // one code on
  __m512i code_at = _mm512_setzero_si512();
  for (unsigned s = 0; s < 6; ++s) {
    const auto step = static_cast<char>(1U << s);
    const __m512i back = _mm512_permutexvar_epi8(_mm512_sub_epi8(iota, _mm512_set1_epi8(step)), code_at);
    code_at =
        _mm512_mask_blend_epi8(~std::uint64_t{0} << (1U << s), code_at, _mm512_permutex2var_epi8(jump, back, past));
    if (s < 5) jump = _mm512_permutex2var_epi8(jump, jump, past); // 2^(s+1) codes on
  }
  chain.code_at = code_at;
  return chain;
}

// Single lengths up to 63 a refill, each step of the chain (a code's
// position, its length, the next position) done for every bit position at
// once: the 7 index bits at each of the 64 positions of the bit buffer
// (VPMULTISHIFTQB), each looked up in the byte tables (VPERMI2B), so that
// every position has the next code's position; the positions of the first,
// second, ... 63rd code from the start follow by doubling (the position 2^k
// codes on from every position, composed with itself, six times), a code
// counting where it lies whole in the bits the refill holds. The lengths
// are stored at once (the buckets are made at the header's end, sort_vbmi).
// Stops before a repeat; sets `countdown` to pairs_off where a refill gives fewer than
// vector_lengths_paying lengths (at a repeat, or codes too long), as
// decode_pairs does. Returns the next symbol.
constexpr std::size_t vector_lengths_paying = 12;
[[gnu::noinline]] NPYGUARD_VBMI std::size_t decode_singles_vbmi(const length_code& code, std::size_t symbol,
                                                                const unsigned char*& in_at,
                                                                const unsigned char* in_end, std::uint64_t& bit_buffer,
                                                                unsigned& bit_count, int& countdown) noexcept {
  const std::uint8_t* const table = code.vector_precode;
  const __m512i used_low = _mm512_loadu_si512(table);
  const __m512i used_high = _mm512_loadu_si512(table + 64);
  const __m512i value_low = _mm512_loadu_si512(table + 128);
  const __m512i value_high = _mm512_loadu_si512(table + 192);
  const __m512i iota = _mm512_load_si512(byte_positions.data());
  const __m512i index_mask = _mm512_set1_epi8(0x7F);
  std::uint8_t* const lengths = code.lengths + code.first;
  const std::size_t end = code.end;
  const unsigned char* in = in_at;
  std::uint64_t bits = bit_buffer;
  unsigned count = bit_count;
  while (symbol < end && in_end - in >= fast_input_room) {
    bits |= load_le64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    // At each bit position p: the 7 bits from p (rotated past 63: a code
    // there counts only where its own bits lie below `count`), the bits a
    // single length there takes, and the next code's position, or `past`
    // where no code lies whole below `count` (or a repeat).
    const __m512i index = _mm512_and_si512(
        _mm512_multishift_epi64_epi8(iota, _mm512_set1_epi64(static_cast<long long>(bits))), index_mask);
    const __m512i next = _mm512_add_epi8(iota, _mm512_permutex2var_epi8(used_low, index, used_high));
    const code_chain chain = follow_codes(iota, next, count);
    const __m512i code_at = chain.code_at;
    // The codes: the lanes whose code starts before the exit (a prefix).
    const std::size_t found =
        _tzcnt_u64(~_mm512_cmplt_epu8_mask(code_at, _mm512_set1_epi8(static_cast<char>(chain.exit))));
    // The code ending first (the loop's last refill) takes the bits up to
    // the first code past it; otherwise the bits up to the exit, which the
    // next refill waits on alone.
    const std::size_t taken = std::min(found, end - symbol);
    if (taken == found) {
      bits >>= chain.exit;
      count -= chain.exit;
    } else {
      alignas(64) std::array<std::uint8_t, 64> at{};
      _mm512_store_si512(at.data(), code_at);
      bits >>= at[taken];
      count -= at[taken];
    }
    const __mmask64 lanes = _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(taken));
    const __m512i value = _mm512_permutexvar_epi8(code_at, _mm512_permutex2var_epi8(value_low, index, value_high));
    _mm512_mask_storeu_epi8(lengths + symbol, lanes, value);
    symbol += taken;
    if (symbol == end) break;
    if (taken < vector_lengths_paying) {
      countdown = pairs_off;
      break;
    }
    // A repeat next, with its index bits all here: back to the scalar loop.
    if (count >= precode_index_bits && (code.precode[bits & low_bits(precode_index_bits)] & repeat_flag) != 0) break;
  }
  in_at = in;
  bit_buffer = bits;
  bit_count = count;
  return symbol;
}

// deflate_decoder::walk_precode_ from the code length code's table, four
// tables of 128 bytes indexed as it is: the bits a unit takes (its code and
// extra bits) and its code's length (bits 4-6); the length a single length
// sets, 0 for a repeat of zeros, walk_previous for a repeat of the previous
// length; the least count of lengths a unit sets; the mask of its extra
// bits.
constexpr unsigned walk_previous = 32;
static_assert(walk_previous > 15 && (walk_previous & (walk_previous - 1)) == 0 && walk_previous < 64);
// Eight copies of each code length, as a unit stores them.
alignas(64) constexpr std::array<std::uint64_t, 16> length_runs = [] {
  std::array<std::uint64_t, 16> runs{};
  for (std::uint64_t value = 0; value < 16; ++value) runs[value] = value * 0x0101010101010101U;
  return runs;
}();
NPYGUARD_VBMI void build_walk_precode(const std::uint32_t* precode, std::uint8_t* out) noexcept {
  static_assert(precode_length_at == 16 && previous_flag == 1U << 13 && walk_previous == 32,
                "a repeat of the previous length's flag is walk_previous in byte 1");
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  for (std::size_t half = 0; half < 2; ++half) {
    __m512i byte[4]; // NOLINT(modernize-avoid-c-arrays): std::array drops the vector's alignment attribute
    entry_bytes<4>(precode + 64 * half, byte);
    const __m512i used = _mm512_and_si512(byte[0], _mm512_set1_epi8(63));
    const __m512i code_length = _mm512_and_si512(byte[2], low4);
    const __m512i bits = _mm512_or_si512(used, _mm512_slli_epi16(code_length, 4)); // no carry: below 16
    const __m512i value = _mm512_and_si512(byte[1], _mm512_set1_epi8(0x2F));
    const __m512i least = _mm512_and_si512(_mm512_srli_epi16(byte[2], 4), low4);
    std::uint8_t* const to = out + 64 * half;
    _mm512_storeu_si512(to, bits);
    _mm512_storeu_si512(to + 128, value);
    _mm512_storeu_si512(to + 256, least);
    _mm512_storeu_si512(to + 384, byte[3]);
  }
}

// Units of either kind, singles and repeats mixed, with the chain of their
// positions cut short. The bit stream is taken in windows of 64 bit
// positions, 8 input bytes apart and each worked out whole by vector
// instructions, off the chain: at each position the unit that would start
// there (the 7 index bits by VPMULTISHIFTQB, looked up by VPERMI2B), the
// bits it takes, the lengths it sets and their value; then how far two
// units and four units on go, by looking the first jump up at its end
// (VPERMI2B across the window and the next). The units themselves are then
// a chain of one load for every four (the jump of four), each unit two
// loads and a store of eight lengths off the chain. The lengths past a
// unit's eighth are zeros already (a count above 8 is a repeat of zeros:
// the header's lengths are cleared when it starts), and the value of a
// repeat of the previous length is the last unit's, kept in a register.
//
// With vectors the header's lengths are one code here (`end` its last
// symbol: the buckets are made at its end, sort_vbmi). Starts at `symbol`
// (at least 1 into the header, so that there is a previous length) and
// stops: at a unit that would go past the header's end (its end itself, or
// a repeat too long, left to the careful way: walk_stop::unit), after two
// groups of four single lengths in a row (the singles' way is cheaper for a
// run of them: walk_stop::singles), or where the windows would read past
// the input (walk_stop::input: the scalar loop goes on), as it does at once
// unless 8 input bytes remain and the bit buffer's bits all come from this
// call's input, which is read again from memory.
enum class walk_stop : std::uint8_t { unit, singles, input };
struct walk_result {
  std::size_t symbol;
  walk_stop stop;
};
// What the walks of one header in one decode() call have worked out:
// where position 0 is, and at each position of the last 8 windows (a ring
// of 512 positions) the lengths its unit sets, their value and the jumps of
// one, two and four units. Made for the call, so that a walk that stops at
// a run of single lengths and starts again at the next repeat reuses it.
struct walk_state {
  static constexpr unsigned ring = 512;
  bool tables = false;                 // deflate_decoder::walk_precode_ made for this header
  const unsigned char* base = nullptr; // position 0's byte, once a walk has started
  unsigned made = 0;                   // the windows worked out
  unsigned readable = 0;               // the windows the input holds (16 bytes from 8 * w)
  alignas(64) std::array<std::uint8_t, ring> count;
  alignas(64) std::array<std::uint8_t, ring> value_of;
  alignas(64) std::array<std::uint8_t, ring> jump1;
  alignas(64) std::array<std::uint8_t, ring> jump2;
  alignas(64) std::array<std::uint8_t, ring> jump4;
};

// Works the next window out (state.made), and the jumps of two of the one
// before and of four of the one before that, which need it.
NPYGUARD_VBMI void make_window(walk_state& state, const std::uint8_t* table) noexcept {
  constexpr unsigned ring = walk_state::ring;
  // Qword i of a window: its 8 bytes from byte i (bit positions 8i on), so
  // that byte j of qword i (control j) is bit position 8i + j's.
  alignas(64) static constexpr std::array<std::uint8_t, 64> slides = [] {
    std::array<std::uint8_t, 64> c{};
    for (std::size_t i = 0; i < 64; ++i) c[i] = static_cast<std::uint8_t>(i / 8 + i % 8);
    return c;
  }();
  alignas(64) static constexpr std::array<std::uint8_t, 64> controls = [] {
    std::array<std::uint8_t, 64> c{};
    for (std::size_t i = 0; i < 64; ++i) c[i] = static_cast<std::uint8_t>(i % 8);
    return c;
  }();
  const unsigned w = state.made++;
  const __m512i control = _mm512_load_si512(controls.data());
  const __m512i low4 = _mm512_set1_epi8(0x0F);
  const __m512i bytes =
      _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(state.base + std::size_t{8} * w)));
  const __m512i source = _mm512_permutexvar_epi8(_mm512_load_si512(slides.data()), bytes);
  const __m512i index = _mm512_and_si512(_mm512_multishift_epi64_epi8(control, source), _mm512_set1_epi8(0x7F));
  const __m512i taken = _mm512_permutex2var_epi8(_mm512_loadu_si512(table), index, _mm512_loadu_si512(table + 64));
  const __m512i used = _mm512_and_si512(taken, low4);
  const __m512i code_length = _mm512_and_si512(_mm512_srli_epi16(taken, 4), low4);
  const __m512i extra = _mm512_and_si512(
      _mm512_multishift_epi64_epi8(_mm512_add_epi8(control, code_length), source),
      _mm512_permutex2var_epi8(_mm512_loadu_si512(table + 384), index, _mm512_loadu_si512(table + 448)));
  const __m512i least =
      _mm512_permutex2var_epi8(_mm512_loadu_si512(table + 256), index, _mm512_loadu_si512(table + 320));
  const __m512i value =
      _mm512_permutex2var_epi8(_mm512_loadu_si512(table + 128), index, _mm512_loadu_si512(table + 192));
  const unsigned at = (64 * w) % ring;
  _mm512_store_si512(state.count.data() + at, _mm512_add_epi8(least, extra));
  _mm512_store_si512(state.value_of.data() + at, value);
  _mm512_store_si512(state.jump1.data() + at, used);
  if (w == 0) return;
  // Window w - 1's jump of two: its jump of one, and the unit's there.
  const __m512i iota = _mm512_load_si512(byte_positions.data());
  const unsigned before = (at + ring - 64) % ring;
  const __m512i used_before = _mm512_load_si512(state.jump1.data() + before);
  const __m512i two =
      _mm512_add_epi8(used_before, _mm512_permutex2var_epi8(used_before, _mm512_add_epi8(iota, used_before), used));
  _mm512_store_si512(state.jump2.data() + before, two);
  if (w == 1) return;
  const unsigned before_that = (at + ring - 128) % ring;
  const __m512i two_before = _mm512_load_si512(state.jump2.data() + before_that);
  const __m512i four =
      _mm512_add_epi8(two_before, _mm512_permutex2var_epi8(two_before, _mm512_add_epi8(iota, two_before), two));
  _mm512_store_si512(state.jump4.data() + before_that, four);
}

// How far ahead of the walk the windows are worked out: the jump of four is
// known up to window made - 3, and the walk stays two windows behind that,
// as a byte loaded soon after the vector store that holds it waits for the
// store to be written.
constexpr unsigned walk_lead = 4;

NPYGUARD_VBMI walk_result walk_units_vbmi(walk_state& state, const std::uint32_t* precode, std::uint8_t* table,
                                          std::uint8_t* lengths, std::size_t symbol, std::size_t end,
                                          const unsigned char* in_begin, const unsigned char*& in_at,
                                          const unsigned char* in_end, std::uint64_t& bit_buffer,
                                          unsigned& bit_count) noexcept {
  constexpr unsigned ring = walk_state::ring;
  const unsigned char* const in = in_at;
  // The bit buffer is set again from memory at the end: 8 bytes from the
  // byte the position is in, at most `in`.
  if (in_end - in < fast_input_room) return {symbol, walk_stop::input};
  if (!state.tables) { // the header's first walk (a header of single lengths needs none)
    build_walk_precode(precode, table);
    state.tables = true;
  }
  // The lengths from here on cleared, so that a unit's lengths past its
  // eighth are zeros already (the ways before may have stored past their
  // last length; `end` + 8 is at most the header's 316 + 8).
  for (std::size_t at = symbol; at < end + 8; at += 64) {
    const auto left = static_cast<unsigned>(std::min<std::size_t>(64, end + 8 - at));
    _mm512_mask_storeu_epi8(lengths + at, _bzhi_u64(~std::uint64_t{0}, left), _mm512_setzero_si512());
  }
  if (state.base == nullptr) {
    const std::size_t held = (bit_count + 7) >> 3; // the bytes the bit buffer's bits come from
    if (static_cast<std::size_t>(in - in_begin) < held) return {symbol, walk_stop::input};
    const std::ptrdiff_t bytes = in_end - (in - held);
    if (bytes < 16 + 8 * static_cast<std::ptrdiff_t>(walk_lead)) return {symbol, walk_stop::input};
    state.base = in - held;
    state.readable = static_cast<unsigned>((bytes - 16) / 8 + 1);
    state.made = 0;
  }
  unsigned position = static_cast<unsigned>(8 * (in - state.base)) - bit_count;
  walk_stop stop = walk_stop::input;
  unsigned singles = 0; // groups of four single lengths in a row
  unsigned previous = lengths[symbol - 1];
  const auto unit = [&](unsigned at) {
    const unsigned n = state.count[at % ring];
    const unsigned raw = state.value_of[at % ring];
    if (n > end - symbol) return false;
    // A mask, not a condition: the compiler would branch on it.
    const unsigned of_previous = 0U - (raw / walk_previous);
    const unsigned value = (raw & 15U) | (previous & of_previous);
    std::memcpy(lengths + symbol, &length_runs[value], sizeof(std::uint64_t));
    previous = value;
    symbol += n;
    return true;
  };
  for (;;) {
    while (state.made < walk_lead || position >= 64 * (state.made - (walk_lead - 1))) {
      if (state.made == state.readable) goto done;
      make_window(state, table);
    }
    {
      const unsigned first = position;
      const unsigned third = first + state.jump2[first % ring];
      const std::array<unsigned, 4> at{first, first + state.jump1[first % ring], third,
                                       third + state.jump1[third % ring]};
      const std::size_t group = symbol;
      std::size_t k = 0;
#pragma GCC unroll 4
      for (; k < 4; ++k) {
        if (!unit(at[k])) break;
      }
      if (k < 4) {
        position = at[k];
        stop = walk_stop::unit;
        break;
      }
      position = first + state.jump4[first % ring];
      singles = symbol - group == 4 ? singles + 1 : 0;
      if (singles == 2) {
        stop = walk_stop::singles;
        break;
      }
    }
  }
done:
  // The bit buffer from `position` on.
  const unsigned char* const at = state.base + (position >> 3);
  bit_buffer = load_le64(at) >> (position & 7);
  bit_count = 56 - (position & 7);
  in_at = at + 7;
  return {symbol, stop};
}

// The counting sort of the table build, for a code whose lengths were read
// without it: each length's symbols, in symbol order, compressed into its
// bucket from 64 lengths at a time (VPCOMPRESSW), for the lengths 1-15 the
// code has (a bit set per length, from 16-bit lanes). `counts` receives
// each length's count (0 for length 0: bucket 0 is not read).
NPYGUARD_VBMI void sort_vbmi(const std::uint8_t* lengths, unsigned symbols, std::uint16_t* buckets, std::size_t stride,
                             length_counts& counts) noexcept {
  constexpr unsigned most = 320; // at least litlen_symbols, a multiple of 64
  constexpr unsigned vectors = most / 64;
  __m512i length_bytes[vectors]; // NOLINT(modernize-avoid-c-arrays): std::array drops the vector's alignment attribute
  for (__m512i& v : length_bytes) v = _mm512_setzero_si512();
  const unsigned used_vectors = (symbols + 63) / 64;
  __m512i present = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi16(1);
  for (unsigned v = 0; v < used_vectors; ++v) {
    const unsigned left = symbols - 64 * v;
    const __mmask64 lanes = left >= 64 ? ~std::uint64_t{0} : _bzhi_u64(~std::uint64_t{0}, left);
    length_bytes[v] = _mm512_maskz_loadu_epi8(lanes, lengths + std::size_t{64} * v);
    present =
        _mm512_or_si512(present, _mm512_sllv_epi16(one, _mm512_cvtepu8_epi16(_mm512_castsi512_si256(length_bytes[v]))));
    present = _mm512_or_si512(
        present, _mm512_sllv_epi16(one, _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(length_bytes[v], 1))));
  }
  // The OR of the 32 lanes.
  __m256i half = _mm256_or_si256(_mm512_castsi512_si256(present), _mm512_extracti64x4_epi64(present, 1));
  __m128i quarter = _mm_or_si128(_mm256_castsi256_si128(half), _mm256_extracti128_si256(half, 1));
  quarter = _mm_or_si128(quarter, _mm_srli_si128(quarter, 8));
  quarter = _mm_or_si128(quarter, _mm_srli_si128(quarter, 4));
  quarter = _mm_or_si128(quarter, _mm_srli_si128(quarter, 2));
  unsigned lengths_present = static_cast<unsigned>(_mm_cvtsi128_si32(quarter)) & 0xFFFEU;
  counts.fill(0);
  const __m512i iota = _mm512_load_si512(word_positions.data());
  while (lengths_present != 0) {
    const unsigned length = static_cast<unsigned>(__builtin_ctz(lengths_present));
    lengths_present &= lengths_present - 1;
    const __m512i wanted = _mm512_set1_epi8(static_cast<char>(length));
    std::uint16_t* to = buckets + length * stride;
    std::uint16_t* const from = to;
    for (unsigned v = 0; v < used_vectors; ++v) {
      const __mmask64 of_length = _mm512_cmpeq_epi8_mask(length_bytes[v], wanted);
      if (of_length == 0) continue; // most of them in a code of a few symbols
      const auto low = static_cast<__mmask32>(of_length);
      const auto high = static_cast<__mmask32>(of_length >> 32);
      const __m512i first = _mm512_add_epi16(iota, _mm512_set1_epi16(static_cast<short>(64 * v)));
      const __m512i second = _mm512_add_epi16(first, _mm512_set1_epi16(32));
      const auto low_count = static_cast<unsigned>(_mm_popcnt_u32(low));
      const auto high_count = static_cast<unsigned>(_mm_popcnt_u32(high));
      _mm512_mask_storeu_epi16(to, _bzhi_u32(~0U, low_count), _mm512_maskz_compress_epi16(low, first));
      to += low_count;
      _mm512_mask_storeu_epi16(to, _bzhi_u32(~0U, high_count), _mm512_maskz_compress_epi16(high, second));
      to += high_count;
    }
    counts[length] = static_cast<unsigned>(to - from);
  }
}

#undef NPYGUARD_VBMI

#else

// Without the instructions vector_lengths_supported() is false, so
// length_code::vector_precode is null and these are not called.
enum class walk_stop : std::uint8_t { unit, singles, input };
struct walk_result {
  std::size_t symbol;
  walk_stop stop;
};
bool build_precode_table_vbmi(const std::uint8_t* /*lengths*/, std::uint32_t* /*table*/, std::uint8_t* /*indices*/,
                              unsigned& /*coded*/) noexcept {
  return false;
}
bool build_precode_table_vbmi(std::uint64_t /*bits*/, unsigned /*count*/, std::uint32_t* /*table*/,
                              std::uint8_t* /*indices*/, unsigned& /*coded*/) noexcept {
  return false;
}
void build_walk_precode(const std::uint32_t* /*precode*/, std::uint8_t* /*out*/) noexcept {}
void build_packed_table_vbmi(const std::uint32_t* /*table*/, unsigned /*root*/, unsigned /*steps*/,
                             std::uint64_t* /*out*/) noexcept {}
bool add_runs_vbmi(const std::uint32_t* /*litlen*/, unsigned /*litlen_root*/, const std::uint32_t* /*distances*/,
                   unsigned /*distance_root*/, bool /*literals_built*/, std::uint64_t* /*packed*/) noexcept {
  return false;
}
struct walk_state {};
walk_result walk_units_vbmi(walk_state& /*state*/, const std::uint32_t* /*precode*/, std::uint8_t* /*table*/,
                            std::uint8_t* /*lengths*/, std::size_t symbol, std::size_t /*end*/,
                            const unsigned char* /*in_begin*/, const unsigned char*& /*in_at*/,
                            const unsigned char* /*in_end*/, std::uint64_t& /*bit_buffer*/,
                            unsigned& /*bit_count*/) noexcept {
  return {symbol, walk_stop::input};
}
void sort_vbmi(const std::uint8_t* /*lengths*/, unsigned /*symbols*/, std::uint16_t* /*buckets*/,
               std::size_t /*stride*/, length_counts& /*counts*/) noexcept {}
void build_vector_precode(const std::uint32_t* /*precode*/, std::uint8_t* /*out*/) noexcept {}
std::size_t decode_singles_vbmi(const length_code& /*code*/, std::size_t symbol, const unsigned char*& /*in_at*/,
                                const unsigned char* /*in_end*/, std::uint64_t& /*bit_buffer*/, unsigned& /*bit_count*/,
                                int& countdown) noexcept {
  countdown = pairs_off;
  return symbol;
}

#endif

// The code lengths while 8 input bytes remain: up to eight single lengths a
// refill with no check of the bit count (a refill leaves at least 56 bits, a
// code length takes at most 7); from a repeat on (up to 14 bits), four units
// of either kind a refill, until four single lengths come together, or with
// vectors (`buckets` false) the walk of walk_units_vbmi first. With
// `buckets` each symbol is put in the bucket of its length as it comes;
// without, the buckets are made at the header's end (sort_vbmi) and the
// header's lengths are one code. Returns the next symbol (of the code) to
// decode. Stops at a unit to decode the careful way: one whose bits
// may not all be there once fewer than 8 input bytes remain, one past the
// code's end (into the next code or past the last), or a repeat before the
// header's first length.
template <bool buckets>
[[gnu::noinline]] unsigned decode_lengths_fast(const length_code& code, std::size_t symbol, const unsigned char*& in_at,
                                               const unsigned char* in_end, std::uint64_t& bit_buffer,
                                               unsigned& bit_count) noexcept {
  constexpr std::uint64_t index_mask = low_bits(precode_index_bits);
  const std::uint32_t* const precode = code.precode;
  std::uint8_t* const lengths = code.lengths + code.first;
  std::uint16_t* const sorted = code.sorted;
  std::size_t* const tail = code.tail;
  const std::size_t end = code.end;
  const unsigned char* in = in_at;
  std::uint64_t bits = bit_buffer;
  unsigned count = bit_count;
  // One code length (not a repeat), or false.
  const auto length_unit = [&]() {
    const std::uint32_t entry = precode[bits & index_mask];
    if ((entry & repeat_flag) != 0) return false;
    const unsigned value = precode_symbol(entry);
    bits >>= precode_used(entry);
    count -= precode_used(entry);
    lengths[symbol] = static_cast<std::uint8_t>(value);
    if constexpr (buckets) {
      const std::size_t at = tail[value];
      sorted[at] = static_cast<std::uint16_t>(symbol);
      tail[value] = at + 1;
    }
    ++symbol;
    return true;
  };
  int countdown = *code.pair_countdown;
  unsigned trial_bits = *code.trial_bits;
  while (symbol < end && in_end - in >= fast_input_room) {
    if (countdown == pairs_on && end - symbol >= 2) {
      symbol = code.vector_precode != nullptr ? decode_singles_vbmi(code, symbol, in, in_end, bits, count, countdown)
                                              : decode_pairs(code, symbol, in, in_end, bits, count, countdown);
      // At a repeat, near the code's end or the input's, or pairs off.
      if (in_end - in < fast_input_room) break;
    }
    bits |= load_le64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    const unsigned bits_before = count;
    const std::size_t units = std::min<std::size_t>(8, end - symbol);
    std::size_t unit = 0;
    if (units == 8) {
      while (unit < 8 && length_unit()) ++unit; // unrolled
    } else {
      while (unit < units && length_unit()) ++unit;
    }
    if (countdown > 0) { // the block's trial of single lengths
      countdown -= static_cast<int>(unit);
      trial_bits += bits_before - count;
      if (countdown <= 0) {
        countdown = trial_bits <= pair_trial_bits * pair_trial_lengths ? pairs_on : pairs_off;
        if (countdown == pairs_on && code.vector_precode != nullptr) {
          build_vector_precode(precode, code.vector_precode);
        } else if (countdown == pairs_on) {
          build_pair_table(precode, code.at, code.coded, code.pairs);
        }
      }
    }
    if (unit == units) continue;
    // A repeat: from here units of either kind, four a refill (a unit takes
    // at most 14 bits of the 56 a refill leaves), each with no branch on its
    // kind or count, until a refill's four are all single lengths; then the
    // loop above again, cheaper for single lengths. A branch on the kind
    // would be taken at random where singles and repeats are mixed at
    // random, and leaving and entering a loop for each repeat costs about
    // as much again.
    //
    // Each unit stores eight lengths (and with `buckets` eight bucket
    // entries) whatever its count (1; 3 to 6; or for zeros 3 to 138: the rest of a longer run of
    // zeros is set apart). The lengths and each bucket have room for them
    // past their last symbol, and a store past the count is overwritten by
    // the next unit or lies beyond the bucket's count, never read. Zeros go
    // in bucket 0 too, which no table reads: its entries are at most the
    // code's zero lengths.
    //
    // The last length, kept in a register from one unit to the next. At the
    // header's first length there is none: a repeat of zeros is decoded
    // here (a header whose lowest literals do not occur starts with one), a
    // repeat of the previous length is left to the careful way (an error).
    if (code.first + symbol == 0) {
      const std::uint32_t entry = precode[bits & index_mask];
      const unsigned repeat = precode_count(entry, bits);
      if ((entry & previous_flag) != 0) break;
      // At most 138 zeros, within the literal/length code's 257 lengths or
      // more; unit == 0, so the refill's bits are all there.
      std::memset(lengths, 0, repeat);
      symbol = repeat;
      bits >>= precode_used(entry);
      count -= precode_used(entry);
      continue;
    }
    if constexpr (!buckets) {
      const walk_result walked = walk_units_vbmi(*code.walk, code.precode, code.walk_precode, lengths, symbol, end,
                                                 code.in_begin, in, in_end, bits, count);
      symbol = walked.symbol;
      if (walked.stop == walk_stop::unit) break;
      if (walked.stop == walk_stop::singles) continue;
    }
    unsigned previous = lengths[static_cast<std::ptrdiff_t>(symbol) - 1];
    bool careful = false;
    const auto any_unit = [&]() {
      const std::uint32_t entry = precode[bits & index_mask];
      const unsigned used = precode_used(entry);
      const unsigned repeat = precode_count(entry, bits);
      // A mask, not a condition: the compiler would branch on it.
      const unsigned of_previous = 0U - ((entry >> previous_flag_at) & 1U);
      const unsigned value = (precode_symbol(entry) & 15U) | (previous & of_previous);
      if (repeat > end - symbol) return false;
      store_length_run(lengths + symbol, static_cast<std::uint8_t>(value));
      if constexpr (buckets) {
        const std::size_t at = tail[value];
        store_symbol_run(sorted + at, symbol);
        tail[value] = at + repeat;
      }
      if (repeat > 8) std::memset(lengths + symbol + 8, 0, repeat - 8);
      previous = value;
      symbol += repeat;
      bits >>= used;
      count -= used;
      return true;
    };
    constexpr unsigned mixed_units = 4;
    static_assert(mixed_units * max_code_length_unit <= 56, "a refill's units need no check of the bit count");
    while (in_end - in >= fast_input_room) {
      bits |= load_le64(in) << count;
      in += (63 - count) >> 3;
      count |= 56;
      const std::size_t group = symbol;
      for (unsigned i = 0; i < mixed_units; ++i) { // unrolled
        if (!any_unit()) {
          careful = true;
          break;
        }
      }
      // Four single lengths set four lengths, and any repeat at least 3.
      if (careful || symbol - group == mixed_units) break;
    }
    if (careful) break;
  }
  *code.pair_countdown = countdown;
  *code.trial_bits = trial_bits;
  in_at = in;
  bit_buffer = bits;
  bit_count = count;
  return static_cast<unsigned>(symbol);
}

} // namespace

enum class deflate_decoder::step : std::uint8_t {
  next,        // go on: a unit decoded, or the state changed
  need_input,  // the input ran out inside a unit (all of it taken)
  output_full, // a unit has output to write and no room
  ended,       // the final block ended
  corrupt,     // a data error
};

// The pointers and bit buffer of one decode() call. Bits are taken from the
// least significant end. Invariant: bits above `count` are the stream's next
// bits or zero, and zero once the input is used up.
struct deflate_decoder::cursor {
  const unsigned char* in_begin;
  const unsigned char* in;
  const unsigned char* in_end;
  unsigned char* out_begin;
  unsigned char* out;
  unsigned char* out_end;
  std::uint64_t bits;
  unsigned count;

  [[nodiscard]] std::size_t room() const noexcept { return static_cast<std::size_t>(out_end - out); }
  [[nodiscard]] std::size_t written() const noexcept { return static_cast<std::size_t>(out - out_begin); }

  // At least 56 bits, or every input byte when fewer remain. With 8 bytes to
  // hand one load does it, counting the whole bytes it brought in; the bits
  // of the next byte it also brought are that byte's, so a later load ORs
  // the same bits.
  void refill() noexcept {
    if (in_end - in >= fast_input_room) {
      refill_wide();
      return;
    }
    while (count < 56 && in != in_end) {
      bits |= std::uint64_t{*in++} << count;
      count += 8;
    }
  }

  // The same with 8 bytes to hand.
  void refill_wide() noexcept {
    bits |= load_le64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
  }

  void drop(unsigned n) noexcept {
    bits >>= n;
    count -= n;
  }

  // Hands back the whole bytes in the buffer, as zlib holds at most the
  // rest of the byte it is in once it stops with input left. (They are
  // always this call's bytes: a unit cut short holds fewer bits than it
  // needs, so it consumes them all when decoded again.)
  void give_back() noexcept {
    const auto whole = std::min<std::size_t>(count >> 3, static_cast<std::size_t>(in - in_begin));
    in -= whole;
    count -= static_cast<unsigned>(8 * whole);
    bits &= low_bits(count);
  }
};

bool deflate_decoder::vector_lengths_supported() noexcept {
#if NPYGUARD_DEFLATE_VBMI
  static const bool supported = [] {
    __builtin_cpu_init(); // in case the first call comes from a static initialiser
    return __builtin_cpu_supports("avx512f") != 0 && __builtin_cpu_supports("avx512bw") != 0 &&
           __builtin_cpu_supports("avx512vbmi") != 0 && __builtin_cpu_supports("avx512vbmi2") != 0 &&
           __builtin_cpu_supports("bmi2") != 0 && __builtin_cpu_supports("popcnt") != 0;
  }();
  return supported;
#else
  return false;
#endif
}

deflate_decoder::deflate_decoder() noexcept : vector_lengths_(vector_lengths_supported()) {
  std::array<std::uint8_t, litlen_symbols> lengths{};
  std::fill(lengths.begin(), lengths.begin() + 144, std::uint8_t{8});
  std::fill(lengths.begin() + 144, lengths.begin() + 256, std::uint8_t{9});
  std::fill(lengths.begin() + 256, lengths.begin() + 280, std::uint8_t{7});
  std::fill(lengths.begin() + 280, lengths.end(), std::uint8_t{8});
  length_counts counts;
  const code_symbols litlen = sort_into(lengths.data(), litlen_symbols, sorted_.data(), litlen_bucket, counts);
  build_table(code_kind::litlen, litlen, fixed_litlen_.data(), fixed_litlen_.size(), litlen_root_bits,
              fixed_litlen_root_);
  std::fill(lengths.begin(), lengths.begin() + distance_symbols, std::uint8_t{5});
  const code_symbols distance =
      sort_into(lengths.data(), distance_symbols, sorted_.data() + distance_buckets_at, distance_bucket, counts);
  build_table(code_kind::distance, distance, fixed_distance_.data(), fixed_distance_.size(), distance_root_bits,
              fixed_distance_root_);
}

void deflate_decoder::reset() noexcept {
  state_ = state::block_header;
  final_block_ = false;
  bit_buffer_ = 0;
  bit_count_ = 0;
  stored_left_ = 0;
  pending_length_ = 0;
  pending_distance_ = 0;
  history_end_ = 0;
  total_out_ = 0;
}

deflate_decoder::progress deflate_decoder::decode(const unsigned char* in, std::size_t in_size, unsigned char* out,
                                                  std::size_t out_size) noexcept {
  static const unsigned char no_input = 0;
  static unsigned char no_output = 0;
  if (in == nullptr) in = &no_input, in_size = 0;
  if (out == nullptr) out = &no_output, out_size = 0;
  cursor c{in, in, in + in_size, out, out, out + out_size, bit_buffer_, bit_count_};
  const step stop = run(c);
  if (stop != step::need_input) c.give_back();
  bit_buffer_ = c.bits;
  bit_count_ = c.count;
  keep_history(out, c.written());
  total_out_ += c.written();
  const outcome result = stop == step::ended     ? outcome::ended
                         : stop == step::corrupt ? outcome::corrupt
                                                 : outcome::more;
  return {result, static_cast<std::size_t>(c.in - in), c.written()};
}

deflate_decoder::step deflate_decoder::run(cursor& c) noexcept {
  for (;;) {
    step result = step::next;
    switch (state_) {
      case state::block_header: result = read_block_header(c); break;
      case state::stored_header: result = read_stored_header(c); break;
      case state::stored_copy: result = copy_stored(c); break;
      case state::precode_lengths: result = read_precode_lengths(c); break;
      case state::code_lengths: result = read_code_lengths(c); break;
      case state::first_codes: result = decode_first_codes(c); break;
      case state::codes: result = decode_codes(c); break;
      case state::ended: return step::ended;
      case state::failed: return step::corrupt;
    }
    if (result == step::corrupt) state_ = state::failed;
    if (result != step::next) return result;
  }
}

// BFINAL and BTYPE; for a dynamic block also HLIT, HDIST and HCLEN, which
// zlib reads as one 14-bit field before checking them.
deflate_decoder::step deflate_decoder::read_block_header(cursor& c) noexcept {
  c.refill();
  if (c.count < 3) return step::need_input;
  const auto type = static_cast<unsigned>((c.bits >> 1) & 3);
  if (type == 3) return step::corrupt;
  if (type == 2) {
    if (c.count < 17) return step::need_input;
    litlen_count_ = static_cast<unsigned>((c.bits >> 3) & 31) + 257;
    distance_count_ = static_cast<unsigned>((c.bits >> 8) & 31) + 1;
    precode_count_ = static_cast<unsigned>((c.bits >> 13) & 15) + 4;
    if (litlen_count_ > 286 || distance_count_ > 30) return step::corrupt;
    final_block_ = (c.bits & 1) != 0;
    c.drop(17);
    lengths_read_ = 0;
    state_ = state::precode_lengths;
    return step::next;
  }
  final_block_ = (c.bits & 1) != 0;
  c.drop(3);
  if (type == 0) {
    state_ = state::stored_header;
    return step::next;
  }
  litlen_table_ = fixed_litlen_.data();
  litlen_root_ = fixed_litlen_root_;
  packed_on_ = false;         // no literal code shorter than 8 bits
  run_countdown_ = run_never; // no match shorter than 8 bits
  distance_table_ = fixed_distance_.data();
  distance_root_ = fixed_distance_root_;
  state_ = state::codes;
  return step::next;
}

// A stored block: to the next byte boundary, then LEN and its complement.
deflate_decoder::step deflate_decoder::read_stored_header(cursor& c) noexcept {
  c.refill();
  const unsigned skip = c.count & 7; // the rest of the byte the block header ended in
  if (c.count < skip + 32) return step::need_input;
  const auto fields = static_cast<std::uint32_t>(c.bits >> skip);
  const std::uint32_t length = fields & 0xFFFFU;
  if (length != (~fields >> 16 & 0xFFFFU)) return step::corrupt;
  c.drop(skip + 32);
  stored_left_ = length;
  state_ = state::stored_copy;
  return step::next;
}

// A stored block's bytes: those already in the bit buffer (whole bytes, as
// the block is byte-aligned), then straight from the input.
deflate_decoder::step deflate_decoder::copy_stored(cursor& c) noexcept {
  while (stored_left_ != 0) {
    if (c.out == c.out_end) return step::output_full;
    if (c.count >= 8) {
      *c.out++ = static_cast<unsigned char>(c.bits);
      c.drop(8);
      --stored_left_;
      continue;
    }
    c.bits = 0; // drop what a wide load brought in beyond the buffer: it is read now
    if (c.in == c.in_end) return step::need_input;
    const std::size_t n = std::min({std::size_t{stored_left_}, c.room(), static_cast<std::size_t>(c.in_end - c.in)});
    std::memcpy(c.out, c.in, n);
    c.out += n;
    c.in += n;
    stored_left_ -= static_cast<unsigned>(n);
  }
  return end_block();
}

// The code length code's 3-bit lengths, as many at a time as the bit
// buffer holds.
deflate_decoder::step deflate_decoder::read_precode_lengths(cursor& c) noexcept {
  unsigned read = lengths_read_;
  const unsigned total = precode_count_;
  if (vector_lengths_ && read == 0) { // all of them at once where the bit buffer holds them
    if (c.count < 3 * total) c.refill();
    if (c.count >= 3 * total) {
      if (!build_precode_table_vbmi(c.bits, total, precode_.data(), precode_at_.data(), precode_coded_)) {
        return step::corrupt;
      }
      c.drop(3 * total);
      return precode_built();
    }
  }
  while (read < total) {
    if (c.count < 3) {
      c.refill();
      if (c.count < 3) {
        lengths_read_ = read;
        return step::need_input;
      }
    }
    const unsigned n = std::min(total - read, c.count / 3);
    std::uint64_t bits = c.bits;
    for (unsigned i = read; i < read + n; ++i, bits >>= 3) {
      precode_lengths_[precode_order[i]] = static_cast<std::uint8_t>(bits & 7);
    }
    c.bits = bits;
    c.count -= 3 * n;
    read += n;
  }
  for (unsigned i = precode_count_; i < precode_symbols; ++i) precode_lengths_[precode_order[i]] = 0;
  if (!(vector_lengths_
            ? build_precode_table_vbmi(precode_lengths_.data(), precode_.data(), precode_at_.data(), precode_coded_)
            : build_precode_table(precode_lengths_.data(), precode_.data(), precode_at_.data(), precode_coded_))) {
    return step::corrupt;
  }
  return precode_built();
}

// The header's code lengths next, the code length code's table built.
deflate_decoder::step deflate_decoder::precode_built() noexcept {
  pair_countdown_ = precode_coded_ == 0 ? pairs_off : pair_trial_lengths;
  pair_trial_bits_ = 0;
  lengths_read_ = 0;
  state_ = state::code_lengths;
  if (vector_lengths_) return step::next; // the buckets are made at the header's end
  static constexpr auto empty_buckets = [] {
    std::array<std::array<std::size_t, 16>, 2> tails{};
    for (std::size_t length = 0; length < 16; ++length) {
      tails[0][length] = length * litlen_bucket;
      tails[1][length] = distance_buckets_at + length * distance_bucket;
    }
    return tails;
  }();
  tails_ = empty_buckets;
  return step::next;
}

// The literal/length and distance code lengths, each symbol put in the
// bucket of its length as it comes (the counting sort of the table build).
// While 8 input bytes remain, up to eight units a refill (decode_lengths_fast);
// one unit at a time, with every bit checked, near the input's end, and for
// a repeat that crosses from the literal/length code to the distance code
// or that zlib rejects. A repeat is checked as zlib does, after its extra
// bits.
deflate_decoder::step deflate_decoder::read_code_lengths(cursor& c) noexcept {
  // decode_lengths_fast's eight stores of a unit (of at least one length)
  // stay within the lengths and the bucket they go to.
  static_assert(std::tuple_size<decltype(lengths_)>::value >= 286 + 30 - 1 + run_room);
  static_assert(litlen_bucket >= 286 - 1 + run_room && distance_bucket >= 30 - 1 + run_room);
  // A local copy of the cursor and index: the stores below could alias
  // members, which would otherwise be reloaded after each.
  cursor k = c;
  unsigned read = lengths_read_;
  const unsigned litlen_count = litlen_count_;
  const unsigned total = litlen_count + distance_count_;
  const std::uint32_t* const precode = precode_.data();
  std::uint8_t* const lengths = lengths_.data();
  std::uint16_t* const sorted = sorted_.data();
  constexpr std::uint64_t index_mask = low_bits(precode_index_bits);
  step result = step::next;
  walk_state walk; // NOLINT: its arrays are written before they are read
  while (read < total) {
    // Symbols numbered within the code the next length belongs to (with
    // vectors, of the header: the buckets are made at its end).
    const bool distances = read >= litlen_count;
    const unsigned first = distances && !vector_lengths_ ? litlen_count : 0;
    const unsigned end = (distances || vector_lengths_ ? total : litlen_count) - first;
    std::size_t* const tail = tails_[distances ? 1 : 0].data();
    unsigned symbol = read - first;
    if (k.in_end - k.in >= fast_input_room) {
      const length_code code{precode,
                             lengths,
                             first,
                             end,
                             sorted,
                             tail,
                             pairs_.data(),
                             precode_at_.data(),
                             precode_coded_,
                             &pair_countdown_,
                             &pair_trial_bits_,
                             vector_lengths_ ? vector_precode_.data() : nullptr,
                             walk_precode_.data(),
                             k.in_begin,
                             &walk};
      symbol = vector_lengths_ ? decode_lengths_fast<false>(code, symbol, k.in, k.in_end, k.bits, k.count)
                               : decode_lengths_fast<true>(code, symbol, k.in, k.in_end, k.bits, k.count);
    }
    read = first + symbol;
    if (symbol == end) continue;
    // One unit, every bit checked.
    if (k.count < max_code_length_unit) k.refill();
    const std::uint32_t entry = precode[k.bits & index_mask];
    const unsigned length = precode_length(entry);
    if (length > k.count) {
      result = step::need_input;
      break;
    }
    if ((entry & repeat_flag) == 0) {
      const unsigned value = precode_symbol(entry);
      k.drop(length);
      lengths[read++] = static_cast<std::uint8_t>(value);
      if (!vector_lengths_) sorted[tail[value]++] = static_cast<std::uint16_t>(symbol);
      continue;
    }
    const unsigned used = precode_used(entry); // the code and its extra bits
    if (used > k.count) {
      result = step::need_input;
      break;
    }
    const unsigned repeat = precode_count(entry, k.bits);
    const bool previous = (entry & previous_flag) != 0;
    if ((previous && read == 0) || repeat > total - read) { // nothing to repeat, or past the end
      result = step::corrupt;
      break;
    }
    const std::uint8_t value = previous ? lengths[read - 1] : std::uint8_t{0};
    std::memset(lengths + read, value, repeat);
    if (value != 0 && !vector_lengths_) {
      for (unsigned at = read; at < read + repeat; ++at) {
        if (at < litlen_count) {
          sorted[tails_[0][value]++] = static_cast<std::uint16_t>(at);
        } else {
          sorted[tails_[1][value]++] = static_cast<std::uint16_t>(at - litlen_count);
        }
      }
    }
    read += repeat;
    k.drop(used);
  }
  c = k;
  lengths_read_ = read;
  return result == step::next ? build_dynamic_tables() : result;
}

// The end of a dynamic header: both codes checked as zlib does; a complete
// code's table waits for the block's first units (slow_units_), the tables
// of a code of one symbol or none are built now.
deflate_decoder::step deflate_decoder::build_dynamic_tables() noexcept {
  if (lengths_[256] == 0) return step::corrupt; // no end-of-block code
  if (vector_lengths_) {
    sort_vbmi(lengths_.data(), litlen_count_, sorted_.data(), litlen_bucket, code_counts_[0]);
    sort_vbmi(lengths_.data() + litlen_count_, distance_count_, sorted_.data() + distance_buckets_at, distance_bucket,
              code_counts_[1]);
  } else {
    for (unsigned length = 1; length <= max_code_length; ++length) {
      code_counts_[0][length] = static_cast<unsigned>(tails_[0][length] - length * litlen_bucket);
      code_counts_[1][length] =
          static_cast<unsigned>(tails_[1][length] - (distance_buckets_at + length * distance_bucket));
    }
  }
  shortest_ = {0, 0};
  for (unsigned length = max_code_length; length != 0; --length) {
    if (code_counts_[0][length] != 0) shortest_[0] = length;
    if (code_counts_[1][length] != 0) shortest_[1] = length;
  }
  code_counts_[0][0] = code_counts_[1][0] = 0; // not a code
  const code_symbols litlen{code_counts_[0].data(), sorted_.data(), litlen_bucket};
  const code_symbols distance{code_counts_[1].data(), sorted_.data() + distance_buckets_at, distance_bucket};
  const code_shape litlen_shape = shape_of(code_kind::litlen, litlen);
  const code_shape distance_shape = shape_of(code_kind::distance, distance);
  if (litlen_shape == code_shape::invalid || distance_shape == code_shape::invalid) return step::corrupt;
  litlen_table_ = nullptr;
  distance_table_ = nullptr;
  packed_on_ = false; // a code of one symbol (the end of block) or a complete one, packed once built
  run_countdown_ = run_trigger;
  if (litlen_shape != code_shape::complete) {
    fill_table(code_kind::litlen, litlen_shape, litlen, litlen_.data(), litlen_.size(), litlen_root_bits, litlen_root_);
    litlen_table_ = litlen_.data();
  }
  if (distance_shape != code_shape::complete) {
    fill_table(code_kind::distance, distance_shape, distance, distance_.data(), distance_.size(), distance_root_bits,
               distance_root_);
    distance_table_ = distance_.data();
  }
  const bool pending = litlen_table_ == nullptr || distance_table_ == nullptr;
  slow_units_ = first_units_before_tables;
  state_ = pending ? state::first_codes : state::codes;
  return step::next;
}

// The tables the block's first units went without.
deflate_decoder::step deflate_decoder::build_pending_tables() noexcept {
  if (litlen_table_ == nullptr) {
    const code_symbols litlen{code_counts_[0].data(), sorted_.data(), litlen_bucket};
    if (!fill_table(code_kind::litlen, code_shape::complete, litlen, litlen_.data(), litlen_.size(), litlen_root_bits,
                    litlen_root_)) {
      return step::corrupt; // not reached
    }
    litlen_table_ = litlen_.data();
    pack_literals();
  }
  if (distance_table_ == nullptr) {
    const code_symbols distance{code_counts_[1].data(), sorted_.data() + distance_buckets_at, distance_bucket};
    if (!fill_table(code_kind::distance, code_shape::complete, distance, distance_.data(), distance_.size(),
                    distance_root_bits, distance_root_)) {
      return step::corrupt; // not reached
    }
    distance_table_ = distance_.data();
  }
  return step::next;
}

// packed_ for a code with a short literal.
void deflate_decoder::pack_literals() noexcept {
  // Without vectors, only for a literal of at most 2 bits: packed_scalar_bits
  // hold one literal of 3 bits and no more.
  const unsigned shortest = shortest_literal(litlen_.data(), litlen_root_, vector_lengths_ ? short_literal_bits : 2);
  packed_on_ = shortest != 0;
  if (!packed_on_) return;
  if (vector_lengths_) {
    // An entry holds at most packed_index_bits / shortest literals: a step
    // each (2 for a shortest of 3 bits, as random float64's).
    build_packed_table_vbmi(litlen_.data(), litlen_root_, packed_index_bits / shortest, packed_.data());
    packed_mask_ = low_bits(packed_index_bits);
  } else {
    build_packed_table(litlen_.data(), litlen_root_, packed_scalar_bits, packed_.data());
    packed_mask_ = low_bits(packed_scalar_bits);
  }
}

// packed_'s runs, once run_trigger matches of the block have been decoded
// the ordinary way (and not again in the block); the literals' entries
// first where the block has none. Where no match is short enough for the
// index bits, packed_ stays as it was.
void deflate_decoder::pack_runs() noexcept {
  run_countdown_ = run_never;
  if (vector_lengths_) {
    const bool any =
        add_runs_vbmi(litlen_table_, litlen_root_, distance_table_, distance_root_, packed_on_, packed_.data());
    if (any && !packed_on_) packed_mask_ = low_bits(packed_index_bits);
    packed_on_ = packed_on_ || any;
    return;
  }
  const unsigned index_bits = packed_scalar_bits;
  unsigned shortest_length = max_code_length + 1; // the shortest length code
  for (unsigned symbol = 257; symbol < litlen_count_; ++symbol) {
    if (lengths_[symbol] != 0) shortest_length = std::min(shortest_length, unsigned{lengths_[symbol]});
  }
  if (shortest_length + shortest_[1] > index_bits) return; // no match fits
  if (!packed_on_) {
    build_packed_table(litlen_table_, litlen_root_, packed_scalar_bits, packed_.data());
    packed_mask_ = low_bits(index_bits);
  }
  const bool any = add_runs(litlen_table_, litlen_root_, distance_table_, distance_root_, index_bits, packed_.data());
  packed_on_ = packed_on_ || any;
}

std::uint32_t deflate_decoder::litlen_entry(std::uint64_t bits, unsigned& length) const noexcept {
  if (litlen_table_ != nullptr) return lookup(litlen_table_, litlen_root_, bits, length);
  return decode_canonical(code_kind::litlen, {code_counts_[0].data(), sorted_.data(), litlen_bucket}, shortest_[0],
                          bits, length);
}

std::uint32_t deflate_decoder::distance_entry(std::uint64_t bits, unsigned& length) const noexcept {
  if (distance_table_ != nullptr) return lookup(distance_table_, distance_root_, bits, length);
  return decode_canonical(code_kind::distance,
                          {code_counts_[1].data(), sorted_.data() + distance_buckets_at, distance_bucket}, shortest_[1],
                          bits, length);
}

deflate_decoder::step deflate_decoder::end_block() noexcept {
  state_ = final_block_ ? state::ended : state::block_header;
  return step::next;
}

deflate_decoder::step deflate_decoder::decode_codes(cursor& c) noexcept {
  if (pending_length_ != 0) {
    const step flushed = flush_pending(c);
    if (flushed != step::next) return flushed;
  }
  while (state_ == state::codes) {
    if (c.in_end - c.in >= fast_input_room && c.out != c.out_end) {
      const step fast = packed_on_ ? decode_fast<true>(c) : decode_fast<false>(c);
      if (fast != step::next) return fast;
      continue;
    }
    const step one = decode_one<false>(c);
    if (one != step::next) return one;
  }
  return step::next;
}

// A dynamic block's first units, its tables not built yet; then the tables,
// if the block goes on.
deflate_decoder::step deflate_decoder::decode_first_codes(cursor& c) noexcept {
  if (pending_length_ != 0) {
    const step flushed = flush_pending(c);
    if (flushed != step::next) return flushed;
  }
  while (state_ == state::first_codes) {
    const step one = decode_one<true>(c);
    if (one == step::need_input || one == step::corrupt) return one;
    if (--slow_units_ == 0 && state_ == state::first_codes) {
      const step built = build_pending_tables();
      if (built != step::next) return built;
      state_ = state::codes;
    }
    if (one != step::next) return one;
  }
  return step::next;
}

deflate_decoder::step deflate_decoder::flush_pending(cursor& c) noexcept {
  if (pending_distance_ == 0) {
    if (c.out == c.out_end) return step::output_full;
    *c.out++ = pending_literal_;
    pending_length_ = 0;
    return step::next;
  }
  return copy_match(c, pending_distance_, pending_length_);
}

// Writes what fits of a match (zlib's MATCH state: nothing is checked
// before there is room to write). `length` receives what is left.
deflate_decoder::step deflate_decoder::copy_match(cursor& c, unsigned distance, unsigned& length) noexcept {
  if (c.out == c.out_end) return step::output_full;
  const std::size_t written = c.written();
  if (distance > written) {
    // From the bytes of earlier calls; none before the stream's start.
    const std::size_t back = distance - written;
    if (back > history_end_) return step::corrupt; // zlib: "invalid distance too far back"
    const std::size_t n = std::min({back, std::size_t{length}, c.room()});
    std::memcpy(c.out, history_.data() + history_end_ - back, n);
    c.out += n;
    length -= static_cast<unsigned>(n);
  }
  const std::size_t n = std::min(std::size_t{length}, c.room());
  copy_within(c.out, distance, n);
  c.out += n;
  length -= static_cast<unsigned>(n);
  return length == 0 ? step::next : step::output_full;
}

// One literal, match or end of block, with every bit checked: the input
// may end anywhere in it (then it is decoded again from its start once
// more input comes) and the output may be full (then it is kept pending).
// `before_tables`: a table may not be built yet.
template <bool before_tables>
deflate_decoder::step deflate_decoder::decode_one(cursor& c) noexcept {
  c.refill();
  unsigned code_length = 0;
  const std::uint32_t entry =
      before_tables ? litlen_entry(c.bits, code_length) : lookup(litlen_table_, litlen_root_, c.bits, code_length);
  if (code_length > c.count) return step::need_input;
  if ((entry & invalid_flag) != 0) return step::corrupt; // zlib: "invalid literal/length code"
  if ((entry & literal_flag) != 0) {
    c.drop(code_length);
    const auto literal = static_cast<unsigned char>(entry_value(entry));
    if (c.out == c.out_end) {
      pending_literal_ = literal;
      pending_distance_ = 0;
      pending_length_ = 1;
      return step::output_full;
    }
    *c.out++ = literal;
    return step::next;
  }
  if ((entry & end_of_block_flag) != 0) {
    c.drop(code_length);
    return end_block();
  }
  unsigned used = code_length + extra_bits(entry);
  if (used > c.count) return step::need_input;
  const unsigned length =
      entry_value(entry) + static_cast<unsigned>((c.bits >> code_length) & low_bits(extra_bits(entry)));
  const std::uint32_t far = before_tables ? distance_entry(c.bits >> used, code_length)
                                          : lookup(distance_table_, distance_root_, c.bits >> used, code_length);
  if (used + code_length > c.count) return step::need_input;
  if ((far & invalid_flag) != 0) return step::corrupt; // zlib: "invalid distance code"
  const unsigned distance_at = used + code_length;
  used = distance_at + extra_bits(far);
  if (used > c.count) return step::need_input;
  const unsigned distance =
      entry_value(far) + static_cast<unsigned>((c.bits >> distance_at) & low_bits(extra_bits(far)));
  c.drop(used);
  unsigned left = length;
  const step copied = copy_match(c, distance, left);
  if (copied == step::output_full) {
    pending_length_ = left;
    pending_distance_ = distance;
  }
  return copied;
}

// The hot loop: while 8 input bytes and some output room remain, no check
// of the bit count is needed (a refill leaves at least 56 bits, a unit takes
// at most 48); matches are copied 8 bytes at a time where a long match's
// room remains, exactly (and kept pending if they do not fit) elsewhere.
// `packed`: literals, and runs of short matches, several a lookup by
// packed_ first (8 bytes stored whatever the literals' count, up to
// packed_a_refill entries a refill) where room for the stores remains (and
// a run's distance lies within this call's output). The matches decoded the
// ordinary way count down to pack_runs.
template <bool packed>
deflate_decoder::step deflate_decoder::decode_fast(cursor& c) noexcept {
  static_assert(max_unit_bits <= 56, "a unit fits in a refilled buffer");
  const std::uint32_t* const litlen = litlen_table_;
  const std::uint32_t* const distances = distance_table_;
  const unsigned litlen_root = litlen_root_;
  const unsigned distance_root = distance_root_;
  const std::uint64_t* const packed_table = packed_.data();
  const std::uint64_t packed_mask = packed_mask_;
  // Locals, bounds among them: the byte stores would make the compiler
  // reload anything reached through a reference.
  const unsigned char* in = c.in;
  const unsigned char* const in_end = c.in_end;
  unsigned char* out = c.out;
  unsigned char* const out_end = c.out_end;
  unsigned char* const out_begin = c.out_begin;
  std::uint64_t bits = c.bits;
  unsigned count = c.count;
  std::uint64_t run_countdown = run_countdown_;
  step result = step::next;
  while (in_end - in >= fast_input_room && out != out_end) {
    bits |= load_le64(in) << count;
    in += (63 - count) >> 3;
    count |= 56;
    if constexpr (packed) {
      // Up to packed_a_refill entries with no refill between them (each
      // takes at most 6 bits of the 56 a refill leaves), so that the next
      // lookup waits on the bits the last took only.
      // Past the first 32 KiB of the call's output with room for a refill's
      // entries, any entry fits (packed_open): one test an entry.
      std::uint64_t run = packed_table[bits & packed_mask];
      const bool open = out_end - out >= packed_open_room && out - out_begin >= packed_open_done;
      if (open ? packed_any(run) : packed_fits(run, out - out_begin, out_end - out)) {
        for (unsigned k = 1;; ++k) {
          std::uint64_t literals = run >> 8;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
          literals = __builtin_bswap64(literals);
#endif
          std::memcpy(out, &literals, sizeof literals);
          out += packed_count(run);
          if ((run & packed_run_flag) != 0) {
            const auto length = static_cast<std::size_t>(packed_run_length(run));
            copy_fast(out, static_cast<std::size_t>(packed_run_distance(run)), length);
            out += length;
            if ((run & packed_second_flag) != 0) {
              const auto more = static_cast<std::size_t>(packed_second_length(run));
              copy_fast(out, static_cast<std::size_t>(packed_second_distance(run)), more);
              out += more;
            }
          }
          bits >>= packed_used(run);
          count -= static_cast<unsigned>(packed_used(run));
          if (k == packed_a_refill) break;
          run = packed_table[bits & packed_mask];
          if (open ? !packed_any(run) : !packed_fits(run, out - out_begin, out_end - out)) break;
        }
        continue;
      }
    }
    unsigned code_length = 0;
    const std::uint32_t entry = lookup(litlen, litlen_root, bits, code_length);
    if ((entry & literal_flag) != 0) {
      bits >>= code_length;
      count -= code_length;
      *out++ = static_cast<unsigned char>(entry_value(entry));
      continue;
    }
    if ((entry & invalid_flag) != 0) {
      result = step::corrupt;
      break;
    }
    bits >>= code_length;
    count -= code_length;
    if ((entry & end_of_block_flag) != 0) {
      result = end_block();
      break;
    }
    const unsigned length = entry_value(entry) + static_cast<unsigned>(bits & low_bits(extra_bits(entry)));
    bits >>= extra_bits(entry);
    count -= extra_bits(entry);
    const std::uint32_t far = lookup(distances, distance_root, bits, code_length);
    if ((far & invalid_flag) != 0) {
      result = step::corrupt;
      break;
    }
    bits >>= code_length;
    count -= code_length;
    const unsigned distance = entry_value(far) + static_cast<unsigned>(bits & low_bits(extra_bits(far)));
    bits >>= extra_bits(far);
    count -= extra_bits(far);
    if (distance > static_cast<std::size_t>(out - out_begin) || out_end - out < fast_output_room) {
      // Into earlier calls' output (or before the stream: an error), or
      // near the output's end: written exactly, the rest kept pending.
      c.out = out;
      unsigned left = length;
      result = copy_match(c, distance, left);
      out = c.out;
      if (result == step::output_full) {
        pending_length_ = left;
        pending_distance_ = distance;
      }
      if (result != step::next) break;
      continue;
    }
    copy_fast(out, distance, length);
    out += length;
    if (--run_countdown == 0) break; // pack_runs, then the loop again
  }
  if (run_countdown == 0) {
    pack_runs();
  } else {
    run_countdown_ = run_countdown;
  }
  c.in = in;
  c.out = out;
  c.bits = bits;
  c.count = count;
  c.give_back(); // leaves the buffer as the careful path expects it
  return result;
}

void deflate_decoder::keep_history(const unsigned char* begin, std::size_t size) noexcept {
  if (size >= window_size) {
    std::memcpy(history_.data(), begin + size - window_size, window_size);
    history_end_ = window_size;
    return;
  }
  if (history_end_ + size > history_.size()) {
    const std::size_t keep = std::min(history_end_, window_size);
    std::memmove(history_.data(), history_.data() + history_end_ - keep, keep);
    history_end_ = keep;
  }
  if (size != 0) std::memcpy(history_.data() + history_end_, begin, size);
  history_end_ += size;
}

} // namespace npyguard::npz::detail
