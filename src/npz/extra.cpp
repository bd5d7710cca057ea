#include "npz/extra.hpp"

#include <string>

#include "core/hex.hpp"
#include "npz/crc32.hpp"
#include "npz/failure.hpp"
#include "npz/records.hpp"

namespace npyguard::npz::detail {

std::optional<error> scan_extra(const unsigned char* extra, std::size_t length, std::uint64_t at, extra_fields& out) {
  out = extra_fields{};
  if (length > max_extra_length) {
    return fail(error_code::bad_extra_field, at,
                "the extra field holds " + std::to_string(length) + " bytes, above the 4160 any writer needs");
  }
  for (std::size_t pos = 0; pos < length;) {
    if (length - pos < 4) {
      return fail(error_code::bad_extra_field, at + pos, "the extra field ends inside a record's tag and length");
    }
    const std::uint16_t tag = load16(extra + pos);
    const std::uint16_t size = load16(extra + pos + 2);
    if (length - pos - 4 < size) {
      std::string message = "an extra field record (tag 0x";
      npyguard::detail::append_hex(message, tag, 4);
      return fail(error_code::bad_extra_field, at + pos, message + ") runs past the extra field");
    }
    const extra_record record{at + pos, extra + pos + 4, size};
    if (tag == tag_zip64 || tag == tag_unicode_path) {
      std::optional<extra_record>& slot = tag == tag_zip64 ? out.zip64 : out.unicode_path;
      if (slot) {
        return fail(error_code::bad_extra_field, record.at,
                    tag == tag_zip64 ? "a second Zip64 extra field" : "a second Unicode Path extra field");
      }
      slot = record;
    } else if ((tag == tag_aes || tag == tag_strong_encryption) && !out.encryption) {
      out.encryption = record;
    }
    pos += 4 + static_cast<std::size_t>(size);
  }
  return std::nullopt;
}

bool unicode_path_agrees(const extra_record& record, std::string_view raw_name, std::string_view name) noexcept {
  if (record.length < 5 || record.data[0] != 1) return false;
  const auto crc = crc32_update(0, reinterpret_cast<const unsigned char*>(raw_name.data()), raw_name.size());
  return load32(record.data + 1) == crc &&
         std::string_view(reinterpret_cast<const char*>(record.data + 5), record.length - 5u) == name;
}

} // namespace npyguard::npz::detail
