// Extra fields (SPEC-npz.md section 5): the structure shared by local and
// central headers, and the records npyguard reads (Zip64, Unicode Path,
// encryption). No I/O.
#ifndef NPYGUARD_SRC_NPZ_EXTRA_HPP
#define NPYGUARD_SRC_NPZ_EXTRA_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "npyguard/error.hpp"

namespace npyguard::npz::detail {

struct extra_record {
  std::uint64_t at = 0;                // archive offset of the record (its tag)
  const unsigned char* data = nullptr; // the payload
  std::uint16_t length = 0;            // of the payload
};

struct extra_fields {
  std::optional<extra_record> zip64;
  std::optional<extra_record> unicode_path;
  std::optional<extra_record> encryption; // AES (0x9901) or strong encryption (0x0017)
};

// Walks the extra area of `length` bytes at archive offset `at`: records
// that fill it exactly, Zip64 and Unicode Path at most once, at most 4,160
// bytes in all. bad_extra_field at the offending record. Pointers in `out`
// point into `extra`. May throw std::bad_alloc (the message).
[[nodiscard]] std::optional<error> scan_extra(const unsigned char* extra, std::size_t length, std::uint64_t at,
                                              extra_fields& out);

// Info-ZIP's Unicode Path field (0x7075) names the member as its header
// does: version 1, the CRC-32 of the raw header name, the decoded name.
[[nodiscard]] bool unicode_path_agrees(const extra_record& record, std::string_view raw_name,
                                       std::string_view name) noexcept;

} // namespace npyguard::npz::detail

#endif
