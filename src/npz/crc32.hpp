// CRC-32 as zip stores it (ISO-HDLC: reflected polynomial 0xEDB88320, the
// value zlib's crc32() gives), by carry-less multiplication where the
// processor has it (x86-64 with PCLMULQDQ and SSE4.1: 16 bytes folded per
// multiplication pair, the method of Gopal et al., "Fast CRC computation
// for generic polynomials using PCLMULQDQ", Intel 2009), by zlib otherwise
// and for the last 15 bytes. `--verify` takes the CRC of every byte a
// member inflates to, and of every byte of a stored member: with zlib's
// table-driven crc32 that was 61% of verifying a stored archive.
#ifndef NPYGUARD_SRC_NPZ_CRC32_HPP
#define NPYGUARD_SRC_NPZ_CRC32_HPP

#include <cstddef>
#include <cstdint>

namespace npyguard::npz::detail {

// zlib's crc32(crc, data, size): the CRC-32 of the bytes that gave `crc`
// followed by `data` (crc 0 for none). `data` may be null when `size` is 0,
// and then `crc` comes back (zlib's crc32 gives 0 for a null `data`).
[[nodiscard]] std::uint32_t crc32_update(std::uint32_t crc, const unsigned char* data, std::size_t size) noexcept;

// Whether crc32_update folds by carry-less multiplication on this processor
// (the tests say which implementation they held to zlib's).
[[nodiscard]] bool crc32_folds() noexcept;

} // namespace npyguard::npz::detail

#endif
