// crc32_update (src/npz/crc32.cpp) against zlib's crc32 on the same bytes:
// every length up to 700 at every alignment within 16 bytes, from zero and
// from a running value, a buffer cut at random places, and a large buffer.
// The folding path (carry-less multiplication) runs from 64 bytes on where
// the processor has it; each test says which path it held to zlib.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include <zlib.h>

#include "npz/crc32.hpp"

namespace {

using npyguard::npz::detail::crc32_folds;
using npyguard::npz::detail::crc32_update;

std::vector<unsigned char> random_bytes(std::size_t size, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<unsigned char> out(size);
  for (auto& byte : out) byte = static_cast<unsigned char>(rng() & 0xFFU);
  return out;
}

std::uint32_t zlib_crc(std::uint32_t crc, const unsigned char* data, std::size_t size) {
  return static_cast<std::uint32_t>(::crc32(crc, data, static_cast<uInt>(size)));
}

} // namespace

#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define NPYGUARD_TEST_MSAN 1
#endif
#endif

TEST_CASE("crc32_update: folds wherever the processor can", "[crc32]") {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(NPYGUARD_TEST_MSAN)
  __builtin_cpu_init();
  CHECK(crc32_folds() == (__builtin_cpu_supports("pclmul") != 0 && __builtin_cpu_supports("sse4.1") != 0));
#else
  CHECK_FALSE(crc32_folds()); // zlib's crc32 throughout
#endif
}

TEST_CASE("crc32_update: the check value and the empty input", "[crc32]") {
  INFO("folds: " << crc32_folds());
  constexpr std::string_view check = "123456789";
  CHECK(crc32_update(0, reinterpret_cast<const unsigned char*>(check.data()), check.size()) == 0xCBF43926U);
  CHECK(crc32_update(0, nullptr, 0) == 0);
  CHECK(crc32_update(0x12345678U, nullptr, 0) == 0x12345678U);
  // 64 bytes and more go through the folding path: the same value as zlib.
  const std::vector<unsigned char> zeros(4096, 0);
  CHECK(crc32_update(0, zeros.data(), zeros.size()) == zlib_crc(0, zeros.data(), zeros.size()));
  const std::vector<unsigned char> ones(4096, 0xFF);
  CHECK(crc32_update(0, ones.data(), ones.size()) == zlib_crc(0, ones.data(), ones.size()));
}

TEST_CASE("crc32_update: zlib's value for every length to 700 at every alignment", "[crc32]") {
  INFO("folds: " << crc32_folds());
  const std::vector<unsigned char> data = random_bytes(700 + 16, 35);
  std::size_t mismatches = 0;
  for (std::size_t length = 0; length <= 700; ++length) {
    for (std::size_t offset = 0; offset < 16; ++offset) {
      for (const std::uint32_t start : {0U, 0xDEADBEEFU, 0xFFFFFFFFU}) {
        const unsigned char* at = data.data() + offset;
        if (crc32_update(start, at, length) != zlib_crc(start, at, length)) {
          if (mismatches++ == 0) FAIL_CHECK("length " << length << ", offset " << offset << ", start " << start);
        }
      }
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("crc32_update: a buffer in random pieces is the buffer whole", "[crc32]") {
  INFO("folds: " << crc32_folds());
  const std::vector<unsigned char> data = random_bytes((std::size_t{1} << 20) + 13, 36);
  const std::uint32_t whole = zlib_crc(0, data.data(), data.size());
  CHECK(crc32_update(0, data.data(), data.size()) == whole);
  std::mt19937 rng(37);
  for (int round = 0; round < 20; ++round) {
    std::uint32_t crc = 0;
    for (std::size_t at = 0; at < data.size();) {
      const std::size_t piece = std::min<std::size_t>(data.size() - at, rng() % (round < 10 ? 300U : 70000U));
      crc = crc32_update(crc, data.data() + at, piece);
      at += piece;
    }
    CHECK(crc == whole);
  }
}
