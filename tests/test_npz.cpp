// .npz archives (SPEC-npz.md): every rule and code, with its offset and
// member, on archives laid out by tests/zip_builder.hpp and patched one
// field at a time.
#include <unistd.h>

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

const std::string ints = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 1, 12);
const std::string floats = npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", 1, 32);
const std::string scalar = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1, 1);

archive_result check_zip(const std::string& bytes, const npyguard::options& opts = {}) {
  return npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
}

npyguard::options verifying() {
  npyguard::options opts;
  opts.verify = true;
  return opts;
}

zip_entry stored(std::string name, std::string data = ints) {
  zip_entry e;
  e.name = std::move(name);
  e.data = std::move(data);
  return e;
}

zip_entry deflated(std::string name, std::string data = ints) {
  zip_entry e = stored(std::move(name), std::move(data));
  e.method = 8;
  return e;
}

zip_archive two_members() { return build_zip({stored("a.npy"), deflated("b.npy", floats)}); }

constexpr std::uint64_t central_name = 46;

} // namespace

TEST_CASE("numpy's layouts are accepted and described", "[npz]") {
  const zip_archive zip = build_zip({stored("x.npy"), deflated("layer1/w.npy", floats), stored("s.npy", scalar)});
  for (const auto& opts : {npyguard::options{}, verifying()}) {
    const archive_result r = check_zip(zip.bytes, opts);
    require_ok(r);
    const auto& a = r.value();
    REQUIRE(a.members.size() == 3);
    CHECK(a.members[0].name == "x.npy");
    CHECK(a.members[0].key == "x");
    CHECK(a.members[0].npy.shape == std::vector<std::uint64_t>{3});
    CHECK(a.members[0].data_start == zip.entries[0].data);
    CHECK(a.members[1].key == "layer1/w");
    CHECK(a.members[1].method == npyguard::npz::compression::deflate);
    CHECK(a.members[1].npy.fortran_order);
    CHECK(a.members[1].npy.nbytes == 32);
    CHECK(a.members[2].npy.shape.empty());
    CHECK(a.central_directory_offset == zip.cd_offset);
    CHECK(a.verified == opts.verify);
    CHECK(a.bytes_read > 0);
  }
}

TEST_CASE("writers without the Zip64 field, with descriptors, and Zip64 end records are accepted", "[npz]") {
  zip_entry plain = stored("cnpy.npy");
  plain.local_zip64 = false;
  plain.version_made_by = 20;
  plain.external_attributes = 0;
  plain.date = 0;
  zip_entry pipe = deflated("pipe.npy", floats);
  pipe.descriptor = true;
  pipe.flags = 8;
  zip_entry pipe_stored = stored("pipe_stored.npy");
  pipe_stored.descriptor = true;
  pipe_stored.flags = 8;
  zip_entry infozip = deflated("infozip.npy");
  infozip.local_zip64 = false;
  infozip.descriptor = true;
  infozip.flags = 8;
  infozip.central_extra = std::string("UT\x05\x00\x03\x00\x00\x00\x00", 9);
  infozip.local_extra_tail = std::string("UT\x09\x00\x03\x00\x00\x00\x00\x00\x00\x00\x00", 13);
  zip_archive zip = build_zip({plain, pipe, pipe_stored, infozip});
  // Info-ZIP to a pipe sets the uncompressed size in the local header.
  patch(zip.bytes, zip.entries[3].local + 22, ints.size(), 4);
  require_ok(check_zip(zip.bytes, verifying()));
  add_zip64_end(zip);
  const archive_result r = check_zip(zip.bytes, verifying());
  require_ok(r);
  CHECK(r.value().zip64);
  CHECK(r.value().members.size() == 4);
}

TEST_CASE("an empty archive has no members", "[npz]") {
  const zip_archive zip = build_zip({});
  CHECK(zip.bytes.size() == 22);
  const archive_result r = check_zip(zip.bytes);
  require_ok(r);
  CHECK(r.value().members.empty());
}

TEST_CASE("phase A: the end of central directory record", "[npz][eocd]") {
  const zip_archive zip = two_members();
  require_error(check_zip(""), error_code::not_zip, std::nullopt);
  require_error(check_zip(zip.bytes.substr(0, 21)), error_code::not_zip, std::nullopt);
  require_error(check_zip(std::string(1000, 'x')), error_code::not_zip, std::nullopt);
  require_error(check_zip(ints), error_code::not_zip, std::nullopt);

  std::string comment = zip.bytes;
  patch(comment, zip.eocd + 20, 3, 2);
  comment += "abc";
  require_error(check_zip(comment), error_code::archive_comment, zip.eocd + 22);

  require_error(check_zip(zip.bytes + "xyz"), error_code::trailing_data, zip.bytes.size());
  // The search window is the last 65,557 bytes (a 22-byte record and the
  // longest comment): 65,535 bytes after the record are trailing_data, one
  // more puts the record out of reach, not_zip (numpy's zipfile searches the
  // same window but starts it a byte earlier, so it still reads this archive:
  // row npz-far-trailing of docs/deviations.md).
  require_error(check_zip(zip.bytes + std::string(65535, 'x')), error_code::trailing_data, zip.bytes.size());
  require_error(check_zip(zip.bytes + std::string(65536, 'x')), error_code::not_zip, std::nullopt);

  std::string past = zip.bytes;
  patch(past, zip.eocd + 20, 10, 2);
  past += "abc";
  require_error(check_zip(past), error_code::bad_eocd, zip.eocd + 20);

  // A second EOCD inside a stored member's data, whose comment length
  // reaches exactly the end of the file.
  std::string hidden = zip.bytes;
  const std::uint64_t fake = zip.entries[0].data + 70;
  patch(hidden, fake, 0x06054b50, 4);
  patch(hidden, fake + 20, hidden.size() - fake - 22, 2);
  require_error(check_zip(hidden), error_code::ambiguous_eocd, fake);
}

TEST_CASE("phase C: EOCD fields and the member limit", "[npz][eocd]") {
  const zip_archive zip = two_members();
  for (const std::uint64_t field : {4u, 6u}) {
    std::string bytes = zip.bytes;
    patch(bytes, zip.eocd + field, 1, 2);
    require_error(check_zip(bytes), error_code::bad_eocd, zip.eocd + field);
  }
  std::string entries = zip.bytes;
  patch(entries, zip.eocd + 8, 1, 2);
  require_error(check_zip(entries), error_code::bad_eocd, zip.eocd + 8);
  std::string offset = zip.bytes;
  patch(offset, zip.eocd + 16, zip.cd_offset - 1, 4);
  require_error(check_zip(offset), error_code::bad_eocd, zip.eocd + 16);
  std::string size = zip.bytes;
  patch(size, zip.eocd + 12, peek(size, zip.eocd + 12, 4) + 1, 4);
  require_error(check_zip(size), error_code::bad_eocd, zip.eocd + 16);

  npyguard::options opts;
  opts.limits.max_members = 1;
  require_error(check_zip(zip.bytes, opts), error_code::too_many_members, zip.eocd + 10);
  opts.limits.max_members = 2;
  require_ok(check_zip(zip.bytes, opts));
}

TEST_CASE("phase B: Zip64 end records", "[npz][zip64]") {
  zip_archive zip = two_members();
  add_zip64_end(zip);
  require_ok(check_zip(zip.bytes));
  const std::uint64_t locator = zip.eocd - 20;
  const std::uint64_t record = locator - 56;

  std::string bytes = zip.bytes;
  patch(bytes, locator + 4, 1, 4);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, locator);
  bytes = zip.bytes;
  patch(bytes, locator + 16, 2, 4);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, locator);
  bytes = zip.bytes;
  patch(bytes, locator + 8, record - 1, 8);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, locator);
  bytes = zip.bytes;
  patch(bytes, record, 0x06064b51, 4);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, locator);
  bytes = zip.bytes;
  patch(bytes, record + 4, 45, 8);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, locator);
  for (const std::uint64_t field : {16u, 20u}) {
    bytes = zip.bytes;
    patch(bytes, record + field, 1, 4);
    require_error(check_zip(bytes), error_code::bad_zip64_eocd, record + field);
  }
  bytes = zip.bytes;
  patch(bytes, record + 24, 3, 8);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, record + 24);
  // An EOCD field that is neither saturated nor the record's value.
  bytes = zip.bytes;
  patch(bytes, zip.eocd + 10, 5, 2);
  patch(bytes, zip.eocd + 8, 5, 2);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, record + 24);
  bytes = zip.bytes;
  patch(bytes, zip.eocd + 10, 3, 2);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, record + 32);
  bytes = zip.bytes;
  patch(bytes, zip.eocd + 16, 7, 4);
  require_error(check_zip(bytes), error_code::bad_zip64_eocd, record + 48);
  // The EOCD's own counts must agree, or its entries on this disk be saturated.
  bytes = zip.bytes;
  patch(bytes, zip.eocd + 8, 2, 2);
  require_error(check_zip(bytes), error_code::bad_eocd, zip.eocd + 8);
  patch(bytes, zip.eocd + 10, 2, 2);
  require_ok(check_zip(bytes));
  // The record's directory must end where the record starts.
  bytes = zip.bytes;
  patch(bytes, record + 48, zip.cd_offset + 1, 8);
  require_error(check_zip(bytes), error_code::bad_eocd, record + 48);
  npyguard::options opts;
  opts.limits.max_members = 1;
  require_error(check_zip(zip.bytes, opts), error_code::too_many_members, record + 32);
}

TEST_CASE("phase D: the directory holds exactly the declared headers", "[npz][central]") {
  const zip_archive zip = two_members();
  // One header declared, two present.
  std::string bytes = zip.bytes;
  patch(bytes, zip.eocd + 8, 1, 2);
  patch(bytes, zip.eocd + 10, 1, 2);
  require_error(check_zip(bytes), error_code::entry_count_mismatch, zip.entries[1].central);
  // Three declared, two present.
  bytes = zip.bytes;
  patch(bytes, zip.eocd + 8, 3, 2);
  patch(bytes, zip.eocd + 10, 3, 2);
  require_error(check_zip(bytes), error_code::entry_count_mismatch, zip.eocd);
}

TEST_CASE("phase D: central header structure", "[npz][central]") {
  const zip_archive zip = two_members();
  const std::uint64_t c = zip.entries[1].central;
  std::string bytes = zip.bytes;
  patch(bytes, c, 0x02014b51, 4);
  require_error(check_zip(bytes), error_code::bad_central_header, c);
  bytes = zip.bytes;
  patch(bytes, c + 28, 400, 2); // the name runs past the directory
  require_error(check_zip(bytes), error_code::bad_central_header, c);
  bytes = zip.bytes;
  patch(bytes, c + 34, 1, 2);
  require_error(check_zip(bytes), error_code::bad_central_header, c + 34);
  // Three bytes of garbage where a fourth header would start.
  bytes = zip.bytes;
  bytes.insert(zip.eocd, "PK\x01");
  patch(bytes, zip.eocd + 3 + 12, peek(zip.bytes, zip.eocd + 12, 4) + 3, 4);
  require_error(check_zip(bytes), error_code::entry_count_mismatch, zip.eocd);
}

TEST_CASE("phase D: comments in central headers", "[npz][central]") {
  zip_archive zip = build_zip({stored("a.npy")});
  std::string bytes = zip.bytes;
  const std::uint64_t c = zip.entries[0].central;
  patch(bytes, c + 32, 2, 2);
  bytes.insert(zip.eocd, "hi");
  patch(bytes, zip.eocd + 2 + 12, peek(zip.bytes, zip.eocd + 12, 4) + 2, 4);
  require_error(check_zip(bytes), error_code::archive_comment, zip.eocd, "a.npy");
}

TEST_CASE("extra fields: structure, Zip64 and Unicode Path", "[npz][extra]") {
  zip_entry e = stored("a.npy");
  const std::uint64_t extra_at = central_name + 5;
  SECTION("a record running past the field") {
    e.central_extra = std::string("\xCA\xFE\x08\x00\x00\x00", 6);
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at, "a.npy");
  }
  SECTION("a tag cut short") {
    e.central_extra = std::string("\xCA\xFE\x00\x00\x01", 5);
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at + 4, "a.npy");
  }
  SECTION("longer than 4160 bytes") {
    e.central_extra = std::string("\x1e\xa1\x3d\x10", 4) + std::string(4157, '\0');
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at, "a.npy");
    e.central_extra = std::string("\x1e\xa1\x3c\x10", 4) + std::string(4156, '\0');
    require_ok(check_zip(build_zip({e}).bytes));
  }
  SECTION("a Zip64 field nothing needs") {
    e.central_extra = std::string("\x01\x00\x08\x00", 4) + std::string(8, '\0');
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at, "a.npy");
  }
  SECTION("a saturated size without a Zip64 field") {
    zip_archive zip = build_zip({e});
    patch(zip.bytes, zip.entries[0].central + 24, 0xFFFFFFFF, 4);
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at, "a.npy");
  }
  SECTION("Zip64 values replace saturated fields; a wrong length is refused") {
    std::string value;
    put64(value, ints.size());
    e.central_extra = std::string("\x01\x00\x08\x00", 4) + value;
    zip_archive zip = build_zip({e});
    patch(zip.bytes, zip.entries[0].central + 24, 0xFFFFFFFF, 4);
    require_ok(check_zip(zip.bytes));
    patch(zip.bytes, zip.entries[0].central + 20, 0xFFFFFFFF, 4); // now two values are needed
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at, "a.npy");
  }
  SECTION("Zip64 twice") {
    e.central_extra = std::string("\x01\x00\x00\x00\x01\x00\x00\x00", 8);
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].central + extra_at + 4, "a.npy");
  }
  SECTION("a Unicode Path field that agrees, and one that does not") {
    std::string path("\x75\x70\x0a\x00\x01", 5);
    put32(path, crc_of("a.npy"));
    e.central_extra = path + "a.npy";
    require_ok(check_zip(build_zip({e}).bytes));
    e.central_extra = path + "b.npy";
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::name_mismatch, zip.entries[0].central + extra_at, "a.npy");
  }
  SECTION("a local Zip64 field of the wrong length or values") {
    e.local_zip64 = false;
    std::string local("\x01\x00\x08\x00", 4);
    put64(local, ints.size());
    e.local_extra_tail = local;
    zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].local + 35, "a.npy");
    e.local_zip64 = true;
    e.local_extra_tail.clear();
    zip = build_zip({e});
    patch(zip.bytes, zip.entries[0].local + 35 + 4, ints.size() + 1, 8);
    require_error(check_zip(zip.bytes), error_code::header_mismatch, zip.entries[0].local + 35, "a.npy");
  }
}

TEST_CASE("phase D: encryption, methods, features, types", "[npz][central]") {
  const zip_archive zip = two_members();
  const std::uint64_t c = zip.entries[0].central;
  const auto with = [&](std::uint64_t at, std::uint64_t value, unsigned width) {
    std::string bytes = zip.bytes;
    patch(bytes, at, value, width);
    return check_zip(bytes);
  };
  for (const std::uint64_t bit : {0u, 6u, 13u})
    require_error(with(c + 8, 1u << bit, 2), error_code::encrypted_member, c + 8, "a.npy");
  require_error(with(c + 10, 99, 2), error_code::encrypted_member, c + 10, "a.npy");
  for (const std::uint64_t method : {1u, 12u, 14u, 9u, 93u, 65535u}) {
    require_error(with(c + 10, method, 2), error_code::unsupported_method, c + 10, "a.npy");
  }
  require_error(with(c + 6, 46, 2), error_code::unsupported_feature, c + 6, "a.npy");
  require_error(with(c + 6, 63, 2), error_code::unsupported_feature, c + 6, "a.npy");
  CHECK(with(c + 6, 45, 2).failure_if() == nullptr);
  for (const std::uint64_t bit : {4u, 5u, 15u})
    require_error(with(c + 8, 1u << bit, 2), error_code::unsupported_feature, c + 8, "a.npy");
  require_error(with(c + 8, 2, 2), error_code::unsupported_feature, c + 8, "a.npy"); // deflate option on stored
  require_error(with(c + 38, 0120777u << 16, 4), error_code::bad_member_type, c + 38, "a.npy");
  require_error(with(c + 38, 040755u << 16, 4), error_code::bad_member_type, c + 38, "a.npy");
  require_error(with(c + 38, 0x10, 4), error_code::bad_member_type, c + 38, "a.npy");
  require_error(with(c + 38, 0x08, 4), error_code::bad_member_type, c + 38, "a.npy");
  CHECK(with(c + 38, 0100644u << 16, 4).ok());
  CHECK(with(c + 38, 0x20, 4).ok()); // MS-DOS archive bit

  zip_entry aes = stored("a.npy");
  aes.central_extra = std::string("\x01\x99\x07\x00\x02\x00\x41\x45\x03\x08\x00", 11);
  const zip_archive encrypted = build_zip({aes});
  require_error(check_zip(encrypted.bytes), error_code::encrypted_member,
                encrypted.entries[0].central + central_name + 5, "a.npy");
}

TEST_CASE("phase D: member names", "[npz][names]") {
  const auto name_error = [](const std::string& name, error_code code, std::uint16_t flags = 0) {
    zip_entry e = stored(name);
    e.flags = flags;
    const zip_archive zip = build_zip({stored("first.npy"), e});
    const archive_result r = check_zip(zip.bytes);
    INFO("name " << name);
    REQUIRE_FALSE(r.ok());
    CHECK(npyguard::error_code_name(r.failure().code) == npyguard::error_code_name(code));
    CHECK(r.failure().offset == zip.entries[1].central + central_name);
  };
  for (const char* bad : {"../a.npy", "a/../b.npy", "/a.npy", "a\\b.npy", "C:a.npy", "c:/a.npy", ".npy", "a//b.npy",
                          "./a.npy", "a/./b.npy", "a\x01.npy", "a\x1f.npy", "a\x7f.npy", "dir/.npy/../x.npy", "..npy",
                          "...npy", "a/.npy", "a/...npy", "a..npy"}) { // the last five: the key's components
    name_error(bad, error_code::bad_member_name);
  }
  name_error(std::string("a\0b.npy", 7), error_code::bad_member_name);
  name_error("a\xc2\x85.npy", error_code::bad_member_name, 0x800);     // U+0085, a C1 control
  name_error("a\xe2\x80\xae.npy", error_code::bad_member_name, 0x800); // U+202E, bidi override
  name_error("a\xd8\x9c.npy", error_code::bad_member_name, 0x800);     // U+061C
  name_error("a\xe2\x81\xa6.npy", error_code::bad_member_name, 0x800); // U+2066
  name_error("a\xff.npy", error_code::bad_member_name, 0x800);         // not UTF-8
  name_error("a\xc0\xae.npy", error_code::bad_member_name, 0x800);     // overlong '.'
  name_error("a\xed\xa0\x80.npy", error_code::bad_member_name, 0x800); // a surrogate
  name_error("a\xc0\xaf.npy", error_code::bad_member_name);            // overlong '/' read as CP437
  name_error("a\xe0\x80\xaf.npy", error_code::bad_member_name);
  name_error("a\xf0\x80\x80\xaf.npy", error_code::bad_member_name);
  for (const char* other : {"a.NPY", "readme.txt", "a.npy/", "a.npz", "dir/", "a.npy\xc2\xa0"}) {
    name_error(other, error_code::not_npy_member);
  }
  // Accepted on purpose (section 6).
  for (const char* fine : {"layer1/weight.npy", "dense/kernel:0.npy", "a.b.npy", "x.npy.npy", "..a.npy", ".a.npy",
                           "\xc3\xa9t\xc3\xa9.npy", "\xe6\x97\xa5.npy"}) {
    INFO("name " << fine);
    zip_entry e = stored(fine);
    e.flags = 0x800;
    require_ok(check_zip(build_zip({e}).bytes));
  }
  // Without bit 11 NPZ.jl's UTF-8 bytes read as CP437, as numpy shows them.
  const archive_result cp437 = check_zip(build_zip({stored("\xc3\xa9.npy")}).bytes);
  require_ok(cp437);
  CHECK(cp437.value().members[0].name == "\xe2\x94\x9c\xe2\x8c\x90.npy"); // "├⌐.npy"
}

TEST_CASE("phase D: duplicate names, exact and after NFC; case differs is fine", "[npz][names]") {
  zip_archive zip = build_zip({stored("a.npy"), stored("a.npy")});
  require_error(check_zip(zip.bytes), error_code::duplicate_name, zip.entries[1].central, "a.npy");
  zip_entry composed = stored("\xc3\xa9.npy"); // U+00E9
  composed.flags = 0x800;
  zip_entry decomposed = stored("e\xcc\x81.npy"); // e + U+0301
  decomposed.flags = 0x800;
  zip = build_zip({composed, stored("b.npy"), decomposed});
  require_error(check_zip(zip.bytes), error_code::duplicate_name, zip.entries[2].central, "e\xcc\x81.npy");
  require_ok(check_zip(build_zip({stored("A.npy"), stored("a.npy")}).bytes));
}

TEST_CASE("phase D: bounds and declared sizes", "[npz][central]") {
  const zip_archive zip = two_members();
  const std::uint64_t c0 = zip.entries[0].central;
  const std::uint64_t c1 = zip.entries[1].central;
  std::string bytes = zip.bytes;
  patch(bytes, c1 + 42, zip.cd_offset, 4);
  require_error(check_zip(bytes), error_code::entry_out_of_bounds, c1 + 42, "b.npy");
  bytes = zip.bytes;
  patch(bytes, c1 + 20, zip.cd_offset, 4); // compressed size reaching past the directory
  require_error(check_zip(bytes), error_code::entry_out_of_bounds, c1 + 42, "b.npy");
  bytes = zip.bytes;
  patch(bytes, c0 + 20, ints.size() - 1, 4);
  require_error(check_zip(bytes), error_code::size_mismatch, c0 + 20, "a.npy");

  const std::uint64_t compressed = peek(zip.bytes, c1 + 20, 4);
  bytes = zip.bytes;
  patch(bytes, c1 + 24, compressed * 1032 + 1, 4);
  require_error(check_zip(bytes), error_code::ratio_exceeded, c1 + 24, "b.npy");
  npyguard::options opts;
  opts.limits.max_ratio = 1;
  require_error(check_zip(zip.bytes, opts), error_code::ratio_exceeded, c1 + 24, "b.npy");

  opts = {};
  opts.limits.max_total_bytes = ints.size() + floats.size() - 1;
  require_error(check_zip(zip.bytes, opts), error_code::total_size_exceeded, c1 + 24, "b.npy");
  opts.limits.max_total_bytes = ints.size() + floats.size();
  require_ok(check_zip(zip.bytes, opts));
}

TEST_CASE("phase E: the entries tile the archive", "[npz][local]") {
  SECTION("prepended data, with offsets adjusted") {
    const zip_archive zip = build_zip({stored("a.npy")}, "MZ stub");
    require_error(check_zip(zip.bytes), error_code::prepended_data, 0);
  }
  SECTION("prepended data before an empty directory") {
    zip_archive zip = build_zip({}, "junk");
    require_error(check_zip(zip.bytes), error_code::prepended_data, 0);
  }
  SECTION("a gap between entries and before the directory") {
    zip_entry a = stored("a.npy");
    a.after = "hidden";
    zip_archive zip = build_zip({a, stored("b.npy")});
    require_error(check_zip(zip.bytes), error_code::gap_between_entries, zip.entries[1].local - 6);
    zip = build_zip({stored("b.npy"), a});
    require_error(check_zip(zip.bytes), error_code::gap_between_entries, zip.cd_offset - 6);
  }
  SECTION("full and partial overlaps") {
    zip_archive zip = two_members();
    patch(zip.bytes, zip.entries[1].central + 42, zip.entries[0].local, 4);
    require_error(check_zip(zip.bytes), error_code::overlapping_entries, zip.entries[0].local, "b.npy");
    zip = two_members();
    patch(zip.bytes, zip.entries[1].central + 42, zip.entries[0].data + 10, 4);
    require_error(check_zip(zip.bytes), error_code::overlapping_entries, zip.entries[0].data + 10, "b.npy");
  }
  SECTION("data running into the directory") {
    zip_entry e = stored("a.npy");
    e.local_zip64 = false;
    e.local_extra_tail = std::string("\xCA\xFE\x04\x00\x00\x00\x00\x00", 8);
    zip_archive zip = build_zip({e});
    for (const std::uint64_t field : {zip.entries[0].central + 20, zip.entries[0].central + 24,
                                      zip.entries[0].local + 18, zip.entries[0].local + 22}) {
      patch(zip.bytes, field, ints.size() + 8, 4);
    }
    require_error(check_zip(zip.bytes), error_code::overlapping_entries, zip.entries[0].local, "a.npy");
  }
  SECTION("a local header whose name and extra field run into the directory") {
    zip_archive zip = build_zip({stored("a.npy")});
    patch(zip.bytes, zip.entries[0].local + 28, 0xFFFF, 2);
    require_error(check_zip(zip.bytes), error_code::overlapping_entries, zip.entries[0].local, "a.npy");
  }
  SECTION("the directory out of file order") {
    const zip_archive zip = build_zip({stored("a.npy"), stored("b.npy")}, {}, {1, 0});
    require_error(check_zip(zip.bytes), error_code::entry_order, zip.entries[0].central, "a.npy");
  }
}

TEST_CASE("phase E: local headers agree with the central ones", "[npz][local]") {
  const zip_archive zip = two_members();
  const std::uint64_t l = zip.entries[1].local;
  const auto with = [&](std::uint64_t at, std::uint64_t value, unsigned width) {
    std::string bytes = zip.bytes;
    patch(bytes, at, value, width);
    return check_zip(bytes);
  };
  require_error(with(l, 0x04034b51, 4), error_code::bad_local_header, l, "b.npy");
  require_error(with(l + 30, 'c', 1), error_code::name_mismatch, l + 30, "b.npy");
  require_error(with(l + 6, 0x800, 2), error_code::header_mismatch, l + 6, "b.npy");
  require_error(with(l + 8, 0, 2), error_code::header_mismatch, l + 8, "b.npy");
  require_error(with(l + 14, 1, 4), error_code::header_mismatch, l + 14, "b.npy");
  require_error(with(l + 18, 5, 4), error_code::header_mismatch, l + 14, "b.npy");
  require_error(with(l + 35 + 12, 7, 8), error_code::header_mismatch, l + 35, "b.npy");
  CHECK(with(l + 10, 0x1234, 4).ok()); // time and date are not compared
  // A local name of another length.
  require_error(with(l + 26, 4, 2), error_code::name_mismatch, l + 30, "b.npy");
}

TEST_CASE("phase E: data descriptors", "[npz][local]") {
  zip_entry e = deflated("d.npy", floats);
  e.descriptor = true;
  e.flags = 8;
  const zip_archive zip = build_zip({e, stored("z.npy")});
  require_ok(check_zip(zip.bytes));
  const std::uint64_t d = zip.entries[0].descriptor;
  for (const std::uint64_t field : {0u, 4u, 8u, 16u}) {
    std::string bytes = zip.bytes;
    patch(bytes, d + field, peek(bytes, d + field, 4) ^ 1, 4);
    require_error(check_zip(bytes), error_code::bad_data_descriptor, d, "d.npy");
  }
  // With bit 3 the local values may be zero or the central ones, nothing else.
  std::string bytes = zip.bytes;
  patch(bytes, zip.entries[0].local + 14, crc_of(floats), 4);
  require_ok(check_zip(bytes));
  patch(bytes, zip.entries[0].local + 14, 5, 4);
  require_error(check_zip(bytes), error_code::header_mismatch, zip.entries[0].local + 14, "d.npy");
  // A descriptor without its signature (12 bytes) leaves the next entry misplaced.
  zip_entry unsigned_descriptor = stored("u.npy");
  unsigned_descriptor.descriptor = true;
  unsigned_descriptor.flags = 8;
  unsigned_descriptor.local_zip64 = false;
  zip_archive second = build_zip({unsigned_descriptor});
  second.bytes.erase(second.entries[0].descriptor, 4);
  patch(second.bytes, second.eocd - 4 + 16, second.cd_offset - 4, 4);
  patch(second.bytes, second.cd_offset - 4 + 42 + 0, 0, 4);
  require_error(check_zip(second.bytes), error_code::bad_data_descriptor, second.entries[0].descriptor, "u.npy");
}

TEST_CASE("phase F: every member is a valid .npy", "[npz][members]") {
  const std::string negative = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }");
  const std::uint64_t minus = offset_of(negative, "-");
  SECTION("stored: the archive offset of the byte") {
    const zip_archive zip = build_zip({stored("a.npy"), stored("bad.npy", negative)});
    require_error(check_zip(zip.bytes), error_code::negative_dimension, zip.entries[1].data + minus, "bad.npy", minus);
  }
  SECTION("deflated: the member's data start") {
    const zip_archive zip = build_zip({deflated("bad.npy", negative)});
    require_error(check_zip(zip.bytes), error_code::negative_dimension, zip.entries[0].data, "bad.npy", minus);
  }
  SECTION("not a .npy at all") {
    const zip_archive zip = build_zip({stored("t.npy", "hello, world")});
    require_error(check_zip(zip.bytes), error_code::bad_magic, zip.entries[0].data, "t.npy", 0);
  }
  SECTION("object arrays unless allowed") {
    const std::string pickle = npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", 1, 5);
    const zip_archive zip = build_zip({deflated("o.npy", pickle)});
    REQUIRE_FALSE(check_zip(zip.bytes).ok());
    CHECK(check_zip(zip.bytes).failure().code == error_code::object_dtype);
    npyguard::options opts;
    opts.allow_object = true;
    require_ok(check_zip(zip.bytes, opts));
  }
  SECTION("declared sizes must match the member's header") {
    const zip_archive extra = build_zip({stored("a.npy", ints + "xx")});
    require_error(check_zip(extra.bytes), error_code::trailing_data, extra.entries[0].data + ints.size(), "a.npy",
                  ints.size());
    npyguard::options opts;
    opts.allow_trailing_data = true;
    require_ok(check_zip(extra.bytes, opts));
    const zip_archive short_member = build_zip({deflated("a.npy", ints.substr(0, ints.size() - 1))});
    require_error(check_zip(short_member.bytes), error_code::truncated_data, short_member.entries[0].data, "a.npy",
                  ints.size() - 1);
  }
  SECTION("limits.max_ndim (64 by default) bounds members as it bounds .npy files") {
    const auto shape_of = [](int ndim) {
      std::string dims;
      for (int i = 0; i < ndim; ++i) dims += "1, ";
      return npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (" + dims + "), }", 1, 1);
    };
    // numpy 2 builds 64 dimensions (numpy 1.24 built 32): the same array is
    // accepted, or refused at the same dimension, as a member and as a file.
    const std::string forty = shape_of(40);
    const zip_archive zip = build_zip({stored("a.npy", forty)});
    require_ok(check_zip(zip.bytes));
    require_ok(npyguard::validate_buffer(forty.data(), forty.size()));
    npyguard::options numpy1;
    numpy1.limits.max_ndim = 32;
    const std::uint64_t at = offset_of(forty, "(") + 1 + 32 * 3; // the 33rd dimension
    require_error(check_zip(zip.bytes, numpy1), error_code::too_many_dimensions, zip.entries[0].data + at, "a.npy", at);
    require_error(npyguard::validate_buffer(forty.data(), forty.size(), numpy1), error_code::too_many_dimensions, at);
    const std::string over = shape_of(65);
    const zip_archive big = build_zip({stored("a.npy", over)});
    const std::uint64_t at65 = offset_of(over, "(") + 1 + 64 * 3;
    require_error(check_zip(big.bytes), error_code::too_many_dimensions, big.entries[0].data + at65, "a.npy", at65);
    require_ok(check_zip(big.bytes, npyguard::options::loosest()));
    // A lower max_ndim applies to members as it does to files.
    npyguard::options opts;
    opts.limits.max_ndim = 2;
    const std::string three = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1), }", 1, 1);
    const zip_archive small = build_zip({stored("a.npy", three)});
    const std::uint64_t third = offset_of(three, "(") + 1 + 2 * 3;
    require_error(check_zip(small.bytes, opts), error_code::too_many_dimensions, small.entries[0].data + third, "a.npy",
                  third);
    CHECK(check_zip(small.bytes, opts).failure().option == "max_ndim");
  }
  SECTION("a member header above the limit") {
    npyguard::options opts;
    opts.limits.max_header_bytes = 10;
    const zip_archive zip = build_zip({deflated("a.npy")});
    require_error(check_zip(zip.bytes, opts), error_code::header_too_large, zip.entries[0].data, "a.npy", 8);
  }
  SECTION("the canonical profile applies to members") {
    const std::string odd =
        raw_file("{'descr':'<i4','fortran_order':False,'shape':(3,)}" + std::string(69, ' ') + "\n", 1, 12);
    npyguard::options opts;
    opts.canonical = true;
    const zip_archive zip = build_zip({stored("a.npy", odd)});
    require_ok(check_zip(zip.bytes));
    REQUIRE_FALSE(check_zip(zip.bytes, opts).ok());
    CHECK(check_zip(zip.bytes, opts).failure().code == error_code::not_canonical);
  }
}

TEST_CASE("phase F: deflate streams, inflated only as far as the header and one byte", "[npz][members]") {
  SECTION("corrupt") {
    zip_entry e = deflated("a.npy");
    e.compressed = std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_deflate, zip.entries[0].data, "a.npy");
  }
  SECTION("ending inside the preamble, the header, or right after it") {
    for (const std::size_t cut : {std::size_t{5}, std::size_t{40}, ints.size() - 12}) {
      INFO("stream of " << cut << " bytes");
      zip_entry e = deflated("a.npy");
      e.compressed = raw_deflate(ints.substr(0, cut));
      const zip_archive zip = build_zip({e});
      require_error(check_zip(zip.bytes), error_code::size_mismatch, zip.entries[0].data, "a.npy");
    }
  }
  SECTION("ending early after a bad magic: the magic speaks first") {
    zip_entry e = deflated("a.npy", "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX");
    e.compressed = raw_deflate("XXXXXXXXXXXXXXX");
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_magic, zip.entries[0].data, "a.npy", 0);
  }
  SECTION("corrupt only after the first bytes: accepted by default, refused with verify") {
    std::string big = npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (200000,), }", 1, 0);
    for (std::size_t i = 0; i < 200000; ++i) big.push_back(static_cast<char>((i * 2654435761u) >> 13));
    zip_entry e = deflated("big.npy", big);
    std::string stream = raw_deflate(big);
    stream[stream.size() - 40] = static_cast<char>(stream[stream.size() - 40] ^ 0x55);
    e.compressed = stream;
    const zip_archive zip = build_zip({e});
    require_ok(check_zip(zip.bytes));
    const archive_result verified = check_zip(zip.bytes, verifying());
    REQUIRE_FALSE(verified.ok());
    CHECK(verified.failure().offset == zip.entries[0].data);
    CHECK((verified.failure().code == error_code::bad_deflate || verified.failure().code == error_code::crc_mismatch ||
           verified.failure().code == error_code::size_mismatch));
  }
}

TEST_CASE("phase G: verification", "[npz][verify]") {
  SECTION("CRC mismatches, stored and deflated") {
    for (const std::uint16_t method : {std::uint16_t{0}, std::uint16_t{8}}) {
      zip_entry e = method == 0 ? stored("a.npy") : deflated("a.npy");
      zip_archive zip = build_zip({e});
      patch(zip.bytes, zip.entries[0].central + 16, crc_of(ints) ^ 1, 4);
      // The local header carries the CRC too (its Zip64 sizes stay).
      patch(zip.bytes, zip.entries[0].local + 14, crc_of(ints) ^ 1, 4);
      require_ok(check_zip(zip.bytes));
      require_error(check_zip(zip.bytes, verifying()), error_code::crc_mismatch, zip.entries[0].data, "a.npy");
    }
  }
  SECTION("a stream longer than declared") {
    zip_entry e = deflated("a.npy");
    e.compressed = raw_deflate(ints + "more");
    const zip_archive zip = build_zip({e});
    require_ok(check_zip(zip.bytes));
    require_error(check_zip(zip.bytes, verifying()), error_code::size_mismatch, zip.entries[0].data, "a.npy");
  }
  SECTION("bytes after the final block") {
    zip_entry e = deflated("a.npy");
    e.compressed = raw_deflate(ints) + "junk";
    const zip_archive zip = build_zip({e});
    require_ok(check_zip(zip.bytes));
    require_error(check_zip(zip.bytes, verifying()), error_code::size_mismatch, zip.entries[0].data, "a.npy");
  }
  SECTION("a stream without its final block") {
    zip_entry e = deflated("a.npy");
    const std::string whole = raw_deflate(ints, 0); // stored blocks: the last bytes are data
    e.compressed = whole.substr(0, whole.size() - 2);
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes, verifying()), error_code::size_mismatch, zip.entries[0].data, "a.npy");
  }
}

TEST_CASE("entry points: file, descriptor, pipe, source", "[npz][entry]") {
  const zip_archive zip = two_members();
  char path[] = "/tmp/npyguard-npz-XXXXXX";
  const int fd = ::mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, zip.bytes.data(), zip.bytes.size()) == static_cast<ssize_t>(zip.bytes.size()));
  const archive_result from_file = npyguard::npz::validate_file(path);
  require_ok(from_file);
  CHECK(from_file == check_zip(zip.bytes));
  require_ok(npyguard::npz::validate_fd(fd));
  ::close(fd);
  ::unlink(path);
  require_error(npyguard::npz::validate_file("/nonexistent/x.npz"), error_code::io_error, std::nullopt);
  require_error(npyguard::npz::validate_file("/tmp"), error_code::io_error, std::nullopt);

  struct chunks final : npyguard::byte_source {
    std::string bytes;
    std::size_t at = 0;
    std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
      const std::size_t n = std::min({size, bytes.size() - at, std::size_t{7}});
      std::memcpy(buffer, bytes.data() + at, n);
      at += n;
      return static_cast<std::ptrdiff_t>(n);
    }
  };
  chunks pipe;
  pipe.bytes = zip.bytes;
  require_ok(npyguard::npz::validate_stream(pipe));
  chunks long_pipe;
  long_pipe.bytes = zip.bytes;
  npyguard::options opts;
  opts.limits.max_stream_bytes = zip.bytes.size() - 1;
  require_error(npyguard::npz::validate_stream(long_pipe, opts), error_code::io_error, std::nullopt);

  struct memory final : npyguard::random_access_source {
    std::string bytes;
    int fail_after = -1;
    std::uint64_t size() const noexcept override { return bytes.size(); }
    std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
      if (fail_after == 0) return -EIO;
      if (fail_after > 0) --fail_after;
      const std::size_t n = std::min<std::size_t>(size, bytes.size() - offset);
      std::memcpy(buffer, bytes.data() + offset, n);
      return static_cast<std::ptrdiff_t>(n);
    }
  };
  for (int reads = 0; reads < 12; ++reads) {
    memory source;
    source.bytes = zip.bytes;
    source.fail_after = reads;
    const archive_result r = npyguard::npz::validate_source(source, verifying());
    INFO("failing read " << reads << ": " << describe(r));
    if (!r.ok()) CHECK(r.failure().code == error_code::io_error);
  }
  memory whole;
  whole.bytes = zip.bytes;
  const archive_result r = npyguard::npz::validate_source(whole);
  require_ok(r);
  CHECK(r == check_zip(zip.bytes));
}

TEST_CASE("a stream of 1-byte reads is read in linear time", "[npz][entry][hostile]") {
  // Each short read once grew the buffer by a zeroed 64 KiB or more and
  // shrank it back: a 1 MiB archive from a pipe giving a byte at a time
  // took minutes. Now the buffer doubles only when full. The 20 s limit
  // only turns a return of the quadratic path into a failure.
  const std::string big = npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (1048576,), }", 1, 1048576);
  const auto bytes = std::make_shared<const std::string>(build_zip({stored("big.npy", big)}).bytes);
  const archive_result r = within(std::chrono::seconds(20), [bytes] {
    npyguard_test::chunked_source pipe(*bytes, 1);
    return npyguard::npz::validate_stream(pipe);
  });
  require_ok(r);
  CHECK(r == check_zip(*bytes));
}

TEST_CASE("the default mode reads no member data", "[npz][entry]") {
  std::string big = npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (4000000,), }", 1, 4000000);
  const zip_archive zip = build_zip({stored("big.npy", big), stored("b.npy", big)});
  struct counting final : npyguard::random_access_source {
    const std::string* bytes = nullptr;
    std::uint64_t total = 0;
    std::uint64_t size() const noexcept override { return bytes->size(); }
    std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
      const std::size_t n = std::min<std::size_t>(size, bytes->size() - offset);
      std::memcpy(buffer, bytes->data() + offset, n);
      total += n;
      return static_cast<std::ptrdiff_t>(n);
    }
  };
  counting source;
  source.bytes = &zip.bytes;
  const archive_result r = npyguard::npz::validate_source(source);
  require_ok(r);
  CHECK(r.value().bytes_read == source.total);
  CHECK(source.total < 80 * 1024); // the end window (at most 65,557), headers, two 4 KiB member prefixes
  counting verified;
  verified.bytes = &zip.bytes;
  require_ok(npyguard::npz::validate_source(verified, verifying()));
  CHECK(verified.total > 2 * big.size());
}

TEST_CASE("minimal reads: the end window, the directory and each member's headers only", "[npz][entry]") {
  // Members small enough that reading ahead takes several at once: stored
  // ones of 20,000 bytes and deflated ones, 300 KB in all, so that most of
  // the archive lies before the end window (SPEC-npz.md section 14).
  const std::string body = npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (20000,), }", 1, 20000);
  std::vector<zip_entry> entries;
  for (int i = 0; i < 15; ++i) {
    entries.push_back(i % 3 == 2 ? deflated("d" + std::to_string(i) + ".npy", body)
                                 : stored("s" + std::to_string(i) + ".npy", body));
  }
  const zip_archive zip = build_zip(entries);
  struct ranges final : npyguard::random_access_source {
    const std::string* bytes = nullptr;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> read; // [begin, end)
    std::uint64_t total = 0;
    std::uint64_t size() const noexcept override { return bytes->size(); }
    std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
      const std::size_t n = std::min<std::size_t>(size, bytes->size() - offset);
      std::memcpy(buffer, bytes->data() + offset, n);
      read.emplace_back(offset, offset + n);
      total += n;
      return static_cast<std::ptrdiff_t>(n);
    }
  };
  npyguard::options minimal;
  minimal.minimal_reads = true;
  ranges exact;
  exact.bytes = &zip.bytes;
  const archive_result r = npyguard::npz::validate_source(exact, minimal);
  require_ok(r);
  CHECK(r == check_zip(zip.bytes));
  CHECK(r.value().bytes_read == exact.total);
  ranges ahead;
  ahead.bytes = &zip.bytes;
  require_ok(npyguard::npz::validate_source(ahead));

  // Outside the end window, every byte read is a local header (and at most
  // 64 bytes after it: a guess at its extra field), a stored member's .npy
  // preamble and header, or a deflated member's first 1 KiB.
  const std::uint64_t window_start = zip.bytes.size() - std::min<std::uint64_t>(zip.bytes.size(), 65557);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> allowed;
  std::uint64_t bound = zip.bytes.size() - window_start;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const npyguard::npz::member& m = r.value().members[i];
    const std::uint64_t header_end = zip.entries[i].local + 30 + entries[i].name.size() + 64;
    allowed.emplace_back(zip.entries[i].local, header_end);
    const std::uint64_t first = m.method == npyguard::npz::compression::stored ? m.npy.data_offset : 1024;
    allowed.emplace_back(m.data_start, m.data_start + first);
    bound += (header_end - zip.entries[i].local) + first;
  }
  for (const auto& range : exact.read) { // (clang's C++17: no structured bindings in the lambda)
    const std::uint64_t begin = range.first;
    const std::uint64_t end = std::min(range.second, window_start);
    if (begin >= window_start) continue;
    INFO("read [" << begin << ", " << range.second << ")");
    CHECK(std::any_of(allowed.begin(), allowed.end(),
                      [begin, end](const auto& a) { return begin >= a.first && end <= std::max(a.second, a.first); }));
  }
  CHECK(exact.total <= bound);
  CHECK(exact.total * 2 < ahead.total); // reading ahead takes whole members
}

TEST_CASE("deflate streams whose last input bytes zlib holds as bits are read to the end", "[npz][members]") {
  // A call that fills its output can consume the final compressed bytes
  // with their symbols not yet written; the next call must still be made
  // (np.savez_compressed of 32 spaces, of 65,413 zeros). Every size, three
  // levels, both modes.
  int checked = 0;
  for (const int level : {1, 6, 9}) {
    for (std::size_t n = 0; n <= 300; ++n) {
      for (const char fill : {' ', '\0'}) {
        const std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
        zip_entry e = deflated("x.npy", npy_file(dict, 1, 0) + std::string(n, fill));
        e.compressed = raw_deflate(e.data, level);
        const zip_archive zip = build_zip({e});
        INFO("level " << level << ", " << n << " bytes of " << static_cast<int>(fill));
        require_ok(check_zip(zip.bytes));
        require_ok(check_zip(zip.bytes, verifying()));
        ++checked;
      }
    }
  }
  for (const std::size_t n : {65413u, 65536u, 131072u, 200003u}) {
    const std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
    const zip_archive zip = build_zip({deflated("z.npy", npy_file(dict, 1, 0) + std::string(n, '\0'))});
    require_ok(check_zip(zip.bytes, verifying()));
  }
  CHECK(checked == 3 * 301 * 2);
}

TEST_CASE("review findings: shadowed keys, combining marks, an empty Zip64 archive, short Unicode Path", "[npz]") {
  SECTION("a key that is another member's name") {
    // numpy's NpzFile['a.npy'] reads the member a.npy, never a.npy.npy's array.
    for (const bool reversed : {false, true}) {
      const std::vector<zip_entry> entries = reversed ? std::vector<zip_entry>{stored("a.npy.npy"), stored("a.npy")}
                                                      : std::vector<zip_entry>{stored("a.npy"), stored("a.npy.npy")};
      const zip_archive zip = build_zip(entries);
      require_error(check_zip(zip.bytes), error_code::duplicate_name, zip.entries[1].central, entries[1].name);
    }
    require_ok(check_zip(build_zip({stored("a.npy"), stored("b.npy.npy")}).bytes));
  }
  SECTION("more than 30 combining marks in a row") {
    std::string marks;
    for (int i = 0; i < 30; ++i) marks += "\xcc\x81"; // U+0301
    zip_entry fine = stored("a" + marks + ".npy");
    fine.flags = 0x800;
    require_ok(check_zip(build_zip({fine}).bytes));
    zip_entry long_run = stored("a" + marks + "\xcc\x96.npy"); // a 31st, U+0316
    long_run.flags = 0x800;
    const zip_archive zip = build_zip({long_run});
    require_error(check_zip(zip.bytes), error_code::bad_member_name, zip.entries[0].central + central_name,
                  long_run.name);
  }
  SECTION("Zip64 end records around an empty directory") {
    zip_archive zip = build_zip({});
    add_zip64_end(zip);
    require_error(check_zip(zip.bytes), error_code::bad_zip64_eocd, zip.eocd - 20);
  }
  SECTION("a local Unicode Path field too short to hold its version and CRC") {
    zip_entry e = stored("a.npy");
    e.local_extra_tail = std::string("\x75\x70\x02\x00\x01\x00", 6);
    const zip_archive zip = build_zip({e});
    require_error(check_zip(zip.bytes), error_code::bad_extra_field, zip.entries[0].local + 35 + 20, "a.npy");
  }
}

TEST_CASE("a source that answers short (the archive shrank) is io_error", "[npz][entry]") {
  const zip_archive zip = two_members();
  struct shrinking final : npyguard::random_access_source {
    std::string bytes;
    std::uint64_t claimed = 0;
    std::uint64_t size() const noexcept override { return claimed; }
    std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
      if (offset >= bytes.size()) return 0;
      const std::size_t n = std::min<std::size_t>(size, bytes.size() - offset);
      std::memcpy(buffer, bytes.data() + offset, n);
      return static_cast<std::ptrdiff_t>(n);
    }
  };
  shrinking source;
  source.bytes = zip.bytes;
  source.claimed = zip.bytes.size() + 10;
  require_error(npyguard::npz::validate_source(source), error_code::io_error, std::nullopt);
}
