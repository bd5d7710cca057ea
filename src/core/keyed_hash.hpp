// A keyed hash for tables that hostile input fills: SipHash-1-3 with a key
// drawn once per process, so names cannot be chosen offline to collide.
// Inline: the tables hash one short name per field, and a call per name
// (with the key's guard) was a tenth of a long struct's validation.
#ifndef NPYGUARD_SRC_KEYED_HASH_HPP
#define NPYGUARD_SRC_KEYED_HASH_HPP

#include <cstddef>
#include <cstdint>
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

// keyed_hash under the process's key.
[[nodiscard]] inline std::uint64_t keyed_hash(std::string_view text) noexcept {
  return keyed_hash(text, process_hash_key());
}

} // namespace npyguard::detail

#endif
