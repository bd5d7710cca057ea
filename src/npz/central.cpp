#include "npz/central.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <string_view>

#include "core/checked_math.hpp"
#include "core/hex.hpp"
#include "core/keyed_hash.hpp"
#include "npz/extra.hpp"
#include "npz/failure.hpp"
#include "npz/names.hpp"
#include "npz/records.hpp"

namespace npyguard::npz::detail {

namespace {

using std::to_string;

// Strings seen so far (NFC names, NFC keys), each with the index of its
// member: an open-addressing table under the keyed hash, so names chosen to
// collide cannot make the check quadratic. The strings are views of the
// path tree's copies, which never move and outlive the index.
class string_index {
public:
  // The member an equal string came from, or -1. `hash` is keyed_hash(text):
  // a string is hashed once and looked up in both indexes.
  [[nodiscard]] std::ptrdiff_t find(std::string_view text, std::uint64_t hash) const {
    if (slots_.empty()) return -1;
    for (std::size_t slot = hash & (slots_.size() - 1);; slot = (slot + 1) & (slots_.size() - 1)) {
      const std::uint32_t held = slots_[slot];
      if (held == 0) return -1;
      if (hashes_[held - 1] == hash && texts_[held - 1] == text) return static_cast<std::ptrdiff_t>(members_[held - 1]);
    }
  }

  void add(std::string_view text, std::uint64_t hash, std::size_t member) {
    if ((texts_.size() + 1) * 2 > slots_.size()) grow();
    std::size_t slot = hash & (slots_.size() - 1);
    while (slots_[slot] != 0) slot = (slot + 1) & (slots_.size() - 1);
    texts_.push_back(text);
    hashes_.push_back(hash);
    members_.push_back(member);
    slots_[slot] = static_cast<std::uint32_t>(texts_.size());
  }

private:
  void grow() {
    std::vector<std::uint32_t> slots(slots_.empty() ? 16 : slots_.size() * 2, 0);
    for (std::size_t i = 0; i < texts_.size(); ++i) {
      std::size_t slot = hashes_[i] & (slots.size() - 1);
      while (slots[slot] != 0) slot = (slot + 1) & (slots.size() - 1);
      slots[slot] = static_cast<std::uint32_t>(i + 1);
    }
    slots_ = std::move(slots);
  }

  std::vector<std::string_view> texts_;
  std::vector<std::uint64_t> hashes_;
  std::vector<std::size_t> members_;
  std::vector<std::uint32_t> slots_;
};

// Names equal after NFC are one member to a reader that normalises, and a
// name that is another's directory ("a.npy" beside "a.npy/b.npy") makes one
// path both a file and a directory once extracted: both found by the path
// tree, exactly and in linear time. numpy's NpzFile looks a key up among
// the names first, so a member whose key is another member's name
// ("a.npy.npy" beside "a.npy") cannot be read under its key.
std::optional<error> check_unique(const entry& e, std::size_t index, const std::vector<entry>& entries,
                                  path_tree& paths, string_index& names, string_index& keys) {
  // Valid until the next call of nfc(): copied into the path tree below.
  const std::string_view normal = nfc(e.name);
  const auto earlier = [&](std::size_t other) {
    return "member " + std::to_string(other) + "'s (\"" + entries[other].name + "\")";
  };
  std::string_view name;
  if (const auto clash = paths.add(normal, index, &name)) {
    const std::string other = earlier(clash->member);
    const char* const both = ": one path would be both a file and a directory once extracted";
    return fail(error_code::duplicate_name, e.central_offset,
                clash->kind == path_tree::clash_kind::same_name
                    ? "the name repeats " + other + " after Unicode NFC normalisation"
                : clash->kind == path_tree::clash_kind::under_earlier
                    ? "the name lies under " + other + " as under a directory" + both
                    : "the name is a directory of " + other + both,
                e.name);
  }
  // The path tree's copy from here on. NFC leaves the ASCII ".npy" alone
  // (nothing composes with a '.'), so the key's NFC form is the name's
  // without it.
  const std::string_view key = name.substr(0, name.size() - 4);
  const std::uint64_t name_hash = npyguard::detail::keyed_hash(name);
  const std::uint64_t key_hash = npyguard::detail::keyed_hash(key);
  if (const std::ptrdiff_t other = keys.find(name, name_hash); other >= 0) {
    return fail(error_code::duplicate_name, e.central_offset,
                "the name is the key of " + earlier(static_cast<std::size_t>(other)) +
                    ": numpy would serve this member under that key",
                e.name);
  }
  if (const std::ptrdiff_t other = names.find(key, key_hash); other >= 0) {
    return fail(error_code::duplicate_name, e.central_offset,
                "the key is the name of " + earlier(static_cast<std::size_t>(other)) +
                    ": numpy would serve that member under this key",
                e.name);
  }
  keys.add(key, key_hash, index);
  names.add(name, name_hash, index);
  return std::nullopt;
}

// The Zip64 extra field of a central header holds exactly the saturated
// values, 8 bytes each, in APPNOTE 4.5.3's order.
std::optional<error> apply_zip64(const extra_fields& extra, std::uint64_t extra_at, entry& e) {
  located* wide[] = {&e.uncompressed, &e.compressed, &e.local_offset};
  std::size_t needed = 0;
  for (located* field : wide) needed += field->value == saturated32 ? 1 : 0;
  if (!extra.zip64) {
    if (needed == 0) return std::nullopt;
    return fail(error_code::bad_extra_field, extra_at,
                "a size or offset is 0xFFFFFFFF but the central header has no Zip64 extra field");
  }
  const extra_record& record = *extra.zip64;
  if (needed == 0) {
    return fail(error_code::bad_extra_field, record.at,
                "a Zip64 extra field in a central header whose sizes and offset fit in 32 bits");
  }
  if (record.length != needed * 8) {
    return fail(error_code::bad_extra_field, record.at,
                "the Zip64 extra field holds " + to_string(record.length) + " bytes, not the " + to_string(needed * 8) +
                    " of its saturated fields");
  }
  std::size_t k = 0;
  for (located* field : wide) {
    if (field->value != saturated32) continue;
    field->value = load64(record.data + 8 * k);
    field->at = record.at + 4 + 8 * k;
    ++k;
  }
  return std::nullopt;
}

std::optional<error> check_flags_and_method(const unsigned char* h, std::uint64_t pos) {
  const std::uint16_t flags = load16(h + central::flags);
  const std::uint16_t method = load16(h + central::method);
  if ((flags & (flag::encrypted | flag::strong_encryption | flag::masked_headers)) != 0) {
    return fail(error_code::encrypted_member, pos + central::flags, "the member is encrypted (flag bits 0, 6 or 13)");
  }
  if (method == method_aes)
    return fail(error_code::encrypted_member, pos + central::method, "the member is AES-encrypted (method 99)");
  if (method != method_stored && method != method_deflate) {
    return fail(error_code::unsupported_method, pos + central::method,
                "compression method " + to_string(method) + " (only 0, stored, and 8, deflate, are accepted)");
  }
  const unsigned version = load16(h + central::version_needed) & 0xFFu;
  if (version > max_version_needed) {
    return fail(
        error_code::unsupported_feature, pos + central::version_needed,
        "version needed to extract " + to_string(version / 10) + "." + to_string(version % 10) + " is above 4.5");
  }
  const std::uint16_t known = flag::deflate_options | flag::descriptor | flag::utf8;
  if ((flags & ~known) != 0 || (method == method_stored && (flags & flag::deflate_options) != 0)) {
    std::string message = "general purpose flags 0x";
    npyguard::detail::append_hex(message, flags, 4);
    return fail(error_code::unsupported_feature, pos + central::flags,
                message + (method == method_stored && (flags & flag::deflate_options) != 0
                               ? " set deflate options (bits 1-2) on a stored member"
                               : " hold a bit outside 1, 2, 3 and 11"));
  }
  return std::nullopt;
}

// File type from the upper 16 bits (Unix mode) and MS-DOS attributes.
std::optional<error> check_type(const unsigned char* h, std::uint64_t pos) {
  const std::uint32_t attributes = load32(h + central::external_attributes);
  const std::uint32_t type = (attributes >> 16) & 0xF000u;
  constexpr std::uint32_t regular = 0x8000u;
  constexpr std::uint32_t dos_directory_or_volume = 0x18u;
  if ((type != 0 && type != regular) || (attributes & dos_directory_or_volume) != 0) {
    return fail(error_code::bad_member_type, pos + central::external_attributes,
                "the member's attributes make it a directory, symbolic link or device, not a regular file");
  }
  return std::nullopt;
}

// A deflate member's declared uncompressed / compressed size, rounded up
// (ratio_exceeded's `actual`); no compressed bytes: 2^64-1.
std::uint64_t declared_ratio(const entry& e) noexcept {
  if (e.compressed.value == 0) return std::numeric_limits<std::uint64_t>::max();
  return e.uncompressed.value / e.compressed.value + (e.uncompressed.value % e.compressed.value != 0 ? 1 : 0);
}

} // namespace

std::optional<error> read_central_directory(archive_reader& reader, const directory_location& where,
                                            const options& opts, std::vector<entry>& entries) {
  entries.clear();
  entries.reserve(static_cast<std::size_t>(std::min(where.entries, where.cd_size / central::size)));
  path_tree paths;
  string_index names;
  string_index keys;
  std::uint64_t total = 0;
  std::uint64_t pos = where.cd_offset;
  for (std::uint64_t index = 0; index < where.entries; ++index) {
    // Structure.
    if (pos == where.cd_end) {
      return fail(error_code::entry_count_mismatch, pos,
                  "the central directory ends after " + to_string(index) + " of the " + to_string(where.entries) +
                      " declared headers");
    }
    const std::uint64_t left = where.cd_end - pos;
    const unsigned char* h = nullptr;
    if (left < central::size) {
      return fail(error_code::bad_central_header, pos,
                  "a central directory header is cut short by the directory's end");
    }
    if (auto failure =
            reader.view(pos, central::size, h, static_cast<std::size_t>(std::min<std::uint64_t>(left, 1 << 18)))) {
      return failure;
    }
    if (load32(h) != central_signature) {
      return fail(error_code::bad_central_header, pos, "no central directory header signature (PK\\1\\2)");
    }
    const std::uint16_t name_length = load16(h + central::name_length);
    const std::uint16_t extra_length = load16(h + central::extra_length);
    const std::uint16_t comment_length = load16(h + central::comment_length);
    const std::uint64_t header_size = central::size + name_length + extra_length + comment_length;
    if (header_size > left) {
      return fail(error_code::bad_central_header, pos,
                  "a central directory header's name, extra field and comment run past the directory's end");
    }
    if (auto failure = reader.view(pos, static_cast<std::size_t>(header_size), h,
                                   static_cast<std::size_t>(std::min<std::uint64_t>(left, 1 << 18)))) {
      return failure;
    }
    if (load16(h + central::disk_start) != 0) {
      return fail(error_code::bad_central_header, pos + central::disk_start,
                  "the member starts on a disk other than 0");
    }
    entry e;
    e.central_offset = pos;
    e.flags = load16(h + central::flags);
    e.method = load16(h + central::method);
    e.crc = load32(h + central::crc);
    e.compressed = {load32(h + central::compressed), pos + central::compressed};
    e.uncompressed = {load32(h + central::uncompressed), pos + central::uncompressed};
    e.local_offset = {load32(h + central::local_offset), pos + central::local_offset};
    e.name_at = pos + central::size;
    const unsigned char* raw_name = h + central::size;
    e.raw_name.assign(reinterpret_cast<const char*>(raw_name), name_length);
    const bool utf8 = (e.flags & flag::utf8) != 0;
    const bool decoded = decode_name(raw_name, name_length, utf8, e.name);
    const std::optional<std::string> member = decoded ? std::optional<std::string>(e.name) : std::nullopt;
    const auto tied = [&member](error failure) {
      failure.member = member;
      return failure;
    };
    if (comment_length != 0) {
      return tied(fail(error_code::archive_comment, pos + central::size + name_length + extra_length,
                       "the member has a comment (" + to_string(comment_length) + " bytes)"));
    }
    // Extra field and Zip64 values.
    extra_fields extra;
    const std::uint64_t extra_at = e.name_at + name_length;
    if (auto failure = scan_extra(raw_name + name_length, extra_length, extra_at, extra)) return tied(*failure);
    if (extra.unicode_path && extra.unicode_path->length < 5) {
      return tied(
          fail(error_code::bad_extra_field, extra.unicode_path->at, "the Unicode Path extra field is too short"));
    }
    if (extra.encryption) { // a row of section 5's table, so part of the extra field's step
      return tied(fail(error_code::encrypted_member, extra.encryption->at, "the member has an encryption extra field"));
    }
    if (auto failure = apply_zip64(extra, extra_at, e)) return tied(*failure);
    // Encryption, method, feature, type.
    if (auto failure = check_flags_and_method(h, pos)) return tied(*failure);
    if (auto failure = check_type(h, pos)) return tied(*failure);
    // Name, Unicode Path, duplicates.
    if (!decoded) {
      return fail(error_code::bad_member_name, e.name_at, "the name is not strict UTF-8 although flag bit 11 says so");
    }
    if (auto failure = check_name(raw_name, name_length, utf8, e.name, e.name_at, e.key)) return tied(*failure);
    if (extra.unicode_path && !unicode_path_agrees(*extra.unicode_path, e.raw_name, e.name)) {
      return fail(error_code::name_mismatch, extra.unicode_path->at,
                  "the Unicode Path extra field names the member differently from its header", e.name);
    }
    if (auto failure = check_unique(e, entries.size(), entries, paths, names, keys)) return failure;
    // Bounds, sizes, ratio, total.
    const auto extent = npyguard::detail::checked_add(local::size + name_length, e.compressed.value,
                                                      std::numeric_limits<std::uint64_t>::max());
    if (!extent || e.local_offset.value > where.cd_offset || *extent > where.cd_offset - e.local_offset.value) {
      return fail(error_code::entry_out_of_bounds, e.local_offset.at,
                  "the member's local entry (offset " + to_string(e.local_offset.value) + ", at least " +
                      (extent ? to_string(*extent) : std::string("2^64")) +
                      " bytes) does not end before the central directory (offset " + to_string(where.cd_offset) + ")",
                  e.name);
    }
    if (e.method == method_stored && e.compressed.value != e.uncompressed.value) {
      return fail(error_code::size_mismatch, e.compressed.at,
                  "a stored member's compressed size (" + to_string(e.compressed.value) +
                      ") differs from its uncompressed size (" + to_string(e.uncompressed.value) + ")",
                  e.name);
    }
    if (e.method == method_deflate) {
      const auto bound = npyguard::detail::checked_mul(opts.limits.max_ratio, e.compressed.value,
                                                       std::numeric_limits<std::uint64_t>::max());
      if (bound && e.uncompressed.value > *bound) {
        return refused(fail(error_code::ratio_exceeded, e.uncompressed.at,
                            "the member declares " + to_string(e.uncompressed.value) + " bytes from " +
                                to_string(e.compressed.value) + " compressed, above the ratio limit of " +
                                to_string(opts.limits.max_ratio) + ":1",
                            e.name),
                       "max_ratio", opts.limits.max_ratio, declared_ratio(e));
      }
    }
    const auto sum = npyguard::detail::checked_add(total, e.uncompressed.value, opts.limits.max_total_bytes);
    if (!sum) {
      const auto declared =
          npyguard::detail::checked_add(total, e.uncompressed.value, std::numeric_limits<std::uint64_t>::max());
      return refused(
          fail(error_code::total_size_exceeded, e.uncompressed.at,
               "the members declare more than " + to_string(opts.limits.max_total_bytes) + " uncompressed bytes in all",
               e.name),
          "max_total_bytes", opts.limits.max_total_bytes, declared.value_or(std::numeric_limits<std::uint64_t>::max()));
    }
    total = *sum;
    entries.push_back(std::move(e));
    pos += header_size;
  }
  if (pos != where.cd_end) {
    return fail(error_code::entry_count_mismatch, pos,
                to_string(where.cd_end - pos) + " bytes of the central directory follow the " +
                    to_string(where.entries) + " declared headers");
  }
  return std::nullopt;
}

} // namespace npyguard::npz::detail
