// Field names built against the duplicate-name check that npyguard had up
// to commit e806355 (an open-addressing table, linear probing, unkeyed
// FNV-1a 64 folded h ^ (h >> 32)): shared by the hostile-input test and the
// benchmark, so both attack the same thing.
#ifndef NPYGUARD_TESTS_CRAFTED_NAMES_HPP
#define NPYGUARD_TESTS_CRAFTED_NAMES_HPP

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

namespace npyguard_crafted {

constexpr char name_alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr std::uint64_t name_alphabet_size = sizeof name_alphabet - 1; // 62

// splitmix64: the same sequence on every platform (std:: distributions are not).
struct splitmix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  char name_char() { return name_alphabet[next() % name_alphabet_size]; }
};

// The old hash, split so that a prefix is hashed once.
constexpr std::uint64_t fnv_offset = 0xcbf29ce484222325ull;
constexpr std::uint64_t fnv_prime = 0x100000001b3ull;
inline std::uint64_t fnv1a_step(std::uint64_t h, char c) { return (h ^ static_cast<unsigned char>(c)) * fnv_prime; }
inline std::uint64_t old_fold(std::uint64_t h) { return h ^ (h >> 32); }

// Slots of the old table after n inserts: 16, doubled whenever
// (size + 1) * 2 > slots before an insert.
inline std::uint64_t old_final_slots(std::size_t n) {
  std::uint64_t slots = 16;
  while (slots < 2 * static_cast<std::uint64_t>(n)) slots *= 2;
  return slots;
}

// n distinct names of `len` >= 3 characters that form one cluster in the
// old table: linear probing is quadratic when every home slot lies in a
// window much narrower than n (the i-th insert walks past about i occupied
// slots, comparing names). So keep names whose folded hash, masked to the
// final table size, lands in its first 1/64: the first len - 2 characters
// are random and hashed once, the last two searched, about 64 tries a name.
inline std::vector<std::string> colliding_names(std::size_t n, std::size_t len, std::uint64_t seed) {
  splitmix64 rng{seed};
  const std::uint64_t mask = old_final_slots(n) - 1;
  const std::uint64_t window = (mask + 1) / 64;
  constexpr std::uint64_t pairs = name_alphabet_size * name_alphabet_size;
  std::vector<std::string> names;
  names.reserve(n);
  std::unordered_set<std::string> seen;
  std::string name(len, 'a');
  while (names.size() < n) {
    std::uint64_t h = fnv_offset;
    for (std::size_t i = 0; i + 2 < len; ++i) {
      name[i] = rng.name_char();
      h = fnv1a_step(h, name[i]);
    }
    const std::uint64_t start = rng.next() % pairs; // so that accepted suffixes vary
    for (std::uint64_t t = 0; t < pairs; ++t) {
      const std::uint64_t pair = (start + t) % pairs;
      const char a = name_alphabet[pair / name_alphabet_size];
      const char b = name_alphabet[pair % name_alphabet_size];
      if ((old_fold(fnv1a_step(fnv1a_step(h, a), b)) & mask) < window) {
        name[len - 2] = a;
        name[len - 1] = b;
        if (seen.insert(name).second) names.push_back(name);
        break;
      }
    }
  }
  return names;
}

} // namespace npyguard_crafted

#endif
