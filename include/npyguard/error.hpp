// npyguard: error codes and the error value every rejection carries.
#ifndef NPYGUARD_ERROR_HPP
#define NPYGUARD_ERROR_HPP

#include "npyguard/export.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace npyguard {

// Stable codes: values are part of the public API and are never renumbered.
// The snake_case names (error_code_name) are the ones SPEC.md uses.
enum class error_code : std::uint16_t {
  io_error = 1,               // the input could not be opened or read
  out_of_memory = 2,          // an allocation failed (limits keep this rare)
  bad_magic = 3,              // the first six bytes are not "\x93NUMPY"
  unsupported_version = 4,    // version other than 1.0, 2.0, 3.0
  truncated_preamble = 5,     // input shorter than magic + version + HEADER_LEN
  header_too_large = 6,       // HEADER_LEN above limits.max_header_bytes
  truncated_header = 7,       // input ends inside the header text
  invalid_utf8 = 8,           // version 3.0 header that is not strict UTF-8
  control_character = 9,      // NUL or another raw control character in the header
  header_not_terminated = 10, // the header text does not end with '\n'
  syntax_error = 11,          // the text is not in the header grammar
  integer_too_large = 12,     // an integer above 2^63-1
  negative_dimension = 13,    // a '-' before a dimension
  depth_exceeded = 14,        // lists/tuples nested deeper than limits.max_depth
  missing_key = 15,           // descr, fortran_order or shape absent
  duplicate_key = 16,         // a key given twice
  unknown_key = 17,           // a key other than the three
  bad_fortran_order = 18,     // fortran_order not True/False
  bad_shape = 19,             // shape not a tuple of integers
  too_many_dimensions = 20,   // more than limits.max_ndim dimensions
  bad_descr = 21,             // descr not a valid type string or field list
  object_dtype = 22,          // 'O' in the descr without allow_object
  duplicate_field_name = 23,  // a name or title used twice in a struct
  empty_field_name = 24,      // a field named '' that is not padding
  itemsize_overflow = 25,     // an itemsize above 2^31-1
  size_overflow = 26,         // count, nbytes or data end above 2^63-1
  data_too_large = 27,        // nbytes above limits.max_data_bytes
  truncated_data = 28,        // fewer data bytes than the header implies
  trailing_data = 29,         // more data bytes than the header implies
  not_canonical = 30,         // canonical profile: header bytes differ from np.save's
  buffer_too_small = 31,      // a caller's buffer is smaller than the array data
  // RawArray (SPEC-ra.md section 8):
  unsupported_flags = 32,    // a flags bit other than bit 0 (big-endian data) is set
  unknown_element_type = 33, // eltype not 0-5 (or 5 with options::ra_allow_type5 off)
  bad_element_size = 34,     // elbyte 0 or not one the eltype allows
  data_length_mismatch = 35, // the data-length field differs from product(dims) * elbyte
  // .npz archives (SPEC-npz.md section 13):
  not_zip = 36,              // no end of central directory record
  archive_comment = 37,      // a comment in the EOCD or in a central header
  ambiguous_eocd = 38,       // a second self-consistent EOCD
  bad_eocd = 39,             // EOCD fields inconsistent (disks, counts, directory position, comment length)
  bad_zip64_eocd = 40,       // Zip64 locator or record inconsistent
  too_many_members = 41,     // more entries than limits.max_members
  entry_count_mismatch = 42, // the central directory does not hold exactly the declared headers
  bad_central_header = 43,   // central header signature, truncation, disk number
  bad_extra_field = 44,      // extra field structure; Zip64 field missing, short, unneeded or duplicated
  encrypted_member = 45,     // encryption flag bits 0/6/13, method 99, AES or strong-encryption field
  unsupported_method = 46,   // a compression method other than stored or deflate
  unsupported_feature = 47,  // version needed above 4.5, flag bits outside 1, 2, 3, 11
  bad_member_type = 48,      // symlink, directory or device attributes
  bad_member_name = 49,      // encoding, NUL, controls, backslash, absolute, drive, empty/./.. component, empty key
  not_npy_member = 50,       // a member name not ending in .npy
  duplicate_name = 51,       // two member names equal after Unicode NFC
  name_mismatch = 52,        // local name or Unicode Path field differs from the central name
  entry_out_of_bounds = 53,  // local header offset or minimal extent past the central directory
  size_mismatch = 54,        // stored sizes differ; inflated bytes differ from the declared size
  ratio_exceeded = 55,       // declared deflate ratio above limits.max_ratio
  total_size_exceeded = 56,  // declared uncompressed total above limits.max_total_bytes
  prepended_data = 57,       // bytes before the first entry
  gap_between_entries = 58,  // bytes that belong to no entry
  overlapping_entries = 59,  // an entry starting inside another, or running into the directory
  bad_local_header = 60,     // local header signature or truncation
  header_mismatch = 61,      // local flags, method, CRC or sizes differ from the central ones
  bad_data_descriptor = 62,  // data descriptor missing, unsigned, wrong width or values
  entry_order = 63,          // central directory not in file order
  bad_deflate = 64,          // the inflater reports an error
  crc_mismatch = 65,         // (verification) CRC-32 differs
  // Conversion between formats (npyguard/convert.hpp):
  not_convertible = 66, // a valid input the target format (or byte order) cannot express
  // The C API (npyguard.h):
  invalid_argument = 67, // an unusable argument: a null pointer, an options struct of unknown size or values
};

// The snake_case name of a code ("truncated_data"); "unknown" for values
// outside the enumeration.
[[nodiscard]] NPYGUARD_API std::string_view error_code_name(error_code code) noexcept;

struct error {
  error_code code = error_code::io_error;
  // 0-based byte offset from the start of the file where the problem was
  // detected; empty for whole-input conditions (an unreadable file).
  std::optional<std::uint64_t> offset;
  std::string message;
  // Errors tied to an archive member (SPEC-npz.md section 13): the member's
  // decoded name (UTF-8); empty when the error concerns no member or the
  // name itself could not be decoded.
  std::optional<std::string> member{};
  // For .npy errors inside a member: the offset inside the member's
  // uncompressed bytes (`offset` is then the archive offset: the byte itself
  // for stored members, the member's data start for deflated ones).
  std::optional<std::uint64_t> member_offset{};
  // Errors that an option or limit decided (the input passes the format's
  // own rules but not the caller's settings): the field of npyguard::limits
  // or npyguard::options, spelled as it is there ("max_header_bytes",
  // "allow_object"; the names are unique across both structs). Empty for
  // errors that no setting can lift. The view is of static storage and
  // NUL-terminated. `message` never names an option in any interface's
  // spelling: each interface words its own hint from these fields (the
  // command its flag, the C API the npyguard_options field, Python the
  // keyword), so a C++ caller that shows `message` adds the option itself.
  //   option               code                 limit, actual
  //   max_header_bytes     header_too_large     the limit; HEADER_LEN (.npz: the
  //                                             archive's unpaid header bytes)
  //   max_depth            depth_exceeded       the limit (at most hard_max_depth);
  //                                             limit + 1 (parsing stops there)
  //   max_ndim             too_many_dimensions  the limit; the dimensions declared
  //                                             (RawArray: counted at most 2^20)
  //   max_data_bytes       data_too_large       the limit; nbytes
  //   max_members          too_many_members     the limit; the entries declared
  //   max_total_bytes      total_size_exceeded  the limit; the declared sizes up to
  //                                             this member (2^64-1 past that)
  //   max_ratio            ratio_exceeded       the limit; the declared ratio rounded
  //                                             up (2^64-1 for 0 compressed bytes)
  //   max_stream_bytes,    io_error             the most a stream may hold (with
  //   max_total_bytes                           max_total_bytes: plus 64 MiB, as
  //                                             stream_limit says); limit + 1
  //   timeout_ms           io_error             none
  //   allow_object         object_dtype         none
  //   allow_trailing_data  trailing_data        none
  //   canonical            not_canonical        none
  //   ra_allow_type5       unknown_element_type none (type 5 with the option off)
  //   ra_reject_metadata   trailing_data        none
  std::string_view option{};
  // The limit in force and the value the input had, both set or both empty.
  std::optional<std::uint64_t> limit{};
  std::optional<std::uint64_t> actual{};
};

inline bool operator==(const error& a, const error& b) noexcept {
  return a.code == b.code && a.offset == b.offset && a.message == b.message && a.member == b.member &&
         a.member_offset == b.member_offset && a.option == b.option && a.limit == b.limit && a.actual == b.actual;
}
inline bool operator!=(const error& a, const error& b) noexcept { return !(a == b); }

} // namespace npyguard

#endif
