#include "core/keyed_hash.hpp"

#include <chrono>
#include <random>

namespace npyguard::detail {
namespace {

struct sip_key {
  std::uint64_t k0;
  std::uint64_t k1;
};

// From the system's random source when it works; otherwise from the clock
// and the address space layout, which a remote sender cannot see either.
// The key only keeps the average fast: correctness never depends on it.
sip_key make_key() noexcept {
  try {
    std::random_device source;
    const auto draw = [&source] { return (static_cast<std::uint64_t>(source()) << 32) ^ source(); };
    return {draw(), draw()};
  } catch (...) {
    static int anchor;
    const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    return {now * 0x9E3779B97F4A7C15ull, reinterpret_cast<std::uintptr_t>(&anchor) ^ (now >> 7)};
  }
}

const sip_key& process_key() noexcept {
  static const sip_key key = make_key();
  return key;
}

constexpr std::uint64_t rotl(std::uint64_t x, int b) noexcept { return (x << b) | (x >> (64 - b)); }

struct sip_state {
  std::uint64_t v0, v1, v2, v3;

  void round() noexcept {
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

  void absorb(std::uint64_t m) noexcept {
    v3 ^= m;
    round(); // c = 1 compression round
    v0 ^= m;
  }
};

std::uint64_t load_le64(const char* p) noexcept {
  std::uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(p[i]);
  return value;
}

} // namespace

std::uint64_t keyed_hash(std::string_view text) noexcept {
  const sip_key& key = process_key();
  sip_state s{key.k0 ^ 0x736f6d6570736575ull, key.k1 ^ 0x646f72616e646f6dull, key.k0 ^ 0x6c7967656e657261ull,
              key.k1 ^ 0x7465646279746573ull};
  const char* p = text.data();
  const std::size_t size = text.size();
  const char* const end = p + (size & ~std::size_t{7});
  for (; p != end; p += 8) s.absorb(load_le64(p));
  std::uint64_t last = static_cast<std::uint64_t>(size & 0xFF) << 56;
  for (std::size_t i = 0; i < (size & 7); ++i)
    last |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[i])) << (8 * i);
  s.absorb(last);
  s.v2 ^= 0xFF;
  for (int i = 0; i < 3; ++i) s.round(); // d = 3 finalization rounds
  return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

} // namespace npyguard::detail
