// Test helper: a small zip writer that lays archives out the way the
// writers of SPEC-npz.md section 11 do, and records where every structure
// went, so that a test can patch one field and expect one error at one
// offset. Independent of the library (it shares no code with src/npz).
#ifndef NPYGUARD_TESTS_ZIP_BUILDER_HPP
#define NPYGUARD_TESTS_ZIP_BUILDER_HPP

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <zlib.h>

namespace npyguard_test {

inline void put16(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 2; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void put32(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
inline void put64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}
// Overwrites `width` bytes at `at` with `v`, little-endian.
inline void patch(std::string& bytes, std::uint64_t at, std::uint64_t v, unsigned width) {
  for (unsigned i = 0; i < width; ++i) bytes.at(at + i) = static_cast<char>((v >> (8 * i)) & 0xFF);
}
inline std::uint64_t peek(const std::string& bytes, std::uint64_t at, unsigned width) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) {
    v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes.at(at + i))) << (8 * i);
  }
  return v;
}

inline std::uint32_t crc_of(const std::string& data) {
  return static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

// Raw deflate (no zlib wrapper), as zipfile writes it (level 6).
inline std::string raw_deflate(const std::string& data, int level = 6) {
  z_stream s{};
  if (deflateInit2(&s, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) throw std::runtime_error("deflate");
  std::string out(deflateBound(&s, static_cast<uLong>(data.size())) + 16, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  s.avail_in = static_cast<uInt>(data.size());
  s.next_out = reinterpret_cast<Bytef*>(&out[0]);
  s.avail_out = static_cast<uInt>(out.size());
  if (deflate(&s, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate");
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

struct zip_entry {
  std::string name;
  std::string data; // the member's uncompressed bytes
  std::uint16_t method = 0;
  std::uint16_t flags = 0;
  std::uint16_t version_made_by = 0x0314;
  std::uint16_t version_needed = 20;
  std::uint32_t external_attributes = 0600u << 16;
  std::uint16_t time = 0, date = (0 << 9) | (1 << 5) | 1; // 1980-01-01
  // numpy (force_zip64): a 16-byte Zip64 field in the local header, whose
  // 32-bit sizes are then 0xFFFFFFFF.
  bool local_zip64 = true;
  // Flag bit 3 with a signed descriptor; local CRC and sizes zero (numpy
  // to a pipe).
  bool descriptor = false;
  std::string local_extra_tail;          // appended after the Zip64 field
  std::string central_extra;             // the central extra field
  std::optional<std::string> compressed; // override the deflated bytes
  std::string after;                     // bytes written after the entry (a gap)
};

struct zip_layout {
  std::uint64_t local = 0;      // local header
  std::uint64_t data = 0;       // first data byte
  std::uint64_t descriptor = 0; // data descriptor (when written)
  std::uint64_t central = 0;    // central header
};

struct zip_archive {
  std::string bytes;
  std::vector<zip_layout> entries;
  std::uint64_t cd_offset = 0;
  std::uint64_t eocd = 0;
};

// Writes the entries in order, numpy's way unless the entries say otherwise;
// the central directory lists them in `order` (default: file order).
inline zip_archive build_zip(const std::vector<zip_entry>& entries, const std::string& prefix = {},
                             std::vector<std::size_t> order = {}) {
  zip_archive out;
  out.bytes = prefix;
  std::vector<std::string> payloads;
  for (const zip_entry& e : entries) {
    zip_layout where;
    const std::string payload =
        e.method == 8 ? e.compressed.value_or(raw_deflate(e.data)) : e.compressed.value_or(e.data);
    const std::uint32_t crc = crc_of(e.data);
    where.local = out.bytes.size();
    std::string& b = out.bytes;
    put32(b, 0x04034b50);
    put16(b, e.version_needed);
    put16(b, e.flags);
    put16(b, e.method);
    put16(b, e.time);
    put16(b, e.date);
    put32(b, e.descriptor ? 0 : crc);
    put32(b, e.descriptor ? 0 : (e.local_zip64 ? 0xFFFFFFFFu : payload.size()));
    put32(b, e.descriptor ? 0 : (e.local_zip64 ? 0xFFFFFFFFu : e.data.size()));
    put16(b, e.name.size());
    const std::size_t extra_length = (e.local_zip64 ? 20 : 0) + e.local_extra_tail.size();
    put16(b, extra_length);
    b += e.name;
    if (e.local_zip64) {
      put16(b, 1);
      put16(b, 16);
      put64(b, e.descriptor ? 0 : e.data.size());
      put64(b, e.descriptor ? 0 : payload.size());
    }
    b += e.local_extra_tail;
    where.data = b.size();
    b += payload;
    if (e.descriptor) {
      where.descriptor = b.size();
      put32(b, 0x08074b50);
      put32(b, crc);
      if (e.local_zip64) {
        put64(b, payload.size());
        put64(b, e.data.size());
      } else {
        put32(b, payload.size());
        put32(b, e.data.size());
      }
    }
    b += e.after;
    out.entries.push_back(where);
    payloads.push_back(payload);
  }
  out.cd_offset = out.bytes.size();
  if (order.empty()) {
    for (std::size_t i = 0; i < entries.size(); ++i) order.push_back(i);
  }
  for (const std::size_t i : order) {
    const zip_entry& e = entries[i];
    std::string& b = out.bytes;
    out.entries[i].central = b.size();
    put32(b, 0x02014b50);
    put16(b, e.version_made_by);
    put16(b, e.version_needed);
    put16(b, e.flags);
    put16(b, e.method);
    put16(b, e.time);
    put16(b, e.date);
    put32(b, crc_of(e.data));
    put32(b, payloads[i].size());
    put32(b, e.data.size());
    put16(b, e.name.size());
    put16(b, e.central_extra.size());
    put16(b, 0);
    put16(b, 0);
    put16(b, 0);
    put32(b, e.external_attributes);
    put32(b, out.entries[i].local);
    b += e.name;
    b += e.central_extra;
  }
  const std::uint64_t cd_size = out.bytes.size() - out.cd_offset;
  out.eocd = out.bytes.size();
  std::string& b = out.bytes;
  put32(b, 0x06054b50);
  put16(b, 0);
  put16(b, 0);
  put16(b, entries.size());
  put16(b, entries.size());
  put32(b, cd_size);
  put32(b, out.cd_offset);
  put16(b, 0);
  return out;
}

// Adds Zip64 end records (record and locator before the EOCD) and
// saturates the EOCD's counts and directory fields, as zipfile does above
// 65,535 entries.
inline void add_zip64_end(zip_archive& zip) {
  std::string& b = zip.bytes;
  const std::uint64_t entries = peek(b, zip.eocd + 10, 2);
  const std::uint64_t cd_size = peek(b, zip.eocd + 12, 4);
  b.resize(zip.eocd);
  const std::uint64_t record = b.size();
  put32(b, 0x06064b50);
  put64(b, 44);
  put16(b, 0x032D);
  put16(b, 45);
  put32(b, 0);
  put32(b, 0);
  put64(b, entries);
  put64(b, entries);
  put64(b, cd_size);
  put64(b, zip.cd_offset);
  put32(b, 0x07064b50);
  put32(b, 0);
  put64(b, record);
  put32(b, 1);
  zip.eocd = b.size();
  put32(b, 0x06054b50);
  put16(b, 0);
  put16(b, 0);
  put16(b, 0xFFFF);
  put16(b, 0xFFFF);
  put32(b, 0xFFFFFFFF);
  put32(b, 0xFFFFFFFF);
  put16(b, 0);
}

} // namespace npyguard_test

#endif
