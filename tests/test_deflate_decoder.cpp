// deflate_decoder (src/npz/deflate_decoder.cpp) against zlib's raw inflate:
// hand-built streams for each of zlib's rules, zlib-written streams, every
// way of splitting a stream in two, one-byte input and output, and reuse of
// one decoder across streams. Each stream's verdict is zlib's, checked here
// too, so that a test cannot drift from what it means to build.
#include <catch2/catch.hpp>

#include <cstdint>
#include <initializer_list>
#include <random>
#include <string>
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
// two with several output sizes, and odd chunkings.
inflate_verdict verdict_all_ways(const bytes& stream, bytes* output = nullptr) {
  deflate_decoder ours;
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
  std::vector<unsigned> lengths(226, 8);
  lengths.insert(lengths.end(), 60, 9);
  lengths.insert(lengths.end(), 2, 4);
  lengths.insert(lengths.end(), 28, 5);
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
