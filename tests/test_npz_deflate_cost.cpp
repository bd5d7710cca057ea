// What a deflate member may cost (SPEC-npz.md sections 8-10, amended
// 2026-11-26, issue 35): compressed bytes buy output (at most 512 + P + P/16
// compressed bytes for P bytes of output, at every byte of the stream, by
// default and with verify), and a member's header is paid for by the
// compressed bytes it inflates from (1 KiB plus eight times them, checked
// with the member's compressed size before inflating and with the bytes
// consumed after each 64 KiB and at the header's end; the archive's excess
// at most 64 KiB plus an eighth of the archive's size, and at most
// limits.max_header_bytes). The streams are built block by block here, so
// that each rule is met exactly and missed by one byte.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "npyguard/npz/validate.hpp"
#include "npz_support.hpp"
#include "support.hpp"
#include "zip_builder.hpp"

using npyguard::error_code;
using npyguard::npz::archive_result;
using namespace npyguard_test;

namespace {

// A u1 array of `count` bytes in numpy's layout: preamble and header are 128 bytes.
std::string bytes_member(std::size_t count) {
  std::string data =
      npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }", 1, 0);
  for (std::size_t i = 0; i < count; ++i) data.push_back(static_cast<char>('a' + i % 26));
  return data;
}

// An empty f8 array whose header text is `length` bytes: the dict, spaces, '\n'.
std::string white_space_member(std::size_t length) {
  std::string text = "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }";
  text += std::string(length - text.size() - 1, ' ') + "\n";
  return raw_file(text, length > 65535 ? 2 : 1, 0);
}

// A u1 array of `count` pseudo-random bytes whose header text is `length`
// bytes of white space after the dict: a header that deflates 1,000 to 1
// before data that does not deflate.
std::string white_space_then_random(std::size_t length, std::size_t count) {
  std::string text = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }";
  text += std::string(length - text.size() - 1, ' ') + "\n";
  std::string data = raw_file(text, length > 65535 ? 2 : 1, 0);
  std::uint64_t state = 88172645463325252ull;
  for (std::size_t i = 0; i < count; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    data.push_back(static_cast<char>(state >> 56));
  }
  return data;
}

// Deflate's bit order: fields least significant bit first, Huffman codes
// most significant bit first.
class bit_writer {
public:
  void put(std::uint32_t value, int length) {
    for (int i = 0; i < length; ++i) push((value >> i) & 1U);
  }
  void code(std::uint32_t value, int length) {
    for (int i = length - 1; i >= 0; --i) push((value >> i) & 1U);
  }
  // A stored block: 3 header bits, padding to a byte, LEN, NLEN, the bytes.
  void stored(const std::string& data, bool final_block) {
    put(final_block ? 1 : 0, 1);
    put(0, 2);
    if (filled_ != 0) put(0, 8 - filled_);
    put16(bytes_, data.size());
    put16(bytes_, ~data.size() & 0xFFFF);
    bytes_ += data;
  }
  // A fixed-Huffman block of one literal (18 bits, 19 above 143) or of none (10 bits).
  void fixed(std::optional<unsigned char> literal, bool final_block) {
    put(final_block ? 1 : 0, 1);
    put(1, 2);
    if (literal && *literal < 144) code(0x30U + *literal, 8);
    if (literal && *literal >= 144) code(0x190U + *literal - 144U, 9);
    code(0, 7); // end of block
  }
  std::string finish() const { return bytes_; }

private:
  void push(std::uint32_t bit) {
    if (filled_ == 0) bytes_.push_back('\0');
    bytes_.back() = static_cast<char>(static_cast<unsigned char>(bytes_.back()) | (bit << filled_));
    filled_ = (filled_ + 1) % 8;
  }
  std::string bytes_;
  int filled_ = 0;
};

const std::string empty_stored_block("\x00\x00\x00\xff\xff", 5);

std::string repeat(const std::string& piece, std::size_t count) {
  std::string out;
  out.reserve(piece.size() * count);
  for (std::size_t i = 0; i < count; ++i) out += piece;
  return out;
}

// `member`'s first `head` bytes in a stored block, `fill` empty stored
// blocks, then the rest in a final stored block. Most compressed bytes
// before more output: 10 + head + 5 * fill, against an allowance of
// 512 + head + head / 16.
std::string stored_with_filler(const std::string& member, std::size_t head, std::size_t fill) {
  bit_writer first;
  first.stored(member.substr(0, head), false);
  bit_writer last;
  last.stored(member.substr(head), true);
  return first.finish() + repeat(empty_stored_block, fill) + last.finish();
}

// One fixed-Huffman block for each byte of `member`, then an empty final one.
std::string one_literal_blocks(const std::string& member) {
  bit_writer out;
  for (const char c : member) out.fixed(static_cast<unsigned char>(c), false);
  out.fixed(std::nullopt, true);
  return out.finish();
}

zip_entry deflated(std::string name, std::string data, std::optional<std::string> stream = std::nullopt) {
  zip_entry e;
  e.name = std::move(name);
  e.method = 8;
  e.compressed = stream ? std::move(*stream) : raw_deflate(data, 9);
  e.data = std::move(data);
  return e;
}

archive_result check_zip(const std::string& bytes, bool verify = false,
                         std::uint32_t max_header_bytes = npyguard::limits{}.max_header_bytes) {
  npyguard::options opts;
  opts.verify = verify;
  opts.limits.max_header_bytes = max_header_bytes;
  return npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
}

void require_ok_both(const zip_archive& zip) {
  require_ok(check_zip(zip.bytes));
  require_ok(check_zip(zip.bytes, true));
}

// bad_deflate at the member's data offset, by default and with verify.
void require_unbought_both(const zip_archive& zip, std::size_t index, const std::string& member) {
  require_error(check_zip(zip.bytes), error_code::bad_deflate, zip.entries[index].data, member);
  require_error(check_zip(zip.bytes, true), error_code::bad_deflate, zip.entries[index].data, member);
}

// Beyond phase F's first bytes: accepted by default, bad_deflate with verify.
void require_unbought_verified(const zip_archive& zip, std::size_t index, const std::string& member) {
  require_ok(check_zip(zip.bytes));
  require_error(check_zip(zip.bytes, true), error_code::bad_deflate, zip.entries[index].data, member);
}

} // namespace

TEST_CASE("compressed bytes buy output: empty stored blocks before the header", "[npz][deflate_cost]") {
  const std::string member = bytes_member(12);
  SECTION("100 of them (500 bytes) are within the 512 bytes that buy no output") {
    require_ok_both(build_zip({deflated("a.npy", member, repeat(empty_stored_block, 100) + raw_deflate(member))}));
  }
  SECTION("103 of them (515 bytes) are not") {
    const zip_archive zip = build_zip(
        {deflated("a.npy", member), deflated("b.npy", member, repeat(empty_stored_block, 103) + raw_deflate(member))});
    require_unbought_both(zip, 1, "b.npy");
  }
  SECTION("8 MiB of them are refused after their first 513 bytes") {
    const zip_archive zip = build_zip(
        {deflated("empty.npy", member, repeat(empty_stored_block, 8 * 1024 * 1024 / 5) + raw_deflate(member))});
    require_unbought_both(zip, 0, "empty.npy");
  }
}

TEST_CASE("compressed bytes buy output: exactly the allowance passes, one byte more fails", "[npz][deflate_cost]") {
  SECTION("before the header's end (phase F)") {
    const std::string member = bytes_member(12); // 140 bytes
    // 10 + 48 + 505 = 563 = 512 + 48 + 3
    require_ok_both(build_zip({deflated("a.npy", member, stored_with_filler(member, 48, 101))}));
    // 10 + 32 + 505 = 547 = 512 + 32 + 2, plus one
    require_unbought_both(build_zip({deflated("a.npy", member, stored_with_filler(member, 32, 101))}), 0, "a.npy");
  }
  SECTION("after the header's end (verification)") {
    const std::string member = bytes_member(300); // 428 bytes
    // 10 + 130 + 510 = 650 = 512 + 130 + 8
    require_ok_both(build_zip({deflated("a.npy", member, stored_with_filler(member, 130, 102))}));
    // 10 + 192 + 515 = 717 = 512 + 192 + 12, plus one
    require_unbought_verified(build_zip({deflated("a.npy", member, stored_with_filler(member, 192, 103))}), 0, "a.npy");
  }
  SECTION("at the stream's last byte") {
    const std::string member = bytes_member(70); // 198 bytes: 722 compressed bytes allowed in all
    for (const std::size_t fill : {std::size_t{102}, std::size_t{103}}) {
      bit_writer all;
      all.stored(member, false);
      bit_writer end;
      end.stored("", true);
      const std::string stream = all.finish() + repeat(empty_stored_block, fill) + end.finish();
      INFO(stream.size() << " compressed bytes");
      const zip_archive zip = build_zip({deflated("a.npy", member, stream)});
      if (stream.size() <= 722) {
        require_ok_both(zip);
      } else {
        require_unbought_verified(zip, 0, "a.npy");
      }
    }
  }
}

TEST_CASE("compressed bytes buy output: fixed-Huffman blocks of one literal", "[npz][deflate_cost]") {
  SECTION("a whole member: over 2 bytes for each byte, refused once past the allowance") {
    const std::string member = bytes_member(400);
    require_unbought_verified(build_zip({deflated("a.npy", member, one_literal_blocks(member))}), 0, "a.npy");
  }
  SECTION("the header after 400 bytes of empty blocks") {
    const std::string member = bytes_member(12);
    const std::string stream = repeat(empty_stored_block, 80) + one_literal_blocks(member);
    require_unbought_both(build_zip({deflated("a.npy", member, stream)}), 0, "a.npy");
  }
  SECTION("a member short enough stays within it") {
    const std::string member = bytes_member(100);
    require_ok_both(build_zip({deflated("a.npy", member, one_literal_blocks(member))}));
  }
}

TEST_CASE("header amplification: a header is paid for by its member's compressed bytes", "[npz][deflate_cost]") {
  // What a white-space member of header length `size` pays for, and runs over.
  const auto paid = [](std::size_t size) { return 1024 + 8 * raw_deflate(white_space_member(size), 9).size(); };
  SECTION("a 1 MiB header of white space from 1 KB, in a small archive, is refused before it is inflated") {
    const std::string member = white_space_member(1024 * 1024);
    const zip_archive zip = build_zip({deflated("a.npy", bytes_member(3)), deflated("b.npy", member)});
    for (const bool verify : {false, true}) {
      const archive_result result = check_zip(zip.bytes, verify);
      require_error(result, error_code::header_too_large, zip.entries[1].data, "b.npy", 8);
      // 64 KiB plus an eighth of the archive is the smaller bound: no setting lifts it.
      CHECK(result.failure().option.empty());
      CHECK_FALSE(result.failure().limit);
    }
  }
  SECTION("the excess over 1 KiB plus 8 x the compressed size, summed, is at most limits.max_header_bytes") {
    const std::size_t header = 20000;
    const std::string big = white_space_member(header);
    // A header exactly as long as it is paid for adds nothing; a short one
    // (small.npy) takes nothing off.
    std::size_t fitting = 1100;
    for (int tries = 0; tries < 20 && fitting != paid(fitting); ++tries) fitting = paid(fitting);
    REQUIRE(fitting == paid(fitting));
    const zip_archive zip = build_zip({deflated("a.npy", big), deflated("small.npy", bytes_member(3)),
                                       deflated("fits.npy", white_space_member(fitting)), deflated("b.npy", big)});
    const auto limit = static_cast<std::uint32_t>(2 * (header - paid(header)));
    REQUIRE(limit < 64 * 1024); // the limit, not the archive's size, is the smaller bound
    for (const bool verify : {false, true}) {
      require_ok(check_zip(zip.bytes, verify, limit));
      const archive_result result = check_zip(zip.bytes, verify, limit - 1);
      require_error(result, error_code::header_too_large, zip.entries[3].data, "b.npy", 8);
      CHECK(result.failure().option == "max_header_bytes");
      CHECK(result.failure().limit == limit - 1);
      CHECK(result.failure().actual == limit);
    }
  }
  SECTION("the excess, summed, is at most 64 KiB plus an eighth of the archive's size") {
    // a.npy runs `excess` over; a stored member (never charged) sizes the
    // archive to exactly 8 x (excess - 64 KiB) bytes, then one byte less.
    const std::size_t header = 200000;
    const std::size_t excess = header - paid(header);
    const zip_entry big = deflated("a.npy", white_space_member(header));
    zip_entry pad;
    pad.name = "pad.npy";
    pad.data = bytes_member(0);
    const std::size_t bare = build_zip({big, pad}).bytes.size();
    const std::size_t wanted = 8 * (excess - 64 * 1024);
    REQUIRE(wanted > bare);
    pad.data = bytes_member(wanted - bare);
    const zip_archive fits = build_zip({big, pad});
    REQUIRE(fits.bytes.size() == wanted);
    pad.data = bytes_member(wanted - bare - 1);
    const zip_archive short_by_one = build_zip({big, pad});
    REQUIRE(short_by_one.bytes.size() == wanted - 1);
    for (const bool verify : {false, true}) {
      require_ok(check_zip(fits.bytes, verify));
      // Refused whatever the limit: the archive's size is the smaller bound, and no setting lifts it.
      for (const std::uint32_t limit : {std::uint32_t{1} << 20, std::uint32_t{1} << 30}) {
        const archive_result result = check_zip(short_by_one.bytes, verify, limit);
        require_error(result, error_code::header_too_large, short_by_one.entries[0].data, "a.npy", 8);
        CHECK(result.failure().option.empty());
      }
    }
  }
  SECTION("the bytes of the data after a header pay for none of it") {
    // 40 KB of white space, then 5,000 random bytes: the member's
    // compressed size pays for the header (1 KiB + 8 C >= H), the bytes it
    // inflates from do not (about 40 of them).
    const std::size_t header = 39990; // 10 + 39,990 bytes: the data 64-byte aligned
    const std::string member = white_space_then_random(header, 5000);
    const zip_entry a = deflated("a.npy", member);
    REQUIRE(1024 + 8 * a.compressed->size() >= header);
    zip_entry b = a;
    b.name = "b.npy";
    // a.npy runs about 38.6 KB over, within 64 KiB plus an eighth of the
    // archive (about 15 KB); b.npy takes the sum past it.
    const zip_archive one = build_zip({a});
    const zip_archive two = build_zip({a, b});
    for (const bool verify : {false, true}) {
      require_ok(check_zip(one.bytes, verify));
      const archive_result result = check_zip(two.bytes, verify);
      require_error(result, error_code::header_too_large, two.entries[1].data, "b.npy", 8);
      CHECK(result.failure().option.empty());
    }
  }
  SECTION("a 1 MiB header paid for by the data after it is refused 128 KiB into it") {
    // 1 KiB + 8 C covers the header, so the check before inflating passes;
    // the check after the first 64 KiB finds about 63 KiB over (within the
    // archive's 64 KiB + 17 KiB), the one after 128 KiB refuses.
    const std::size_t header = 1024 * 1024 - 12;
    const std::string member = white_space_then_random(header, 140000);
    const zip_entry a = deflated("a.npy", member);
    REQUIRE(1024 + 8 * a.compressed->size() >= header);
    const zip_archive zip = build_zip({a});
    for (const bool verify : {false, true}) {
      const archive_result result = check_zip(zip.bytes, verify);
      require_error(result, error_code::header_too_large, zip.entries[0].data, "a.npy", 8);
    }
  }
  SECTION("stored members are never charged: their header bytes are in the archive") {
    zip_entry a;
    a.name = "a.npy";
    a.data = white_space_member(60000);
    zip_entry b = a;
    b.name = "b.npy";
    require_ok(check_zip(build_zip({a, b}).bytes, false, 60000));
  }
  SECTION("a 4,000-field struct (71 KB of header from 10 KB of deflate) pays for its header") {
    std::string descr = "[";
    for (int i = 0; i < 4000; ++i) descr += "('f" + std::to_string(i) + "', '<f8'), ";
    descr.resize(descr.size() - 2);
    descr += "]";
    const std::string member =
        npy_file("{'descr': " + descr + ", 'fortran_order': False, 'shape': (3,), }", 2, 3 * 4000 * 8);
    zip_entry e = deflated("s.npy", member, raw_deflate(member, 6));
    INFO(member.size() << " bytes deflate to " << e.compressed->size());
    require_ok_both(build_zip({e}));
    // ... and so do 30 of them in one archive (7 to 1: none runs over).
    std::vector<zip_entry> many;
    for (int i = 0; i < 30; ++i) {
      many.push_back(e);
      many.back().name = "s" + std::to_string(i) + ".npy";
    }
    require_ok(check_zip(build_zip(many).bytes));
  }
}
