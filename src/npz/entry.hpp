// One member as the central directory declares it, with the archive offset
// of every field a later phase may blame. No I/O.
#ifndef NPYGUARD_SRC_NPZ_ENTRY_HPP
#define NPYGUARD_SRC_NPZ_ENTRY_HPP

#include <cstdint>
#include <string>

namespace npyguard::npz::detail {

// A value and the archive offset of the field it was read from (the 32-bit
// field, or its Zip64 extra field replacement).
struct located {
  std::uint64_t value = 0;
  std::uint64_t at = 0;
};

struct entry {
  std::uint64_t central_offset = 0; // the central header
  std::uint16_t flags = 0;
  std::uint16_t method = 0;
  std::uint32_t crc = 0;
  located compressed;
  located uncompressed;
  located local_offset;
  std::uint64_t name_at = 0;
  std::string raw_name; // the bytes, for the local header's comparison
  std::string name;     // decoded (UTF-8)
  std::string key;
  // Phase E: where the member's data starts.
  std::uint64_t data_start = 0;
};

} // namespace npyguard::npz::detail

#endif
