// Keyed hashes for tables that hostile input fills, under a key drawn once
// per process, so names cannot be chosen offline to collide: SipHash-1-3,
// and a cheaper folded-multiply hash for the tables whose worst case is
// bounded without it (npy/model_builder.cpp's name index). Inline: the
// tables hash one short name per field, and a call per name (with the
// key's guard) was a tenth of a long struct's validation.
#ifndef NPYGUARD_SRC_KEYED_HASH_HPP
#define NPYGUARD_SRC_KEYED_HASH_HPP

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace npyguard::detail {

struct hash_key {
  std::uint64_t k0;
  std::uint64_t k1;
};

// The process's key: from the system's random source when it works,
// otherwise from the clock and the address space layout.
[[nodiscard]] const hash_key& process_hash_key() noexcept;

namespace sip {

constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept { return (x << b) | (x >> (64 - b)); }

struct state {
  std::uint64_t v0, v1, v2, v3;

  constexpr void round() noexcept {
    v0 += v1;
    v1 = rotl(v1, 13);
    v1 ^= v0;
    v0 = rotl(v0, 32);
    v2 += v3;
    v3 = rotl(v3, 16);
    v3 ^= v2;
    v0 += v3;
    v3 = rotl(v3, 21);
    v3 ^= v0;
    v2 += v1;
    v1 = rotl(v1, 17);
    v1 ^= v2;
    v2 = rotl(v2, 32);
  }

  constexpr void absorb(std::uint64_t m) noexcept {
    v3 ^= m;
    round(); // c = 1 compression round
    v0 ^= m;
  }
};

constexpr std::uint64_t byte_at(const char* p, std::size_t i) noexcept {
  return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
}

constexpr std::uint64_t load_le64(const char* p) noexcept {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value |= byte_at(p, i);
  return value;
}

} // namespace sip

// SipHash-1-3 (Aumasson and Bernstein; the variant Rust's HashMap and
// CPython's str hash use) of `text` under `key`.
[[nodiscard]] constexpr std::uint64_t keyed_hash(std::string_view text, const hash_key& key) noexcept {
  sip::state s{key.k0 ^ 0x736f6d6570736575ull, key.k1 ^ 0x646f72616e646f6dull, key.k0 ^ 0x6c7967656e657261ull,
               key.k1 ^ 0x7465646279746573ull};
  const char* p = text.data();
  const std::size_t size = text.size();
  const char* const end = p + (size & ~std::size_t{7});
  for (; p != end; p += 8) s.absorb(sip::load_le64(p));
  std::uint64_t last = static_cast<std::uint64_t>(size & 0xFF) << 56;
  switch (size & 7) {
    case 7: last |= sip::byte_at(p, 6); [[fallthrough]];
    case 6: last |= sip::byte_at(p, 5); [[fallthrough]];
    case 5: last |= sip::byte_at(p, 4); [[fallthrough]];
    case 4: last |= sip::byte_at(p, 3); [[fallthrough]];
    case 3: last |= sip::byte_at(p, 2); [[fallthrough]];
    case 2: last |= sip::byte_at(p, 1); [[fallthrough]];
    case 1: last |= sip::byte_at(p, 0); break;
    default: break;
  }
  s.absorb(last);
  s.v2 ^= 0xFF;
  for (int i = 0; i < 3; ++i) s.round(); // d = 3 finalization rounds
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

namespace fold {

// The 128-bit product of a and b, its halves xored: every bit of the
// result depends on every bit of both factors.
inline std::uint64_t folded_multiply(std::uint64_t a, std::uint64_t b) noexcept {
#if defined(__SIZEOF_INT128__)
  __extension__ using wide = unsigned __int128;
  const wide product = static_cast<wide>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
#else
  const std::uint64_t a_lo = a & 0xFFFF'FFFFu;
  const std::uint64_t a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xFFFF'FFFFu;
  const std::uint64_t b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo;
  const std::uint64_t hi_lo = a_hi * b_lo;
  const std::uint64_t lo_hi = a_lo * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFF'FFFFu) + lo_hi;
  const std::uint64_t high = a_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
  const std::uint64_t low = (cross << 32) | (lo_lo & 0xFFFF'FFFFu);
  return low ^ high;
#endif
}

// Native byte order: the hash need not agree between machines.
inline std::uint64_t load64(const char* p) noexcept {
  std::uint64_t value = 0;
  std::memcpy(&value, p, sizeof value);
  return value;
}

inline std::uint64_t load32(const char* p) noexcept {
  std::uint32_t value = 0;
  std::memcpy(&value, p, sizeof value);
  return value;
}

// Odd constants from the digits of pi: they keep a zero key word from
// zeroing a product.
inline constexpr std::uint64_t pi_0 = 0x243F'6A88'85A3'08D3u;
inline constexpr std::uint64_t pi_1 = 0x1319'8A2E'0370'7345u;

} // namespace fold

// A keyed hash of `text` for short names (foldhash's and wyhash's short
// path): the text as two words that, with its length, determine it (the
// first and last 8, 4 or 1 bytes, overlapping), each xored with a key word
// and multiplied into one; longer texts fold 16 bytes a step into the
// first word. Two multiplications for a name of up to 16 bytes, against
// SipHash's four rounds of twelve steps. Not a cryptographic function: use
// it only where a table's worst case is bounded without it.
[[nodiscard]] inline std::uint64_t keyed_short_hash(std::string_view text, const hash_key& key) noexcept {
  const char* p = text.data();
  const std::size_t size = text.size();
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  if (size > 16) {
    std::uint64_t chain = key.k0;
    std::size_t at = 0;
    for (; size - at > 16; at += 16) {
      chain = fold::folded_multiply(fold::load64(p + at) ^ key.k0 ^ fold::pi_0,
                                    fold::load64(p + at + 8) ^ chain ^ fold::pi_1);
    }
    first = fold::load64(p + size - 16) ^ chain;
    last = fold::load64(p + size - 8);
  } else if (size >= 8) {
    first = fold::load64(p);
    last = fold::load64(p + size - 8);
  } else if (size >= 4) {
    first = fold::load32(p);
    last = fold::load32(p + size - 4);
  } else if (size > 0) {
    const auto byte = [p](std::size_t i) { return static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])); };
    first = byte(0) << 16 | byte(size / 2) << 8 | byte(size - 1);
  }
  const std::uint64_t mixed =
      fold::folded_multiply(first ^ key.k0 ^ fold::pi_0, last ^ key.k1 ^ fold::pi_1 ^ static_cast<std::uint64_t>(size));
  return fold::folded_multiply(mixed, key.k1 ^ fold::pi_0);
}

// keyed_hash under the process's key.
[[nodiscard]] inline std::uint64_t keyed_hash(std::string_view text) noexcept {
  return keyed_hash(text, process_hash_key());
}

} // namespace npyguard::detail

#endif
