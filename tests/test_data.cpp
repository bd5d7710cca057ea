// The data view: array_data (map and read), typed views, copy_native and
// read_array, on files written to a private temporary directory. Expected
// bytes are built field by field from explicit big/little-endian encodings,
// never by the code under test.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "npy/data.hpp" // src/: the test seams
#include "npy/entry_points.hpp"
#include "support.hpp"

using namespace npyguard_test;
using npyguard::array_data;
using npyguard::data_access;
using npyguard::error_code;

namespace {

#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
constexpr char native_char = '>';
constexpr char foreign_char = '<';
#else
constexpr char native_char = '<';
constexpr char foreign_char = '>';
#endif

// A standard (64-aligned) file holding exactly `data` after the header.
std::string npy_with(const std::string& dict, const std::string& data, unsigned major = 1) {
  const std::string text = padded_header(dict, major);
  return preamble(major, text.size()) + text + data;
}

// A v1 file whose data starts at `data_offset` (legacy writers: any offset).
std::string npy_at(const std::string& dict, std::size_t data_offset, const std::string& data) {
  REQUIRE(data_offset >= 10 + dict.size() + 1);
  const std::string text = dict + std::string(data_offset - 10 - dict.size() - 1, ' ') + "\n";
  return preamble(1, text.size()) + text + data;
}

std::string dict_of(const std::string& descr, const std::string& shape) {
  return "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape + ", }";
}

std::string big(std::uint64_t value, int width) {
  std::string out;
  for (int i = width - 1; i >= 0; --i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  return out;
}
std::string little(std::uint64_t value, int width) {
  std::string out;
  for (int i = 0; i < width; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
  return out;
}
// The machine's order: whatever memcpy of the integer gives.
std::string native(std::uint64_t value, int width) {
  std::string out(static_cast<std::size_t>(width), '\0');
  switch (width) {
    case 1: {
      const auto v = static_cast<std::uint8_t>(value);
      std::memcpy(&out[0], &v, 1);
      break;
    }
    case 2: {
      const auto v = static_cast<std::uint16_t>(value);
      std::memcpy(&out[0], &v, 2);
      break;
    }
    case 4: {
      const auto v = static_cast<std::uint32_t>(value);
      std::memcpy(&out[0], &v, 4);
      break;
    }
    default: std::memcpy(&out[0], &value, 8); break;
  }
  return out;
}
std::uint32_t bits(float value) {
  std::uint32_t out;
  std::memcpy(&out, &value, 4);
  return out;
}
std::uint64_t bits(double value) {
  std::uint64_t out;
  std::memcpy(&out, &value, 8);
  return out;
}

std::string as_string(const unsigned char* data, std::uint64_t size) {
  return std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
}

// Data bytes with a recognisable pattern.
std::string pattern(std::size_t size) {
  std::string out(size, '\0');
  for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<char>((i * 7 + 3) & 0xFF);
  return out;
}

std::string copy_native_of(const array_data& data) {
  std::string out(static_cast<std::size_t>(data.size()), '\0');
  const auto failure = data.copy_native(out.empty() ? nullptr : &out[0], out.size());
  if (failure) {
    INFO("copy_native: " << npyguard::error_code_name(failure->code) << ": " << failure->message);
    REQUIRE_FALSE(failure.has_value());
  }
  return out;
}

void require_failure(const std::optional<npyguard::error>& failure, error_code code,
                     std::optional<std::uint64_t> offset) {
  REQUIRE(failure.has_value());
  INFO("message: " << failure->message);
  CHECK(npyguard::error_code_name(failure->code) == npyguard::error_code_name(code));
  CHECK(failure->offset.has_value() == offset.has_value());
  CHECK(failure->offset.value_or(~0ull) == offset.value_or(~0ull));
  CHECK_FALSE(failure->message.empty());
}

const data_access both_modes[] = {data_access::map, data_access::read};

const char* mode_name(data_access access) { return access == data_access::map ? "map" : "read"; }

} // namespace

TEST_CASE("both access modes give exactly the validated data bytes", "[data]") {
  scratch_dir dir;
  struct layout {
    const char* name;
    std::string file;
    std::uint64_t data_offset;
    std::string data;
  };
  const std::string small = pattern(20);
  const std::string large = pattern(3 * 4096 + 123);
  const std::vector<layout> layouts = {
      {"standard", npy_with(dict_of("'<i4'", "(5,)"), small), 128, small},
      {"legacy offset 68", npy_at(dict_of("'<i4'", "(5,)"), 68, small), 68, small},
      // data beyond the first page, not page-aligned: the mapping starts at
      // the page boundary below data_offset
      {"offset 5000", npy_at(dict_of("'|u1'", "(12411,)"), 5000, large), 5000, large},
      {"offset 8192 (page-aligned)", npy_at(dict_of("'|u1'", "(12411,)"), 8192, large), 8192, large},
      {"version 2.0", npy_with(dict_of("'<i4'", "(5,)"), small, 2), 128, small},
  };
  for (const layout& each : layouts) {
    const std::string path = dir.write("layout.npy", each.file);
    for (const data_access access : both_modes) {
      INFO(each.name << ", " << mode_name(access));
      array_data data;
      const npyguard::result opened = array_data::open(path.c_str(), data, {}, access);
      require_ok(opened);
      CHECK(opened == npyguard::validate_file(path.c_str()));
      CHECK(data.model() == opened.value());
      CHECK(data.model().data_offset == each.data_offset);
      CHECK(data.access() == access);
      REQUIRE(data.size() == each.data.size());
      REQUIRE(data.bytes() != nullptr);
      CHECK(as_string(data.bytes(), data.size()) == each.data);
      CHECK_FALSE(data.verify_unchanged().has_value());
    }
  }
}

TEST_CASE("trailing data accepted by the options is not part of the view", "[data]") {
  scratch_dir dir;
  const std::string data = pattern(20);
  const std::string path = dir.write("trailing.npy", npy_with(dict_of("'<i4'", "(5,)"), data + "PK\x03\x04zip"));
  npyguard::options opts;
  opts.allow_trailing_data = true;
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    array_data view;
    require_ok(array_data::open(path.c_str(), view, opts, access));
    CHECK(as_string(view.bytes(), view.size()) == data);
    CHECK_FALSE(view.verify_unchanged().has_value());
    array_data strict;
    require_error(array_data::open(path.c_str(), strict, {}, access), error_code::trailing_data, 128 + 20);
  }
}

namespace {

template <typename T>
void check_typed_view(const scratch_dir& dir, const std::string& descr, const std::vector<T>& values) {
  std::string data(values.size() * sizeof(T), '\0');
  for (std::size_t i = 0; i < values.size(); ++i) { // the machine's order (and std::vector<bool> has no data())
    const T value = values[i];
    std::memcpy(&data[i * sizeof(T)], &value, sizeof(T));
  }
  const std::string shape = "(" + std::to_string(values.size()) + ",)";
  const std::string path = dir.write("typed.npy", npy_with(dict_of(descr, shape), data));
  for (const data_access access : both_modes) {
    INFO(descr << ", " << mode_name(access));
    array_data array;
    require_ok(array_data::open(path.c_str(), array, {}, access));
    const npyguard::typed_view<T> view = array.template view<T>();
    REQUIRE(static_cast<bool>(view));
    REQUIRE(view.count == values.size());
    CHECK(static_cast<const void*>(view.data) == static_cast<const void*>(array.bytes()));
    for (std::size_t i = 0; i < values.size(); ++i) CHECK(view.data[i] == values[i]);
  }
}

std::string tagged(char order, const char* kind_and_size) { return std::string("'") + order + kind_and_size + "'"; }

} // namespace

TEST_CASE("typed views for every supported element type", "[data]") {
  scratch_dir dir;
  check_typed_view<bool>(dir, "'|b1'", {true, false, true, true});
  check_typed_view<std::int8_t>(dir, "'|i1'", {-128, -1, 0, 127});
  check_typed_view<std::int8_t>(dir, "'>i1'", {5, -5}); // byte order of 1-byte types is irrelevant
  check_typed_view<std::uint8_t>(dir, "'|u1'", {0, 1, 255});
  check_typed_view<std::uint8_t>(dir, "'<u1'", {9, 8});
  check_typed_view<std::int16_t>(dir, tagged(native_char, "i2"), {-32768, -2, 300, 32767});
  check_typed_view<std::uint16_t>(dir, tagged(native_char, "u2"), {0, 65535, 258});
  check_typed_view<std::int32_t>(dir, tagged(native_char, "i4"), {-2147483647 - 1, -1, 16909060});
  check_typed_view<std::uint32_t>(dir, tagged(native_char, "u4"), {4294967295u, 1u});
  check_typed_view<std::int64_t>(dir, tagged(native_char, "i8"), {-1, 0x0102030405060708LL, INT64_MIN});
  check_typed_view<std::uint64_t>(dir, tagged(native_char, "u8"), {~0ull, 42ull});
  check_typed_view<long long>(dir, tagged(native_char, "i8"), {-7LL, 7LL});
  check_typed_view<unsigned long long>(dir, tagged(native_char, "u8"), {7ULL});
  check_typed_view<float>(dir, tagged(native_char, "f4"), {1.5f, -0.0f, 3.25e10f});
  check_typed_view<double>(dir, tagged(native_char, "f8"), {1.0 / 3.0, -2.5, 1e300});
  check_typed_view<std::complex<float>>(dir, tagged(native_char, "c8"), {{1.0f, -2.0f}, {0.5f, 4.0f}});
  check_typed_view<std::complex<double>>(dir, tagged(native_char, "c16"), {{1.0, -2.0}, {1e-300, 7.0}});
  // Rank 0 and rank 2: count is the product of the shape.
  const std::string path = dir.write("matrix.npy", npy_with(dict_of(tagged(native_char, "f4"), "(2, 3)"), pattern(24)));
  array_data matrix;
  require_ok(array_data::open(path.c_str(), matrix));
  CHECK(matrix.view<float>().count == 6);
  const std::string scalar = dir.write("scalar.npy", npy_with(dict_of(tagged(native_char, "f8"), "()"), pattern(8)));
  array_data rank0;
  require_ok(array_data::open(scalar.c_str(), rank0));
  CHECK(rank0.view<double>().count == 1);
}

TEST_CASE("typed views are refused unless kind, size, order and alignment all match", "[data]") {
  scratch_dir dir;
  const auto open_view = [&](const std::string& file, data_access access = data_access::map) {
    const std::string path = dir.write("refuse.npy", file);
    array_data array;
    require_ok(array_data::open(path.c_str(), array, {}, access));
    REQUIRE(array.bytes() != nullptr);
    return array;
  };
  SECTION("foreign byte order") {
    const array_data array = open_view(npy_with(dict_of(tagged(foreign_char, "f8"), "(2,)"), pattern(16)));
    CHECK_FALSE(array.view<double>());
    CHECK(array.view<double>().count == 0);
    CHECK_FALSE(array.view<std::uint64_t>());
    const array_data ints = open_view(npy_with(dict_of(tagged(foreign_char, "i2"), "(2,)"), pattern(4)));
    CHECK_FALSE(ints.view<std::int16_t>());
  }
  SECTION("wrong kind or signedness") {
    const array_data array = open_view(npy_with(dict_of(tagged(native_char, "i8"), "(2,)"), pattern(16)));
    CHECK(array.view<std::int64_t>());
    CHECK_FALSE(array.view<double>());
    CHECK_FALSE(array.view<std::uint64_t>());
    CHECK_FALSE(array.view<std::complex<float>>());
    const array_data times = open_view(npy_with(dict_of(tagged(native_char, "M8[s]"), "(2,)"), pattern(16)));
    CHECK_FALSE(times.view<std::int64_t>());
    const array_data deltas = open_view(npy_with(dict_of(tagged(native_char, "m8[D]"), "(2,)"), pattern(16)));
    CHECK_FALSE(deltas.view<std::int64_t>());
    const array_data text = open_view(npy_with(dict_of("'|S4'", "(2,)"), pattern(8)));
    CHECK_FALSE(text.view<std::uint32_t>());
    const array_data flags = open_view(npy_with(dict_of("'|b1'", "(2,)"), std::string("\x01\x00", 2)));
    CHECK(flags.view<bool>());
    CHECK_FALSE(flags.view<std::uint8_t>());
  }
  SECTION("wrong size") {
    const array_data array = open_view(npy_with(dict_of(tagged(native_char, "f4"), "(4,)"), pattern(16)));
    CHECK(array.view<float>());
    CHECK_FALSE(array.view<double>());
    const array_data ints = open_view(npy_with(dict_of(tagged(native_char, "i4"), "(4,)"), pattern(16)));
    CHECK_FALSE(ints.view<std::int64_t>());
    CHECK_FALSE(ints.view<std::int16_t>());
    const array_data complex = open_view(npy_with(dict_of(tagged(native_char, "c16"), "(1,)"), pattern(16)));
    CHECK_FALSE(complex.view<std::complex<float>>());
  }
  SECTION("structured, even with a single matching field") {
    const array_data array =
        open_view(npy_with(dict_of("[('x', " + tagged(native_char, "f8") + ")]", "(2,)"), pattern(16)));
    CHECK_FALSE(array.view<double>());
  }
  SECTION("misaligned data: a legacy header puts data_offset at 4 mod 8") {
    // SPEC.md section 1: alignment is reported, never required, so such files
    // are valid. The mapping keeps the file's alignment; the read buffer is
    // aligned for every scalar.
    const std::string file = npy_at(dict_of(tagged(native_char, "f8"), "(2,)"), 68, pattern(16));
    const array_data mapped = open_view(file, data_access::map);
    CHECK(mapped.model().data_offset == 68);
    CHECK(mapped.model().data_alignment == 4);
    CHECK(reinterpret_cast<std::uintptr_t>(mapped.bytes()) % 8 == 4);
    CHECK_FALSE(mapped.view<double>());
    CHECK(as_string(mapped.bytes(), mapped.size()) == pattern(16)); // the bytes are still there
    const array_data read = open_view(file, data_access::read);
    CHECK(reinterpret_cast<std::uintptr_t>(read.bytes()) % alignof(double) == 0);
    CHECK(read.view<double>());
    // 4-byte elements at 4 mod 8 are aligned: only alignof(T) matters.
    const array_data floats = open_view(npy_at(dict_of(tagged(native_char, "f4"), "(2,)"), 68, pattern(8)));
    CHECK(floats.view<float>());
    const array_data odd = open_view(npy_at(dict_of(tagged(native_char, "i2"), "(2,)"), 69, pattern(4)));
    CHECK(reinterpret_cast<std::uintptr_t>(odd.bytes()) % 2 == 1);
    CHECK_FALSE(odd.view<std::int16_t>());
  }
  SECTION("bool data with a byte other than 0 or 1") {
    const array_data array = open_view(npy_with(dict_of("'|b1'", "(3,)"), std::string("\x01\x02\x00", 3)));
    CHECK_FALSE(array.view<bool>());
    CHECK(array.size() == 3);
  }
  SECTION("nothing open") {
    const array_data nothing;
    CHECK_FALSE(nothing.view<double>());
    CHECK_FALSE(nothing.view<std::uint8_t>());
    CHECK(nothing.bytes() == nullptr);
    CHECK(nothing.size() == 0);
  }
}

TEST_CASE("copy_native swaps the scalars of foreign-order arrays", "[data]") {
  scratch_dir dir;
  struct sample {
    std::string descr;
    std::string shape;
    std::string file_data;
    std::string expected;
  };
  const std::complex<double> z(1.25, -3.5);
  const std::vector<sample> samples = {
      {"'>i4'", "(3,)", big(1, 4) + big(static_cast<std::uint32_t>(-2), 4) + big(0x01020304, 4),
       native(1, 4) + native(static_cast<std::uint32_t>(-2), 4) + native(0x01020304, 4)},
      {"'<i4'", "(2,)", little(0xA0B0C0D0, 4) + little(5, 4), native(0xA0B0C0D0, 4) + native(5, 4)},
      {"'>f8'", "(2,)", big(bits(1.5), 8) + big(bits(-0.1), 8), native(bits(1.5), 8) + native(bits(-0.1), 8)},
      {"'>c16'", "()", big(bits(z.real()), 8) + big(bits(z.imag()), 8),
       native(bits(z.real()), 8) + native(bits(z.imag()), 8)},
      {"'>c8'", "(1,)", big(bits(2.0f), 4) + big(bits(-1.0f), 4), native(bits(2.0f), 4) + native(bits(-1.0f), 4)},
      {"'>U3'", "(2,)", big('a', 4) + big('b', 4) + big(0x1F600, 4) + big('x', 4) + big(0, 4) + big(0, 4),
       native('a', 4) + native('b', 4) + native(0x1F600, 4) + native('x', 4) + native(0, 4) + native(0, 4)},
      {"'|S3'", "(2,)", "ab\x01xyz", "ab\x01xyz"},
      {"'|V4'", "(1,)", "\x01\x02\x03\x04", "\x01\x02\x03\x04"},
      {"'>b1'", "(2,)", std::string("\x01\x00", 2), std::string("\x01\x00", 2)},
      {"'>i1'", "(2,)", "\x80\x7f", "\x80\x7f"},
      {"'>u2'", "(2,)", big(0x1234, 2) + big(0xFF00, 2), native(0x1234, 2) + native(0xFF00, 2)},
      {"'>f2'", "(1,)", big(0x3C00, 2), native(0x3C00, 2)},
      {"'>M8[s]'", "(1,)", big(0x0000000012345678, 8), native(0x0000000012345678, 8)},
      {"'>m8[10ms]'", "(1,)", big(static_cast<std::uint64_t>(-9), 8), native(static_cast<std::uint64_t>(-9), 8)},
      // 16-byte floats: all 16 bytes reversed; c32: each 16-byte half reversed
      {"'>f16'", "(1,)", "0123456789abcdef", "fedcba9876543210"},
      {"'>c32'", "(1,)", "0123456789abcdefABCDEFGHIJKLMNOP", "fedcba9876543210PONMLKJIHGFEDCBA"},
  };
  for (const sample& each : samples) {
    // On a big-endian machine the little-endian samples are the foreign ones;
    // the expectations are built with native() either way.
    const std::string path = dir.write("swap.npy", npy_with(dict_of(each.descr, each.shape), each.file_data));
    for (const data_access access : both_modes) {
      INFO(each.descr << ", " << mode_name(access));
      array_data array;
      require_ok(array_data::open(path.c_str(), array, {}, access));
      REQUIRE(array.size() == each.expected.size());
      CHECK(copy_native_of(array) == each.expected);
      CHECK(as_string(array.bytes(), array.size()) == each.file_data); // the source is never modified
    }
    std::string buffer(each.expected.size(), '\0');
    require_ok(npyguard::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::native));
    CHECK(buffer == each.expected);
    require_ok(npyguard::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::as_stored));
    CHECK(buffer == each.file_data);
  }
}

TEST_CASE("copy_native through a big-endian struct with nesting, subarrays and padding", "[data]") {
  scratch_dir dir;
  // itemsize 54: a 0..2, padding 2..4, n 4..14 (x 4..8, y 8..10, z 10..14),
  // s 14..26, c 26..34, t 34..42 (two of: p 2 bytes, q 1, padding 1),
  // l 42..46 (little-endian), w 46..54.
  const std::string descr =
      "[('a', '>i2'), ('', '|V2'), ('n', [('x', '>f4'), ('y', '|S2'), ('z', '>u2', (2,))]), "
      "('s', '>i4', (3,)), ('c', '>c8'), ('t', [('p', '>u2'), ('q', '|u1'), ('', '|V1')], (2,)), "
      "('l', '<u4'), ('w', '>U2')]";
  std::string file_data;
  std::string expected;
  const auto same = [&](const std::string& bytes) {
    file_data += bytes;
    expected += bytes;
  };
  const auto scalar = [&](std::uint64_t value, int width, bool big_endian = true) {
    file_data += big_endian ? big(value, width) : little(value, width);
    expected += native(value, width);
  };
  for (unsigned item = 0; item < 3; ++item) {
    scalar(0x0102 + item, 2);                                           // a
    same(std::string(1, '\xEE') + static_cast<char>(item));             // padding, copied unchanged
    scalar(bits(1.5f + static_cast<float>(item)), 4);                   // n.x
    same("y" + std::string(1, static_cast<char>('0' + item)));          // n.y
    scalar(0xA1B2 + item, 2);                                           // n.z[0]
    scalar(0xC3D4, 2);                                                  // n.z[1]
    scalar(static_cast<std::uint32_t>(-1 - static_cast<int>(item)), 4); // s[0]
    scalar(0x10203040, 4);                                              // s[1]
    scalar(7, 4);                                                       // s[2]
    scalar(bits(2.5f), 4);                                              // c real
    scalar(bits(-3.0f), 4);                                             // c imaginary
    for (unsigned j = 0; j < 2; ++j) {
      scalar(0x1122 + j, 2);                             // t[j].p
      same("\x33");                                      // t[j].q
      same(std::string(1, static_cast<char>(0x40 + j))); // t[j] padding
    }
    scalar(0xDEADBEEF, 4, false); // l, little-endian in the file
    scalar('h', 4);               // w
    scalar('i' + item, 4);
  }
  REQUIRE(file_data.size() == 3 * 54);
  const std::string path = dir.write("struct.npy", npy_with(dict_of(descr, "(3,)"), file_data));
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    array_data array;
    require_ok(array_data::open(path.c_str(), array, {}, access));
    REQUIRE(array.model().descr.itemsize == 54);
    CHECK(copy_native_of(array) == expected);
    CHECK_FALSE(array.view<double>());
  }
  std::string buffer(file_data.size(), '\0');
  require_ok(npyguard::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::native));
  CHECK(buffer == expected);
}

TEST_CASE("copy_native on large subarrays, subarrays of structs and many fields", "[data]") {
  scratch_dir dir;
  SECTION("an odd-sized item with a 100000-element subarray") {
    // itemsize 200001: every other item's scalars sit at odd addresses.
    std::string file_data;
    std::string expected;
    for (unsigned item = 0; item < 3; ++item) {
      for (unsigned i = 0; i < 100000; ++i) {
        file_data += big((i * 31 + item) & 0xFFFF, 2);
        expected += native((i * 31 + item) & 0xFFFF, 2);
      }
      file_data += static_cast<char>(item);
      expected += static_cast<char>(item);
    }
    const std::string path =
        dir.write("subarray.npy", npy_with(dict_of("[('h', '>i2', (100000,)), ('k', '|u1')]", "(3,)"), file_data));
    array_data array;
    require_ok(array_data::open(path.c_str(), array));
    CHECK(copy_native_of(array) == expected);
  }
  SECTION("subarrays of structs, packed and with padding") {
    std::string file_data;
    std::string expected;
    for (unsigned i = 0; i < 2 * 4; ++i) {
      file_data += big(0x01020304u * (i + 1), 4);
      expected += native(0x01020304u * (i + 1), 4);
    }
    const std::string packed =
        dir.write("packed.npy", npy_with(dict_of("[('g', [('e', '>i4')], (4,))]", "(2,)"), file_data));
    array_data array;
    require_ok(array_data::open(packed.c_str(), array));
    CHECK(copy_native_of(array) == expected);

    file_data.clear();
    expected.clear();
    for (unsigned item = 0; item < 2; ++item) {
      for (unsigned j = 0; j < 3; ++j) { // g[j]: e (>u2), pad (1), f (<u4 in a >-order struct), pad (1)
        file_data += big(0xAB00 + j, 2) + "\x5A" + little(0x11223344 + item, 4) + "\x5B";
        expected += native(0xAB00 + j, 2) + "\x5A" + native(0x11223344 + item, 4) + "\x5B";
      }
      file_data += big(item, 8);
      expected += native(item, 8);
    }
    const std::string padded =
        dir.write("padded.npy", npy_with(dict_of("[('g', [('e', '>u2'), ('', '|V1'), ('f', '<u4'), ('', '|V1')], "
                                                 "(3,)), ('h', '>u8')]",
                                                 "(2,)"),
                                         file_data));
    array_data with_padding;
    require_ok(array_data::open(padded.c_str(), with_padding));
    CHECK(copy_native_of(with_padding) == expected);
  }
  SECTION("many fields alternating byte order and width") {
    std::string descr = "[";
    for (int f = 0; f < 300; ++f) {
      if (f != 0) descr += ", ";
      // >i4, <i4, >i4, >i2: same-width swaps separated by an unswapped field
      // must not merge into one run; adjacent ones may.
      const char* type = f % 4 == 1 ? "'<i4'" : f % 4 == 3 ? "'>i2'" : "'>i4'";
      descr += "('f" + std::to_string(f) + "', " + type + ")";
    }
    descr += "]";
    std::string file_data;
    std::string expected;
    for (unsigned item = 0; item < 50; ++item) {
      for (unsigned f = 0; f < 300; ++f) {
        const std::uint64_t value = (item * 1000 + f) * 0x01010101u & 0xFFFFFFFFu;
        const int width = f % 4 == 3 ? 2 : 4;
        file_data += f % 4 == 1 ? little(value, width) : big(value, width);
        expected += native(value, width);
      }
    }
    const std::string path = dir.write("many.npy", npy_with(dict_of(descr, "(50,)"), file_data));
    array_data array;
    require_ok(array_data::open(path.c_str(), array));
    CHECK(copy_native_of(array) == expected);
    // A gap that is not padding: an unswapped |S1 between two >i4.
    const std::string gap = dir.write("gap.npy", npy_with(dict_of("[('a', '>i4'), ('b', '|S1'), ('c', '>i4')]", "(1,)"),
                                                          big(0x01020304, 4) + "s" + big(0x05060708, 4)));
    array_data gapped;
    require_ok(array_data::open(gap.c_str(), gapped));
    CHECK(copy_native_of(gapped) == native(0x01020304, 4) + "s" + native(0x05060708, 4));
  }
}

TEST_CASE("copy_native and read_array refuse a destination that is too small", "[data]") {
  scratch_dir dir;
  const std::string data = big(1, 4) + big(2, 4) + big(3, 4);
  const std::string path = dir.write("small.npy", npy_with(dict_of("'>i4'", "(3,)"), data));
  array_data array;
  require_ok(array_data::open(path.c_str(), array));
  std::string destination(data.size() + 8, '\x5A');
  const std::string untouched = destination;
  require_failure(array.copy_native(&destination[0], data.size() - 1), error_code::buffer_too_small, std::nullopt);
  CHECK(destination == untouched);
  require_failure(array.copy_native(nullptr, data.size()), error_code::buffer_too_small, std::nullopt);
  // Large enough: exactly size() bytes written, nothing past them.
  REQUIRE_FALSE(array.copy_native(&destination[0], destination.size()).has_value());
  CHECK(destination.substr(0, data.size()) == native(1, 4) + native(2, 4) + native(3, 4));
  CHECK(destination.substr(data.size()) == std::string(8, '\x5A'));

  std::string buffer(data.size() + 8, '\x5A');
  require_error(npyguard::read_array(path.c_str(), &buffer[0], data.size() - 1), error_code::buffer_too_small,
                std::nullopt);
  CHECK(buffer == untouched);
  require_ok(npyguard::read_array(path.c_str(), &buffer[0], buffer.size()));
  CHECK(buffer.substr(0, data.size()) == data);
  CHECK(buffer.substr(data.size()) == std::string(8, '\x5A'));
}

TEST_CASE("invalid files: open returns the validation error and leaves out alone", "[data]") {
  scratch_dir dir;
  const std::string good_data = pattern(8);
  const std::string good = dir.write("good.npy", npy_with(dict_of("'<f8'", "(1,)"), good_data));
  struct invalid {
    const char* name;
    std::string file;
    error_code code;
    std::uint64_t offset;
  };
  const std::string dict = dict_of("'<i4'", "(5,)");
  const std::vector<invalid> files = {
      {"bad magic", "\x93NUMPX" + npy_with(dict, pattern(20)).substr(6), error_code::bad_magic, 5},
      {"truncated data", npy_with(dict, pattern(19)), error_code::truncated_data, 128 + 19},
      {"trailing data", npy_with(dict, pattern(21)), error_code::trailing_data, 128 + 20},
      {"syntax error", npy_with("{'descr': '<i4', 'fortran_order': Fals, 'shape': (5,), }", pattern(20)),
       error_code::syntax_error, 10 + 34},
  };
  for (const invalid& each : files) {
    const std::string path = dir.write("invalid.npy", each.file);
    for (const data_access access : both_modes) {
      INFO(each.name << ", " << mode_name(access));
      array_data array;
      require_ok(array_data::open(good.c_str(), array, {}, access));
      const npyguard::result opened = array_data::open(path.c_str(), array, {}, access);
      require_error(opened, each.code, each.offset);
      CHECK(opened == npyguard::validate_file(path.c_str()));
      // `out` is replaced only on success
      CHECK(array.model().descr.kind == npyguard::dtype_kind::floating);
      CHECK(as_string(array.bytes(), array.size()) == good_data);
    }
    std::string buffer(64, '\0');
    const npyguard::result read = npyguard::read_array(path.c_str(), &buffer[0], buffer.size());
    require_error(read, each.code, each.offset);
  }
}

TEST_CASE("only regular files: directories, FIFOs and missing paths are io_error", "[data]") {
  scratch_dir dir;
  const std::string fifo = dir.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string subdirectory = dir.file("sub");
  REQUIRE(::mkdir(subdirectory.c_str(), 0700) == 0);
  // No writer opens the FIFO: a blocking open would hang here.
  for (const std::string& path : {fifo, subdirectory, dir.file("missing.npy")}) {
    INFO(path);
    array_data array;
    require_error(array_data::open(path.c_str(), array), error_code::io_error, std::nullopt);
    CHECK(array.bytes() == nullptr);
    char byte = 0;
    require_error(npyguard::read_array(path.c_str(), &byte, 1), error_code::io_error, std::nullopt);
  }
}

TEST_CASE("object dtypes are refused by the data view, even when allowed", "[data]") {
  scratch_dir dir;
  const std::string file = npy_with(dict_of("'|O'", "(2,)"), "\x80\x02]q\x00(K\x01K\x02e.");
  const std::string path = dir.write("object.npy", file);
  npyguard::options allowed;
  allowed.allow_object = true;
  REQUIRE(npyguard::validate_file(path.c_str(), allowed).ok());
  REQUIRE(npyguard::validate_file(path.c_str(), allowed).value().data_is_pickle);
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    array_data array;
    require_error(array_data::open(path.c_str(), array, allowed, access), error_code::object_dtype, 128);
    CHECK(array.bytes() == nullptr);
    // Without allow_object: validation's own object_dtype, in the header.
    const npyguard::result refused = array_data::open(path.c_str(), array, {}, access);
    CHECK(refused == npyguard::validate_file(path.c_str()));
    require_error(refused, error_code::object_dtype, offset_of(file, "'|O'"));
  }
  char buffer[64];
  require_error(npyguard::read_array(path.c_str(), buffer, sizeof buffer, allowed), error_code::object_dtype, 128);
}

TEST_CASE("arrays of zero bytes: no mapping, a non-null empty view", "[data]") {
  scratch_dir dir;
  const std::string empty = dir.write("empty.npy", npy_with(dict_of(tagged(native_char, "f8"), "(0,)"), ""));
  const std::string void0 = dir.write("void0.npy", npy_with(dict_of("'|V0'", "(3,)"), ""));
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    array_data array;
    require_ok(array_data::open(empty.c_str(), array, {}, access));
    CHECK(array.size() == 0);
    CHECK(array.bytes() != nullptr);
    const auto view = array.view<double>();
    CHECK(static_cast<bool>(view));
    CHECK(view.count == 0);
    CHECK(view.begin() == view.end());
    CHECK_FALSE(array.view<float>()); // the type still has to match
    CHECK_FALSE(array.copy_native(nullptr, 0).has_value());
    CHECK_FALSE(array.verify_unchanged().has_value());

    array_data voids;
    require_ok(array_data::open(void0.c_str(), voids, {}, access));
    CHECK(voids.model().count == 3);
    CHECK(voids.size() == 0);
    CHECK(voids.bytes() != nullptr);
  }
  require_ok(npyguard::read_array(empty.c_str(), nullptr, 0, {}, npyguard::data_order::native));
}

TEST_CASE("a changed file is detected: verify_unchanged after open", "[data]") {
  scratch_dir dir;
  const std::string data = pattern(64);
  const std::string file = npy_with(dict_of("'|u1'", "(64,)"), data);
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    SECTION(std::string("truncated, ") + mode_name(access)) {
      const std::string path = dir.write("shrink.npy", file);
      array_data array;
      require_ok(array_data::open(path.c_str(), array, {}, access));
      REQUIRE_FALSE(array.verify_unchanged().has_value());
      REQUIRE(::truncate(path.c_str(), 128 + 10) == 0);
      // (With map, the lost pages must not be touched now: SIGBUS.)
      require_failure(array.verify_unchanged(), error_code::truncated_data, 128 + 10);
    }
    SECTION(std::string("grown, ") + mode_name(access)) {
      const std::string path = dir.write("grow.npy", file);
      array_data array;
      require_ok(array_data::open(path.c_str(), array, {}, access));
      std::ofstream(path, std::ios::binary | std::ios::app) << "PK";
      require_failure(array.verify_unchanged(), error_code::trailing_data, 128 + 64);
      CHECK(as_string(array.bytes(), array.size()) == data);
    }
    SECTION(std::string("grown with allow_trailing_data, ") + mode_name(access)) {
      const std::string path = dir.write("grow_allowed.npy", file);
      npyguard::options opts;
      opts.allow_trailing_data = true;
      array_data array;
      require_ok(array_data::open(path.c_str(), array, opts, access));
      REQUIRE_FALSE(array.verify_unchanged().has_value());
      std::ofstream(path, std::ios::binary | std::ios::app) << "PK";
      require_failure(array.verify_unchanged(), error_code::io_error, std::nullopt);
    }
    SECTION(std::string("same size, new modification time, ") + mode_name(access)) {
      const std::string path = dir.write("touched.npy", file);
      array_data array;
      require_ok(array_data::open(path.c_str(), array, {}, access));
      const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
      REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
      require_failure(array.verify_unchanged(), error_code::io_error, std::nullopt);
    }
  }
  SECTION("nothing open") {
    const array_data nothing;
    require_failure(nothing.verify_unchanged(), error_code::io_error, std::nullopt);
  }
}

namespace {

// Opens and validates `path` the way array_data::open does, so the test can
// change the file before the data steps run.
struct validated_descriptor {
  int fd = -1;
  npyguard::platform::file_status info;
  npyguard::result checked = npyguard::error{};
  validated_descriptor(const std::string& path, const npyguard::options& opts) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    checked = npyguard::detail::validate_open_file(fd, opts, info);
    require_ok(checked);
  }
  ~validated_descriptor() {
    if (fd >= 0) ::close(fd);
  }
  validated_descriptor(const validated_descriptor&) = delete;
  validated_descriptor& operator=(const validated_descriptor&) = delete;
  int release() { return std::exchange(fd, -1); }
};

} // namespace

TEST_CASE("a file changed between validation and the data is an error, not a view", "[data]") {
  scratch_dir dir;
  const std::string data = pattern(64);
  const std::string file = npy_with(dict_of("'|u1'", "(64,)"), data);
  const npyguard::options opts;
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    // The previous content of `out` survives every failure.
    const std::string keep = dir.write("keep.npy", npy_with(dict_of("'|u1'", "(3,)"), "abc"));
    array_data out;
    require_ok(array_data::open(keep.c_str(), out));

    const std::string path = dir.write("changing.npy", file);
    {
      validated_descriptor opened(path, opts);
      REQUIRE(::truncate(path.c_str(), 128 + 10) == 0);
      // map: mmap past the end of the file succeeds, the fstat after it must
      // refuse; read: the pread comes up short.
      require_error(
          npyguard::detail::attach_validated(opened.release(), opened.checked, opened.info, opts, access, out),
          error_code::truncated_data, 128 + 10);
      CHECK(as_string(out.bytes(), out.size()) == "abc");
    }
    {
      dir.write("changing.npy", file);
      validated_descriptor opened(path, opts);
      std::ofstream(path, std::ios::binary | std::ios::app) << "PK";
      require_error(
          npyguard::detail::attach_validated(opened.release(), opened.checked, opened.info, opts, access, out),
          error_code::trailing_data, 128 + 64);
      CHECK(as_string(out.bytes(), out.size()) == "abc");
    }
    {
      dir.write("changing.npy", file);
      validated_descriptor opened(path, opts);
      const struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};
      REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
      require_error(
          npyguard::detail::attach_validated(opened.release(), opened.checked, opened.info, opts, access, out),
          error_code::io_error, std::nullopt);
      CHECK(as_string(out.bytes(), out.size()) == "abc");
    }
    {
      // Unchanged: the seam itself succeeds, so the failures above are the checks.
      dir.write("changing.npy", file);
      validated_descriptor opened(path, opts);
      require_ok(npyguard::detail::attach_validated(opened.release(), opened.checked, opened.info, opts, access, out));
      CHECK(as_string(out.bytes(), out.size()) == data);
    }
  }
}

TEST_CASE("read_array: a file that shrinks after validation is truncated_data", "[data]") {
  scratch_dir dir;
  const std::string data = pattern(64);
  const std::string file = npy_with(dict_of("'|u1'", "(64,)"), data);
  const std::string path = dir.file("read.npy");
  const npyguard::options opts;
  std::string buffer(64, '\0');
  {
    dir.write("read.npy", file);
    validated_descriptor opened(path, opts);
    REQUIRE(::truncate(path.c_str(), 128 + 40) == 0);
    require_error(npyguard::detail::read_validated(opened.fd, opened.checked, opened.info, opts, &buffer[0],
                                                   buffer.size(), npyguard::data_order::as_stored),
                  error_code::truncated_data, 128 + 40);
  }
  {
    dir.write("read.npy", file);
    validated_descriptor opened(path, opts);
    std::ofstream(path, std::ios::binary | std::ios::app) << "PK";
    require_error(npyguard::detail::read_validated(opened.fd, opened.checked, opened.info, opts, &buffer[0],
                                                   buffer.size(), npyguard::data_order::as_stored),
                  error_code::trailing_data, 128 + 64);
  }
  {
    dir.write("read.npy", file);
    validated_descriptor opened(path, opts);
    require_ok(npyguard::detail::read_validated(opened.fd, opened.checked, opened.info, opts, &buffer[0], buffer.size(),
                                                npyguard::data_order::as_stored));
    CHECK(buffer == data);
  }
}

TEST_CASE("array_data moves its file, mapping and buffer", "[data]") {
  scratch_dir dir;
  const std::string data = pattern(32);
  const std::string path = dir.write("move.npy", npy_with(dict_of("'|u1'", "(32,)"), data));
  for (const data_access access : both_modes) {
    INFO(mode_name(access));
    array_data first;
    require_ok(array_data::open(path.c_str(), first, {}, access));
    const unsigned char* bytes = first.bytes();
    array_data second(std::move(first));
    CHECK(second.bytes() == bytes);
    CHECK(as_string(second.bytes(), second.size()) == data);
    CHECK_FALSE(second.verify_unchanged().has_value());
    CHECK(first.bytes() == nullptr); // NOLINT(bugprone-use-after-move): moved-from is documented empty
    CHECK(first.size() == 0);
    CHECK(first.model().nbytes == 0);
    array_data third;
    require_ok(array_data::open(path.c_str(), third, {}, access));
    third = std::move(second);
    CHECK(third.bytes() == bytes);
    CHECK(as_string(third.bytes(), third.size()) == data);
    CHECK(second.bytes() == nullptr); // NOLINT(bugprone-use-after-move)
  }
}

TEST_CASE("array_data::over views a file held in memory, in place, with the file view's checks", "[data][memory]") {
  // Memory aligned for any scalar, like an upload buffer from malloc.
  const auto in_memory = [](const std::string& file) {
    auto copy = std::make_unique<std::uint64_t[]>(file.size() / 8 + 1);
    std::memcpy(copy.get(), file.data(), file.size());
    return copy;
  };
  std::string values;
  for (const double v : {1.5, -2.0, 1e300}) values += native(bits(v), 8);
  const std::string file = npy_with(dict_of(std::string("'") + native_char + "f8'", "(3,)"), values);
  const auto memory = in_memory(file);
  const auto* bytes = reinterpret_cast<const unsigned char*>(memory.get());

  array_data view;
  require_ok(array_data::over(bytes, file.size(), view));
  CHECK(view.access() == data_access::borrowed);
  CHECK(view.bytes() == bytes + 128); // in place: nothing copied
  CHECK(view.size() == 24);
  const auto doubles = view.view<double>();
  REQUIRE(doubles.count == 3);
  CHECK(doubles.data[0] == 1.5);
  CHECK(doubles.data[2] == 1e300);
  CHECK_FALSE(view.view<float>());
  CHECK_FALSE(view.verify_unchanged().has_value());
  CHECK(copy_native_of(view) == values);

  // Moved: the view goes along, the source holds nothing.
  array_data moved = std::move(view);
  CHECK(moved.bytes() == bytes + 128);
  CHECK(view.bytes() == nullptr);

  // Foreign byte order: no typed view, copy_native swaps.
  std::string foreign_values;
  for (const double v : {1.5, -2.0, 1e300})
    foreign_values += foreign_char == '>' ? big(bits(v), 8) : little(bits(v), 8);
  const std::string foreign = npy_with(dict_of(std::string("'") + foreign_char + "f8'", "(3,)"), foreign_values);
  const auto foreign_memory = in_memory(foreign);
  array_data swapped;
  require_ok(array_data::over(foreign_memory.get(), foreign.size(), swapped));
  CHECK_FALSE(swapped.view<double>());
  CHECK(copy_native_of(swapped) == values);

  // A legacy data offset that leaves the data misaligned: no typed view.
  const std::string odd = npy_at(dict_of(std::string("'") + native_char + "f8'", "(3,)"), 81, values);
  const auto odd_memory = in_memory(odd);
  array_data misaligned;
  require_ok(array_data::over(odd_memory.get(), odd.size(), misaligned));
  CHECK(misaligned.bytes() == reinterpret_cast<const unsigned char*>(odd_memory.get()) + 81);
  CHECK_FALSE(misaligned.view<double>());

  // Trailing bytes allowed by the options are not part of the view.
  npyguard::options relaxed;
  relaxed.allow_trailing_data = true;
  const std::string polyglot = file + "PK\x03\x04";
  const auto polyglot_memory = in_memory(polyglot);
  array_data trimmed;
  require_ok(array_data::over(polyglot_memory.get(), polyglot.size(), trimmed, relaxed));
  CHECK(trimmed.size() == 24);

  // Invalid input: the validation error, and `out` left as it was.
  require_error(array_data::over(polyglot_memory.get(), polyglot.size(), moved), error_code::trailing_data, 152);
  require_error(array_data::over(bytes, file.size() - 1, moved), error_code::truncated_data, file.size() - 1);
  CHECK(moved.bytes() == bytes + 128);
  // Objects: the data is a pickle, never viewed.
  const std::string pickle = npy_with(dict_of("'|O'", "(2,)"), "\x80\x04");
  npyguard::options objects;
  objects.allow_object = true;
  require_error(array_data::over(pickle.data(), pickle.size(), moved, objects), error_code::object_dtype, 128);
  // An empty array: a non-null view of no bytes.
  const std::string empty = npy_with(dict_of("'<i4'", "(0,)"), "");
  array_data nothing;
  require_ok(array_data::over(empty.data(), empty.size(), nothing));
  CHECK(nothing.bytes() != nullptr);
  CHECK(nothing.size() == 0);
}
