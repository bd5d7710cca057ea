#include "core/byte_swap.hpp"

#include <cstring>

namespace npyguard::detail {
namespace {

template <typename Unsigned, typename Swap>
void swap_each(unsigned char* at, std::size_t count, Swap swap) noexcept {
  for (std::size_t i = 0; i < count; ++i, at += sizeof(Unsigned)) {
    Unsigned value;
    std::memcpy(&value, at, sizeof value);
    value = swap(value);
    std::memcpy(at, &value, sizeof value);
  }
}

} // namespace

void swap_scalars(unsigned char* at, std::uint32_t width, std::size_t count) noexcept {
  switch (width) {
    case 2: swap_each<std::uint16_t>(at, count, [](std::uint16_t v) { return __builtin_bswap16(v); }); break;
    case 4: swap_each<std::uint32_t>(at, count, [](std::uint32_t v) { return __builtin_bswap32(v); }); break;
    case 8: swap_each<std::uint64_t>(at, count, [](std::uint64_t v) { return __builtin_bswap64(v); }); break;
    case 16: // float128, long double, int128 and each half of a complex256: all 16 bytes reversed
      for (std::size_t i = 0; i < count; ++i, at += 16) {
        std::uint64_t low;
        std::uint64_t high;
        std::memcpy(&low, at, 8);
        std::memcpy(&high, at + 8, 8);
        low = __builtin_bswap64(low);
        high = __builtin_bswap64(high);
        std::memcpy(at, &high, 8);
        std::memcpy(at + 8, &low, 8);
      }
      break;
    default: // no scalar has another width
      break;
  }
}

} // namespace npyguard::detail
