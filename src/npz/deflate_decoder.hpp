// A strict, streaming raw-DEFLATE decoder (RFC 1951) whose results are
// zlib 1.2.13's raw inflate (inflateInit2(-15), Z_NO_FLUSH) for every input,
// every way of cutting it into pieces and every output size: the same output
// bytes, the end of the stream at the same compressed byte, a data error on
// exactly the streams zlib rejects, and "more" (Z_OK or Z_BUF_ERROR)
// otherwise. Unlike zlib, its cost per compressed byte does not depend on the
// block structure (SPEC-npz.md section 9): a code length of a dynamic
// header costs one table lookup (eight a refill; runs of short single
// lengths two a lookup, or up to 63 a refill by vector instructions where
// the processor has AVX-512 VBMI) and puts its symbol in the bucket of its
// length, which is the counting sort of the table build; the
// tables are filled from the buckets by doubling, and only once a dynamic
// block has gone past its first few symbols (decoded a bit at a time until
// then, so that a block of a few symbols pays for no table); the fixed
// tables are built once.
//
// How zlib's observable behaviour is kept:
//  - input is taken a unit at a time (a block header, one code length, one
//    literal or length/distance pair, a stored block's length field); when
//    the input ends inside a unit, every byte is taken into the 64-bit bit
//    buffer (a unit is at most 48 bits) and the unit is decoded again from
//    its start on the next call, as zlib holds its partial state. Errors are
//    found as soon as the bits zlib needs for them are there.
//  - with the output full, units that write nothing are still decoded, and
//    the next literal or match too (kept pending), as zlib does; so the end
//    of the stream is reported with a full output buffer exactly when zlib
//    reports it. A match's distance is checked against the output when its
//    first byte is written, as zlib's MATCH state does.
//  - bytes consumed: every byte when the input ran out; otherwise the bytes
//    up to and including the one that holds the last bit used.
#ifndef NPYGUARD_SRC_NPZ_DEFLATE_DECODER_HPP
#define NPYGUARD_SRC_NPZ_DEFLATE_DECODER_HPP

#include <array>
#include <cstddef>
#include <cstdint>

namespace npyguard::npz::detail {

class deflate_decoder {
public:
  enum class outcome {
    more,    // the output is full or the input is all consumed (zlib: Z_OK or Z_BUF_ERROR)
    ended,   // the final block has ended (Z_STREAM_END); later calls say so again
    corrupt, // not a deflate stream (Z_DATA_ERROR); later calls say so again
  };
  struct progress {
    outcome result;
    std::size_t consumed; // input bytes taken
    std::size_t written;  // output bytes written
  };

  deflate_decoder() noexcept;
  // Starts a new stream; the tables and window are kept (nothing is freed).
  void reset() noexcept;
  // Decodes from `in` into `out` until the output is full, the input is
  // consumed, the stream ends or proves corrupt. `in` may be null when
  // `in_size` is 0. Bytes of `out` past `written` may be overwritten.
  progress decode(const unsigned char* in, std::size_t in_size, unsigned char* out, std::size_t out_size) noexcept;
  // Output bytes since reset().
  [[nodiscard]] std::uint64_t total_out() const noexcept { return total_out_; }

  // Whether this processor decodes runs of single code lengths with vector
  // instructions (x86-64 with AVX-512 VBMI and VBMI2; deflate_decoder.cpp,
  // decode_singles_vbmi, and the packed literals' table of 6 index bits in
  // place of 4), and whether this decoder does: on where the processor
  // can, unless turned off (the tests run both ways). Set it
  // between streams (before the first decode() after construction or
  // reset()): a block's tables are built for one way.
  [[nodiscard]] static bool vector_lengths_supported() noexcept;
  [[nodiscard]] bool vector_lengths() const noexcept { return vector_lengths_; }
  void use_vector_lengths(bool on) noexcept { vector_lengths_ = on && vector_lengths_supported(); }

  // Decode table sizes: a 10-bit root table for literals/lengths and an
  // 8-bit one for distances, each with room for its worst-case subtables
  // (zlib's examples/enough.c: "enough 288 11 15" is 2342, more than a
  // 10-bit root needs; "enough 32 8 15" is 402).
  static constexpr unsigned litlen_root_bits = 10;
  static constexpr unsigned distance_root_bits = 8;
  static constexpr std::size_t litlen_capacity = 2342;
  static constexpr std::size_t distance_capacity = 402;
  static constexpr std::size_t window_size = std::size_t{32} * 1024;

  struct cursor; // the in/out pointers and bit buffer of one decode() call

private:
  enum class state : std::uint8_t {
    block_header,    // BFINAL and BTYPE (and HLIT, HDIST, HCLEN for a dynamic block)
    stored_header,   // LEN and NLEN, after skipping to a byte boundary
    stored_copy,     // a stored block's bytes
    precode_lengths, // the code length code's 3-bit lengths
    code_lengths,    // the literal/length and distance code lengths
    first_codes,     // a dynamic block's first symbols, before its tables are built
    codes,           // a fixed or dynamic block's symbols
    ended,
    failed,
  };
  enum class step : std::uint8_t;

  step run(cursor& c) noexcept;
  step read_block_header(cursor& c) noexcept;
  step read_stored_header(cursor& c) noexcept;
  step copy_stored(cursor& c) noexcept;
  step read_precode_lengths(cursor& c) noexcept;
  step precode_built() noexcept;
  step read_code_lengths(cursor& c) noexcept;
  step build_dynamic_tables() noexcept;
  step build_pending_tables() noexcept;
  step decode_codes(cursor& c) noexcept;
  step decode_first_codes(cursor& c) noexcept;
  template <bool packed>
  step decode_fast(cursor& c) noexcept;
  void pack_literals() noexcept;
  void pack_runs() noexcept;
  template <bool before_tables>
  [[gnu::noinline]] step decode_one(cursor& c) noexcept;
  std::uint32_t litlen_entry(std::uint64_t bits, unsigned& length) const noexcept;
  std::uint32_t distance_entry(std::uint64_t bits, unsigned& length) const noexcept;
  step flush_pending(cursor& c) noexcept;
  step copy_match(cursor& c, unsigned distance, unsigned& length) noexcept;
  step end_block() noexcept;
  void keep_history(const unsigned char* begin, std::size_t size) noexcept;

  // Tables (entry layout in deflate_decoder.cpp). The code length code's
  // is indexed by 7 bits whatever its longest code (at most 7 bits).
  std::array<std::uint32_t, litlen_capacity> litlen_{};
  std::array<std::uint32_t, distance_capacity> distance_{};
  std::array<std::uint32_t, 128> precode_{};
  // A dynamic header's single code lengths two a lookup where their codes
  // are short (decode_lengths_fast): pairs_ is indexed as precode_ is,
  // built from it and precode_at_ (each code's index in it, precode_coded_
  // of them) once pair_countdown_ single lengths of the block have been
  // decoded one at a time, if they took few bits (pair_trial_bits_); then
  // pair_countdown_ is pairs_on, or pairs_off for the rest of the block
  // (deflate_decoder.cpp).
  std::array<std::uint32_t, 128> pairs_{};
  // With vector_lengths_, in place of pairs_: the code length code's table
  // as two tables of bytes, the bits a single length takes (64 and more for
  // a repeat) then the length it sets (deflate_decoder.cpp).
  std::array<std::uint8_t, 256> vector_precode_{};
  // With vector_lengths_, units of either kind are walked with four tables
  // of bytes made from the code length code's (deflate_decoder.cpp,
  // walk_units_vbmi).
  std::array<std::uint8_t, 512> walk_precode_{};
  bool vector_lengths_ = false;
  std::array<std::uint8_t, 19> precode_at_{};
  unsigned precode_coded_ = 0;
  int pair_countdown_ = 0;
  unsigned pair_trial_bits_ = 0;
  std::array<std::uint32_t, 512> fixed_litlen_{};
  std::array<std::uint32_t, 32> fixed_distance_{};
  const std::uint32_t* litlen_table_ = nullptr;
  const std::uint32_t* distance_table_ = nullptr;
  unsigned litlen_root_ = 0;
  unsigned distance_root_ = 0;
  unsigned fixed_litlen_root_ = 0;
  unsigned fixed_distance_root_ = 0;
  // A block whose literal/length code has a literal of at most 3 bits has
  // its literals several a lookup (packed_on_): packed_ is indexed by the
  // next 6 bits (4 without vectors: packed_mask_), each entry the literals
  // whose codes lie whole in them (deflate_decoder.cpp, pack_literals).
  alignas(64) std::array<std::uint64_t, 64> packed_{};
  std::uint64_t packed_mask_ = 0;
  bool packed_on_ = false;
  // The matches a dynamic block has left to decode the ordinary way before
  // its short matches are added to packed_ (pack_runs).
  std::uint64_t run_countdown_ = ~std::uint64_t{0};

  // A dynamic header being read.
  std::array<std::uint8_t, 19> precode_lengths_{};
  // The lengths read so far, and room for the eight a unit may store
  // whatever its count (at least 1: its last store ends 7 past the last
  // length).
  static constexpr std::size_t run_room = 8;
  std::array<std::uint8_t, 286 + 30 + run_room> lengths_{};
  unsigned litlen_count_ = 0;   // HLIT + 257
  unsigned distance_count_ = 0; // HDIST + 1
  unsigned precode_count_ = 0;  // HCLEN + 4
  unsigned lengths_read_ = 0;
  // The symbols of each code length in symbol order, filled as the lengths
  // are read (the counting sort of the table build, done on the way): the
  // literal/length symbols of length n from sorted_[n * 288], the distance
  // symbols of length n from sorted_[16 * 288 + n * 32]; tails_[0][n] and
  // tails_[1][n] are where the next one goes. A bucket has room for eight
  // entries past its last symbol (288 fixed, at most 286 dynamic ones), as
  // a unit may store eight whatever its count.
  static constexpr std::size_t litlen_bucket = 288 + run_room;
  static constexpr std::size_t distance_bucket = 32 + run_room;
  static constexpr std::size_t distance_buckets_at = 16 * litlen_bucket;
  std::array<std::uint16_t, 16 * (litlen_bucket + distance_bucket)> sorted_{};
  std::array<std::array<std::size_t, 16>, 2> tails_{};
  // A dynamic block's complete codes get their tables only after its first
  // few units (slow_units_ left), decoded from the buckets a bit at a time:
  // a block of a few symbols behind a large header pays for no table. A
  // table not built yet is a null pointer; code_counts_[0] and [1] are the
  // two codes' symbols of each length, shortest_ their shortest lengths.
  unsigned slow_units_ = 0;
  std::array<std::array<unsigned, 16>, 2> code_counts_{};
  std::array<unsigned, 2> shortest_{};

  state state_ = state::block_header;
  bool final_block_ = false;
  std::uint64_t bit_buffer_ = 0;
  unsigned bit_count_ = 0;
  unsigned stored_left_ = 0;
  // The literal or match decoded when the output was full.
  unsigned pending_length_ = 0;   // 0: nothing pending
  unsigned pending_distance_ = 0; // 0: a literal
  unsigned char pending_literal_ = 0;

  // The output before this call: the last bytes of the stream, at least
  // min(total_out_, window_size) of them, ending at history_end_.
  std::array<unsigned char, 2 * window_size> history_{};
  std::size_t history_end_ = 0;
  std::uint64_t total_out_ = 0;
};

} // namespace npyguard::npz::detail

#endif
