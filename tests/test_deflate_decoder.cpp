// deflate_decoder (src/npz/deflate_decoder.cpp) against zlib's raw inflate:
// hand-built streams for each of zlib's rules, zlib-written streams, every
// way of splitting a stream in two, one-byte input and output, and reuse of
// one decoder across streams. Each stream's verdict is zlib's, checked here
// too, so that a test cannot drift from what it means to build.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <zlib.h>

#include "fuzz/inflate_differential.hpp"
#include "npz/deflate_decoder.hpp"
#include "tests/deflate_bits.hpp"

namespace {

using npyguard::deflate_bits::bytes;
using npyguard::fuzz::inflate_verdict;
using npyguard::npz::detail::deflate_decoder;

using npyguard::deflate_bits::bit_writer;
using npyguard::deflate_bits::canonical;

// A dynamic block's header: the code length code with the given lengths
// (by symbol 0-18), HCLEN covering all 19, then `lengths` written one
// symbol each (0-15) with that code.
struct dynamic_header {
  std::vector<unsigned> precode_lengths = std::vector<unsigned>(19, 5); // placeholder, set below
  std::vector<unsigned> lengths;                                        // literal/length then distance
  unsigned litlen_count = 257;
};

constexpr unsigned precode_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

// Code length code: symbols 0-15 five bits each, 17 and 18 two bits (16
// unused): complete.
std::vector<unsigned> five_bit_precode() {
  std::vector<unsigned> lengths(19, 5);
  lengths[16] = 0;
  lengths[17] = 2;
  lengths[18] = 2;
  return lengths;
}

void write_header(bit_writer& w, bool final, unsigned litlen_count, unsigned distance_count,
                  const std::vector<unsigned>& precode, const std::vector<unsigned>& lengths) {
  w.put(final ? 1 : 0, 1).put(2, 2).put(litlen_count - 257, 5).put(distance_count - 1, 5).put(19 - 4, 4);
  for (unsigned symbol : precode_order) w.put(precode[symbol], 3);
  const auto codes = canonical(precode);
  for (unsigned length : lengths) w.code(codes[length], precode[length]);
}

// The verdict of zlib and of the decoder, checked equal under many plans:
// the whole stream at once, one byte in and out at a time, every split in
// two with several output sizes, and odd chunkings. `vectors`: single code
// lengths by vector instructions where the processor has them, or by the
// pair table.
inflate_verdict verdict_all_ways_with(bool vectors, const bytes& stream, bytes* output) {
  deflate_decoder ours;
  ours.use_vector_lengths(vectors);
  npyguard::fuzz::zlib_inflater theirs;
  const std::size_t size = stream.size();
  const auto whole = npyguard::fuzz::compare_inflate(stream.data(), size, {size}, {std::size_t{1} << 20}, ours, theirs);
  INFO(whole.disagreement);
  REQUIRE(whole.agree);
  const std::vector<std::vector<std::size_t>> input_plans = {{1}, {2}, {3, 0, 5}, {7}, {64}, {0, 300}};
  const std::vector<std::vector<std::size_t>> output_plans = {{1}, {2}, {257}, {258, 1}, {300}, {321, 0, 4096}};
  for (const auto& inputs : input_plans) {
    for (const auto& outputs : output_plans) {
      const auto planned = npyguard::fuzz::compare_inflate(stream.data(), size, inputs, outputs, ours, theirs);
      INFO(planned.disagreement);
      REQUIRE(planned.agree);
      REQUIRE(planned.output == whole.output);
    }
  }
  if (size <= 600) {
    for (std::size_t split = 0; split <= size; ++split) {
      for (std::size_t out : {std::size_t{1}, std::size_t{3}, std::size_t{64 * 1024}}) {
        const auto planned = npyguard::fuzz::compare_inflate(stream.data(), size, {split, size}, {out}, ours, theirs);
        INFO("split at " << split << ", output " << out << ": " << planned.disagreement);
        REQUIRE(planned.agree);
      }
    }
  }
  if (output != nullptr) *output = whole.output;
  return whole.verdict;
}

// verdict_all_ways_with, both ways (the same verdict and output).
inflate_verdict verdict_all_ways(const bytes& stream, bytes* output = nullptr) {
  bytes paired;
  const inflate_verdict verdict = verdict_all_ways_with(false, stream, &paired);
  bytes vectored;
  REQUIRE(verdict_all_ways_with(true, stream, &vectored) == verdict);
  REQUIRE(vectored == paired);
  if (output != nullptr) *output = paired;
  return verdict;
}

bytes zlib_deflate(const bytes& data, int level, int strategy = Z_DEFAULT_STRATEGY, std::size_t flush_every = 0,
                   int flush = Z_FULL_FLUSH) {
  z_stream z{};
  REQUIRE(deflateInit2(&z, level, Z_DEFLATED, -MAX_WBITS, 8, strategy) == Z_OK);
  bytes out(deflateBound(&z, static_cast<uLong>(data.size())) + 1024 + 2 * data.size()); // flushes add headers
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  std::size_t at = 0;
  const std::size_t piece = flush_every == 0 ? data.size() : flush_every;
  while (at < data.size()) {
    const std::size_t n = std::min(piece, data.size() - at);
    z.next_in = const_cast<Bytef*>(data.data() + at);
    z.avail_in = static_cast<uInt>(n);
    REQUIRE(deflate(&z, flush_every == 0 ? Z_NO_FLUSH : flush) == Z_OK);
    at += n;
  }
  REQUIRE(deflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

bytes text_like(std::size_t size, unsigned seed) {
  static const char* const words[] = {
      "npy", "header", "descr", "shape", "fortran_order", "False", "(3, 4)", "<f8", " ", "\n", "{", "}", "'", ":", ","};
  std::mt19937 rng(seed);
  bytes out;
  while (out.size() < size) {
    const std::string word = words[rng() % 15];
    out.insert(out.end(), word.begin(), word.end());
  }
  out.resize(size);
  return out;
}

bytes float_like(std::size_t count, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  bytes out(count * 8);
  for (std::size_t i = 0; i < count; ++i) {
    const double value = uniform(rng);
    std::memcpy(out.data() + 8 * i, &value, 8);
  }
  return out;
}

bytes small_ints(std::size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  bytes out(size);
  for (auto& value : out) value = static_cast<unsigned char>(rng() % 7);
  return out;
}

// The largest header's code lengths (bench/npz_crafted.py's TREE_LENGTHS):
// literal/length 226 x 8 and 60 x 9, distance 2 x 4 and 28 x 5, both
// complete.
std::vector<unsigned> largest_header_lengths() {
  std::vector<unsigned> lengths(226, 8);
  lengths.insert(lengths.end(), 60, 9);
  lengths.insert(lengths.end(), 2, 4);
  lengths.insert(lengths.end(), 28, 5);
  return lengths;
}

// A fixed block: BFINAL, BTYPE 01, then codes.
bit_writer fixed_block(bool final) {
  bit_writer w;
  w.put(final ? 1 : 0, 1).put(1, 2);
  return w;
}
void fixed_literal(bit_writer& w, unsigned value) {
  if (value < 144) {
    w.code(0x30 + value, 8);
  } else {
    w.code(0x190 + value - 144, 9);
  }
}
void fixed_symbol(bit_writer& w, unsigned symbol) { // 256-287
  if (symbol < 280) {
    w.code(symbol - 256, 7);
  } else {
    w.code(0xC0 + symbol - 280, 8);
  }
}

} // namespace

TEST_CASE("deflate_decoder: stored, fixed and dynamic blocks as zlib reads them", "[deflate]") {
  SECTION("stored blocks, empty ones among them") {
    bit_writer w;
    w.put(0, 1).put(0, 2).raw({3, 0, 0xFC, 0xFF, 'a', 'b', 'c'});
    w.put(0, 1).put(0, 2).raw({0, 0, 0xFF, 0xFF});
    w.put(1, 1).put(0, 2).raw({2, 0, 0xFD, 0xFF, 'd', 'e'});
    bytes out;
    CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
    CHECK(out == bytes{'a', 'b', 'c', 'd', 'e'});
  }
  SECTION("fixed blocks: literals, a match, the end") {
    bit_writer w = fixed_block(true);
    fixed_literal(w, 'x');
    fixed_literal(w, 200);
    fixed_symbol(w, 258); // length 4
    w.code(1, 5);         // distance 2
    fixed_symbol(w, 256);
    bytes out;
    CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
    CHECK(out == bytes{'x', 200, 'x', 200, 'x', 200});
  }
  SECTION("zlib's own streams at levels 0, 1, 6, 9, fixed codes, flushed every 64 bytes") {
    const bytes inputs[] = {text_like(20000, 1), float_like(1500, 2), small_ints(15000, 3), bytes{}, bytes{'a'}};
    for (const bytes& data : inputs) {
      for (int level : {0, 1, 6, 9}) {
        bytes out;
        CHECK(verdict_all_ways(zlib_deflate(data, level), &out) == inflate_verdict::ended);
        CHECK(out == data);
      }
      CHECK(verdict_all_ways(zlib_deflate(data, 6, Z_FIXED)) == inflate_verdict::ended);
      CHECK(verdict_all_ways(zlib_deflate(data, 9, Z_DEFAULT_STRATEGY, 64)) == inflate_verdict::ended);
      CHECK(verdict_all_ways(zlib_deflate(data, 1, Z_DEFAULT_STRATEGY, 100, Z_SYNC_FLUSH)) == inflate_verdict::ended);
    }
  }
  SECTION("a stream cut short needs more input; bytes after the end are not consumed") {
    const bytes data = text_like(3000, 4);
    bytes stream = zlib_deflate(data, 9);
    const bytes cut(stream.begin(), stream.end() - 1);
    CHECK(verdict_all_ways(cut) == inflate_verdict::needs_input);
    stream.push_back(0x55);
    stream.push_back(0xAA);
    deflate_decoder ours;
    npyguard::fuzz::zlib_inflater theirs;
    const auto whole =
        npyguard::fuzz::compare_inflate(stream.data(), stream.size(), {stream.size()}, {1 << 20}, ours, theirs);
    REQUIRE(whole.agree);
    CHECK(whole.consumed == stream.size() - 2);
  }
}

TEST_CASE("deflate_decoder: every data error zlib reports", "[deflate]") {
  SECTION("block type 3") {
    CHECK(verdict_all_ways(bit_writer().put(1, 1).put(3, 2).done()) == inflate_verdict::corrupt);
  }
  SECTION("stored LEN and NLEN not complements") {
    CHECK(verdict_all_ways(bit_writer().put(1, 1).put(0, 2).raw({5, 0, 0xFA, 0xFE}).done()) ==
          inflate_verdict::corrupt);
  }
  SECTION("too many length or distance symbols") {
    CHECK(verdict_all_ways(bit_writer().put(1, 1).put(2, 2).put(30, 5).put(0, 5).put(15, 4).put(0, 32).done()) ==
          inflate_verdict::corrupt);
    CHECK(verdict_all_ways(bit_writer().put(1, 1).put(2, 2).put(0, 5).put(30, 5).put(15, 4).put(0, 32).done()) ==
          inflate_verdict::corrupt);
  }
  SECTION("code length code over-subscribed, incomplete, or empty (every length then reads 0: no end of block)") {
    std::vector<unsigned> over(19, 1);
    std::vector<unsigned> incomplete(19, 0);
    incomplete[0] = 1;
    std::vector<unsigned> empty(19, 0);
    for (const auto& precode : {over, incomplete, empty}) {
      bit_writer w;
      w.put(1, 1).put(2, 2).put(0, 5).put(0, 5).put(15, 4);
      for (unsigned symbol : precode_order) w.put(precode[symbol], 3);
      w.put(0, 32).put(0, 32).put(0, 32).put(0, 32).put(0, 32).put(0, 32).put(0, 32).put(0, 32).put(0, 32);
      CHECK(verdict_all_ways(w.done()) == inflate_verdict::corrupt);
    }
  }
  SECTION("repeat of the previous length with none, repeats past HLIT + HDIST") {
    std::vector<unsigned> precode(19, 0);
    precode[16] = 1;
    precode[18] = 1;
    bit_writer first;
    first.put(1, 1).put(2, 2).put(0, 5).put(0, 5).put(15, 4);
    for (unsigned symbol : precode_order) first.put(precode[symbol], 3);
    first.code(0, 1).put(3, 2).put(0, 32);
    CHECK(verdict_all_ways(first.done()) == inflate_verdict::corrupt);
    bit_writer past;
    past.put(1, 1).put(2, 2).put(0, 5).put(0, 5).put(15, 4);
    for (unsigned symbol : precode_order) past.put(precode[symbol], 3);
    past.code(1, 1).put(127, 7).code(1, 1).put(127, 7).code(1, 1).put(127, 7).put(0, 16);
    CHECK(verdict_all_ways(past.done()) == inflate_verdict::corrupt);
  }
  SECTION("no end-of-block code; literal/length or distance code over-subscribed or incomplete") {
    auto block = [](std::vector<unsigned> litlen, std::vector<unsigned> distance) {
      std::vector<unsigned> lengths = litlen;
      lengths.insert(lengths.end(), distance.begin(), distance.end());
      bit_writer w;
      write_header(w, true, static_cast<unsigned>(litlen.size()), static_cast<unsigned>(distance.size()),
                   five_bit_precode(), lengths);
      w.code(1, 1).put(0, 32); // the end of block where litlen[0] and litlen[256] are one bit each
      return w.done();
    };
    std::vector<unsigned> no_eob(257, 0);
    no_eob[0] = 1;
    no_eob[1] = 1;
    CHECK(verdict_all_ways(block(no_eob, {1, 1})) == inflate_verdict::corrupt);
    std::vector<unsigned> over(257, 0);
    over[0] = over[1] = over[256] = 1;
    CHECK(verdict_all_ways(block(over, {1, 1})) == inflate_verdict::corrupt);
    std::vector<unsigned> incomplete(257, 0);
    incomplete[0] = incomplete[256] = 2;
    CHECK(verdict_all_ways(block(incomplete, {1, 1})) == inflate_verdict::corrupt);
    std::vector<unsigned> good(257, 0);
    good[0] = good[256] = 1;
    CHECK(verdict_all_ways(block(good, {1, 1, 1})) == inflate_verdict::corrupt); // distances over-subscribed
    CHECK(verdict_all_ways(block(good, {2, 2})) == inflate_verdict::corrupt);    // distances incomplete
    // Complete codes (or one distance code, or none), then the end of block.
    CHECK(verdict_all_ways(block(good, {1, 1})) == inflate_verdict::ended);
    CHECK(verdict_all_ways(block(good, {0})) == inflate_verdict::ended);
    CHECK(verdict_all_ways(block(good, {1})) == inflate_verdict::ended);
  }
  SECTION("literal/length symbols 286 and 287, distances 30 and 31 (fixed blocks)") {
    for (unsigned symbol : {286U, 287U}) {
      bit_writer w = fixed_block(true);
      fixed_literal(w, 'a');
      fixed_symbol(w, symbol);
      w.put(0, 16);
      CHECK(verdict_all_ways(w.done()) == inflate_verdict::corrupt);
    }
    for (unsigned distance : {30U, 31U}) {
      bit_writer w = fixed_block(true);
      fixed_literal(w, 'a');
      fixed_symbol(w, 257);
      w.code(distance, 5);
      w.put(0, 16);
      CHECK(verdict_all_ways(w.done()) == inflate_verdict::corrupt);
    }
  }
}

TEST_CASE("deflate_decoder: the window's edge", "[deflate]") {
  // 'a' 'b', then a match at distance 2 (= the output so far) and at 3 (one more).
  for (unsigned distance_code : {1U, 2U}) {
    bit_writer w = fixed_block(true);
    fixed_literal(w, 'a');
    fixed_literal(w, 'b');
    fixed_symbol(w, 257); // length 3
    w.code(distance_code, 5);
    fixed_symbol(w, 256);
    bytes out;
    const inflate_verdict verdict = verdict_all_ways(w.done(), &out);
    if (distance_code == 1) {
      CHECK(verdict == inflate_verdict::ended);
      CHECK(out == bytes{'a', 'b', 'a', 'b', 'a'});
    } else {
      CHECK(verdict == inflate_verdict::corrupt);
    }
  }
  SECTION("a match 32,768 back, across calls") {
    bytes data = small_ints(40000, 5);
    const bytes head(data.begin(), data.begin() + 300);
    data.insert(data.end(), head.begin(), head.end()); // the first bytes again, 40,000 back: a literal run
    bytes far = small_ints(32768, 6);
    far.insert(far.end(), far.begin(), far.begin() + 258); // 32,768 back exactly
    for (const bytes& input : {data, far}) {
      deflate_decoder ours;
      npyguard::fuzz::zlib_inflater theirs;
      const bytes stream = zlib_deflate(input, 9);
      for (std::size_t out : {std::size_t{1}, std::size_t{1000}, std::size_t{32767}, std::size_t{40000}}) {
        const auto planned = npyguard::fuzz::compare_inflate(stream.data(), stream.size(), {4096}, {out}, ours, theirs);
        INFO(planned.disagreement);
        REQUIRE(planned.agree);
        CHECK(planned.output == input);
      }
    }
  }
}

TEST_CASE("deflate_decoder: 15-bit codes, a one-code distance tree, an empty one", "[deflate]") {
  SECTION("literal codes of 1 to 15 bits") {
    // 'a'..'n' of 1..14 bits, 'o' and the end of block 15 bits: complete.
    std::vector<unsigned> litlen(257, 0);
    for (unsigned i = 0; i < 14; ++i) litlen['a' + i] = i + 1;
    litlen['o'] = 15;
    litlen[256] = 15;
    std::vector<unsigned> lengths = litlen;
    lengths.push_back(0); // no distance code
    bit_writer w;
    write_header(w, true, 257, 1, five_bit_precode(), lengths);
    const auto codes = canonical(litlen);
    for (unsigned symbol : {unsigned{'o'}, unsigned{'n'}, unsigned{'a'}, unsigned{'g'}, unsigned{'o'}, 256U}) {
      w.code(codes[symbol], litlen[symbol]);
    }
    bytes out;
    CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
    CHECK(out == bytes{'o', 'n', 'a', 'g', 'o'});
  }
  SECTION("one distance code of one bit: its code 0 works, code 1 is an error") {
    std::vector<unsigned> litlen(258, 0);
    litlen['a'] = 1;
    litlen[256] = 2;
    litlen[257] = 2; // length 3
    const auto codes = canonical(litlen);
    for (unsigned distance_bit : {0U, 1U}) {
      std::vector<unsigned> lengths = litlen;
      lengths.push_back(1);
      bit_writer w;
      write_header(w, true, 258, 1, five_bit_precode(), lengths);
      w.code(codes['a'], 1).code(codes[257], 2).put(distance_bit, 1).code(codes[256], 2);
      bytes out;
      const inflate_verdict verdict = verdict_all_ways(w.done(), &out);
      CHECK(verdict == (distance_bit == 0 ? inflate_verdict::ended : inflate_verdict::corrupt));
      if (distance_bit == 0) CHECK(out == bytes{'a', 'a', 'a', 'a'});
    }
  }
  SECTION("no distance codes: any match is an error once one bit is there") {
    std::vector<unsigned> litlen(258, 0);
    litlen['a'] = 1;
    litlen[256] = 2;
    litlen[257] = 2;
    std::vector<unsigned> lengths = litlen;
    lengths.push_back(0);
    const auto codes = canonical(litlen);
    bit_writer w;
    write_header(w, true, 258, 1, five_bit_precode(), lengths);
    w.code(codes['a'], 1).code(codes[257], 2);
    w.align();
    const bytes upto_match = w.done();
    // Cut exactly after the length code (with padding bits): needs input or corrupt as zlib says.
    verdict_all_ways(upto_match);
    w.put(0, 8);
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::corrupt);
  }
  SECTION("a literal/length code of one symbol, the end of block, one bit") {
    std::vector<unsigned> litlen(257, 0);
    litlen[256] = 1;
    std::vector<unsigned> lengths = litlen;
    lengths.push_back(0);
    for (unsigned bit : {0U, 1U}) {
      bit_writer w;
      write_header(w, true, 257, 1, five_bit_precode(), lengths);
      w.put(bit, 1);
      CHECK(verdict_all_ways(w.done()) == (bit == 0 ? inflate_verdict::ended : inflate_verdict::corrupt));
    }
  }
}

TEST_CASE("deflate_decoder: one decoder across streams, whatever state the last one left", "[deflate]") {
  deflate_decoder ours;
  npyguard::fuzz::zlib_inflater theirs;
  const bytes data = text_like(20000, 7);
  const bytes good = zlib_deflate(data, 6);
  const bytes cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(good.size() / 2));
  const bytes bad = bit_writer().put(1, 1).put(3, 2).done();
  for (const bytes* stream : {&cut, &good, &bad, &good, &cut, &cut, &good}) {
    const auto run = npyguard::fuzz::compare_inflate(stream->data(), stream->size(), {100}, {77}, ours, theirs);
    INFO(run.disagreement);
    REQUIRE(run.agree);
    if (stream == &good) CHECK(run.output == data);
  }
}

TEST_CASE("deflate_decoder: dynamic blocks with the largest header, back to back", "[deflate]") {
  // bench/npz_crafted.py's max_tree: HLIT 286, HDIST 30, HCLEN 19, every
  // length written out, two matches of 258 at distance 1.
  std::vector<unsigned> precode(19, 4);
  for (unsigned i = 13; i < 19; ++i) precode[i] = 5;
  const std::vector<unsigned> lengths = largest_header_lengths();
  const std::vector<unsigned> litlen(lengths.begin(), lengths.begin() + 286);
  const std::vector<unsigned> distance(lengths.begin() + 286, lengths.end());
  const auto litlen_codes = canonical(litlen);
  const auto distance_codes = canonical(distance);
  bit_writer w;
  w.put(0, 1).put(1, 2);
  fixed_literal(w, 'z');
  fixed_symbol(w, 256);
  for (int block = 0; block < 20; ++block) {
    write_header(w, block == 19, 286, 30, precode, lengths);
    for (int match = 0; match < 2; ++match) {
      w.code(litlen_codes[285], litlen[285]);
      w.code(distance_codes[0], distance[0]);
    }
    w.code(litlen_codes[256], litlen[256]);
  }
  bytes out;
  CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
  CHECK(out == bytes(1 + 20 * 2 * 258, 'z'));
}

namespace {

// A dynamic header's lengths as the code length code's units: a length
// (0-15), or a repeat (16: the previous length 3-6 times, 17: zeros 3-10
// times, 18: zeros 11-138 times) with the value of its extra bits.
struct length_unit {
  unsigned symbol;
  unsigned extra;
};

// `lengths` with repeats where `rng` picks them (one may cross from the
// literal/length code into the distance code, as RFC 1951 allows).
std::vector<length_unit> with_repeats(const std::vector<unsigned>& lengths, std::mt19937& rng) {
  std::vector<length_unit> units;
  for (std::size_t i = 0; i < lengths.size();) {
    const unsigned value = lengths[i];
    std::size_t run = 1;
    while (i + run < lengths.size() && lengths[i + run] == value) ++run;
    const bool repeat = rng() % 3 != 0;
    auto take = [&](unsigned low, std::size_t high) {
      return low + static_cast<unsigned>(rng() % (std::min<std::size_t>(run, high) - low + 1));
    };
    if (repeat && value == 0 && run >= 11) {
      const unsigned count = take(11, 138);
      units.push_back({18, count - 11});
      i += count;
    } else if (repeat && value == 0 && run >= 3) {
      const unsigned count = take(3, 10);
      units.push_back({17, count - 3});
      i += count;
    } else if (repeat && i > 0 && lengths[i - 1] == value && run >= 3) {
      const unsigned count = take(3, 6);
      units.push_back({16, count - 3});
      i += count;
    } else {
      units.push_back({value, 0});
      ++i;
    }
  }
  return units;
}

// Lengths of a complete prefix code (of at most `longest` bits, or as few
// as `coded` needs) for the symbols in `coded` (at least two), the tree
// grown from two leaves by splitting leaves at random, often the deepest.
std::vector<unsigned> random_complete_code(std::mt19937& rng, std::size_t symbols, std::vector<unsigned> coded,
                                           unsigned longest) {
  while ((std::size_t{1} << longest) < coded.size()) ++longest;
  std::vector<unsigned> depths = {1, 1};
  while (depths.size() < coded.size()) {
    std::size_t pick = rng() % depths.size();
    if (rng() % 3 == 0)
      pick = static_cast<std::size_t>(std::max_element(depths.begin(), depths.end()) - depths.begin());
    while (depths[pick] >= longest) pick = rng() % depths.size();
    ++depths[pick];
    depths.push_back(depths[pick]);
  }
  std::shuffle(depths.begin(), depths.end(), rng);
  std::vector<unsigned> lengths(symbols, 0);
  for (std::size_t i = 0; i < coded.size(); ++i) lengths[coded[i]] = depths[i];
  return lengths;
}

// `count` symbols of 0..`symbols`-1 at random, `always` among them.
std::vector<unsigned> some_symbols(std::mt19937& rng, unsigned symbols, std::size_t count, int always = -1) {
  std::vector<unsigned> all(symbols);
  for (unsigned i = 0; i < symbols; ++i) all[i] = i;
  std::shuffle(all.begin(), all.end(), rng);
  if (always >= 0) std::iter_swap(all.begin(), std::find(all.begin(), all.end(), static_cast<unsigned>(always)));
  all.resize(count);
  return all;
}

constexpr unsigned test_length_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                           31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
constexpr unsigned test_length_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                            2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
constexpr unsigned test_distance_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                             33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                             1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
constexpr unsigned test_distance_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                              6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

// A dynamic block: its header from `litlen` and `distance` lengths (written
// with `units`), then `symbols` literals and matches drawn from the codes,
// each match within the output so far (`produced`), then the end of block.
void write_dynamic_block(bit_writer& w, std::mt19937& rng, bool final, const std::vector<unsigned>& litlen,
                         const std::vector<unsigned>& distance, const std::vector<length_unit>& units,
                         std::size_t symbols, std::size_t& produced, const std::vector<unsigned>& chosen_precode = {}) {
  std::vector<unsigned> used(19, 0);
  for (const auto& unit : units) used[unit.symbol] = 1;
  std::vector<unsigned> precode_symbols;
  for (unsigned symbol = 0; symbol < 19; ++symbol) {
    if (used[symbol] != 0) precode_symbols.push_back(symbol);
  }
  if (precode_symbols.size() == 1) precode_symbols.push_back(precode_symbols[0] == 0 ? 1 : 0);
  const std::vector<unsigned> precode =
      chosen_precode.empty() ? random_complete_code(rng, 19, precode_symbols, 7) : chosen_precode;
  unsigned precode_count = 19;
  while (precode_count > 4 && precode[precode_order[precode_count - 1]] == 0) --precode_count;
  w.put(final ? 1 : 0, 1).put(2, 2);
  w.put(static_cast<unsigned>(litlen.size()) - 257, 5).put(static_cast<unsigned>(distance.size()) - 1, 5);
  w.put(precode_count - 4, 4);
  for (unsigned i = 0; i < precode_count; ++i) w.put(precode[precode_order[i]], 3);
  const auto precode_codes = canonical(precode);
  for (const auto& unit : units) {
    w.code(precode_codes[unit.symbol], precode[unit.symbol]);
    if (unit.symbol >= 16) w.put(unit.extra, unit.symbol == 16 ? 2 : unit.symbol == 17 ? 3 : 7);
  }
  const auto litlen_codes = canonical(litlen);
  const auto distance_codes = canonical(distance);
  std::vector<unsigned> literals;
  std::vector<unsigned> lengths;
  std::vector<unsigned> distances;
  for (unsigned symbol = 0; symbol < litlen.size(); ++symbol) {
    if (litlen[symbol] != 0 && symbol < 256) literals.push_back(symbol);
    if (litlen[symbol] != 0 && symbol > 256) lengths.push_back(symbol);
  }
  for (unsigned symbol = 0; symbol < distance.size(); ++symbol) {
    if (distance[symbol] != 0 && distance_codes.size() > 1) distances.push_back(symbol);
  }
  for (std::size_t i = 0; i < symbols; ++i) {
    std::vector<unsigned> near; // distance codes whose least distance is within the output
    for (unsigned symbol : distances) {
      if (test_distance_base[symbol] <= std::min<std::size_t>(produced, 32768)) near.push_back(symbol);
    }
    if (!lengths.empty() && !near.empty() && (literals.empty() || rng() % 2 == 0)) {
      const unsigned length_symbol = lengths[rng() % lengths.size()];
      const unsigned length_extra = test_length_extra[length_symbol - 257];
      const unsigned length_value = static_cast<unsigned>(rng() % (1U << length_extra));
      const unsigned distance_symbol = near[rng() % near.size()];
      const unsigned distance_extra = test_distance_extra[distance_symbol];
      const std::size_t room = std::min<std::size_t>(produced, 32768) - test_distance_base[distance_symbol];
      const unsigned distance_value =
          static_cast<unsigned>(rng() % std::min<std::size_t>(room + 1, 1U << distance_extra));
      w.code(litlen_codes[length_symbol], litlen[length_symbol]).put(length_value, length_extra);
      w.code(distance_codes[distance_symbol], distance[distance_symbol]).put(distance_value, distance_extra);
      produced += test_length_base[length_symbol - 257] + length_value;
    } else if (!literals.empty()) {
      const unsigned literal = literals[rng() % literals.size()];
      w.code(litlen_codes[literal], litlen[literal]);
      ++produced;
    }
  }
  w.code(litlen_codes[256], litlen[256]);
}

} // namespace

TEST_CASE("deflate_decoder: random dynamic headers, repeats among them, and blocks of a few symbols to many",
          "[deflate]") {
  // Complete codes of 1 to 15 bits; repeats anywhere, across the literal/
  // length and distance codes too; distance codes of none, one or many
  // symbols; blocks short of the symbols after which the tables are built,
  // and past them. Every stream must end, as zlib says too.
  std::mt19937 rng(35);
  for (int stream = 0; stream < 60; ++stream) {
    bit_writer w;
    std::size_t produced = 0;
    const int blocks = 1 + static_cast<int>(rng() % 3);
    for (int block = 0; block < blocks; ++block) {
      const unsigned litlen_count = 257 + static_cast<unsigned>(rng() % 30);
      const unsigned distance_count = 1 + static_cast<unsigned>(rng() % 30);
      const std::size_t litlen_coded = 2 + rng() % (litlen_count - 1);
      const unsigned longest = 7 + static_cast<unsigned>(rng() % 9);
      const std::vector<unsigned> litlen =
          random_complete_code(rng, litlen_count, some_symbols(rng, litlen_count, litlen_coded, 256), longest);
      std::vector<unsigned> distance(distance_count, 0);
      const unsigned shape = static_cast<unsigned>(rng() % 6);
      if (shape == 1) {
        distance[rng() % distance_count] = 1; // one code of one bit
      } else if (shape != 0 && distance_count >= 2) {
        const std::size_t coded = 2 + rng() % (distance_count - 1);
        distance = random_complete_code(rng, distance_count, some_symbols(rng, distance_count, coded), longest);
      }
      std::vector<unsigned> lengths = litlen;
      lengths.insert(lengths.end(), distance.begin(), distance.end());
      const std::size_t symbols = rng() % 4 == 0 ? 60 + rng() % 100 : rng() % 16;
      write_dynamic_block(w, rng, block == blocks - 1, litlen, distance, with_repeats(lengths, rng), symbols, produced);
    }
    INFO("stream " << stream);
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  }
}

TEST_CASE("deflate_decoder: repeats across the literal/length and distance codes", "[deflate]") {
  // A repeat of the previous length from the literal/length code's last
  // lengths into the distance code's first, and one of zeros.
  std::vector<unsigned> litlen(257, 0);
  litlen['a'] = 2;
  litlen['b'] = 2;
  litlen['c'] = 3;
  litlen[254] = 3;
  litlen[255] = 3;
  litlen[256] = 3;
  const std::vector<unsigned> distance = {3, 3, 2, 1};
  std::vector<length_unit> across;
  for (unsigned i = 0; i < 255; ++i) across.push_back({litlen[i], 0});
  across.push_back({16, 0}); // 255, 256 and distance 0: 3 bits
  across.push_back({3, 0});
  across.push_back({2, 0});
  across.push_back({1, 0});
  std::vector<unsigned> zero_tail(260, 0); // 257-259 unused
  zero_tail['a'] = 1;
  zero_tail[256] = 1;
  std::vector<length_unit> zeros;
  for (unsigned i = 0; i < 98; ++i) zeros.push_back({zero_tail[i], 0});
  zeros.push_back({18, 138 - 11}); // 98-235
  zeros.push_back({18, 20 - 11});  // 236-255
  zeros.push_back({1, 0});         // 256
  zeros.push_back({17, 6 - 3});    // 257-259, then distances 0-2: no distance code
  std::mt19937 rng(7);
  for (int which = 0; which < 2; ++which) {
    bit_writer w;
    std::size_t produced = 0;
    if (which == 0) {
      write_dynamic_block(w, rng, true, litlen, distance, across, 40, produced);
    } else {
      write_dynamic_block(w, rng, true, zero_tail, std::vector<unsigned>(3, 0), zeros, 12, produced);
    }
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  }
}

TEST_CASE("deflate_decoder: dense headers, repeats stored eight at a time", "[deflate]") {
  // The header decoder stores eight lengths and eight bucket entries for a
  // repeat whatever its count, keeps the previous length's bucket in a
  // register, and sends zeros to bucket 0; these streams have at least 8
  // bytes after each header, so that the fast loop decodes them.
  std::mt19937 rng(36);
  SECTION("a bucket of 280 literal/length and one of 28 distance symbols, filled by repeats to their last") {
    // 280 codes of 9 bits and codes of 2, 3, 4 and 6 bits: complete.
    std::vector<unsigned> litlen(286, 0);
    std::fill(litlen.begin(), litlen.begin() + 280, 9U);
    litlen[280] = 2;
    litlen[281] = 3;
    litlen[282] = 4;
    litlen[283] = 6;
    std::vector<unsigned> distance(30, 5);
    distance[28] = 4;
    distance[29] = 4;
    std::vector<length_unit> units = {{9, 0}};
    for (int i = 0; i < 46; ++i) units.push_back({16, 3}); // 6 each
    units.push_back({16, 0});                              // 3: symbol 279, the bucket's last
    for (unsigned symbol = 280; symbol < 286; ++symbol) units.push_back({litlen[symbol], 0});
    units.push_back({5, 0});
    for (int i = 0; i < 4; ++i) units.push_back({16, 3});
    units.push_back({16, 0}); // distance 25-27, the bucket's last
    units.push_back({4, 0});
    units.push_back({4, 0});
    bit_writer w;
    std::size_t produced = 0;
    for (int block = 0; block < 6; ++block) {
      write_dynamic_block(w, rng, block == 5, litlen, distance, units, block % 2 == 0 ? 3 : 40, produced);
    }
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  }
  SECTION("the distance code's first lengths a repeat of the literal/length code's last; zeros then repeats of 0") {
    // Literal/length: 'a', 'b', 'c' and the end of block, 2 bits each;
    // distance: four codes of 2 bits, all from one repeat of the last
    // literal/length length.
    std::vector<unsigned> litlen(257, 0);
    litlen['a'] = litlen['b'] = litlen['c'] = litlen[256] = 2;
    const std::vector<unsigned> distance(4, 2);
    std::vector<length_unit> units = {{18, 90 - 11}, {0, 0}, {16, 3}}; // 0-96 zeros, the last 6 by repeat
    units.push_back({2, 0});                                           // 'a'
    units.push_back({2, 0});                                           // 'b'
    units.push_back({2, 0});                                           // 'c'
    units.push_back({17, 7});                                          // 100-109
    units.push_back({0, 0});                                           // 110
    units.push_back({16, 0});                                          // 111-113: a repeat of a zero
    units.push_back({18, 138 - 11});                                   // 114-251
    units.push_back({17, 0});                                          // 252-254
    units.push_back({0, 0});                                           // 255
    units.push_back({2, 0});                                           // 256
    units.push_back({16, 1});                                          // distances 0-3
    bit_writer w;
    std::size_t produced = 0;
    for (int block = 0; block < 4; ++block) {
      write_dynamic_block(w, rng, block == 3, litlen, distance, units, block % 2 == 0 ? 2 : 40, produced);
    }
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  }
  SECTION("zeros to 281 in bucket 0 one by one, then a repeat of zeros: its eight stores stay out of bucket 1") {
    // Literal/length 'a' and the end of block, one bit each; every other
    // length 0, the last three by repeat; one distance code of one bit.
    std::vector<unsigned> litlen(286, 0);
    litlen['a'] = 1;
    litlen[256] = 1;
    const std::vector<unsigned> distance = {1};
    std::vector<length_unit> units;
    for (unsigned symbol = 0; symbol < 283; ++symbol) units.push_back({litlen[symbol], 0});
    units.push_back({17, 0}); // 283-285
    units.push_back({1, 0});  // distance 0
    bit_writer w;
    std::size_t produced = 0;
    for (int block = 0; block < 3; ++block) {
      write_dynamic_block(w, rng, block == 2, litlen, distance, units, 30, produced);
    }
    bytes out;
    CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
    CHECK(out == bytes(90, 'a'));
  }
  SECTION("a repeat with nothing before it, or past the last length, with input to spare") {
    std::vector<unsigned> precode(19, 0);
    precode[16] = 1;
    precode[18] = 1;
    bit_writer first;
    first.put(1, 1).put(2, 2).put(0, 5).put(0, 5).put(15, 4);
    for (unsigned symbol : precode_order) first.put(precode[symbol], 3);
    first.code(0, 1).put(3, 2).put(0, 32).put(0, 32).put(0, 32);
    CHECK(verdict_all_ways(first.done()) == inflate_verdict::corrupt);
    bit_writer past;
    past.put(1, 1).put(2, 2).put(0, 5).put(0, 5).put(15, 4);
    for (unsigned symbol : precode_order) past.put(precode[symbol], 3);
    past.code(1, 1).put(127, 7).code(1, 1).put(127, 7).code(1, 1).put(127, 7).put(0, 32).put(0, 32).put(0, 32);
    CHECK(verdict_all_ways(past.done()) == inflate_verdict::corrupt);
    // A repeat of a nonzero length that would pass the last by one.
    std::vector<unsigned> two(19, 0);
    two[16] = 1;
    two[1] = 1;
    bit_writer over;
    over.put(1, 1).put(2, 2).put(0, 5).put(0, 5).put(15, 4);
    for (unsigned symbol : precode_order) over.put(two[symbol], 3);
    over.code(0, 1); // a length of 1 (code 0), then repeats of 6 up to 253, and one of 6 from 253
    for (int i = 0; i < 42; ++i) over.code(1, 1).put(3, 2);
    over.code(1, 1).put(3, 2).put(0, 32).put(0, 32).put(0, 32);
    CHECK(verdict_all_ways(over.done()) == inflate_verdict::corrupt);
  }
}

TEST_CASE("deflate_decoder: single code lengths two a lookup, and where pairs stop", "[deflate]") {
  // After a block's first 16 single lengths, if they took at most 3 bits
  // each on average, the header decoder reads single lengths two a lookup;
  // it stops before a repeat (going on with pairs after it unless the
  // repeat came within a refill's first four lookups) and for the rest of
  // the block where a refill's eight lookups give fewer than 12 lengths.
  // Streams that take those paths, three blocks each with 200 symbols
  // after each header, checked against zlib.
  std::mt19937 rng(37);
  // The largest header's code lengths, written with 1 to 4 bit codes.
  const std::vector<unsigned> lengths = largest_header_lengths();
  const std::vector<unsigned> litlen(lengths.begin(), lengths.begin() + 286);
  const std::vector<unsigned> distance(lengths.begin() + 286, lengths.end());
  // A code length code from (symbol, length) pairs, the other symbols uncoded.
  const auto precode_of = [](std::initializer_list<std::pair<unsigned, unsigned>> codes) {
    std::vector<unsigned> precode(19, 0);
    for (const auto& [symbol, length] : codes) precode[symbol] = length;
    return precode;
  };
  // Complete: 1/2 + 1/4 + 1/8 + 1/16 + 1/32 + 2/64.
  const auto short_codes = precode_of({{8, 1}, {9, 2}, {5, 3}, {4, 4}, {16, 5}, {17, 6}, {18, 6}});
  const auto singles = [](std::vector<unsigned>::const_iterator from, std::vector<unsigned>::const_iterator to) {
    std::vector<length_unit> units;
    for (; from != to; ++from) units.push_back({*from, 0});
    return units;
  };
  const auto check = [&](const std::vector<unsigned>& block_litlen, const std::vector<length_unit>& units,
                         const std::vector<unsigned>& precode) {
    bit_writer w;
    std::size_t produced = 0;
    for (int block = 0; block < 3; ++block) {
      write_dynamic_block(w, rng, block == 2, block_litlen, distance, units, 200, produced, precode);
    }
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  };
  SECTION("pairs the whole way, up to the distance code's lengths") {
    check(litlen, singles(lengths.begin(), lengths.end()), short_codes);
  }
  SECTION("repeats among pairs: after a refill's first four lookups, and within them") {
    // 16 single lengths, 80 in pairs, 10 more (five lookups), a repeat of 6;
    // 20 singles, a repeat of 3; the rest.
    std::vector<length_unit> units = singles(lengths.begin(), lengths.begin() + 106);
    units.push_back({16, 3});
    const auto middle = singles(lengths.begin() + 112, lengths.begin() + 132);
    units.insert(units.end(), middle.begin(), middle.end());
    units.push_back({16, 0});
    const auto rest = singles(lengths.begin() + 135, lengths.end());
    units.insert(units.end(), rest.begin(), rest.end());
    check(litlen, units, short_codes);
  }
  SECTION("pairs that stop paying: 7-bit codes after 1-bit ones") {
    // A complete literal/length code of 76 lengths of 8, 200 of 9 and 10 of
    // 5 (2 * 76 + 200 + 16 * 10 = 512 halves of 1/256): 40 8s at one bit
    // each (the trial, then pairs), then 5 and 9 in turn (7 and 2 bits: no
    // pair fits), then the rest.
    std::vector<unsigned> turns(40, 8);
    for (int i = 0; i < 10; ++i) {
      turns.push_back(5);
      turns.push_back(9);
    }
    turns.insert(turns.end(), 36, 8);
    turns.insert(turns.end(), 190, 9);
    // Complete: 64 + 32 + 16 + 8 + 4 + 2 + 1 + 1 of 128.
    const auto long_codes = precode_of({{8, 1}, {9, 2}, {0, 3}, {1, 4}, {2, 5}, {3, 6}, {5, 7}, {4, 7}});
    std::vector<unsigned> all = turns;
    all.insert(all.end(), distance.begin(), distance.end());
    check(turns, singles(all.begin(), all.end()), long_codes);
  }
  SECTION("pairs up to a distance code of one code of one bit (HDIST 1)") {
    std::vector<unsigned> all = litlen;
    all.push_back(1);
    bit_writer w;
    std::size_t produced = 0;
    for (int block = 0; block < 3; ++block) {
      write_dynamic_block(w, rng, block == 2, litlen, {1}, singles(all.begin(), all.end()), 200, produced,
                          precode_of({{8, 1}, {9, 2}, {1, 2}}));
    }
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  }
  SECTION("a first 16 that take more than 3 bits each: no pairs") {
    std::vector<unsigned> four_bit(19, 4);
    for (unsigned i = 13; i < 19; ++i) four_bit[i] = 5;
    check(litlen, singles(lengths.begin(), lengths.end()), four_bit);
  }
}

TEST_CASE("deflate_decoder: runs of single code lengths between repeats, decoded by vectors and by pairs",
          "[deflate]") {
  // Where the processor has AVX-512 VBMI, single code lengths are decoded
  // up to 63 a refill by vector instructions after the block's trial; the
  // run stops before a repeat (going on after it where the refill gave at
  // least 12 lengths) and at each code's end. verdict_all_ways checks each
  // stream both ways against zlib. Here the largest header's lengths in
  // random order, with a repeat of the previous length where one fits, at
  // rates that give runs of singles of every length from 0 to the code's.
  std::mt19937 rng(41);
  const std::vector<unsigned> lengths = largest_header_lengths();
  std::vector<unsigned> precode(19, 0);
  precode[8] = 1; // 1/2 + 1/4 + 1/8 + 1/16 + 1/32 + 1/32: complete
  precode[9] = 2;
  precode[5] = 3;
  precode[4] = 4;
  precode[16] = 5;
  precode[0] = 5;
  for (const unsigned percent : {0U, 2U, 5U, 10U, 25U, 60U}) {
    for (int stream = 0; stream < 6; ++stream) {
      std::vector<unsigned> litlen(lengths.begin(), lengths.begin() + 286);
      std::vector<unsigned> distance(lengths.begin() + 286, lengths.end());
      std::shuffle(litlen.begin(), litlen.end(), rng);
      std::shuffle(distance.begin(), distance.end(), rng);
      std::vector<unsigned> all = litlen;
      all.insert(all.end(), distance.begin(), distance.end());
      std::vector<length_unit> units;
      for (std::size_t i = 0; i < all.size();) {
        std::size_t run = 0; // lengths from i equal to the one before
        while (i > 0 && i + run < all.size() && run < 6 && all[i + run] == all[i - 1]) ++run;
        if (run >= 3 && rng() % 100 < percent) {
          const auto count = 3 + static_cast<unsigned>(rng() % (run - 2));
          units.push_back({16, count - 3});
          i += count;
        } else {
          units.push_back({all[i], 0});
          ++i;
        }
      }
      bit_writer w;
      std::size_t produced = 0;
      for (int block = 0; block < 3; ++block) {
        write_dynamic_block(w, rng, block == 2, litlen, distance, units, 100, produced, precode);
      }
      INFO("repeats at " << percent << "%, stream " << stream);
      CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
    }
  }
  // Every code length from 7 to 15 among them, each with its own bucket:
  // 214 x 8, 6 x 7, 59 x 9 and one each of 10-14 and two of 15 (complete:
  // a 9 split down to two 15s, two 8s for each 7), the first 16 all 8s (the
  // trial), the rest in random order.
  std::vector<unsigned> litlen(214, 8);
  litlen.insert(litlen.end(), 6, 7);
  litlen.insert(litlen.end(), 59, 9);
  for (unsigned length : {10U, 11U, 12U, 13U, 14U, 15U, 15U}) litlen.push_back(length);
  std::shuffle(litlen.begin() + 16, litlen.end(), rng);
  std::vector<unsigned> all = litlen;
  all.insert(all.end(), lengths.begin() + 286, lengths.end());
  std::vector<unsigned> every(19, 0);
  every[8] = 1; // 1/2 + 1/4 + 7/32 + 2/64: complete
  every[9] = 2;
  for (unsigned symbol : {4U, 5U, 7U, 10U, 11U, 12U, 13U}) every[symbol] = 5;
  every[14] = 6;
  every[15] = 6;
  std::vector<length_unit> units;
  for (unsigned length : all) units.push_back({length, 0});
  bit_writer w;
  std::size_t produced = 0;
  for (int block = 0; block < 3; ++block) {
    write_dynamic_block(w, rng, block == 2, litlen, std::vector<unsigned>(lengths.begin() + 286, lengths.end()), units,
                        100, produced, every);
  }
  CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
}

TEST_CASE("deflate_decoder: units of either kind walked by position, stopping and starting again", "[deflate]") {
  // Where the processor has AVX-512 VBMI, a header's units from its first
  // repeat on are walked by position (walk_units_vbmi): windows of 64 bit
  // positions worked out ahead, kept for the header; the walk stops after
  // two groups of four single lengths in a row and starts again at the next
  // repeat, stores eight lengths whatever a unit's count (the lengths past a
  // repeat of zeros' eighth cleared when the walk starts: each block's
  // header here differs from the one before, whose lengths are still in the
  // decoder), and stops at the header's end. Here repeats then runs of 0 to
  // 12 single lengths, in turn, among zero runs of every count (symbols 17
  // and 18), with the literal/length code's last lengths and the distance
  // code's first zeros, so that a repeat crosses from one code into the
  // other; verdict_all_ways runs each stream both ways, cut at many places,
  // against zlib.
  std::mt19937 rng(43);
  std::size_t next_run = 0; // single lengths after the next repeat: 0 to 12 in turn
  const auto header_units = [&](const std::vector<unsigned>& lengths) {
    std::vector<length_unit> units;
    std::size_t singles_left = 0; // single lengths before the next repeat
    for (std::size_t i = 0; i < lengths.size();) {
      const unsigned value = lengths[i];
      std::size_t run = 1;
      while (i + run < lengths.size() && lengths[i + run] == value) ++run;
      const bool repeat_of_previous = i > 0 && lengths[i - 1] == value && run >= 3;
      if (singles_left == 0 && (repeat_of_previous || (value == 0 && run >= 3))) {
        unsigned count = 0;
        if (repeat_of_previous && (value != 0 || rng() % 2 == 0)) {
          count = 3 + static_cast<unsigned>(rng() % (std::min<std::size_t>(run, 6) - 2));
          units.push_back({16, count - 3});
        } else if (run >= 11 && rng() % 2 == 0) {
          count = 11 + static_cast<unsigned>(rng() % (std::min<std::size_t>(run, 138) - 10));
          units.push_back({18, count - 11});
        } else {
          count = 3 + static_cast<unsigned>(rng() % (std::min<std::size_t>(run, 10) - 2));
          units.push_back({17, count - 3});
        }
        i += count;
        singles_left = next_run;
        next_run = (next_run + 1) % 13;
      } else {
        units.push_back({value, 0});
        ++i;
        if (singles_left != 0) --singles_left;
      }
    }
    return units;
  };
  for (int stream = 0; stream < 40; ++stream) {
    bit_writer w;
    std::size_t produced = 0;
    for (int block = 0; block < 3; ++block) {
      const unsigned litlen_count = 270 + static_cast<unsigned>(rng() % 17);
      const unsigned distance_count = 4 + static_cast<unsigned>(rng() % 27);
      // Codes for some symbols only (many for every third block, so that
      // the next one's zeros fall where its lengths were), none among the
      // last literal/length ones.
      const std::size_t coded = block % 3 == 0 ? litlen_count - 40 : 20 + rng() % (litlen_count - 40);
      std::vector<unsigned> litlen =
          random_complete_code(rng, litlen_count - 8, some_symbols(rng, litlen_count - 8, coded, 256), 12);
      litlen.resize(litlen_count, 0);
      std::vector<unsigned> distance =
          random_complete_code(rng, distance_count - 2, some_symbols(rng, distance_count - 2, 2), 8);
      distance.insert(distance.begin(), 2, 0);
      std::vector<unsigned> lengths = litlen;
      lengths.insert(lengths.end(), distance.begin(), distance.end());
      write_dynamic_block(w, rng, block == 2, litlen, distance, header_units(lengths), 40, produced);
    }
    INFO("stream " << stream);
    CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
  }
}

TEST_CASE("deflate_decoder: literals several a lookup where the literal/length code has short ones", "[deflate]") {
  // A block whose literal/length code has a literal of at most 3 bits takes
  // its literals several a lookup (deflate_decoder::packed_: with vectors
  // the literals whose codes lie whole in the next 6 bits, without them in
  // the next 4), stopping at a length code, the end of block or a code
  // that does not fit, and storing 8 bytes whatever the count where 8 bytes
  // of output room remain. Here codes of one to a few literals (one bit to
  // a few), with or without length codes and with or without many longer
  // literal codes beside them (a root table of fewer index bits than the
  // packed table's, and of more), blocks of a few symbols and of thousands;
  // verdict_all_ways runs each stream both ways, with output room of 1, 2
  // and more bytes, against zlib.
  SECTION("random codes and blocks") {
    std::mt19937 rng(57);
    for (int stream = 0; stream < 60; ++stream) {
      bit_writer w;
      std::size_t produced = 0;
      const int blocks = 1 + static_cast<int>(rng() % 3);
      for (int block = 0; block < blocks; ++block) {
        const unsigned litlen_count = 257 + static_cast<unsigned>(rng() % 29);
        std::vector<unsigned> coded = some_symbols(rng, 256, 1 + rng() % 8);
        if (stream % 4 == 1) {
          for (unsigned literal : some_symbols(rng, 256, 40)) {
            if (std::find(coded.begin(), coded.end(), literal) == coded.end()) coded.push_back(literal);
          }
        }
        coded.push_back(256);
        if (stream % 3 != 0 && litlen_count > 257) {
          const std::size_t length_codes = std::min<std::size_t>(1 + rng() % 3, litlen_count - 257);
          for (unsigned length : some_symbols(rng, litlen_count - 257, length_codes)) coded.push_back(257 + length);
        }
        const unsigned longest = 1 + static_cast<unsigned>(rng() % 15);
        const std::vector<unsigned> litlen = random_complete_code(rng, litlen_count, coded, longest);
        const unsigned distance_count = 1 + static_cast<unsigned>(rng() % 8);
        std::vector<unsigned> distance(distance_count, 0);
        if (distance_count == 1 || rng() % 2 == 0) {
          distance[0] = 1; // one code of one bit
        } else {
          distance = random_complete_code(rng, distance_count, some_symbols(rng, distance_count, 2), 4);
        }
        std::vector<unsigned> lengths = litlen;
        lengths.insert(lengths.end(), distance.begin(), distance.end());
        const std::size_t symbols = rng() % 3 == 0 ? rng() % 16 : 200 + rng() % 3000;
        write_dynamic_block(w, rng, block == blocks - 1, litlen, distance, with_repeats(lengths, rng), symbols,
                            produced);
      }
      INFO("stream " << stream);
      CHECK(verdict_all_ways(w.done()) == inflate_verdict::ended);
    }
  }
  SECTION("a literal of one bit 5,000 times, then one of six bits and one of one bit in turn") {
    // 'a' 0, 'b' 10, 'c' 110, 'd' 111110, 'e' 111111 ... as lengths: a 1,
    // b 2, c 3, the end of block 4, then d, e and f 6 bits, g 5 bits.
    std::vector<unsigned> litlen(257, 0);
    litlen['a'] = 1;
    litlen['b'] = 2;
    litlen['c'] = 3;
    litlen[256] = 4;
    litlen['g'] = 5;
    litlen['d'] = 6;
    litlen['e'] = 6;
    std::vector<unsigned> lengths = litlen;
    lengths.push_back(0);
    const auto codes = canonical(litlen);
    bit_writer w;
    write_header(w, true, 257, 1, five_bit_precode(), lengths);
    bytes expected;
    const auto put = [&](unsigned symbol) {
      w.code(codes[symbol], litlen[symbol]);
      expected.push_back(static_cast<unsigned char>(symbol));
    };
    for (int i = 0; i < 5000; ++i) put('a');
    for (int i = 0; i < 300; ++i) {
      for (unsigned symbol : {unsigned{'a'}, unsigned{'d'}, unsigned{'c'}, unsigned{'c'}, unsigned{'b'}, unsigned{'g'},
                              unsigned{'e'}, unsigned{'a'}, unsigned{'a'}}) {
        put(symbol);
      }
    }
    w.code(codes[256], litlen[256]);
    bytes out;
    CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
    CHECK(out == expected);
  }
  SECTION("one decoder with vectors, then without: each table of its own index bits") {
    // Blocks of two literals of one bit and the end of block (two bits),
    // each stream with other literals: the packed table made by the first
    // (6 index bits, with vectors) is not read by the second (4, without).
    deflate_decoder ours;
    npyguard::fuzz::zlib_inflater theirs;
    for (const bool vectors : {true, false, true, false}) {
      std::vector<unsigned> litlen(257, 0);
      const unsigned first = vectors ? unsigned{'p'} : unsigned{'q'};
      litlen[first] = 1;
      litlen[first + 2] = 2;
      litlen[256] = 2;
      std::vector<unsigned> lengths = litlen;
      lengths.push_back(0);
      const auto codes = canonical(litlen);
      bit_writer w;
      write_header(w, true, 257, 1, five_bit_precode(), lengths);
      std::mt19937 pick(vectors ? 5 : 6);
      for (int i = 0; i < 4000; ++i) {
        const unsigned symbol = pick() % 3 == 0 ? first + 2 : first;
        w.code(codes[symbol], litlen[symbol]);
      }
      w.code(codes[256], litlen[256]);
      const bytes stream = w.done();
      ours.use_vector_lengths(vectors);
      const auto run =
          npyguard::fuzz::compare_inflate(stream.data(), stream.size(), {stream.size()}, {1U << 16}, ours, theirs);
      INFO(run.disagreement);
      REQUIRE(run.agree);
      CHECK(run.verdict == inflate_verdict::ended);
    }
  }
}

TEST_CASE("deflate_decoder: matches several a lookup where their codes are short", "[deflate]") {
  // Once a dynamic block has decoded 16 matches the ordinary way, its
  // matches whose length and distance codes (and extra bits) lie whole in
  // packed_'s index bits (6 with vectors, built by vectors; 4 without) are
  // added to it (pack_runs): after up to 2 literals, a run of matches at
  // one distance, copied as one. The fast loop takes a run where its
  // distance lies within the call's output and 1024 bytes of room remain,
  // else the ordinary way. Here codes with short length and distance codes, blocks
  // of fewer matches than that and of thousands, every distance kind (1,
  // 2-7, 8 and more, with extra bits), runs of 258-byte matches, against
  // zlib all ways (verdict_all_ways: output room of 1 byte up, inputs cut
  // everywhere).
  SECTION("random short codes and blocks") {
    std::mt19937 rng(91);
    for (int stream = 0; stream < 60; ++stream) {
      bit_writer w = fixed_block(false); // two bytes for the first matches
      fixed_literal(w, rng() % 256);
      fixed_literal(w, rng() % 256);
      w.put(0, 7); // the fixed block's end
      std::size_t produced = 2;
      const int blocks = 1 + static_cast<int>(rng() % 3);
      for (int block = 0; block < blocks; ++block) {
        const unsigned litlen_count = 257 + 1 + static_cast<unsigned>(rng() % 29);
        std::vector<unsigned> coded = some_symbols(rng, 256, rng() % 3);
        coded.push_back(256);
        const std::size_t length_codes = std::min<std::size_t>(1 + rng() % 3, litlen_count - 257);
        for (unsigned length : some_symbols(rng, litlen_count - 257, length_codes)) coded.push_back(257 + length);
        if (stream % 4 == 3) {
          for (unsigned literal : some_symbols(rng, 256, 30)) {
            if (std::find(coded.begin(), coded.end(), literal) == coded.end()) coded.push_back(literal);
          }
        }
        const unsigned longest = 1 + static_cast<unsigned>(rng() % (stream % 2 == 0 ? 4 : 15));
        const std::vector<unsigned> litlen = random_complete_code(rng, litlen_count, coded, longest);
        const unsigned distance_count = 2 + static_cast<unsigned>(rng() % 12);
        std::vector<unsigned> distance(distance_count, 0);
        const std::size_t distance_codes = std::min<std::size_t>(1 + rng() % 3, distance_count);
        const std::vector<unsigned> far = some_symbols(rng, distance_count, distance_codes);
        if (distance_codes == 1) {
          distance[far[0]] = 1; // one code of one bit
        } else {
          distance = random_complete_code(rng, distance_count, far, 1 + static_cast<unsigned>(rng() % 4));
        }
        std::vector<unsigned> lengths = litlen;
        lengths.insert(lengths.end(), distance.begin(), distance.end());
        const std::size_t symbols = rng() % 3 == 0 ? rng() % 80 : 200 + rng() % 4000;
        write_dynamic_block(w, rng, block == blocks - 1, litlen, distance, with_repeats(lengths, rng), symbols,
                            produced);
      }
      INFO("stream " << stream);
      const bytes done = w.done();
      CHECK(verdict_all_ways(done) == inflate_verdict::ended);
    }
  }
  // One block: 'a' and 'b' (2 bits each), then `pattern`'s matches over
  // and over, each a length symbol and a distance symbol with its extra
  // value, from a literal/length code of 'a', 'b', the end of block and
  // the lengths (the lengths of their codes given), and a distance code of
  // the distances given.
  struct match_shape {
    unsigned length_symbol;
    unsigned length_extra;
    unsigned distance_symbol;
    unsigned distance_extra;
  };
  const auto block_of = [](const std::vector<std::pair<unsigned, unsigned>>& litlen_codes,
                           const std::vector<std::pair<unsigned, unsigned>>& distance_codes,
                           const std::vector<match_shape>& pattern, int repeats) {
    std::vector<unsigned> litlen(286, 0);
    for (const auto& [symbol, length] : litlen_codes) litlen[symbol] = length;
    std::vector<unsigned> distance(30, 0);
    for (const auto& [symbol, length] : distance_codes) distance[symbol] = length;
    std::vector<unsigned> lengths = litlen;
    lengths.insert(lengths.end(), distance.begin(), distance.end());
    const auto codes = canonical(litlen);
    const auto far = canonical(distance);
    bit_writer w;
    write_header(w, true, 286, 30, five_bit_precode(), lengths);
    for (int i = 0; i < 9; ++i) w.code(codes[i % 2 == 0 ? 'a' : 'b'], litlen[i % 2 == 0 ? 'a' : 'b']);
    for (int i = 0; i < repeats; ++i) {
      for (const match_shape& match : pattern) {
        if (match.length_symbol < 256) {
          w.code(codes[match.length_symbol], litlen[match.length_symbol]);
          continue;
        }
        w.code(codes[match.length_symbol], litlen[match.length_symbol]);
        w.put(match.length_extra, test_length_extra[match.length_symbol - 257]);
        w.code(far[match.distance_symbol], distance[match.distance_symbol]);
        w.put(match.distance_extra, test_distance_extra[match.distance_symbol]);
      }
    }
    w.code(codes[256], litlen[256]);
    return w.done();
  };
  SECTION("matches of 2 bits at one distance: runs of three") {
    // The length of 3 1 bit, 'a', 'b' and the end of block 3 bits; each
    // distance of 1 to 8 (8: code 5, extra 1) as one code of 1 bit.
    for (const auto& [symbol, extra] : std::vector<std::pair<unsigned, unsigned>>{{0, 0}, {1, 0}, {3, 0}, {5, 1}}) {
      INFO("distance symbol " << symbol);
      const bytes stream =
          block_of({{257, 1}, {'a', 3}, {'b', 3}, {256, 2}}, {{symbol, 1}}, {{257, 0, symbol, extra}}, 3000);
      bytes out;
      CHECK(verdict_all_ways(stream, &out) == inflate_verdict::ended);
      CHECK(out.size() == 9 + 3 * 3000);
    }
  }
  SECTION("matches of 258 bytes at distance 1 and 2 in turn, and a literal between them") {
    // Length 258 (285, no extra bits) 1 bit; distances 1 and 2 1 bit each;
    // then with 'a' between: runs of one match each, after a literal.
    const bytes alternating =
        block_of({{285, 1}, {'a', 2}, {'b', 3}, {256, 3}}, {{0, 1}, {1, 1}}, {{285, 0, 0, 0}, {285, 0, 1, 0}}, 800);
    CHECK(verdict_all_ways(alternating) == inflate_verdict::ended);
    const bytes between =
        block_of({{285, 1}, {'a', 2}, {'b', 3}, {256, 3}}, {{0, 1}, {1, 1}},
                 {{'a', 0, 0, 0}, {285, 0, 1, 0}, {285, 0, 1, 0}, {'b', 0, 0, 0}, {285, 0, 0, 0}}, 500);
    CHECK(verdict_all_ways(between) == inflate_verdict::ended);
    // A literal, then one match at each distance: one entry of 6 bits, a
    // run after the literal and no second run (its length would lie over
    // the literals).
    const bytes after_literal = block_of({{285, 1}, {'a', 2}, {'b', 3}, {256, 3}}, {{0, 1}, {1, 1}},
                                         {{'a', 0, 0, 0}, {285, 0, 0, 0}, {285, 0, 1, 0}}, 500);
    CHECK(verdict_all_ways(after_literal) == inflate_verdict::ended);
    // Matches of 3 at distances 3 and 2 in turn, whose output is not
    // periodic (at distances 1 and 2, or 4 and 1, an entry that took its
    // third match as its second run's would give the same bytes): an
    // entry's second run ends where the distance changes again.
    bytes turns;
    CHECK(verdict_all_ways(block_of({{257, 1}, {'a', 3}, {'b', 3}, {256, 2}}, {{1, 1}, {2, 1}},
                                    {{257, 0, 2, 0}, {257, 0, 1, 0}}, 2000),
                           &turns) == inflate_verdict::ended);
    CHECK(std::count(turns.begin(), turns.end(), 'a') > 1000);
    CHECK(std::count(turns.begin(), turns.end(), 'b') > 1000);
  }
  SECTION("lengths and distances with extra bits, some runs longer than the index bits") {
    // Lengths 11-12 (265, 1 extra bit) and 3; distances 5-6 (4, 1 extra
    // bit) and 9-12 (6, 2 extra bits): matches of 3 to 5 bits, and of 7.
    const bytes stream = block_of({{265, 1}, {257, 2}, {'a', 3}, {'b', 4}, {256, 4}}, {{4, 1}, {6, 1}},
                                  {{265, 1, 4, 1},
                                   {265, 0, 4, 1},
                                   {257, 0, 4, 0},
                                   {265, 1, 6, 3},
                                   {'a', 0, 0, 0},
                                   {257, 0, 6, 2},
                                   {'b', 0, 0, 0},
                                   {265, 0, 4, 0}},
                                  600);
    CHECK(verdict_all_ways(stream) == inflate_verdict::ended);
  }
  SECTION("runs near the end of the output asked for: nothing stored past it") {
    // Runs of 774 bytes (three 2-bit matches of 258 at distance 1), and of
    // 258 at distances 1 and 2 in turn, into outputs of 33-50 KiB each
    // followed by guard bytes: past 32 KiB of a call's output the fast loop
    // takes a refill's entries with no check of each (packed_open_room),
    // so that its room test must hold four runs' stores.
    const std::vector<bytes> streams = {
        block_of({{285, 1}, {'a', 2}, {'b', 3}, {256, 3}}, {{0, 1}}, {{285, 0, 0, 0}}, 3000),
        block_of({{285, 1}, {'a', 2}, {'b', 3}, {256, 3}}, {{0, 1}, {1, 1}}, {{285, 0, 0, 0}, {285, 0, 1, 0}}, 1500)};
    constexpr std::size_t guard = 4096;
    for (const bytes& stream : streams) {
      bytes expected;
      REQUIRE(verdict_all_ways(stream, &expected) == inflate_verdict::ended);
      for (const bool vectors : {true, false}) {
        for (const std::size_t chunk : std::vector<std::size_t>{33000, 34567, 35000, 36100, 40000, 50001}) {
          INFO("output " << chunk << (vectors ? ", vectors" : ""));
          deflate_decoder ours;
          ours.use_vector_lengths(vectors);
          bytes out;
          std::vector<unsigned char> buffer(chunk + guard);
          std::size_t at = 0;
          deflate_decoder::outcome result = deflate_decoder::outcome::more;
          while (result != deflate_decoder::outcome::ended && out.size() <= expected.size()) {
            std::fill(buffer.begin(), buffer.end(), 0xA5);
            const auto step = ours.decode(stream.data() + at, stream.size() - at, buffer.data(), chunk);
            REQUIRE(std::all_of(buffer.begin() + static_cast<std::ptrdiff_t>(chunk), buffer.end(),
                                [](unsigned char byte) { return byte == 0xA5; }));
            REQUIRE(step.result != deflate_decoder::outcome::corrupt);
            out.insert(out.end(), buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(step.written));
            at += step.consumed;
            result = step.result;
          }
          CHECK(out == expected);
        }
      }
    }
  }
  SECTION("fewer matches than the trigger, then blocks past it back to back") {
    bit_writer w;
    // The first 4 units before the tables, then 16 matches (before 512).
    for (const int matches : {10, 19, 20, 21, 515, 516, 517, 3000}) {
      std::vector<unsigned> litlen(258, 0);
      litlen['a'] = 2;
      litlen[256] = 2;
      litlen[257] = 1;
      std::vector<unsigned> lengths = litlen;
      lengths.push_back(1);
      const auto codes = canonical(litlen);
      write_header(w, matches == 3000, 258, 1, five_bit_precode(), lengths);
      w.code(codes['a'], 2);
      for (int i = 0; i < matches; ++i) w.code(codes[257], 1).put(0, 1);
      w.code(codes[256], 2);
    }
    bytes out;
    CHECK(verdict_all_ways(w.done(), &out) == inflate_verdict::ended);
    CHECK(out.size() == 8 + 3 * (10 + 19 + 20 + 21 + 515 + 516 + 517 + 3000));
  }
}
