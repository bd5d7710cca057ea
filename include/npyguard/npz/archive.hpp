// npyguard: the model of an accepted .npz archive (SPEC-npz.md): every
// member in central-directory order with its .npy model.
//
// Thread safety: a plain value, like the .npy header.
#ifndef NPYGUARD_NPZ_ARCHIVE_HPP
#define NPYGUARD_NPZ_ARCHIVE_HPP

#include <cstdint>
#include <string>
#include <vector>

#include "npyguard/npy/model.hpp"
#include "npyguard/result.hpp"

namespace npyguard::npz {

// The two compression methods SPEC-npz.md section 4 accepts.
enum class compression : std::uint16_t {
  stored = 0,
  deflate = 8,
};

struct member {
  // The decoded name (UTF-8; CP437 names are converted as Python's zipfile
  // decodes them) and the key numpy serves it under (the name without ".npy").
  std::string name;
  std::string key;
  compression method = compression::stored;
  std::uint32_t crc32 = 0; // the central directory's value
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0; // the member's .npy size
  // Archive offsets: the local header, and the member's first (compressed) byte.
  std::uint64_t local_header_offset = 0;
  std::uint64_t data_start = 0;
  // The member's .npy model; its data_offset and nbytes are inside the
  // member's uncompressed bytes.
  header npy;
};

struct archive {
  std::uint64_t size = 0; // the archive's bytes
  std::uint64_t central_directory_offset = 0;
  std::uint64_t central_directory_size = 0;
  bool zip64 = false;    // Zip64 end records present
  bool verified = false; // every member read in full (options::verify)
  std::vector<member> members;
  // Bytes read from the input to reach the verdict (the end-record window,
  // the directory, local headers, member prefixes, and with verify the data).
  std::uint64_t bytes_read = 0;
};

inline bool operator==(const member& a, const member& b) noexcept {
  return a.name == b.name && a.key == b.key && a.method == b.method && a.crc32 == b.crc32 &&
         a.compressed_size == b.compressed_size && a.uncompressed_size == b.uncompressed_size &&
         a.local_header_offset == b.local_header_offset && a.data_start == b.data_start && a.npy == b.npy;
}
inline bool operator!=(const member& a, const member& b) noexcept { return !(a == b); }

// Equal verdict inputs; bytes_read is how the verdict was reached, not part of it.
inline bool operator==(const archive& a, const archive& b) noexcept {
  return a.size == b.size && a.central_directory_offset == b.central_directory_offset &&
         a.central_directory_size == b.central_directory_size && a.zip64 == b.zip64 && a.verified == b.verified &&
         a.members == b.members;
}
inline bool operator!=(const archive& a, const archive& b) noexcept { return !(a == b); }

using archive_result = basic_result<archive>;

} // namespace npyguard::npz

#endif
