#include "npz/crc32.hpp"

#include <zlib.h>

// Under MemorySanitizer (OSS-Fuzz's memory build) zlib's crc32, built
// instrumented, reads the same bytes: a use of uninitialised memory is
// reported there, with no reliance on MSan's handling of the intrinsics.
#if defined(__has_feature)
#if __has_feature(memory_sanitizer)
#define NPYGUARD_CRC32_MSAN 1
#endif
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && !defined(NPYGUARD_CRC32_MSAN)
#define NPYGUARD_CRC32_FOLDS 1
#include <immintrin.h>
#else
#define NPYGUARD_CRC32_FOLDS 0
#endif

namespace npyguard::npz::detail {

namespace {

// zlib's crc32 a gigabyte at a time (its length is an unsigned int; crc32_z,
// which takes a size_t, needs zlib 1.2.9).
std::uint32_t zlib_crc32(std::uint32_t crc, const unsigned char* data, std::size_t size) noexcept {
  constexpr std::size_t piece = std::size_t{1} << 30;
  uLong value = crc;
  for (; size > piece; data += piece, size -= piece) value = ::crc32(value, data, static_cast<uInt>(piece));
  if (size != 0) value = ::crc32(value, data, static_cast<uInt>(size));
  return static_cast<std::uint32_t>(value);
}

#if NPYGUARD_CRC32_FOLDS

// The constants of the reflected domain: x^n mod P for the fold distances,
// bit-reflected and shifted left by one (33 bits), and Barrett's quotient
// floor(x^64 / P) with P itself. Derived by polynomial division in GF(2)
// (for instance k1 = x^(4*128+32) mod P); the tests hold the result to zlib.
constexpr long long k1 = 0x154442bd4;      // fold 512 bits, low half
constexpr long long k2 = 0x1c6e41596;      // fold 512 bits, high half
constexpr long long k3 = 0x1751997d0;      // fold 128 bits, low half
constexpr long long k4 = 0x0ccaa009e;      // fold 128 bits, high half
constexpr long long k5 = 0x163cd6124;      // x^64 mod P: 64 bits to 32
constexpr long long poly = 0x1db710641;    // P, reflected
constexpr long long barrett = 0x1f7011641; // floor(x^64 / P), reflected

#define NPYGUARD_CLMUL [[gnu::target("pclmul,sse4.1")]]

NPYGUARD_CLMUL inline __m128i load(const unsigned char* at) noexcept {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
}

// acc * x^distance + next: the low half times the constant's low half,
// the high half times its high half.
NPYGUARD_CLMUL inline __m128i fold(__m128i acc, __m128i constants, __m128i next) noexcept {
  const __m128i low = _mm_clmulepi64_si128(acc, constants, 0x00);
  const __m128i high = _mm_clmulepi64_si128(acc, constants, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

// The CRC register (inverted, as zlib keeps it inside) after `size` bytes,
// `size` a multiple of 16 and at least 64: four lanes of 16 bytes folded
// 64 bytes ahead, then into one lane, then reduced to 32 bits.
NPYGUARD_CLMUL std::uint32_t fold_blocks(std::uint32_t state, const unsigned char* data, std::size_t size) noexcept {
  const __m128i fold4 = _mm_set_epi64x(k2, k1);
  const __m128i fold1 = _mm_set_epi64x(k4, k3);
  __m128i a = _mm_xor_si128(load(data), _mm_cvtsi32_si128(static_cast<int>(state)));
  __m128i b = load(data + 16);
  __m128i c = load(data + 32);
  __m128i d = load(data + 48);
  const unsigned char* at = data + 64;
  const unsigned char* const end = data + size;
  for (; end - at >= 64; at += 64) {
    a = fold(a, fold4, load(at));
    b = fold(b, fold4, load(at + 16));
    c = fold(c, fold4, load(at + 32));
    d = fold(d, fold4, load(at + 48));
  }
  a = fold(a, fold1, b);
  a = fold(a, fold1, c);
  a = fold(a, fold1, d);
  for (; at != end; at += 16) a = fold(a, fold1, load(at));

  // 128 bits to 64: the low half times k4 added to the high half.
  const __m128i low32 = _mm_setr_epi32(-1, 0, -1, 0);
  a = _mm_xor_si128(_mm_srli_si128(a, 8), _mm_clmulepi64_si128(a, fold1, 0x10));
  // 64 bits to 32 (and 32 kept): the low 32 bits times x^64 mod P.
  a = _mm_xor_si128(_mm_srli_si128(a, 4), _mm_clmulepi64_si128(_mm_and_si128(a, low32), _mm_set_epi64x(0, k5), 0x00));
  // Barrett's reduction: q = low32(a) * floor(x^64 / P), then a + low32(q) * P.
  const __m128i constants = _mm_set_epi64x(barrett, poly);
  __m128i q = _mm_clmulepi64_si128(_mm_and_si128(a, low32), constants, 0x10);
  q = _mm_clmulepi64_si128(_mm_and_si128(q, low32), constants, 0x00);
  return static_cast<std::uint32_t>(_mm_extract_epi32(_mm_xor_si128(a, q), 1));
}

#undef NPYGUARD_CLMUL

bool processor_folds() noexcept {
  static const bool folds = [] {
    __builtin_cpu_init(); // in case the first call comes from a static initialiser
    return __builtin_cpu_supports("pclmul") != 0 && __builtin_cpu_supports("sse4.1") != 0;
  }();
  return folds;
}

#else

bool processor_folds() noexcept { return false; }

#endif

} // namespace

bool crc32_folds() noexcept { return processor_folds(); }

std::uint32_t crc32_update(std::uint32_t crc, const unsigned char* data, std::size_t size) noexcept {
#if NPYGUARD_CRC32_FOLDS
  constexpr std::size_t fold_from = 64;
  if (size >= fold_from && processor_folds()) {
    const std::size_t folded = size & ~std::size_t{15};
    crc = ~fold_blocks(~crc, data, folded);
    data += folded;
    size -= folded;
  }
#endif
  return zlib_crc32(crc, data, size);
}

} // namespace npyguard::npz::detail
