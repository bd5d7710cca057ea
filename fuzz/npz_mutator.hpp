// The structure-aware mutator of fuzz_npz: parses the archive leniently into
// its members, changes one thing (a member's .npy bytes, a header field on
// one side or both, a name, the member list, descriptors, Zip64 records, extra
// fields, stray bytes), and writes a zip whose offsets, sizes and CRCs are
// consistent unless the change was to break one of them. Random byte flips
// alone rarely get past the end record and the tiling checks; this does, so
// the fuzzer spends its time in phases D-G and in the members' .npy headers.
#ifndef NPYGUARD_FUZZ_NPZ_MUTATOR_HPP
#define NPYGUARD_FUZZ_NPZ_MUTATOR_HPP

#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

// libFuzzer's own byte-level mutator; absent (null) in the replay build.
extern "C" __attribute__((weak)) std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size,
                                                              std::size_t max_size);

namespace npyguard::fuzz::npz_mutator {

struct member {
  std::string name;
  std::string data; // uncompressed
  std::uint16_t method = 0;
  std::uint16_t flags = 0;
  std::uint16_t version_needed = 20;
  std::uint16_t made_by = 0x0314;
  std::uint32_t external = 0600u << 16;
  std::string central_extra;
  std::string local_extra;
  bool local_zip64 = true;
  bool descriptor = false;
  // Deliberate inconsistencies, applied after the consistent values.
  std::optional<std::uint32_t> central_crc;
  std::optional<std::string> compressed; // raw bytes instead of deflate(data)
  std::string local_name_override;       // empty: the name
  std::string after;                     // bytes after the entry (a gap)
};

struct archive {
  std::string config; // the fuzz input's four option bytes
  std::string prefix;
  std::vector<member> members;
  std::vector<std::size_t> central_order; // empty: file order
  bool zip64_end = false;
  std::string comment;
};

inline std::uint64_t load(const std::string& b, std::size_t at, unsigned width) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < width; ++i) v |= std::uint64_t{static_cast<unsigned char>(b[at + i])} << (8 * i);
  return v;
}
inline void put(std::string& out, std::uint64_t v, unsigned width) {
  for (unsigned i = 0; i < width; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
}

inline std::optional<std::string> inflate_all(const std::string& in, std::size_t limit) {
  z_stream s{};
  if (inflateInit2(&s, -15) != Z_OK) return std::nullopt;
  std::string out(std::min<std::size_t>(limit, 1 << 16), '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  int code = Z_OK;
  while (code == Z_OK) {
    if (s.total_out == out.size()) {
      if (out.size() >= limit) break;
      out.resize(std::min(limit, out.size() * 2));
    }
    s.next_out = reinterpret_cast<Bytef*>(&out[s.total_out]);
    s.avail_out = static_cast<uInt>(out.size() - s.total_out);
    code = ::inflate(&s, Z_NO_FLUSH);
  }
  out.resize(s.total_out);
  inflateEnd(&s);
  if (code != Z_STREAM_END) return std::nullopt;
  return out;
}

inline std::string deflate_all(const std::string& in, int level) {
  z_stream s{};
  deflateInit2(&s, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&s, static_cast<uLong>(in.size())) + 16, '\0');
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  s.avail_in = static_cast<uInt>(in.size());
  s.next_out = reinterpret_cast<Bytef*>(&out[0]);
  s.avail_out = static_cast<uInt>(out.size());
  deflate(&s, Z_FINISH);
  out.resize(s.total_out);
  deflateEnd(&s);
  return out;
}

inline std::uint32_t crc_of(const std::string& data) {
  return static_cast<std::uint32_t>(
      ::crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size())));
}

// A lenient reading: the last 22 bytes (or the last EOCD signature) name the
// directory; each central header names a local entry. Anything odd: nullopt.
inline std::optional<archive> parse(const std::string& input) {
  if (input.size() < 4 + 22) return std::nullopt;
  archive out;
  out.config = input.substr(0, 4);
  const std::string b = input.substr(4);
  std::size_t eocd = std::string::npos;
  for (std::size_t at = b.size() - 22 + 1; at-- > 0 && b.size() - at <= 22 + 0xFFFF;) {
    if (load(b, at, 4) == 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd == std::string::npos) return std::nullopt;
  out.comment = b.substr(eocd + 22);
  const std::uint64_t count = load(b, eocd + 10, 2);
  std::uint64_t cd = load(b, eocd + 16, 4);
  std::uint64_t first_local = b.size();
  for (std::uint64_t i = 0; i < count; ++i) {
    if (cd + 46 > b.size() || load(b, cd, 4) != 0x02014b50) return std::nullopt;
    member m;
    m.made_by = static_cast<std::uint16_t>(load(b, cd + 4, 2));
    m.version_needed = static_cast<std::uint16_t>(load(b, cd + 6, 2));
    m.flags = static_cast<std::uint16_t>(load(b, cd + 8, 2));
    m.method = static_cast<std::uint16_t>(load(b, cd + 10, 2));
    const std::uint64_t csize = load(b, cd + 20, 4);
    const std::uint64_t usize = load(b, cd + 24, 4);
    const std::size_t n = load(b, cd + 28, 2), x = load(b, cd + 30, 2), c = load(b, cd + 32, 2);
    m.external = static_cast<std::uint32_t>(load(b, cd + 38, 4));
    const std::uint64_t local = load(b, cd + 42, 4);
    if (cd + 46 + n + x + c > b.size()) return std::nullopt;
    m.name = b.substr(cd + 46, n);
    m.central_extra = b.substr(cd + 46 + n, x);
    cd += 46 + n + x + c;
    if (local + 30 > b.size() || load(b, local, 4) != 0x04034b50) return std::nullopt;
    const std::size_t ln = load(b, local + 26, 2), lx = load(b, local + 28, 2);
    const std::uint64_t data = local + 30 + ln + lx;
    if (data + csize > b.size() || csize > (1u << 24) || usize > (1u << 24)) return std::nullopt;
    std::string extra = b.substr(local + 30 + ln, lx);
    m.local_zip64 = extra.size() >= 20 && load(extra, 0, 2) == 1 && load(extra, 2, 2) == 16;
    m.local_extra = m.local_zip64 ? extra.substr(20) : extra;
    m.descriptor = (m.flags & 8) != 0;
    const std::string payload = b.substr(data, csize);
    if (m.method == 8) {
      auto inflated = inflate_all(payload, usize + 1);
      // A stream zlib would not write (crafted blocks) is kept as it is.
      if (!inflated || deflate_all(*inflated, 6) != payload) m.compressed = payload;
      m.data = inflated.value_or(std::string());
    } else {
      m.data = payload;
    }
    first_local = std::min(first_local, local);
    out.members.push_back(std::move(m));
  }
  out.prefix = b.substr(0, std::min<std::uint64_t>(first_local, 64));
  if (out.members.empty()) out.prefix.clear();
  return out;
}

// Writes the archive: numpy's layout for what the members say.
inline std::string serialise(const archive& a) {
  std::string b = a.prefix;
  std::vector<std::uint64_t> locals;
  std::vector<std::string> payloads;
  for (const member& m : a.members) {
    const std::string payload = m.compressed ? *m.compressed : m.method == 8 ? deflate_all(m.data, 6) : m.data;
    const std::uint32_t crc = crc_of(m.data);
    locals.push_back(b.size());
    put(b, 0x04034b50, 4);
    put(b, m.version_needed, 2);
    put(b, m.flags, 2);
    put(b, m.method, 2);
    put(b, 0, 2);
    put(b, 0x21, 2);
    put(b, m.descriptor ? 0 : crc, 4);
    put(b, m.descriptor ? 0 : m.local_zip64 ? 0xFFFFFFFFu : payload.size(), 4);
    put(b, m.descriptor ? 0 : m.local_zip64 ? 0xFFFFFFFFu : m.data.size(), 4);
    const std::string& local_name = m.local_name_override.empty() ? m.name : m.local_name_override;
    put(b, local_name.size() & 0xFFFF, 2);
    put(b, ((m.local_zip64 ? 20 : 0) + m.local_extra.size()) & 0xFFFF, 2);
    b += local_name;
    if (m.local_zip64) {
      put(b, 1, 2);
      put(b, 16, 2);
      put(b, m.descriptor ? 0 : m.data.size(), 8);
      put(b, m.descriptor ? 0 : payload.size(), 8);
    }
    b += m.local_extra;
    b += payload;
    if (m.descriptor) {
      put(b, 0x08074b50, 4);
      put(b, crc, 4);
      put(b, payload.size(), m.local_zip64 ? 8 : 4);
      put(b, m.data.size(), m.local_zip64 ? 8 : 4);
    }
    b += m.after;
    payloads.push_back(payload);
  }
  const std::uint64_t cd = b.size();
  std::vector<std::size_t> order = a.central_order;
  if (order.empty()) {
    for (std::size_t i = 0; i < a.members.size(); ++i) order.push_back(i);
  }
  for (const std::size_t i : order) {
    if (i >= a.members.size()) continue;
    const member& m = a.members[i];
    put(b, 0x02014b50, 4);
    put(b, m.made_by, 2);
    put(b, m.version_needed, 2);
    put(b, m.flags, 2);
    put(b, m.method, 2);
    put(b, 0, 2);
    put(b, 0x21, 2);
    put(b, m.central_crc.value_or(crc_of(m.data)), 4);
    put(b, payloads[i].size(), 4);
    put(b, m.data.size(), 4);
    put(b, m.name.size() & 0xFFFF, 2);
    put(b, m.central_extra.size() & 0xFFFF, 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, 0, 2);
    put(b, m.external, 4);
    put(b, locals[i], 4);
    b += m.name;
    b += m.central_extra;
  }
  const std::uint64_t cd_size = b.size() - cd;
  if (a.zip64_end) {
    const std::uint64_t record = b.size();
    put(b, 0x06064b50, 4);
    put(b, 44, 8);
    put(b, 0x032D, 2);
    put(b, 45, 2);
    put(b, 0, 8);
    put(b, order.size(), 8);
    put(b, order.size(), 8);
    put(b, cd_size, 8);
    put(b, cd, 8);
    put(b, 0x07064b50, 4);
    put(b, 0, 4);
    put(b, record, 8);
    put(b, 1, 4);
  }
  put(b, 0x06054b50, 4);
  put(b, 0, 4);
  put(b, a.zip64_end ? 0xFFFF : order.size() & 0xFFFF, 2);
  put(b, a.zip64_end ? 0xFFFF : order.size() & 0xFFFF, 2);
  put(b, a.zip64_end ? 0xFFFFFFFFu : cd_size, 4);
  put(b, a.zip64_end ? 0xFFFFFFFFu : cd, 4);
  put(b, a.comment.size() & 0xFFFF, 2);
  b += a.comment;
  return a.config + b;
}

// Raw deflate bits, least significant first (RFC 1951 3.1.1).
struct bit_writer {
  std::string out;
  std::uint32_t bits = 0;
  unsigned count = 0;
  void put(std::uint32_t value, unsigned width) {
    bits |= value << count;
    count += width;
    while (count >= 8) {
      out.push_back(static_cast<char>(bits & 0xFF));
      bits >>= 8;
      count -= 8;
    }
  }
  // Huffman codes go most significant bit first.
  void put_code(std::uint32_t code, unsigned width) {
    std::uint32_t reversed = 0;
    for (unsigned i = 0; i < width; ++i) reversed |= ((code >> i) & 1u) << (width - 1 - i);
    put(reversed, width);
  }
  // An empty stored block (not final): ends on a byte boundary.
  void empty_stored() {
    put(0, 3);
    if (count > 0) put(0, 8 - count);
    out += std::string("\x00\x00\xff\xff", 4);
  }
};

// data[from, to) as one dynamic block (not final) whose literal/length
// code holds only the bytes there and the end of block, each as short as a
// complete code of them allows (one bit each for one byte value and the
// end of block), no distance code: the literals of one to a few bits the
// decoder takes several a lookup. With `matches`, the bytes that repeat
// those 1 or 2 before (3 to 10 at a time) are matches of lengths 3-10 (no
// extra bits, the lengths used in the same complete code) at distances 1
// and 2 (a code of one bit each): the short matches the decoder takes
// several a lookup too, once a block has had 512.
inline void short_code_block(bit_writer& w, const std::string& data, std::size_t from, std::size_t to,
                             bool matches = false) {
  struct unit {
    unsigned symbol;   // a byte, or a length of 3-10 (257-264)
    unsigned distance; // 1 or 2 for a length
  };
  std::vector<unit> units;
  for (std::size_t i = from; i < to;) {
    unsigned best = 0;
    unsigned distance = 0;
    for (unsigned d = 1; matches && d <= 2 && i >= d; ++d) {
      unsigned n = 0;
      while (n < 10 && i + n < to && data[i + n] == data[i + n - d]) ++n;
      if (n >= 3 && n > best) {
        best = n;
        distance = d;
      }
    }
    if (best != 0) {
      units.push_back({257 + best - 3, distance});
      i += best;
    } else {
      units.push_back({static_cast<unsigned char>(data[i]), 0});
      ++i;
    }
  }
  const unsigned litlen_count = matches ? 265 : 257;
  std::array<unsigned, 267> lengths{}; // literal/length, then the distance code's one or two lengths
  for (const unit& u : units) lengths[u.symbol] = 1;
  lengths[256] = 1;
  std::vector<unsigned> symbols;
  for (unsigned symbol = 0; symbol < litlen_count; ++symbol) {
    if (lengths[symbol] != 0) symbols.push_back(symbol);
  }
  unsigned bits = 1; // a complete code of n symbols: 2^bits - n of bits - 1 bits, the rest of `bits`
  while ((std::size_t{1} << bits) < symbols.size()) ++bits;
  const std::size_t shorter = (std::size_t{1} << bits) - symbols.size();
  for (std::size_t k = 0; k < symbols.size(); ++k) lengths[symbols[k]] = k < shorter ? bits - 1 : bits;
  std::array<unsigned, 265> codes{}; // RFC 1951 section 3.2.2
  std::array<unsigned, 17> count{};
  for (std::size_t symbol = 0; symbol < litlen_count; ++symbol) ++count[lengths[symbol]];
  count[0] = 0;
  std::array<unsigned, 17> next{};
  for (unsigned length = 1, code = 0; length <= 16; ++length) {
    code = (code + count[length - 1]) << 1;
    next[length] = code;
  }
  for (std::size_t symbol = 0; symbol < litlen_count; ++symbol) {
    if (lengths[symbol] != 0) codes[symbol] = next[lengths[symbol]]++;
  }
  if (matches) lengths[litlen_count] = lengths[litlen_count + 1] = 1; // distances 1 and 2: codes 0 and 1
  w.put(0, 1);
  w.put(2, 2);                  // dynamic Huffman codes
  w.put(litlen_count - 257, 5); // HLIT
  w.put(matches ? 1 : 0, 5);    // HDIST 2 or 1
  w.put(15, 4);                 // HCLEN 19
  static const unsigned order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};
  for (unsigned symbol : order) w.put(symbol < 16 ? 4 : 0, 3); // lengths 0-15 of 4 bits: code n is n
  for (unsigned k = 0; k < litlen_count + (matches ? 2 : 1); ++k) w.put_code(lengths[k], 4);
  for (const unit& u : units) {
    w.put_code(codes[u.symbol], lengths[u.symbol]);
    if (u.symbol > 256) w.put_code(u.distance - 1, 1);
  }
  w.put_code(codes[256], lengths[256]);
}

// A member's stream with crafted blocks before the rest of its bytes
// (SPEC-npz.md section 9, "compressed bytes buy output"): `empty` empty
// stored blocks, then the first `literals` bytes as fixed blocks of one
// literal each, then the next `short_run` bytes as short_code_block (with
// `matches` or not), then zlib's stream of what is left.
inline std::string crafted_stream(const std::string& data, std::size_t empty, std::size_t literals,
                                  std::size_t short_run = 0, bool matches = false) {
  bit_writer w;
  for (std::size_t i = 0; i < empty; ++i) w.empty_stored();
  literals = std::min(literals, data.size());
  for (std::size_t i = 0; i < literals; ++i) {
    const auto byte = static_cast<unsigned char>(data[i]);
    w.put(0, 1);
    w.put(1, 2); // fixed Huffman codes
    if (byte < 144) {
      w.put_code(0x30u + byte, 8);
    } else {
      w.put_code(0x190u + byte - 144u, 9);
    }
    w.put_code(0, 7); // end of block
  }
  short_run = std::min(short_run, data.size() - literals);
  if (short_run != 0) short_code_block(w, data, literals, literals + short_run, matches);
  w.empty_stored(); // back on a byte boundary
  return w.out + deflate_all(data.substr(literals + short_run), 6);
}

// Names of the classes SPEC-npz.md section 6 refuses (amended 2026-11-26)
// or accepts on purpose, built around `base` (a name ending in ".npy") or
// `other` (another member's name).
inline std::string crafted_name(const std::string& base, const std::string& other, std::size_t kind,
                                std::size_t count) {
  const std::string stem = base.size() > 4 ? base.substr(0, base.size() - 4) : "m";
  const auto repeat = [](const std::string& piece, std::size_t n) {
    std::string out;
    for (std::size_t i = 0; i < n; ++i) out += piece;
    return out;
  };
  switch (kind) {
    case 0: return "x" + repeat("\u0f73", count) + ".npy"; // decomposes into two non-starters each
    case 1: return "x" + repeat("\u0344", count) + ".npy"; // likewise
    case 2: return "a" + repeat("\u0301", count) + ".npy"; // combining marks as written
    case 3: return repeat("\ud55c\uae00", count) + ".npy"; // Hangul syllables
    case 4: return stem + "\u200b.npy";                    // Cf: zero width space
    case 5: return stem + "\u00ad.npy";                    // Cf: soft hyphen
    case 6: return stem + "\u2028.npy";                    // Zl
    case 7: return "..\uff0f..\uff0f" + base;              // full-width solidus
    case 8: return stem + "\uff0fb.npy";
    case 9: return "\u2025/" + base;           // two-dot leader
    case 10: return stem + "\uff3cb.npy";      // full-width reverse solidus
    case 11: return "c\uff1a" + base;          // full-width colon after a letter
    case 12: return "dir /" + base;            // a component ending in a space
    case 13: return "dir./" + base;            // ... in a dot
    case 14: return other + "/" + base;        // another member's name as a directory
    case 15: return other + ".npy";            // a key that is another member's name
    case 16: return "aux.npy";                 // Windows device names: accepted
    default: return "dense/kernel\uff1a0.npy"; // a colon that is no drive letter
  }
}

// libFuzzer's mutation of a string, or a byte flip without it.
inline void mutate_bytes(std::string& s, std::size_t max_size, std::mt19937& random) {
  if (LLVMFuzzerMutate != nullptr) {
    const std::size_t size = s.size();
    s.resize(std::max(max_size, size + 1));
    const std::size_t n =
        LLVMFuzzerMutate(reinterpret_cast<std::uint8_t*>(&s[0]), size, std::max<std::size_t>(max_size, 1));
    s.resize(n);
  } else if (!s.empty()) {
    s[random() % s.size()] ^= static_cast<char>(1u << (random() % 8));
  } else {
    s.push_back(static_cast<char>(random()));
  }
}

// One change; the caller writes the result.
inline void mutate(archive& a, std::mt19937& random, std::size_t max_size) {
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(random() % n); };
  if (a.members.empty() || pick(16) == 0) {
    member m;
    m.name = "m" + std::to_string(pick(100)) + ".npy";
    m.data = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
    m.data += std::string(127 - m.data.size(), ' ') + "\n" + std::string(12, '\x01');
    m.method = pick(2) ? 8 : 0;
    a.members.insert(a.members.begin() + static_cast<std::ptrdiff_t>(pick(a.members.size() + 1)), m);
    return;
  }
  member& m = a.members[pick(a.members.size())];
  switch (pick(21)) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4: // the .npy
      mutate_bytes(m.data, std::max<std::size_t>(m.data.size() * 2, 256), random);
      m.compressed.reset(); // deflated again from the new bytes
      break;
    case 5: mutate_bytes(m.name, 64, random); break;
    case 6: m.local_name_override = m.name + "x"; break;
    case 7: m.flags ^= static_cast<std::uint16_t>(1u << pick(16)); break;
    case 8:
      m.method = pick(2) ? static_cast<std::uint16_t>(pick(100)) : static_cast<std::uint16_t>(8 - m.method);
      break;
    case 9:
      m.descriptor = !m.descriptor;
      m.flags = static_cast<std::uint16_t>(m.descriptor ? m.flags | 8 : m.flags & ~8);
      break;
    case 10: m.local_zip64 = !m.local_zip64; break;
    case 11: { // an extra field record, central or local
      std::string record;
      const std::uint16_t tags[] = {0x0001, 0x7075, 0x5455, 0xa11e, 0x9901, 0xCAFE};
      put(record, tags[pick(6)], 2);
      std::string payload(pick(24), static_cast<char>(pick(256)));
      if (pick(2)) {
        payload = std::string(1, '\x01');
        put(payload, crc_of(m.name), 4);
        payload += m.name;
      }
      put(record, payload.size(), 2);
      record += payload;
      (pick(2) ? m.central_extra : m.local_extra) += record;
      break;
    }
    case 12: mutate_bytes(pick(2) ? m.central_extra : m.local_extra, 96, random); break;
    case 13: m.external = pick(2) ? (0120777u << 16) : static_cast<std::uint32_t>(random()); break;
    case 14: m.central_crc = crc_of(m.data) ^ (1u << pick(32)); break;
    case 15: m.after = std::string(1 + pick(8), 'G'); break;
    case 16: a.members.push_back(a.members[pick(a.members.size())]); break; // a duplicate
    case 17: {
      a.central_order.clear();
      for (std::size_t i = a.members.size(); i-- > 0;) a.central_order.push_back(i);
      break;
    }
    case 18: a.zip64_end = !a.zip64_end; break;
    case 19:
      if (pick(2)) { // crafted deflate blocks before the member's bytes
        m.method = 8;
        m.compressed = crafted_stream(m.data, pick(2) ? pick(200) : 0, pick(2) ? pick(600) : 0,
                                      pick(2) ? pick(4000) : 0, pick(2) != 0);
        break;
      }
      m.name = crafted_name(m.name, a.members[pick(a.members.size())].name, pick(18), 1 + pick(20));
      m.flags = static_cast<std::uint16_t>(m.flags | 0x800); // UTF-8 names
      break;
    default:
      if (pick(2)) {
        a.comment = pick(2) ? std::string() : std::string(1 + pick(4), 'c');
      } else {
        a.prefix = pick(2) ? std::string() : std::string(1 + pick(8), 'p');
      }
      break;
  }
  (void)max_size;
}

} // namespace npyguard::fuzz::npz_mutator

#endif
