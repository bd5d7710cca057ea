// The snake_case name of every error code, as SPEC.md and the tool spell it.
#include "npyguard/error.hpp"

namespace npyguard {

std::string_view error_code_name(error_code code) noexcept {
  switch (code) {
#define NPYGUARD_NAME(name) \
  case error_code::name: return #name;
    NPYGUARD_NAME(io_error)
    NPYGUARD_NAME(out_of_memory)
    NPYGUARD_NAME(bad_magic)
    NPYGUARD_NAME(unsupported_version)
    NPYGUARD_NAME(truncated_preamble)
    NPYGUARD_NAME(header_too_large)
    NPYGUARD_NAME(truncated_header)
    NPYGUARD_NAME(invalid_utf8)
    NPYGUARD_NAME(control_character)
    NPYGUARD_NAME(header_not_terminated)
    NPYGUARD_NAME(syntax_error)
    NPYGUARD_NAME(integer_too_large)
    NPYGUARD_NAME(negative_dimension)
    NPYGUARD_NAME(depth_exceeded)
    NPYGUARD_NAME(missing_key)
    NPYGUARD_NAME(duplicate_key)
    NPYGUARD_NAME(unknown_key)
    NPYGUARD_NAME(bad_fortran_order)
    NPYGUARD_NAME(bad_shape)
    NPYGUARD_NAME(too_many_dimensions)
    NPYGUARD_NAME(bad_descr)
    NPYGUARD_NAME(object_dtype)
    NPYGUARD_NAME(duplicate_field_name)
    NPYGUARD_NAME(empty_field_name)
    NPYGUARD_NAME(itemsize_overflow)
    NPYGUARD_NAME(size_overflow)
    NPYGUARD_NAME(data_too_large)
    NPYGUARD_NAME(truncated_data)
    NPYGUARD_NAME(trailing_data)
    NPYGUARD_NAME(not_canonical)
    NPYGUARD_NAME(buffer_too_small)
    NPYGUARD_NAME(not_zip)
    NPYGUARD_NAME(archive_comment)
    NPYGUARD_NAME(ambiguous_eocd)
    NPYGUARD_NAME(bad_eocd)
    NPYGUARD_NAME(bad_zip64_eocd)
    NPYGUARD_NAME(too_many_members)
    NPYGUARD_NAME(entry_count_mismatch)
    NPYGUARD_NAME(bad_central_header)
    NPYGUARD_NAME(bad_extra_field)
    NPYGUARD_NAME(encrypted_member)
    NPYGUARD_NAME(unsupported_method)
    NPYGUARD_NAME(unsupported_feature)
    NPYGUARD_NAME(bad_member_type)
    NPYGUARD_NAME(bad_member_name)
    NPYGUARD_NAME(not_npy_member)
    NPYGUARD_NAME(duplicate_name)
    NPYGUARD_NAME(name_mismatch)
    NPYGUARD_NAME(entry_out_of_bounds)
    NPYGUARD_NAME(size_mismatch)
    NPYGUARD_NAME(ratio_exceeded)
    NPYGUARD_NAME(total_size_exceeded)
    NPYGUARD_NAME(prepended_data)
    NPYGUARD_NAME(gap_between_entries)
    NPYGUARD_NAME(overlapping_entries)
    NPYGUARD_NAME(bad_local_header)
    NPYGUARD_NAME(header_mismatch)
    NPYGUARD_NAME(bad_data_descriptor)
    NPYGUARD_NAME(entry_order)
    NPYGUARD_NAME(bad_deflate)
    NPYGUARD_NAME(crc_mismatch)
#undef NPYGUARD_NAME
  }
  return "unknown";
}

} // namespace npyguard
