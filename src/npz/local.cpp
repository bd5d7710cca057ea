#include "npz/local.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "npz/extra.hpp"
#include "npz/failure.hpp"
#include "npz/records.hpp"

namespace npyguard::npz::detail {

namespace {

using std::to_string;

[[nodiscard]] bool zero_or(std::uint64_t value, std::uint64_t central) noexcept {
  return value == 0 || value == central;
}

// The local Zip64 field: 16 bytes, uncompressed then compressed; the central
// values, or with a data descriptor each 0 or the central value.
std::optional<error> check_local_zip64(const extra_record& record, const entry& e, bool descriptor) {
  if (record.length != 16) {
    return fail(error_code::bad_extra_field, record.at,
                "a local Zip64 extra field of " + to_string(record.length) + " bytes (16 expected)", e.name);
  }
  const std::uint64_t uncompressed = load64(record.data);
  const std::uint64_t compressed = load64(record.data + 8);
  const bool agrees = descriptor
                          ? zero_or(uncompressed, e.uncompressed.value) && zero_or(compressed, e.compressed.value)
                          : uncompressed == e.uncompressed.value && compressed == e.compressed.value;
  if (agrees) return std::nullopt;
  return fail(error_code::header_mismatch, record.at,
              "the local Zip64 sizes (" + to_string(uncompressed) + ", " + to_string(compressed) +
                  ") differ from the central directory's",
              e.name);
}

// CRC and 32-bit sizes of the local header against the central values.
std::optional<error> check_local_values(const unsigned char* h, std::uint64_t at, const entry& e, bool descriptor,
                                        bool zip64) {
  const std::uint32_t crc = load32(h + local::crc);
  const std::uint32_t sizes[] = {load32(h + local::compressed), load32(h + local::uncompressed)};
  const std::uint64_t central_sizes[] = {e.compressed.value, e.uncompressed.value};
  bool agrees = descriptor ? zero_or(crc, e.crc) : crc == e.crc;
  for (int i = 0; i < 2; ++i) {
    const bool saturated = zip64 && sizes[i] == saturated32;
    agrees = agrees && (saturated || sizes[i] == central_sizes[i] || (descriptor && sizes[i] == 0));
  }
  if (agrees) return std::nullopt;
  return fail(error_code::header_mismatch, at + local::crc,
              std::string("the local header's CRC-32 or sizes differ from the central directory's") +
                  (descriptor ? " (with a data descriptor each must be 0 or the central value)" : ""),
              e.name);
}

// The descriptor right after the data: signature, CRC, sizes (8 bytes each
// after a local Zip64 field), all equal to the central values.
std::optional<error> check_descriptor(archive_reader& reader, std::uint64_t at, std::uint64_t limit, const entry& e,
                                      bool zip64, std::uint64_t& end) {
  const std::size_t width = zip64 ? 24 : 16;
  if (at > limit || limit - at < width) {
    return fail(error_code::bad_data_descriptor, at,
                "flag bit 3 promises a data descriptor, but the " + to_string(width) +
                    " bytes after the data are not there before the next structure",
                e.name);
  }
  const unsigned char* d = nullptr;
  if (auto failure = reader.view(at, width, d)) return failure;
  if (load32(d) != descriptor_signature) {
    return fail(error_code::bad_data_descriptor, at, "no data descriptor signature (PK\\7\\8) after the data", e.name);
  }
  const std::uint64_t compressed = zip64 ? load64(d + 8) : load32(d + 8);
  const std::uint64_t uncompressed = zip64 ? load64(d + 16) : load32(d + 12);
  if (load32(d + 4) != e.crc || compressed != e.compressed.value || uncompressed != e.uncompressed.value) {
    return fail(error_code::bad_data_descriptor, at,
                "the data descriptor's CRC-32 or sizes differ from the central directory's", e.name);
  }
  end = at + width;
  return std::nullopt;
}

// One local entry starting at `expected`; advances `expected` past it.
std::optional<error> check_entry(archive_reader& reader, const directory_location& where, entry& e, std::size_t ahead,
                                 std::uint64_t& expected) {
  const std::uint64_t at = e.local_offset.value;
  if (at > expected) {
    if (expected == 0) {
      return fail(error_code::prepended_data, std::uint64_t{0},
                  to_string(at) + " bytes come before the first local entry");
    }
    return fail(error_code::gap_between_entries, expected,
                to_string(at - expected) + " bytes between two entries belong to neither");
  }
  if (at < expected) {
    return fail(
        error_code::overlapping_entries, at,
        "the member's local entry starts inside the previous entry (which ends at offset " + to_string(expected) + ")",
        e.name);
  }
  const unsigned char* h = nullptr;
  // Phase D placed 30 bytes, the central name and the data before the directory.
  if (auto failure = reader.view(at, local::size, h, ahead)) return failure;
  if (load32(h) != local_signature) {
    return fail(error_code::bad_local_header, at, "no local header signature (PK\\3\\4) where the directory says",
                e.name);
  }
  const std::uint16_t name_length = load16(h + local::name_length);
  const std::uint16_t extra_length = load16(h + local::extra_length);
  const std::uint64_t data_start = at + local::size + name_length + extra_length;
  if (data_start > where.cd_offset) {
    return fail(error_code::overlapping_entries, at,
                "the local header's name and extra field run into the central directory", e.name);
  }
  if (auto failure = reader.view(at, local::size + name_length + extra_length, h)) return failure;
  if (name_length != e.raw_name.size() || std::memcmp(h + local::size, e.raw_name.data(), name_length) != 0) {
    return fail(error_code::name_mismatch, at + local::size,
                "the local header names the member differently from the central directory", e.name);
  }
  if (load16(h + local::flags) != e.flags) {
    return fail(error_code::header_mismatch, at + local::flags,
                "the local header's flags differ from the central directory's", e.name);
  }
  if (load16(h + local::method) != e.method) {
    return fail(error_code::header_mismatch, at + local::method,
                "the local header's compression method differs from the central directory's", e.name);
  }
  extra_fields extra;
  const std::uint64_t extra_at = at + local::size + name_length;
  if (auto failure = scan_extra(h + local::size + name_length, extra_length, extra_at, extra)) {
    failure->member = e.name;
    return failure;
  }
  if (extra.encryption) {
    return fail(error_code::encrypted_member, extra.encryption->at, "the local header has an encryption extra field",
                e.name);
  }
  if (extra.unicode_path) {
    if (extra.unicode_path->length < 5) {
      return fail(error_code::bad_extra_field, extra.unicode_path->at, "the Unicode Path extra field is too short",
                  e.name);
    }
    if (!unicode_path_agrees(*extra.unicode_path, e.raw_name, e.name)) {
      return fail(error_code::name_mismatch, extra.unicode_path->at,
                  "the local Unicode Path extra field names the member differently from its header", e.name);
    }
  }
  const bool descriptor = (e.flags & flag::descriptor) != 0;
  if (extra.zip64) {
    if (auto failure = check_local_zip64(*extra.zip64, e, descriptor)) return failure;
  }
  if (auto failure = check_local_values(h, at, e, descriptor, extra.zip64.has_value())) return failure;
  // Phase D bounded the compressed size by the directory, so this cannot wrap.
  const std::uint64_t data_end = data_start + e.compressed.value;
  if (data_end > where.cd_offset) {
    return fail(error_code::overlapping_entries, at,
                "the member's data (" + to_string(e.compressed.value) + " bytes from offset " + to_string(data_start) +
                    ") runs into the central directory at offset " + to_string(where.cd_offset),
                e.name);
  }
  e.data_start = data_start;
  expected = data_end;
  if (descriptor) return check_descriptor(reader, data_end, where.cd_offset, e, extra.zip64.has_value(), expected);
  return std::nullopt;
}

} // namespace

std::optional<error> check_local_entries(archive_reader& reader, const directory_location& where,
                                         std::vector<entry>& entries) {
  std::vector<std::uint32_t> order(entries.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&entries](std::uint32_t a, std::uint32_t b) {
    return entries[a].local_offset.value < entries[b].local_offset.value;
  });
  std::uint64_t expected = 0;
  // Each read covers this entry's header and those of the entries that
  // start within the next 64 KiB (small members lie together): one read for
  // many headers, and never a large member's data.
  constexpr std::uint64_t span = std::uint64_t{64} * 1024;
  const auto header_end = [&entries](std::uint32_t index) {
    return entries[index].local_offset.value + local::size + entries[index].raw_name.size() + 64;
  };
  std::size_t last = 0; // the furthest entry the current read covers
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::uint64_t start = entries[order[k]].local_offset.value;
    last = std::max(last, k);
    while (last + 1 < order.size() && header_end(order[last + 1]) - start <= span) ++last;
    const std::uint64_t end = std::max(header_end(order[k]), header_end(order[last]));
    // Minimal reads: this entry's header (and at most 64 bytes after it) only.
    const auto ahead = static_cast<std::size_t>(
        reader.minimal_reads() ? header_end(order[k]) - start
                               : std::min(end - start, std::max(span, header_end(order[k]) - start)));
    if (auto failure = check_entry(reader, where, entries[order[k]], ahead, expected)) return failure;
  }
  if (expected != where.cd_offset) {
    if (expected == 0) {
      return fail(error_code::prepended_data, std::uint64_t{0},
                  to_string(where.cd_offset) + " bytes come before the central directory and belong to no entry");
    }
    return fail(error_code::gap_between_entries, expected,
                to_string(where.cd_offset - expected) + " bytes between the last entry and the central directory");
  }
  for (std::size_t i = 1; i < entries.size(); ++i) {
    if (entries[i].local_offset.value < entries[i - 1].local_offset.value) {
      return fail(error_code::entry_order, entries[i].central_offset,
                  "the central directory lists this member before one that comes earlier in the file", entries[i].name);
    }
  }
  return std::nullopt;
}

} // namespace npyguard::npz::detail
