// deflate_decoder (src/npz/deflate_decoder.cpp) against zlib's raw inflate
// on the same streams in the same run: ordinary data (numpy-like float64,
// small integers, text-like bytes, random booleans; zlib levels 1, 6 and 9;
// float64 upsampled by 20 and 35, whose output per compressed byte matches
// the header families') and the block structures that cost most per
// compressed byte (bench/npz_crafted.py's max_tree, dense_tree,
// dense_short, tiny_tree, literal_run, short_lengths, short_distance,
// mixed_tree and flush_64, one literal per fixed block, empty stored
// blocks, 16-byte stored blocks). Each row reports the time per
// compressed byte (per_in_byte) and per output byte (per_out_byte); output
// goes to a 1 MiB buffer, as `npyguard check --verify` inflates. The crc32_*
// rows time the CRC-32 the verifier takes of that output (ours, folded by
// carry-less multiplication, against zlib's crc32). Under load,
// compare CPU times, or instruction counts:
//   valgrind --tool=callgrind --toggle-collect='*deflate_decoder::decode(unsigned*' --toggle-collect=inflate
//     build/release/bench/npyguard_inflate_bench --benchmark_filter=max_tree --benchmark_min_time=0
//
//   build/release/bench/npyguard_inflate_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <zlib.h>

#include "npz/crc32.hpp"
#include "npz/deflate_decoder.hpp"
#include "tests/deflate_bits.hpp"

namespace {

using npyguard::deflate_bits::bytes;
constexpr std::size_t stream_target = std::size_t{1} << 20; // about 1 MiB compressed per stream
constexpr std::size_t output_buffer = std::size_t{1} << 20;

using npyguard::deflate_bits::bit_writer;
using npyguard::deflate_bits::canonical;

bytes deflate_raw(const bytes& data, int level, std::size_t flush_every = 0) {
  z_stream z{};
  if (deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
  bytes out(deflateBound(&z, static_cast<uLong>(data.size())) + 2 * data.size() + 1024);
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const std::size_t piece = flush_every == 0 ? data.size() : flush_every;
  for (std::size_t at = 0; at < data.size(); at += piece) {
    z.next_in = const_cast<Bytef*>(data.data() + at);
    z.avail_in = static_cast<uInt>(std::min(piece, data.size() - at));
    if (deflate(&z, flush_every == 0 ? Z_NO_FLUSH : Z_FULL_FLUSH) != Z_OK) std::abort();
  }
  if (deflate(&z, Z_FINISH) != Z_STREAM_END) std::abort();
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Data that deflates to about `target` bytes at `level`.
bytes sized(const std::function<bytes(std::size_t)>& make, int level) {
  std::size_t size = stream_target;
  for (int i = 0; i < 3; ++i) {
    const std::size_t got = deflate_raw(make(size), level).size();
    size = static_cast<std::size_t>(static_cast<double>(size) * static_cast<double>(stream_target) /
                                    static_cast<double>(got));
  }
  return deflate_raw(make(size), level);
}

bytes float64(std::size_t size) { // np.random.random: uniform [0, 1)
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  bytes out(size / 8 * 8);
  for (std::size_t i = 0; i < out.size(); i += 8) {
    const double value = uniform(rng);
    std::memcpy(out.data() + i, &value, 8);
  }
  return out;
}

// float64 upsampled: each of float64()'s values repeated `run` times
// (np.repeat), a benign member whose output per compressed byte is as high
// as the header families' (runs of 20: about 19; of 35: about 32).
bytes runs_of(std::size_t size, std::size_t run) {
  const bytes values = float64(size / run + 8);
  bytes out(size / 8 * 8);
  for (std::size_t i = 0; i < out.size(); i += 8) std::memcpy(out.data() + i, values.data() + i / 8 / run * 8, 8);
  return out;
}

bytes small_ints(std::size_t size) { // int64 values 0-99, as np.arange-ish counters are
  std::mt19937 rng(9);
  bytes out(size / 8 * 8, 0);
  for (std::size_t i = 0; i < out.size(); i += 8) out[i] = static_cast<unsigned char>(rng() % 100);
  return out;
}

bytes bools(std::size_t size) { // (np.random.random(n) > 0.5): bytes 0 and 1, a literal code of 1-2 bits
  std::mt19937 rng(11);
  bytes out(size);
  for (auto& value : out) value = static_cast<unsigned char>(rng() & 1U);
  return out;
}

bytes text(std::size_t size) {
  static const char* const words[] = {"the ",   "array ", "of ", "values ", "and ",  "header ", "shape ", "dtype ",
                                      "float ", "int ",   "\n",  "numpy ",  "file ", "data ",   "zip ",   "member "};
  std::mt19937 rng(10);
  bytes out;
  out.reserve(size + 16);
  while (out.size() < size) {
    const char* word = words[rng() % 16];
    out.insert(out.end(), word, word + std::strlen(word));
  }
  out.resize(size);
  return out;
}

// The code trees of the header families: literal/length lengths 226 x 8
// and 60 x 9, distance lengths 2 x 4 and 28 x 5, both complete.
std::vector<unsigned> tree_lengths() {
  std::vector<unsigned> lengths(226, 8);
  lengths.insert(lengths.end(), 60, 9);
  lengths.insert(lengths.end(), 2, 4);
  lengths.insert(lengths.end(), 28, 5);
  return lengths;
}

// A match length's literal/length symbol, extra bits and their value (RFC
// 1951 section 3.2.5).
struct length_code {
  unsigned symbol;
  unsigned extra;
  unsigned value;
};
length_code length_code_of(unsigned length) {
  if (length == 258) return {285, 0, 0};
  unsigned base = 3;
  for (unsigned symbol = 257; symbol < 285; ++symbol) {
    const unsigned extra = symbol < 265 ? 0 : (symbol - 261) / 4;
    if (length < base + (1U << extra)) return {symbol, extra, length - base};
    base += 1U << extra;
  }
  return {285, 0, 0}; // not reached for 3-258
}

// A dynamic block's header (non-final unless `final`) up to its code lengths: HLIT
// litlen_count - 257, HDIST distance_count - 1, HCLEN precode_count - 4 and
// the code length code's lengths `precode` in RFC 1951's order.
void dynamic_header(bit_writer& w, unsigned litlen_count, unsigned distance_count, const std::vector<unsigned>& precode,
                    unsigned precode_count, bool final = false) {
  static const unsigned order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  w.put(final ? 1 : 0, 1);
  w.put(2, 2);
  w.put(litlen_count - 257, 5);
  w.put(distance_count - 1, 5);
  w.put(precode_count - 4, 4);
  for (unsigned i = 0; i < precode_count; ++i) w.put(precode[order[i]], 3);
}

// A fixed block of one literal below 144 (an 8-bit code), not final.
void fixed_literal(bit_writer& w, unsigned char literal) {
  w.put(0, 1);
  w.put(1, 2);
  w.code(0x30 + literal, 8);
  w.code(0, 7);
}

// Dynamic blocks with HLIT 286, HDIST lengths.size() - 286 and HCLEN
// precode_count, all with the same code trees (`lengths`, tree_lengths()
// by default), the code lengths written by `write_lengths` with the code
// length code `precode`, then `units` matches of `match` bytes at distance
// 1; after a fixed block with one literal (a byte for the matches to copy)
// and before a final empty fixed block.
bytes tree_blocks(const std::vector<unsigned>& precode,
                  const std::function<void(bit_writer&, const std::vector<unsigned>&)>& write_lengths, unsigned units,
                  const std::vector<unsigned>& lengths = tree_lengths(), unsigned precode_count = 19,
                  unsigned match = 258) {
  const std::vector<unsigned> litlen(lengths.begin(), lengths.begin() + 286);
  const std::vector<unsigned> distance(lengths.begin() + 286, lengths.end());
  const auto litlen_codes = canonical(litlen);
  const auto distance_codes = canonical(distance);
  bit_writer w;
  fixed_literal(w, 'z');
  while (w.size() < stream_target) {
    dynamic_header(w, 286, static_cast<unsigned>(distance.size()), precode, precode_count);
    write_lengths(w, lengths);
    const length_code code = length_code_of(match);
    for (unsigned i = 0; i < units; ++i) {
      w.code(litlen_codes[code.symbol], litlen[code.symbol]);
      w.put(code.value, code.extra);
      w.code(distance_codes[0], distance[0]);
    }
    w.code(litlen_codes[256], litlen[256]);
  }
  w.put(1, 1);
  w.put(1, 2);
  w.code(0, 7);
  return w.take();
}

// Writes every code length on its own with the code length code `precode`.
std::function<void(bit_writer&, const std::vector<unsigned>&)> each_length(const std::vector<unsigned>& precode) {
  return [precode, codes = canonical(precode)](bit_writer& w, const std::vector<unsigned>& lengths) {
    for (unsigned length : lengths) w.code(codes[length], precode[length]);
  };
}

// bench/npz_crafted.py's max_tree: every code length written one by one,
// two matches of 258 a block.
bytes max_tree() {
  std::vector<unsigned> precode(19, 4);
  for (unsigned i = 13; i < 19; ++i) precode[i] = 5;
  return tree_blocks(precode, each_length(precode), 2);
}

// The same code trees with the code length code `precode`, each run of
// equal lengths written as the length, then single lengths and repeats of
// the previous length (symbol 16) as `next` chooses: `next(left)` is the
// next unit's count (1 for a single length, 3-6 for a repeat), asked while
// at least 3 of the run are `left`; the last 1 or 2 are single lengths.
bytes chosen_tree(const std::vector<unsigned>& precode, unsigned units,
                  const std::function<std::size_t(std::size_t)>& next, unsigned match = 258) {
  const auto codes = canonical(precode);
  return tree_blocks(
      precode,
      [&](bit_writer& w, const std::vector<unsigned>& lengths) {
        for (std::size_t at = 0; at < lengths.size();) {
          const unsigned length = lengths[at];
          std::size_t run = 1;
          while (at + run < lengths.size() && lengths[at + run] == length) ++run;
          at += run;
          w.code(codes[length], precode[length]);
          for (std::size_t left = run - 1; left != 0;) {
            const std::size_t take = left < 3 ? 1 : next(left);
            if (take == 1) {
              w.code(codes[length], precode[length]);
            } else {
              w.code(codes[16], precode[16]);
              w.put(static_cast<unsigned>(take - 3), 2);
            }
            left -= take;
          }
        }
      },
      units, tree_lengths(), 19, match);
}

// The code length code of mixed_tree and flip_tree (16: 1 bit, 8: 2 bits,
// 9: 3 bits, 4 and 5: 4 bits).
std::vector<unsigned> mixed_precode() {
  std::vector<unsigned> precode(19, 0);
  precode[16] = 1;
  precode[8] = 2;
  precode[9] = 3;
  precode[4] = 4;
  precode[5] = 4;
  return precode;
}

// The same code trees written as densely as RFC 1951 allows: each run of
// equal lengths as the length, then repeats of 3-6 (symbol 16, a 1-bit
// code), about 27 header bytes a block against max_tree's 175; then `units`
// matches of 258. With 5 units a block pays for its tables (a block's first
// 4 units are decoded without them). bench/npz_crafted.py's dense_tree.
bytes dense_tree(unsigned units, unsigned match = 258) {
  std::vector<unsigned> precode(19, 0);
  precode[16] = 1;
  for (unsigned symbol : {8U, 9U, 4U, 5U}) precode[symbol] = 3;
  // 6 at a time, but 7 and 8 as 4 + 3 and 5 + 3: no tail of 1 or 2
  return chosen_tree(
      precode, units,
      [](std::size_t left) { return left <= 6 || left >= 9 ? std::min<std::size_t>(left, 6) : left - 3; }, match);
}

// dense_tree's blocks with one match of 45 bytes each: the header's cost
// alone (no table is built), at about 1.2 output bytes a compressed byte,
// as little as section 9's allowance leaves. bench/npz_crafted.py's
// dense_short.
bytes dense_short() { return dense_tree(1, 45); }

// The same code trees, every length written on its own with the shortest
// codes the code length code allows (8: 1 bit, 9: 2 bits, 5: 3 bits, 4: 4
// bits; 0 given the last 4-bit code to complete it): about 56 header bytes a
// block, the most code lengths a compressed byte can buy without repeats.
bytes short_lengths(unsigned units) {
  std::vector<unsigned> precode(19, 0);
  precode[8] = 1;
  precode[9] = 2;
  precode[5] = 3;
  precode[4] = 4;
  precode[0] = 4;
  return tree_blocks(precode, each_length(precode), units);
}

// short_lengths' literal/length code and one distance code of one bit
// (HDIST 1), with 8: 1 bit, 9 and 1: 2 bits (HCLEN 18): about 44 header
// bytes a block for 287 lengths. bench/npz_crafted.py's short_distance.
bytes short_distance(unsigned units) {
  std::vector<unsigned> precode(19, 0);
  precode[8] = 1;
  precode[9] = 2;
  precode[1] = 2;
  std::vector<unsigned> lengths = tree_lengths();
  lengths.resize(287);
  lengths[286] = 1;
  return tree_blocks(precode, each_length(precode), units, lengths, 18);
}

// Single lengths and repeats of 3-6 chosen at random, a new choice in every
// block: no branch on a unit's kind or a repeat's count can be predicted.
bytes mixed_tree(unsigned units) {
  std::mt19937 rng(12);
  return chosen_tree(mixed_precode(), units, [&](std::size_t left) {
    return rng() % 2 == 0 ? 1 : 3 + rng() % (std::min<std::size_t>(left, 6) - 2);
  });
}

// The largest header's trees with the code length code `precode`, each run
// of equal lengths written as a repeat of 3 for one unit in every `period`
// where it fits and single lengths otherwise.
bytes repeat_every(const std::vector<unsigned>& precode, unsigned units, std::size_t period) {
  std::size_t turn = 0;
  return chosen_tree(precode, units,
                     [&](std::size_t) { return turn++ % period == 0 ? std::size_t{3} : std::size_t{1}; });
}

// A repeat of 3, then four single lengths, over and over: decode_lengths_fast
// goes from its loop for repeats back to its loop for single lengths (which
// it does after four single lengths) and out again at every repeat.
bytes flip_tree(unsigned units) { return repeat_every(mixed_precode(), units, 5); }

// A repeat of 3, then eleven single lengths, over and over: with vectors,
// decode_lengths_fast's walk of units stops after eight single lengths
// together and starts again at the next repeat, every twelve units.
bytes exit_tree(unsigned units) { return repeat_every(mixed_precode(), units, 12); }

// flip_tree with single lengths of 1 bit (8: 1 bit, 16: 2 bits, 9: 3 bits,
// 4 and 5: 4 bits): the most units a compressed byte buys with a repeat
// among every five.
bytes flip_short(unsigned units) {
  std::vector<unsigned> precode(19, 0);
  precode[8] = 1;
  precode[16] = 2;
  precode[9] = 3;
  precode[4] = 4;
  precode[5] = 4;
  return repeat_every(precode, units, 5);
}

bytes flush_64() {
  std::mt19937 rng(5);
  bytes data(stream_target / 2);
  for (auto& value : data) value = static_cast<unsigned char>(rng() % 40);
  return deflate_raw(data, 9, 64);
}

// A dynamic block's header (not final) of HLIT litlen_count - 257, HDIST 1,
// HCLEN 18 (up to code length symbol 1) and the code length code `precode`
// (`codes` its codewords), its code lengths written as `units`: a number
// over 2 a run of that many zeros (symbol 18), else a single length.
void small_header(bit_writer& w, unsigned litlen_count, const std::vector<unsigned>& precode,
                  const std::vector<std::uint32_t>& codes, std::initializer_list<unsigned> units) {
  dynamic_header(w, litlen_count, 1, precode, 18);
  for (const unsigned unit : units) {
    if (unit <= 2) {
      w.code(codes[unit], precode[unit]);
      continue;
    }
    w.code(codes[18], precode[18]);
    w.put(unit - 11, 7);
  }
}

// The smallest dynamic headers that buy their output: HLIT 257, HDIST 1,
// two literal/length codes of one bit ('a' and the end of block), no
// distance code, the code lengths as runs of zeros (symbol 18) and two
// single lengths; then `literals` literals of one bit. About 13 header
// bytes a block: the cost a block pays whatever its size. literal_run is
// one such block of 8 Mi literals: 8 output bytes a compressed byte, all
// literals, the most a compressed byte can hold.
bytes tiny_tree(unsigned literals) {
  std::vector<unsigned> precode(19, 0);
  precode[18] = 1;
  precode[0] = 2;
  precode[1] = 2;
  const auto codes = canonical(precode);
  bit_writer w;
  fixed_literal(w, 'a');
  while (w.size() < stream_target) {
    // 'a' and the end of block 1 bit, no distance code
    small_header(w, 257, precode, codes, {'a', 1, 138, 256 - 'a' - 1 - 138, 1, 0});
    for (unsigned i = 0; i < literals; ++i) w.code(0, 1);
    w.code(1, 1);
  }
  w.put(1, 1);
  w.put(1, 2);
  w.code(0, 7);
  return w.take();
}

// One final dynamic block of the codes `litlen` and `distance` (their
// lengths written one a unit, each of the 16 with a code of 4 bits), then
// what `symbols` writes (with the literal/length and distance codewords)
// until the stream is about stream_target bytes, then the end of block.
bytes one_block(
    const std::vector<unsigned>& litlen, const std::vector<unsigned>& distance,
    const std::function<void(bit_writer&, const std::vector<unsigned>&, const std::vector<unsigned>&)>& symbols) {
  std::vector<unsigned> precode(19, 4);
  precode[16] = precode[17] = precode[18] = 0;
  const auto precode_codes = canonical(precode);
  bit_writer w;
  dynamic_header(w, static_cast<unsigned>(litlen.size()), static_cast<unsigned>(distance.size()), precode, 19, true);
  for (const auto* code : {&litlen, &distance}) {
    for (unsigned length : *code) w.code(precode_codes[length], 4);
  }
  const auto litlen_codes = canonical(litlen);
  const auto distance_codes = canonical(distance);
  while (w.size() < stream_target) symbols(w, litlen_codes, distance_codes);
  w.code(litlen_codes[256], litlen[256]);
  return w.take();
}

// Literals of 1 and 6 bits in turn ('a' and 'f'; 'b' to 'e' 2 to 5 bits,
// the end of block and 'g' 7): the two codes do not fit in packed_'s 6
// index bits together, so that every lookup gives one literal, 3.5 bits a
// lookup on average.
bytes literal_pairs() {
  std::vector<unsigned> litlen(257, 0);
  for (unsigned i = 0; i < 6; ++i) litlen['a' + i] = i + 1;
  litlen[256] = 7;
  litlen['g'] = 7;
  return one_block(litlen, {0}, [&](bit_writer& w, const std::vector<unsigned>& codes, const std::vector<unsigned>&) {
    w.code(codes['a'], 1);
    w.code(codes['f'], 6);
  });
}

// 'a' of 3 bits, over and over: the one literal of at most 3 bits of the
// code (its share of the code space an eighth, as 0x3F's in random
// float64; the end of block 1 bit, a length of 3 2 bits), so that the
// decoder takes it a lookup each (2.67 a compressed byte). 'b' to 'e' 4 to
// 6 bits.
bytes literal_3bit_run() {
  std::vector<unsigned> litlen(258, 0);
  litlen[256] = 1;
  litlen[257] = 2;
  litlen['a'] = 3;
  litlen['b'] = 4;
  litlen['c'] = 5;
  litlen['d'] = 6;
  litlen['e'] = 6;
  return one_block(litlen, {1}, [&](bit_writer& w, const std::vector<unsigned>& codes, const std::vector<unsigned>&) {
    w.code(codes['a'], 3);
  });
}

// 'a' and 'b', then matches of `length` bytes (3-10: a length code without
// extra bits) at `distance` (1 or 2), each 3 bits (a length code of 2 bits,
// one distance code of 1 bit): match_run's 3 bytes at distance 1 are 8
// output bytes a compressed byte, two lookups and a copy for every 3 bytes.
bytes match_run(unsigned length, unsigned distance) {
  std::vector<unsigned> litlen(257 + length - 2, 0);
  litlen['a'] = 2;
  litlen['b'] = 2;
  litlen[256] = 2;
  litlen[257 + length - 3] = 2;
  std::vector<unsigned> distances(distance, 0);
  distances[distance - 1] = 1;
  bool first = true;
  return one_block(litlen, distances,
                   [&](bit_writer& w, const std::vector<unsigned>& codes, const std::vector<unsigned>&) {
                     if (first) w.code(codes['a'], 2).code(codes['b'], 2);
                     first = false;
                     w.code(codes[257 + length - 3], 2);
                     w.code(0, 1);
                   });
}

// Matches of `length` (3-10) at `distance` (1-8), each as short as a match
// can be: a length code of 1 bit, one distance code of 1 bit and its extra
// bits (distance 8: 1), after `distance` literals 'a' of 2 bits (the end of
// block 2 bits). match_run_2bit: 2 bits a match, 4 matches a compressed
// byte; match_run_8: 3 bits, each copy reading the bytes three copies
// before wrote.
bytes short_matches(unsigned length, unsigned distance) {
  const unsigned symbol = distance <= 4 ? distance - 1 : 4 + (distance - 5) / 2;
  const unsigned extra = distance <= 4 ? 0 : 1;
  std::vector<unsigned> litlen(257 + length - 2, 0);
  litlen['a'] = 2;
  litlen[256] = 2;
  litlen[257 + length - 3] = 1;
  std::vector<unsigned> distances(symbol + 1, 0);
  distances[symbol] = 1;
  bool first = true;
  return one_block(litlen, distances,
                   [&](bit_writer& w, const std::vector<unsigned>& codes, const std::vector<unsigned>& far) {
                     if (first) {
                       for (unsigned i = 0; i < distance; ++i) w.code(codes['a'], 2);
                     }
                     first = false;
                     w.code(codes[257 + length - 3], 1);
                     w.code(far[symbol], 1);
                     if (extra != 0) w.put((distance - 5) % 2, extra);
                   });
}

// Blocks of `matches` 2-bit matches of 3 bytes at distance 1 each (the
// smallest header for them: 'a' and the end of block 2 bits, the length 1
// bit, one distance code of 1 bit; the lengths as runs of zeros and single
// lengths): just past 20 (the decoder's trigger, 16, after the 4 units
// decoded before a block's tables; 516 before), each block has the packed
// runs built (pack_runs) and gains little from them, the most that build
// can cost a block for its matches; below, never.
bytes trigger_blocks(unsigned matches) {
  std::vector<unsigned> precode(19, 0);
  precode[18] = 1;
  precode[1] = 2;
  precode[2] = 3;
  precode[0] = 3;
  const auto codes = canonical(precode);
  bit_writer w;
  fixed_literal(w, 'a');
  while (w.size() < stream_target) {
    // 'a' and the end of block 2 bits, the length of 3 1 bit, distance code 0 1 bit
    small_header(w, 258, precode, codes, {'a', 2, 138, 256 - 'a' - 1 - 138, 2, 1, 1});
    for (unsigned i = 0; i < matches; ++i) w.code(0, 1).code(0, 1); // the length, then the distance
    w.code(3, 2);                                                   // the end of block: 'a' 10, 256 11
  }
  w.put(1, 1);
  w.put(1, 2);
  w.code(0, 7);
  return w.take();
}

// Matches of 3 bytes at distances 1 and 2 in turn, each 2 bits (a length
// code of 1 bit, two distance codes of 1 bit; 'a' and the end of block 2
// bits): no two matches in a row at one distance.
bytes alternating_matches() {
  std::vector<unsigned> litlen(258, 0);
  litlen['a'] = 2;
  litlen[256] = 2;
  litlen[257] = 1;
  bool first = true;
  return one_block(litlen, {1, 1},
                   [&](bit_writer& w, const std::vector<unsigned>& codes, const std::vector<unsigned>& far) {
                     if (first) w.code(codes['a'], 2).code(codes['a'], 2);
                     first = false;
                     w.code(codes[257], 1).code(far[0], 1);
                     w.code(codes[257], 1).code(far[1], 1);
                   });
}

// bench/npz_crafted.py's one_symbol: fixed blocks of one literal each.
bytes one_literal_blocks() {
  std::mt19937 rng(4);
  bit_writer w;
  while (w.size() < stream_target) {
    w.put(0, 1);
    w.put(1, 2);
    const unsigned value = rng() % 256;
    if (value < 144) {
      w.code(0x30 + value, 8);
    } else {
      w.code(0x190 + value - 144, 9);
    }
    w.code(0, 7);
  }
  w.put(1, 1);
  w.put(1, 2);
  w.code(0, 7);
  return w.take();
}

// Stored blocks of `length` bytes each, then a final empty one.
bytes stored_blocks(std::size_t length) {
  bytes out;
  while (out.size() < stream_target) {
    out.insert(out.end(), {0, static_cast<unsigned char>(length), static_cast<unsigned char>(length >> 8),
                           static_cast<unsigned char>(~length), static_cast<unsigned char>(~length >> 8)});
    out.insert(out.end(), length, 0x5A);
  }
  out.insert(out.end(), {1, 0, 0, 0xFF, 0xFF});
  return out;
}

// Each stream is made when a benchmark first asks for it, so that a
// filtered run (or one under callgrind) makes only its own.
const bytes& stream_named(const std::string& name) {
  static std::map<std::string, bytes> made;
  auto found = made.find(name);
  if (found != made.end()) return found->second;
  bytes stream;
  const int level = name.back() - '0';
  if (name.rfind("float64_l", 0) == 0) {
    stream = sized(float64, level);
  } else if (name.rfind("small_ints_l", 0) == 0) {
    stream = sized(small_ints, level);
  } else if (name.rfind("runs20_l", 0) == 0) {
    stream = sized([](std::size_t size) { return runs_of(size, 20); }, level);
  } else if (name.rfind("runs35_l", 0) == 0) {
    stream = sized([](std::size_t size) { return runs_of(size, 35); }, level);
  } else if (name.rfind("bools_l", 0) == 0) {
    stream = sized(bools, level);
  } else if (name.rfind("text_l", 0) == 0) {
    stream = sized(text, level);
  } else if (name == "max_tree") {
    stream = max_tree();
  } else if (name == "dense_tree_2") {
    stream = dense_tree(2);
  } else if (name == "dense_tree_5") {
    stream = dense_tree(5);
  } else if (name == "dense_short") {
    stream = dense_short();
  } else if (name == "tiny_tree") {
    stream = tiny_tree(16);
  } else if (name == "tiny_tree_4") {
    stream = tiny_tree(4);
  } else if (name == "literal_run") {
    stream = tiny_tree(8 * stream_target);
  } else if (name == "literal_pairs") {
    stream = literal_pairs();
  } else if (name == "literal_3bit_run") {
    stream = literal_3bit_run();
  } else if (name == "match_run") {
    stream = match_run(3, 1);
  } else if (name == "match_run_2bit") {
    stream = short_matches(3, 1);
  } else if (name == "match_run_8") {
    stream = short_matches(3, 8);
  } else if (name.rfind("trigger_", 0) == 0) {
    stream = trigger_blocks(static_cast<unsigned>(std::stoul(name.substr(8))));
  } else if (name == "match_run_alt") {
    stream = alternating_matches();
  } else if (name == "match_run_10_2") {
    stream = match_run(10, 2);
  } else if (name == "short_lengths_2") {
    stream = short_lengths(2);
  } else if (name == "short_lengths_5") {
    stream = short_lengths(5);
  } else if (name == "short_distance_5") {
    stream = short_distance(5);
  } else if (name == "mixed_tree_5") {
    stream = mixed_tree(5);
  } else if (name == "flip_tree_5") {
    stream = flip_tree(5);
  } else if (name == "exit_tree_5") {
    stream = exit_tree(5);
  } else if (name == "flip_short_5") {
    stream = flip_short(5);
  } else if (name == "flush_64") {
    stream = flush_64();
  } else if (name == "one_literal_fixed") {
    stream = one_literal_blocks();
  } else if (name == "stored_empty") {
    stream = stored_blocks(0);
  } else {
    stream = stored_blocks(16);
  }
  return made.emplace(name, std::move(stream)).first->second;
}

void report(benchmark::State& state, std::size_t in, std::uint64_t out) {
  using counter = benchmark::Counter;
  // Seconds per byte, printed with an SI prefix ("3.2n": 3.2 ns).
  state.counters["per_in_byte"] =
      counter(static_cast<double>(in), counter::kIsIterationInvariantRate | counter::kInvert);
  state.counters["per_out_byte"] =
      counter(static_cast<double>(out), counter::kIsIterationInvariantRate | counter::kInvert);
  state.counters["in_bytes"] = counter(static_cast<double>(in));
  state.counters["out_bytes"] = counter(static_cast<double>(out));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(in));
}

// `vectors`: single code lengths by vector instructions where the processor
// has them ("ours/"), or two a lookup by the pair table ("ours_pairs/").
void ours(benchmark::State& state, const std::string& name, bool vectors) {
  const bytes& stream = stream_named(name);
  bytes out(output_buffer);
  auto decoder = std::make_unique<npyguard::npz::detail::deflate_decoder>();
  decoder->use_vector_lengths(vectors);
  state.SetLabel(decoder->vector_lengths() ? "vectors" : "pairs");
  std::uint64_t produced = 0;
  for (auto _ : state) {
    decoder->reset();
    std::size_t at = 0;
    for (;;) {
      const auto step = decoder->decode(stream.data() + at, stream.size() - at, out.data(), out.size());
      at += step.consumed;
      benchmark::DoNotOptimize(out.data());
      if (step.result != npyguard::npz::detail::deflate_decoder::outcome::more) {
        if (step.result != npyguard::npz::detail::deflate_decoder::outcome::ended) state.SkipWithError("not ended");
        break;
      }
      if (step.consumed == 0 && step.written == 0) {
        state.SkipWithError("stuck");
        break;
      }
    }
    produced = decoder->total_out();
  }
  report(state, stream.size(), produced);
}

void theirs(benchmark::State& state, const std::string& name) {
  const bytes& stream = stream_named(name);
  bytes out(output_buffer);
  z_stream z{};
  if (inflateInit2(&z, -MAX_WBITS) != Z_OK) std::abort();
  std::uint64_t produced = 0;
  for (auto _ : state) {
    inflateReset(&z);
    z.next_in = const_cast<Bytef*>(stream.data());
    z.avail_in = static_cast<uInt>(stream.size());
    int code = Z_OK;
    do {
      z.next_out = out.data();
      z.avail_out = static_cast<uInt>(out.size());
      code = inflate(&z, Z_NO_FLUSH);
      benchmark::DoNotOptimize(out.data());
    } while (code == Z_OK);
    if (code != Z_STREAM_END) state.SkipWithError("not ended");
    produced = z.total_out;
  }
  inflateEnd(&z);
  report(state, stream.size(), produced);
}

// The CRC-32 that `check --verify` takes of every output byte (and of every
// byte of a stored member): ours (folded by carry-less multiplication where
// the processor has it) against zlib's crc32, over a buffer of `size` bytes
// as the verifier hands them (up to 1 MiB at a time).
void crc32_of(benchmark::State& state, std::size_t size, bool zlib) {
  bytes data(size);
  std::mt19937 rng(38);
  for (auto& byte : data) byte = static_cast<unsigned char>(rng() & 0xFFU);
  std::uint32_t crc = 0;
  for (auto _ : state) {
    crc = zlib ? static_cast<std::uint32_t>(::crc32(crc, data.data(), static_cast<uInt>(data.size())))
               : npyguard::npz::detail::crc32_update(crc, data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(size));
  state.SetLabel(npyguard::npz::detail::crc32_folds() ? "folds" : "zlib");
}

const int registered = [] {
  for (const std::size_t size : {std::size_t{64}, std::size_t{4096}, std::size_t{1} << 20}) {
    const std::string suffix = "crc32_" + std::to_string(size);
    benchmark::RegisterBenchmark(("ours/" + suffix).c_str(), [size](benchmark::State& s) { crc32_of(s, size, false); });
    benchmark::RegisterBenchmark(("zlib/" + suffix).c_str(), [size](benchmark::State& s) { crc32_of(s, size, true); });
  }
  for (const char* name :
       {"float64_l1",      "float64_l6",        "float64_l9",   "small_ints_l1", "small_ints_l6",    "small_ints_l9",
        "runs20_l6",       "runs35_l6",         "bools_l1",     "bools_l6",      "bools_l9",         "text_l1",
        "text_l6",         "text_l9",           "max_tree",     "dense_tree_2",  "dense_tree_5",     "dense_short",
        "tiny_tree",       "tiny_tree_4",       "literal_run",  "literal_pairs", "literal_3bit_run", "match_run",
        "match_run_10_2",  "match_run_2bit",    "match_run_8",  "match_run_alt", "trigger_5",        "trigger_12",
        "trigger_16",      "trigger_20",        "trigger_21",   "trigger_24",    "trigger_36",       "trigger_67",
        "trigger_69",      "trigger_200",       "trigger_518",  "trigger_600",   "trigger_1000",     "short_lengths_2",
        "short_lengths_5", "short_distance_5",  "mixed_tree_5", "flip_tree_5",   "exit_tree_5",      "flip_short_5",
        "flush_64",        "one_literal_fixed", "stored_empty", "stored_16"}) {
    const std::string stream = name;
    benchmark::RegisterBenchmark(("ours/" + stream).c_str(), [stream](benchmark::State& s) {
      ours(s, stream, true);
    })->Unit(benchmark::kMillisecond);
    if (npyguard::npz::detail::deflate_decoder::vector_lengths_supported()) {
      benchmark::RegisterBenchmark(("ours_pairs/" + stream).c_str(), [stream](benchmark::State& s) {
        ours(s, stream, false);
      })->Unit(benchmark::kMillisecond);
    }
    benchmark::RegisterBenchmark(("zlib/" + stream).c_str(), [stream](benchmark::State& s) {
      theirs(s, stream);
    })->Unit(benchmark::kMillisecond);
  }
  return 0;
}();

} // namespace

BENCHMARK_MAIN();
