#include "npz/end_records.hpp"

#include <cstring>
#include <string>

#include "npz/failure.hpp"
#include "npz/records.hpp"

namespace npyguard::npz::detail {

namespace {

using std::to_string;

// The bytes of the end-record window: the last min(size, 65,557) bytes.
struct end_window {
  const unsigned char* bytes = nullptr;
  std::uint64_t start = 0; // archive offset of bytes[0]
  std::uint64_t size = 0;  // the archive's size

  [[nodiscard]] const unsigned char* at(std::uint64_t offset) const noexcept { return bytes + (offset - start); }
  // A signature at `offset` with the fixed 22 bytes inside the archive.
  [[nodiscard]] bool eocd_at(std::uint64_t offset) const noexcept {
    return offset + eocd::size <= size && load32(at(offset)) == eocd_signature;
  }
  [[nodiscard]] std::uint64_t record_end(std::uint64_t offset) const noexcept {
    return offset + eocd::size + load16(at(offset + eocd::comment_length));
  }
  // The last offset in [start, below) with an EOCD for which `wanted` holds,
  // or `below` when there is none. memchr finds the candidates' first byte,
  // so the 64 KiB are scanned at memory speed, not one offset at a time.
  template <class Predicate>
  [[nodiscard]] std::uint64_t last_eocd_below(std::uint64_t below, Predicate wanted) const noexcept {
    std::uint64_t found = below;
    const unsigned char* p = bytes;
    const unsigned char* const end = at(below);
    while (p < end) {
      p = static_cast<const unsigned char*>(std::memchr(p, eocd_signature & 0xFF, static_cast<std::size_t>(end - p)));
      if (p == nullptr) break;
      const std::uint64_t offset = start + static_cast<std::uint64_t>(p - bytes);
      if (eocd_at(offset) && wanted(offset)) found = offset;
      ++p;
    }
    return found;
  }
};

// Phase A: the EOCD is the last 22 bytes, or the error names what is there.
basic_result<std::uint64_t> find_eocd(const end_window& window) {
  const std::uint64_t last = window.size - eocd::size;
  if (window.eocd_at(last) && load16(window.at(last + eocd::comment_length)) == 0) {
    // A second EOCD whose comment would end exactly at the end of the file:
    // a reader that searches differently sees another archive.
    const std::uint64_t offset =
        window.last_eocd_below(last, [&](std::uint64_t at) { return window.record_end(at) == window.size; });
    if (offset != last) {
      return fail(error_code::ambiguous_eocd, offset,
                  "a second end of central directory record at offset " + to_string(offset) +
                      " whose comment reaches the end of the file (the archive reads two ways)");
    }
    return last;
  }
  const std::uint64_t offset = window.last_eocd_below(last + 1, [](std::uint64_t) { return true; });
  if (offset != last + 1) {
    const std::uint64_t end = window.record_end(offset);
    if (end == window.size) {
      return fail(error_code::archive_comment, offset + eocd::size,
                  "the archive has a comment (" + to_string(end - offset - eocd::size) + " bytes)");
    }
    if (end < window.size) {
      return fail(error_code::trailing_data, end,
                  to_string(window.size - end) + " bytes follow the end of central directory record");
    }
    return fail(
        error_code::bad_eocd, offset + eocd::comment_length,
        "the archive comment length (" + to_string(end - offset - eocd::size) + ") runs past the end of the file");
  }
  return fail(error_code::not_zip, std::nullopt,
              "no end of central directory record in the last " + to_string(window.size - window.start) + " bytes");
}

struct eocd_fields {
  std::uint64_t disk, cd_disk, disk_entries, total_entries, cd_size, cd_offset;
};

// Phase B: the locator in the 20 bytes before the EOCD, and its record.
std::optional<error> read_zip64(archive_reader& reader, const end_window& window, std::uint64_t eocd_offset,
                                eocd_fields& fields, directory_location& out) {
  if (eocd_offset < zip64_locator::size) return std::nullopt;
  const std::uint64_t locator = eocd_offset - zip64_locator::size;
  if (locator < window.start || load32(window.at(locator)) != zip64_locator_signature) return std::nullopt;
  const unsigned char* l = window.at(locator);
  const std::uint64_t record = load64(l + zip64_locator::record_offset);
  if (load32(l + zip64_locator::record_disk) != 0 || load32(l + zip64_locator::total_disks) != 1 ||
      locator < zip64_record::size || record != locator - zip64_record::size) {
    return fail(error_code::bad_zip64_eocd, locator,
                "the Zip64 locator must name disk 0 of 1 and a record of 56 bytes right before it (record offset " +
                    to_string(record) + ")");
  }
  const unsigned char* r = nullptr;
  if (auto failure = reader.view(record, zip64_record::size, r)) return failure;
  if (load32(r) != zip64_record_signature || load64(r + zip64_record::record_size) != zip64_record::declared_size) {
    return fail(error_code::bad_zip64_eocd, locator,
                "the Zip64 locator does not point at a Zip64 end of central directory record of 56 bytes");
  }
  const eocd_fields wide{load32(r + zip64_record::disk),         load32(r + zip64_record::cd_disk),
                         load64(r + zip64_record::disk_entries), load64(r + zip64_record::total_entries),
                         load64(r + zip64_record::cd_size),      load64(r + zip64_record::cd_offset)};
  if (wide.disk != 0)
    return fail(error_code::bad_zip64_eocd, record + zip64_record::disk, "the Zip64 record's disk number is not 0");
  if (wide.cd_disk != 0) {
    return fail(error_code::bad_zip64_eocd, record + zip64_record::cd_disk,
                "the Zip64 record's disk of the central directory is not 0");
  }
  if (wide.disk_entries != wide.total_entries) {
    return fail(error_code::bad_zip64_eocd, record + zip64_record::disk_entries,
                "the Zip64 record's entries on this disk differ from its total entries");
  }
  // Each EOCD field repeats the record's value or is saturated.
  struct pair {
    std::uint64_t narrow, wide, saturated;
    std::size_t field;
    const char* what;
  };
  const pair pairs[] = {
      {fields.disk, wide.disk, saturated16, zip64_record::disk, "disk number"},
      {fields.cd_disk, wide.cd_disk, saturated16, zip64_record::cd_disk, "disk of the central directory"},
      {fields.disk_entries, wide.disk_entries, saturated16, zip64_record::disk_entries, "entries on this disk"},
      {fields.total_entries, wide.total_entries, saturated16, zip64_record::total_entries, "total entries"},
      {fields.cd_size, wide.cd_size, saturated32, zip64_record::cd_size, "central directory size"},
      {fields.cd_offset, wide.cd_offset, saturated32, zip64_record::cd_offset, "central directory offset"},
  };
  for (const pair& p : pairs) {
    if (p.narrow != p.wide && p.narrow != p.saturated) {
      return fail(error_code::bad_zip64_eocd, record + p.field,
                  std::string("the Zip64 record's ") + p.what + " (" + to_string(p.wide) +
                      ") differs from the end of central directory record's (" + to_string(p.narrow) + ")");
    }
  }
  if (fields.disk_entries != fields.total_entries && fields.disk_entries != saturated16) {
    return fail(error_code::bad_eocd, eocd_offset + eocd::disk_entries,
                "the entries on this disk differ from the total entries");
  }
  // No writer puts Zip64 records around an empty directory, and numpy
  // cannot open the result (its first bytes are then PK\6\6).
  if (wide.total_entries == 0) {
    return fail(error_code::bad_zip64_eocd, locator, "Zip64 end records in an archive without members");
  }
  fields = wide;
  out.zip64 = true;
  out.zip64_record_offset = record;
  return std::nullopt;
}

} // namespace

basic_result<directory_location> locate_directory(archive_reader& reader, const options& opts) {
  const std::uint64_t size = reader.size();
  if (size < eocd::size) {
    return fail(error_code::not_zip, std::nullopt,
                "the input holds " + to_string(size) + " bytes, fewer than an end of central directory record (22)");
  }
  end_window window;
  window.size = size;
  window.start = size - std::min(size, eocd::search_window);
  if (auto failure = reader.view(window.start, static_cast<std::size_t>(size - window.start), window.bytes)) {
    return *failure;
  }
  const auto found = find_eocd(window);
  if (!found.ok()) return found.failure();
  directory_location out;
  out.eocd_offset = found.value();
  const unsigned char* e = window.at(out.eocd_offset);
  eocd_fields fields{load16(e + eocd::disk),          load16(e + eocd::cd_disk), load16(e + eocd::disk_entries),
                     load16(e + eocd::total_entries), load32(e + eocd::cd_size), load32(e + eocd::cd_offset)};
  if (auto failure = read_zip64(reader, window, out.eocd_offset, fields, out)) return *failure;

  // Phase C, on the record's values when there is one.
  const std::uint64_t base = out.zip64 ? out.zip64_record_offset : out.eocd_offset;
  const auto field_at = [&](std::size_t narrow, std::size_t wide) { return base + (out.zip64 ? wide : narrow); };
  if (fields.disk != 0)
    return fail(error_code::bad_eocd, field_at(eocd::disk, zip64_record::disk), "the disk number is not 0");
  if (fields.cd_disk != 0) {
    return fail(error_code::bad_eocd, field_at(eocd::cd_disk, zip64_record::cd_disk),
                "the disk of the central directory is not 0");
  }
  if (fields.disk_entries != fields.total_entries) {
    return fail(error_code::bad_eocd, field_at(eocd::disk_entries, zip64_record::disk_entries),
                "the entries on this disk (" + to_string(fields.disk_entries) + ") differ from the total entries (" +
                    to_string(fields.total_entries) + ")");
  }
  out.cd_end = base;
  if (fields.cd_offset > out.cd_end || fields.cd_size != out.cd_end - fields.cd_offset) {
    return fail(error_code::bad_eocd, field_at(eocd::cd_offset, zip64_record::cd_offset),
                "the central directory (offset " + to_string(fields.cd_offset) + ", " + to_string(fields.cd_size) +
                    " bytes) does not end where the " + (out.zip64 ? "Zip64 end record" : "end record") +
                    " starts (offset " + to_string(out.cd_end) + ")");
  }
  if (fields.total_entries > opts.limits.max_members) {
    return refused(fail(error_code::too_many_members, field_at(eocd::total_entries, zip64_record::total_entries),
                        "the archive declares " + to_string(fields.total_entries) + " members, above the limit of " +
                            to_string(opts.limits.max_members)),
                   "max_members", opts.limits.max_members, fields.total_entries);
  }
  out.cd_offset = fields.cd_offset;
  out.cd_size = fields.cd_size;
  out.entries = fields.total_entries;
  return out;
}

} // namespace npyguard::npz::detail
