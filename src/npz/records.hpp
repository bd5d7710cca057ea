// The zip records SPEC-npz.md reads (PKWARE APPNOTE 6.3: 4.3.7 local header,
// 4.3.9 data descriptor, 4.3.12 central header, 4.3.14-16 end records): their
// signatures, fixed sizes and field offsets, and little-endian loads. No I/O.
#ifndef NPYGUARD_SRC_NPZ_RECORDS_HPP
#define NPYGUARD_SRC_NPZ_RECORDS_HPP

#include <cstddef>
#include <cstdint>

namespace npyguard::npz::detail {

[[nodiscard]] inline std::uint16_t load16(const unsigned char* p) noexcept {
  return static_cast<std::uint16_t>(p[0] | (p[1] << 8));
}
[[nodiscard]] inline std::uint32_t load32(const unsigned char* p) noexcept {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}
[[nodiscard]] inline std::uint64_t load64(const unsigned char* p) noexcept {
  return static_cast<std::uint64_t>(load32(p)) | (static_cast<std::uint64_t>(load32(p + 4)) << 32);
}

inline constexpr std::uint32_t local_signature = 0x04034b50;         // PK\3\4
inline constexpr std::uint32_t central_signature = 0x02014b50;       // PK\1\2
inline constexpr std::uint32_t descriptor_signature = 0x08074b50;    // PK\7\8
inline constexpr std::uint32_t eocd_signature = 0x06054b50;          // PK\5\6
inline constexpr std::uint32_t zip64_locator_signature = 0x07064b50; // PK\6\7
inline constexpr std::uint32_t zip64_record_signature = 0x06064b50;  // PK\6\6

inline constexpr std::uint16_t saturated16 = 0xFFFF;
inline constexpr std::uint32_t saturated32 = 0xFFFF'FFFF;

// End of central directory record.
namespace eocd {
inline constexpr std::size_t size = 22;
inline constexpr std::size_t disk = 4, cd_disk = 6, disk_entries = 8, total_entries = 10, cd_size = 12, cd_offset = 16,
                             comment_length = 20;
// The EOCD search window: the record plus the longest comment.
inline constexpr std::uint64_t search_window = size + 0xFFFF;
} // namespace eocd

// Zip64 end of central directory locator, and the record it points to.
namespace zip64_locator {
inline constexpr std::size_t size = 20;
inline constexpr std::size_t record_disk = 4, record_offset = 8, total_disks = 16;
} // namespace zip64_locator
namespace zip64_record {
inline constexpr std::size_t size = 56;
inline constexpr std::uint64_t declared_size = 44; // the record after its first 12 bytes, no extensible data
inline constexpr std::size_t record_size = 4, disk = 16, cd_disk = 20, disk_entries = 24, total_entries = 32,
                             cd_size = 40, cd_offset = 48;
} // namespace zip64_record

// Central directory header.
namespace central {
inline constexpr std::size_t size = 46;
inline constexpr std::size_t version_needed = 6, flags = 8, method = 10, crc = 16, compressed = 20, uncompressed = 24,
                             name_length = 28, extra_length = 30, comment_length = 32, disk_start = 34,
                             external_attributes = 38, local_offset = 42;
} // namespace central

// Local file header.
namespace local {
inline constexpr std::size_t size = 30;
inline constexpr std::size_t flags = 6, method = 8, crc = 14, compressed = 18, uncompressed = 22, name_length = 26,
                             extra_length = 28;
} // namespace local

// General purpose flag bits (APPNOTE 4.4.4).
namespace flag {
inline constexpr std::uint16_t encrypted = 1u << 0;
inline constexpr std::uint16_t deflate_options = (1u << 1) | (1u << 2);
inline constexpr std::uint16_t descriptor = 1u << 3;
inline constexpr std::uint16_t strong_encryption = 1u << 6;
inline constexpr std::uint16_t utf8 = 1u << 11;
inline constexpr std::uint16_t masked_headers = 1u << 13;
} // namespace flag

inline constexpr std::uint16_t method_stored = 0;
inline constexpr std::uint16_t method_deflate = 8;
inline constexpr std::uint16_t method_aes = 99;
inline constexpr std::uint16_t max_version_needed = 45; // 4.5: Zip64

// Extra field tags (APPNOTE 4.5, 4.6).
inline constexpr std::uint16_t tag_zip64 = 0x0001;
inline constexpr std::uint16_t tag_strong_encryption = 0x0017;
inline constexpr std::uint16_t tag_unicode_path = 0x7075;
inline constexpr std::uint16_t tag_aes = 0x9901;
// The longest extra area accepted, local or central: 4,096 bytes of page
// alignment padding plus the small fields writers add (SPEC-npz.md section 5).
inline constexpr std::size_t max_extra_length = 4160;

} // namespace npyguard::npz::detail

#endif
