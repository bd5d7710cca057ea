// RawArray (SPEC-ra.md): every code at its offset, the order of checks,
// the element-size table, the size math, metadata, and the entry points
// agreeing with each other.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <fstream>
#include <iterator>

#include "ra_support.hpp"
#include "support.hpp"

using npyguard::error_code;
using npyguard::ra::element_type;
using namespace npyguard_test;

namespace {

constexpr std::uint64_t max_signed = std::numeric_limits<std::int64_t>::max();

npyguard::ra::result check_ra(const std::string& bytes, const npyguard::options& opts = {}) {
  return npyguard::ra::validate_buffer(bytes.data(), bytes.size(), opts);
}

// A random_access_source over a string that counts what it was asked for.
class counting_source final : public npyguard::random_access_source {
public:
  explicit counting_source(const std::string& bytes) : bytes_(bytes) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return bytes_.size(); }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (size == 0 || buffer == nullptr) ++empty_requests; // the library never asks for nothing
    if (offset >= bytes_.size()) return 0;
    const std::size_t n = std::min<std::size_t>(size, bytes_.size() - static_cast<std::size_t>(offset));
    std::memcpy(buffer, bytes_.data() + offset, n);
    bytes_read += n;
    return static_cast<std::ptrdiff_t>(n);
  }
  std::uint64_t bytes_read = 0;
  int empty_requests = 0;

private:
  const std::string& bytes_;
};

// The verdict of every entry point on the same bytes: buffer, source,
// file, descriptor, and streams in 1-byte and 4 KiB reads. Streams have no
// metadata fields; everything else must be equal.
npyguard::ra::result every_entry_point(const std::string& bytes, const npyguard::options& opts = {}) {
  const npyguard::ra::result buffer = check_ra(bytes, opts);
  counting_source source(bytes);
  CHECK(npyguard::ra::validate_source(source, opts) == buffer);
  CHECK(source.empty_requests == 0);
  scratch_dir dir;
  const std::string path = dir.file("x.ra");
  write_file(path, bytes);
  CHECK(npyguard::ra::validate_file(path.c_str(), opts) == buffer);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  CHECK(npyguard::ra::validate_fd(fd, opts) == buffer);
  CHECK(::lseek(fd, 0, SEEK_CUR) == 0); // by offset: the descriptor's own offset untouched
  ::close(fd);
  npyguard::ra::result expected_stream = buffer;
  if (const auto* model = buffer.value_if()) {
    npyguard::ra::header without = *model;
    without.metadata_offset.reset();
    without.metadata_length.reset();
    expected_stream = without;
  }
  for (const std::size_t chunk : {std::size_t{1}, std::size_t{4096}}) {
    chunked_source stream(bytes, chunk);
    const npyguard::ra::result streamed = npyguard::ra::validate_stream(stream, opts);
    INFO("stream in chunks of " << chunk);
    if (buffer.ok()) {
      CHECK(streamed == expected_stream);
    } else { // a stream stops early, so a message may count less
      REQUIRE_FALSE(streamed.ok());
      CHECK(streamed.failure().code == buffer.failure().code);
      CHECK(streamed.failure().offset == buffer.failure().offset);
    }
  }
  return buffer;
}

} // namespace

TEST_CASE("ra: a valid file and its model", "[ra]") {
  const std::string bytes = ra_file({});
  const npyguard::ra::result r = every_entry_point(bytes);
  require_ok(r);
  const npyguard::ra::header& model = r.value();
  CHECK(model.flags == 0);
  CHECK_FALSE(model.big_endian);
  CHECK(model.eltype == element_type::floating);
  CHECK(model.elbyte == 8);
  CHECK(model.dims == std::vector<std::uint64_t>{2, 3});
  CHECK(model.count == 6);
  CHECK(model.data_offset == 64);
  CHECK(model.data_length == 48);
  CHECK(model.metadata_offset == std::optional<std::uint64_t>(112));
  CHECK(model.metadata_length == std::optional<std::uint64_t>(0));
  CHECK(npyguard::ra::type_name(model.eltype, model.elbyte) == "float64");
}

TEST_CASE("ra: metadata after the data is accepted, reported and never read", "[ra]") {
  const std::string metadata = "---\nname: test\n...\n" + std::string(100000, 'm');
  const std::string bytes = ra_file({}, metadata);
  const npyguard::ra::result r = every_entry_point(bytes);
  require_ok(r);
  CHECK(r.value().metadata_offset == std::optional<std::uint64_t>(112));
  CHECK(r.value().metadata_length == std::optional<std::uint64_t>(metadata.size()));
  // Only the header is read from a source of known size.
  counting_source source(bytes);
  require_ok(npyguard::ra::validate_source(source, {}));
  CHECK(source.bytes_read == 64);
  // A stream is read to the end of the data and no further.
  chunked_source stream(bytes, 4096);
  require_ok(npyguard::ra::validate_stream(stream, {}));
  CHECK(stream.delivered() == 112);

  npyguard::options strict;
  strict.ra_reject_metadata = true;
  require_error(every_entry_point(bytes, strict), error_code::trailing_data, 112);
  require_error(check_ra(ra_file({}, "x"), strict), error_code::trailing_data, 112);
  require_ok(check_ra(ra_file({}), strict));
  // From a stream: reading stops at the first byte after the data.
  chunked_source strict_stream(bytes, 4096);
  require_error(npyguard::ra::validate_stream(strict_stream, strict), error_code::trailing_data, 112);
  CHECK(strict_stream.delivered() == 113);
}

TEST_CASE("ra: scalars, empty arrays and many dimensions", "[ra]") {
  ra_fields scalar;
  scalar.dims = {};
  const npyguard::ra::result zero_d = every_entry_point(ra_file(scalar));
  require_ok(zero_d);
  CHECK(zero_d.value().count == 1);
  CHECK(zero_d.value().data_length == 8);
  CHECK(zero_d.value().data_offset == 48);

  ra_fields empty;
  empty.dims = {0, 5};
  const npyguard::ra::result r = every_entry_point(ra_file(empty));
  require_ok(r);
  CHECK(r.value().count == 0);
  CHECK(r.value().data_length == 0);

  ra_fields many;
  many.eltype = 2;
  many.elbyte = 1;
  many.dims.assign(64, 1);
  many.dims[63] = 3;
  require_ok(every_entry_point(ra_file(many)));
  many.dims.push_back(1);
  require_error(every_entry_point(ra_file(many)), error_code::too_many_dimensions, 40);
  npyguard::options raised;
  raised.limits.max_ndim = 65;
  require_ok(check_ra(ra_file(many), raised));
  // The limit counts as at most 2^20 (the header size cannot wrap).
  npyguard::options loosest = npyguard::options::loosest();
  ra_fields huge;
  huge.dims = {};
  huge.ndims = (std::uint64_t{1} << 20) + 1;
  require_error(check_ra(ra_header(huge), loosest), error_code::too_many_dimensions, 40);
  huge.ndims = std::uint64_t{1} << 20;
  require_error(check_ra(ra_header(huge), loosest), error_code::truncated_header, 48);
}

TEST_CASE("ra: bad_magic at the first differing byte; prefixes of the magic go on", "[ra]") {
  const std::string good = ra_file({});
  for (std::size_t i = 0; i < 8; ++i) {
    std::string bytes = good;
    bytes[i] = static_cast<char>(bytes[i] ^ 0x20);
    require_error(every_entry_point(bytes), error_code::bad_magic, i);
    require_error(check_ra(bytes.substr(0, i + 1)), error_code::bad_magic, i);
  }
  // A big-endian host's header: "yarrawar".
  require_error(check_ra("yarrawar" + good.substr(8)), error_code::bad_magic, 0);
  // .npy and zip bytes are not RawArray.
  require_error(check_ra(std::string("\x93NUMPY\x01\x00", 8)), error_code::bad_magic, 0);
  require_error(check_ra(std::string("rawarra\0", 8)), error_code::bad_magic, 7);
  for (std::size_t n = 0; n <= 8; ++n) {
    require_error(every_entry_point(good.substr(0, n)), error_code::truncated_header, n);
  }
}

TEST_CASE("ra: unsupported_flags at 8: only bit 0 is accepted", "[ra]") {
  for (const std::uint64_t flags : {std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{4}, std::uint64_t{6},
                                    std::uint64_t{8}, std::uint64_t{1} << 63, ~std::uint64_t{0}}) {
    ra_fields f;
    f.flags = flags;
    INFO("flags " << flags);
    require_error(every_entry_point(ra_file(f)), error_code::unsupported_flags, 8);
    // Checked as soon as its 8 bytes are there: a file cut after it says so.
    require_error(check_ra(ra_file(f).substr(0, 16)), error_code::unsupported_flags, 8);
  }
  ra_fields big;
  big.flags = 1;
  const npyguard::ra::result r = every_entry_point(ra_file(big));
  require_ok(r);
  CHECK(r.value().big_endian);
  CHECK(r.value().flags == 1);
  // A cut inside the flags is a truncated header.
  require_error(check_ra(ra_file(big).substr(0, 15)), error_code::truncated_header, 15);
}

TEST_CASE("ra: unknown_element_type at 16; type 5 only while allowed", "[ra]") {
  for (const std::uint64_t eltype : {std::uint64_t{6}, std::uint64_t{7}, std::uint64_t{255}, ~std::uint64_t{0}}) {
    ra_fields f;
    f.eltype = eltype;
    INFO("eltype " << eltype);
    require_error(every_entry_point(ra_file(f)), error_code::unknown_element_type, 16);
    require_error(check_ra(ra_file(f).substr(0, 24)), error_code::unknown_element_type, 16);
  }
  ra_fields julia_bool;
  julia_bool.eltype = 5;
  julia_bool.elbyte = 1;
  require_ok(check_ra(ra_file(julia_bool)));
  npyguard::options no_type5;
  no_type5.ra_allow_type5 = false;
  require_error(every_entry_point(ra_file(julia_bool), no_type5), error_code::unknown_element_type, 16);
}

TEST_CASE("ra: bad_element_size at 24, against the table of SPEC-ra.md section 3", "[ra]") {
  const std::vector<std::uint64_t> allowed[6] = {
      {}, {1, 2, 4, 8, 16}, {1, 2, 4, 8, 16}, {2, 4, 8, 16}, {4, 8, 16, 32}, {1, 2}};
  for (std::uint64_t eltype = 0; eltype <= 5; ++eltype) {
    for (std::uint64_t elbyte = 0; elbyte <= 40; ++elbyte) {
      ra_fields f;
      f.eltype = eltype;
      f.elbyte = elbyte;
      f.dims = {3};
      const bool ok = eltype == 0
                          ? elbyte != 0
                          : std::find(allowed[eltype].begin(), allowed[eltype].end(), elbyte) != allowed[eltype].end();
      INFO("eltype " << eltype << " elbyte " << elbyte);
      if (ok) {
        require_ok(check_ra(ra_file(f)));
      } else {
        require_error(check_ra(ra_file(f)), error_code::bad_element_size, 24);
        require_error(check_ra(ra_file(f).substr(0, 32)), error_code::bad_element_size, 24);
      }
    }
  }
  ra_fields f;
  f.elbyte = std::uint64_t{1} << 32;
  require_error(check_ra(ra_header(f)), error_code::bad_element_size, 24);
  f.eltype = 0; // user types take any size; one above 2^63-1 is size_overflow
  f.elbyte = std::uint64_t{1} << 63;
  f.dims = {};
  f.size = 0;
  require_error(check_ra(ra_header(f)), error_code::size_overflow, 24);
}

TEST_CASE("ra: type names", "[ra]") {
  using npyguard::ra::type_name;
  CHECK(type_name(element_type::user, 12) == "user12");
  CHECK(type_name(element_type::signed_integer, 16) == "int128");
  CHECK(type_name(element_type::unsigned_integer, 1) == "uint8");
  CHECK(type_name(element_type::floating, 2) == "float16");
  CHECK(type_name(element_type::complex_floating, 8) == "complex64");
  CHECK(type_name(element_type::complex_floating, 32) == "complex256");
  CHECK(type_name(element_type::extension, 1) == "bool");
  CHECK(type_name(element_type::extension, 2) == "bfloat16");
}

TEST_CASE("ra: too_many_dimensions at 40, before the dims are read", "[ra]") {
  ra_fields f;
  f.dims = {};
  f.ndims = 65;
  require_error(every_entry_point(ra_header(f)), error_code::too_many_dimensions, 40);
  f.ndims = ~std::uint64_t{0};
  require_error(every_entry_point(ra_header(f)), error_code::too_many_dimensions, 40);
  npyguard::options small;
  small.limits.max_ndim = 1;
  require_error(check_ra(ra_file({}), small), error_code::too_many_dimensions, 40);
}

TEST_CASE("ra: truncated_header at the input size", "[ra]") {
  const std::string bytes = ra_file({});
  for (std::size_t n = 8; n < 64; ++n) {
    INFO("cut at " << n);
    require_error(every_entry_point(bytes.substr(0, n)), error_code::truncated_header, n);
  }
  // A header claiming 64 dims in a 48-byte input costs nothing.
  ra_fields claim;
  claim.dims = {};
  claim.ndims = 64;
  require_error(every_entry_point(ra_header(claim)), error_code::truncated_header, 48);
}

TEST_CASE("ra: size_overflow at the element size, the dimension, or the data end", "[ra]") {
  // [0, 2^62, 2^62] of float64: the non-zero dims overflow though the array is empty.
  ra_fields f;
  f.dims = {0, std::uint64_t{1} << 62, std::uint64_t{1} << 62};
  f.size = 0;
  require_error(every_entry_point(ra_header(f)), error_code::size_overflow, 56);
  f.dims = {2, 3, std::uint64_t{1} << 60, 5};
  require_error(check_ra(ra_header(f)), error_code::size_overflow, 64);
  f.dims = {std::uint64_t{1} << 59}; // 2^62 bytes fits, and ends below 2^63 - 1
  f.size = std::uint64_t{1} << 62;
  require_error(check_ra(ra_header(f)), error_code::truncated_data, 56);
  // The product fits, the data end does not.
  f.eltype = 0;
  f.elbyte = max_signed;
  f.dims = {};
  f.size = max_signed;
  require_error(every_entry_point(ra_header(f)), error_code::size_overflow, 32);
  f.elbyte = max_signed - 48;
  f.size = max_signed - 48;
  require_error(check_ra(ra_header(f)), error_code::truncated_data, 48);
  // A wrapping product (2^32 * 2^32 * 8) is not a small one.
  ra_fields wrap;
  wrap.dims = {std::uint64_t{1} << 32, std::uint64_t{1} << 32};
  wrap.size = 0;
  require_error(check_ra(ra_header(wrap)), error_code::size_overflow, 56);
}

TEST_CASE("ra: data_length_mismatch and data_too_large at 32", "[ra]") {
  ra_fields f;
  f.size = 47;
  require_error(every_entry_point(ra_file(f)), error_code::data_length_mismatch, 32);
  f.size = 49;
  require_error(check_ra(ra_file(f)), error_code::data_length_mismatch, 32);
  // rawarray-rust's RawArray::new(): ndims 0 with size 0.
  ra_fields rust_default;
  rust_default.elbyte = 4;
  rust_default.dims = {};
  rust_default.size = 0;
  require_error(check_ra(ra_header(rust_default)), error_code::data_length_mismatch, 32);
  // The mismatch is found before the truncation.
  ra_fields claim;
  claim.size = 1000;
  require_error(check_ra(ra_header(claim)), error_code::data_length_mismatch, 32);

  npyguard::options capped;
  capped.limits.max_data_bytes = 47;
  require_error(every_entry_point(ra_file({}), capped), error_code::data_too_large, 32);
  capped.limits.max_data_bytes = 48;
  require_ok(check_ra(ra_file({}), capped));
}

TEST_CASE("ra: truncated_data at the input size, with no allocation from the claim", "[ra]") {
  const std::string bytes = ra_file({});
  for (std::size_t n = 64; n < bytes.size(); ++n) {
    require_error(every_entry_point(bytes.substr(0, n)), error_code::truncated_data, n);
  }
  // A terabyte claimed by a 100-byte file.
  ra_fields f;
  f.dims = {std::uint64_t{1} << 37};
  std::string claim = ra_header(f) + std::string(44, 'x');
  REQUIRE(claim.size() == 100);
  require_error(within(std::chrono::seconds(10), [&] { return every_entry_point(claim); }), error_code::truncated_data,
                100);
}

TEST_CASE("ra: the first failing check wins (SPEC-ra.md section 6)", "[ra]") {
  ra_fields f;
  f.flags = 2;
  f.eltype = 9;
  f.elbyte = 0;
  f.ndims = 1000;
  require_error(check_ra(ra_header(f)), error_code::unsupported_flags, 8);
  f.flags = 0;
  require_error(check_ra(ra_header(f)), error_code::unknown_element_type, 16);
  f.eltype = 1;
  require_error(check_ra(ra_header(f)), error_code::bad_element_size, 24);
  f.elbyte = 4;
  require_error(check_ra(ra_header(f)), error_code::too_many_dimensions, 40);
  // A bad field wins over the truncation of the header after it.
  f.ndims.reset();
  f.dims = {std::uint64_t{1} << 62, 4};
  require_error(check_ra(ra_header(f).substr(0, 56)), error_code::truncated_header, 56);
  require_error(check_ra(ra_header(f)), error_code::size_overflow, 48);
  f.dims = {2, 4};
  f.size = 31;
  require_error(check_ra(ra_header(f)), error_code::data_length_mismatch, 32);
  f.size.reset();
  require_error(check_ra(ra_header(f)), error_code::truncated_data, 64);
  // The magic first of all.
  std::string bad = ra_header(f);
  bad[3] = 'x';
  bad[8] = 2;
  require_error(check_ra(bad), error_code::bad_magic, 3);
}

TEST_CASE("ra: the entry points report unreadable inputs as io_error", "[ra]") {
  require_error(npyguard::ra::validate_file("/nonexistent/npyguard/x.ra"), error_code::io_error, std::nullopt);
  require_error(npyguard::ra::validate_file(NPYGUARD_SOURCE_DIR "/tests"), error_code::io_error, std::nullopt);
  require_error(npyguard::ra::validate_buffer(nullptr, 0), error_code::truncated_header, 0);
}

TEST_CASE("convert: not_convertible at the field that says why, and no output left", "[ra][convert]") {
  scratch_dir dir;
  const std::string out = dir.file("out.npy");
  const auto refuse = [&](const ra_fields& f, std::uint64_t offset) {
    const std::string in = dir.write("in.ra", ra_file(f));
    const auto converted = npyguard::convert_ra_to_npy(in.c_str(), out.c_str());
    require_error(converted, error_code::not_convertible, offset);
    CHECK(::access(out.c_str(), F_OK) != 0);
    // numpy_dtype gives the same refusal from the model alone.
    const std::string bytes = ra_file(f);
    const auto model = npyguard::ra::validate_buffer(bytes.data(), bytes.size());
    require_ok(model);
    require_error(npyguard::numpy_dtype(model.value()), error_code::not_convertible, offset);
  };
  ra_fields user;
  user.eltype = 0;
  user.elbyte = 12;
  refuse(user, 16);
  ra_fields bfloat16;
  bfloat16.eltype = 5;
  bfloat16.elbyte = 2;
  refuse(bfloat16, 16);
  ra_fields int128;
  int128.eltype = 1;
  int128.elbyte = 16;
  refuse(int128, 24);
  ra_fields complex4;
  complex4.eltype = 4;
  complex4.elbyte = 4;
  refuse(complex4, 24);
  ra_fields many;
  many.dims.assign(33, 1);
  refuse(many, 40);
  // An invalid input is the validator's error, and nothing is written either.
  ra_fields lying;
  lying.size = 1;

  {
    const std::string in = dir.write("bad.ra", ra_file(lying));
    require_error(npyguard::convert_ra_to_npy(in.c_str(), out.c_str()), error_code::data_length_mismatch, 32);
    CHECK(::access(out.c_str(), F_OK) != 0);
  }

  // .npy -> .ra: at the header text, 10 for version 1.0 and 12 for 2.0.
  const std::string ra_out = dir.file("out.ra");
  const std::string structured =
      dir.write("s.npy", npy_file("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (2,), }", 1, 8));
  require_error(npyguard::convert_npy_to_ra(structured.c_str(), ra_out.c_str()), error_code::not_convertible, 10);
  const std::string text =
      dir.write("u.npy", npy_file("{'descr': '<U2', 'fortran_order': False, 'shape': (1,), }", 2, 8));
  require_error(npyguard::convert_npy_to_ra(text.c_str(), ra_out.c_str()), error_code::not_convertible, 12);
  CHECK(::access(ra_out.c_str(), F_OK) != 0);
  // The output may not be the input.
  require_error(npyguard::convert_npy_to_ra(text.c_str(), text.c_str()), error_code::io_error, std::nullopt);
}

TEST_CASE("convert: a C-order array is transposed, a Fortran one copied", "[ra][convert]") {
  scratch_dir dir;
  std::string data;
  for (int i = 0; i < 6; ++i) data.push_back(static_cast<char>(i));
  const std::string c_order =
      dir.write("c.npy", npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3), }") + data);
  const std::string out = dir.file("c.ra");
  const auto converted = npyguard::convert_npy_to_ra(c_order.c_str(), out.c_str());
  require_ok(converted);
  CHECK(converted.value().output.dims == std::vector<std::uint64_t>{2, 3});
  std::ifstream in(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() == 64 + 6);
  CHECK(bytes.substr(64) == std::string("\x00\x03\x01\x04\x02\x05", 6)); // dims[0] fastest
  const std::string back = dir.file("back.npy");
  const auto again = npyguard::convert_ra_to_npy(out.c_str(), back.c_str());
  require_ok(again);
  CHECK(again.value().output.fortran_order);
  CHECK(again.value().output.shape == std::vector<std::uint64_t>{2, 3});
}

TEST_CASE("numpy_dtype: the dtype convert writes for each element type", "[ra][convert]") {
  struct row {
    std::uint64_t flags, eltype, elbyte;
    std::string type_string;
  };
  const row rows[] = {
      {0, 1, 1, "|i1"},   {0, 1, 8, "<i8"}, {1, 1, 2, ">i2"}, {0, 2, 1, "|u1"},   {1, 2, 4, ">u4"}, {0, 3, 2, "<f2"},
      {0, 3, 16, "<f16"}, {1, 3, 8, ">f8"}, {0, 4, 8, "<c8"}, {1, 4, 32, ">c32"}, {0, 5, 1, "|b1"}, {1, 5, 1, "|b1"},
  };
  for (const row& r : rows) {
    ra_fields f;
    f.flags = r.flags;
    f.eltype = r.eltype;
    f.elbyte = r.elbyte;
    const std::string bytes = ra_file(f);
    const auto model = npyguard::ra::validate_buffer(bytes.data(), bytes.size());
    require_ok(model);
    const auto type = npyguard::numpy_dtype(model.value());
    require_ok(type);
    INFO("eltype " << r.eltype << " elbyte " << r.elbyte);
    CHECK(npyguard::type_string(type.value()) == r.type_string);
    CHECK(type.value().itemsize == r.elbyte);
  }
}
