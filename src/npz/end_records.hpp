// Phases A-C of SPEC-npz.md: the end of central directory record, the Zip64
// end records, and where they put the central directory. No I/O: reads
// through an archive_reader.
#ifndef NPYGUARD_SRC_NPZ_END_RECORDS_HPP
#define NPYGUARD_SRC_NPZ_END_RECORDS_HPP

#include <cstdint>

#include "npyguard/options.hpp"
#include "npyguard/result.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

struct directory_location {
  std::uint64_t eocd_offset = 0;
  bool zip64 = false;
  std::uint64_t zip64_record_offset = 0;
  std::uint64_t cd_offset = 0;
  std::uint64_t cd_size = 0;
  std::uint64_t entries = 0;
  // Where the directory must end: the Zip64 record, else the EOCD.
  std::uint64_t cd_end = 0;
};

// May throw std::bad_alloc.
[[nodiscard]] basic_result<directory_location> locate_directory(archive_reader& reader, const options& opts);

} // namespace npyguard::npz::detail

#endif
