// Byte order: reversing the bytes of runs of scalars in place. No I/O.
#ifndef NPYGUARD_SRC_CORE_BYTE_SWAP_HPP
#define NPYGUARD_SRC_CORE_BYTE_SWAP_HPP

#include <cstddef>
#include <cstdint>

namespace npyguard::detail {

inline constexpr bool machine_big_endian =
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    true;
#else
    false;
#endif

// Reverses the bytes of each of `count` adjacent scalars of `width` bytes
// (2, 4, 8 or 16; other widths are left alone) starting at `at`, which need
// not be aligned.
void swap_scalars(unsigned char* at, std::uint32_t width, std::size_t count) noexcept;

} // namespace npyguard::detail

#endif
