// The RawArray data view: ra::array_data (map, read, borrowed), typed views,
// copy_native and ra::read_array, on files built field by field. Expected
// bytes come from explicit encodings, never from the code under test.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "ra_support.hpp"
#include "support.hpp"

using namespace npyguard_test;
using npyguard::data_access;
using npyguard::error_code;
using npyguard::ra::array_data;

namespace {

constexpr bool big_machine =
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    true;
#else
    false;
#endif
// The flags word for elements in this machine's order and in the other one.
constexpr std::uint64_t native_flags = big_machine ? 1 : 0;
constexpr std::uint64_t foreign_flags = big_machine ? 0 : 1;

// Header of `f` (size field = data.size()), then `data`, then `metadata`.
std::string ra_with(ra_fields f, const std::string& data, const std::string& metadata = {}) {
  f.size = data.size();
  return ra_header(f) + data + metadata;
}

// `value` in `width` bytes, in the machine's order or reversed.
std::string encoded(std::uint64_t value, std::size_t width, bool reversed = false) {
  std::string out(width, '\0');
  for (std::size_t i = 0; i < width && i < 8; ++i) out[i] = static_cast<char>((value >> (8 * i)) & 0xFF);
  if (big_machine != reversed) std::reverse(out.begin(), out.end());
  return out;
}
template <typename T>
std::string bytes_of(const std::vector<T>& values) {
  std::string out;
  for (const T value : values) { // one by one: std::vector<bool> has no data()
    char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    out.append(bytes, sizeof(T));
  }
  return out;
}
std::string reversed_each(const std::string& data, std::size_t width) {
  std::string out = data;
  for (std::size_t at = 0; at + width <= out.size(); at += width) {
    std::reverse(out.begin() + static_cast<std::ptrdiff_t>(at), out.begin() + static_cast<std::ptrdiff_t>(at + width));
  }
  return out;
}
std::string as_string(const unsigned char* data, std::uint64_t size) {
  return std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
}

void require_failure(const std::optional<npyguard::error>& failure, error_code code,
                     std::optional<std::uint64_t> offset) {
  REQUIRE(failure.has_value());
  INFO("message: " << failure->message);
  CHECK(npyguard::error_code_name(failure->code) == npyguard::error_code_name(code));
  CHECK(failure->offset == offset);
  CHECK_FALSE(failure->message.empty());
}

const data_access both_modes[] = {data_access::map, data_access::read};

array_data open_ok(const std::string& path, data_access access, const npyguard::options& opts = {}) {
  array_data out;
  require_ok(array_data::open(path.c_str(), out, opts, access));
  return out;
}

template <typename T>
void check_typed_view(const scratch_dir& dir, std::uint64_t eltype, const std::vector<T>& values) {
  ra_fields f;
  f.eltype = eltype;
  f.elbyte = sizeof(T);
  f.dims = {values.size()};
  const std::string file = ra_with(f, bytes_of(values), "metadata after the data");
  const std::string path = dir.write("typed.ra", file);
  for (const data_access access : both_modes) {
    INFO(typeid(T).name() << (access == data_access::map ? " map" : " read"));
    const array_data array = open_ok(path, access);
    const npyguard::typed_view<T> view = array.view<T>();
    REQUIRE(view);
    REQUIRE(view.count == values.size());
    CHECK(std::vector<T>(view.begin(), view.end()) == values);
  }
  array_data borrowed;
  require_ok(array_data::over(file.data(), file.size(), borrowed));
  const npyguard::typed_view<T> view = borrowed.view<T>();
  // The caller's std::string is aligned for every scalar, and the data
  // offset (48 + 8 * ndims) is a multiple of 8.
  REQUIRE(view);
  CHECK(std::vector<T>(view.begin(), view.end()) == values);
}

} // namespace

TEST_CASE("ra data: exactly the data bytes, never the header or the metadata", "[ra][data]") {
  scratch_dir dir;
  ra_fields f;
  f.eltype = 2;
  f.elbyte = 2;
  f.dims = {3, 2};
  std::string data;
  for (int i = 0; i < 12; ++i) data.push_back(static_cast<char>(0xA0 + i));
  const std::string metadata = "{\"note\": \"not data\"}";
  const std::string file = ra_with(f, data, metadata);
  const std::string path = dir.write("x.ra", file);
  for (const data_access access : both_modes) {
    const array_data array = open_ok(path, access);
    CHECK(array.access() == access);
    CHECK(array.size() == 12);
    CHECK(as_string(array.bytes(), array.size()) == data);
    CHECK(array.model().data_offset == 64);
    CHECK(array.model().metadata_length == metadata.size());
    CHECK_FALSE(array.verify_unchanged().has_value());
  }
  array_data borrowed;
  require_ok(array_data::over(file.data(), file.size(), borrowed));
  CHECK(borrowed.access() == data_access::borrowed);
  CHECK(borrowed.bytes() == reinterpret_cast<const unsigned char*>(file.data()) + 64); // in place
  CHECK(borrowed.size() == 12);
  CHECK_FALSE(borrowed.verify_unchanged().has_value());
}

TEST_CASE("ra data: typed views for every supported element type", "[ra][data]") {
  scratch_dir dir;
  check_typed_view<bool>(dir, 5, {true, false, false, true});
  check_typed_view<std::int8_t>(dir, 1, {-128, -1, 0, 127});
  check_typed_view<std::uint8_t>(dir, 2, {0, 1, 255});
  check_typed_view<std::int16_t>(dir, 1, {-32768, -2, 300, 32767});
  check_typed_view<std::uint16_t>(dir, 2, {0, 65535, 258});
  check_typed_view<std::int32_t>(dir, 1, {-2147483647 - 1, -1, 16909060});
  check_typed_view<std::uint32_t>(dir, 2, {4294967295u, 1u});
  check_typed_view<std::int64_t>(dir, 1, {-1, 0x0102030405060708LL, INT64_MIN});
  check_typed_view<std::uint64_t>(dir, 2, {~0ull, 42ull});
  check_typed_view<float>(dir, 3, {1.5f, -0.0f, 3.25e10f});
  check_typed_view<double>(dir, 3, {1.0 / 3.0, -2.5, 1e300});
  check_typed_view<std::complex<float>>(dir, 4, {{1.0f, -2.0f}, {0.5f, 4.0f}});
  check_typed_view<std::complex<double>>(dir, 4, {{1.0, -2.0}, {1e-300, 7.0}});
}

TEST_CASE("ra data: the view is in file order, dims[0] fastest", "[ra][data]") {
  // A 2 x 3 array A[i0][i1] = 10 * i0 + i1 stored column-major: i0 varies fastest.
  ra_fields f;
  f.eltype = 1;
  f.elbyte = 4;
  f.dims = {2, 3};
  std::vector<std::int32_t> values;
  for (std::int32_t i1 = 0; i1 < 3; ++i1) {
    for (std::int32_t i0 = 0; i0 < 2; ++i0) values.push_back(10 * i0 + i1);
  }
  const std::string file = ra_with(f, bytes_of(values));
  array_data array;
  require_ok(array_data::over(file.data(), file.size(), array));
  const auto view = array.view<std::int32_t>();
  REQUIRE(view.count == 6);
  for (std::uint64_t i0 = 0; i0 < 2; ++i0) {
    for (std::uint64_t i1 = 0; i1 < 3; ++i1) {
      CHECK(view.data[i0 + array.model().dims[0] * i1] == static_cast<std::int32_t>(10 * i0 + i1));
    }
  }
}

TEST_CASE("ra data: typed views are refused unless type, size, order and alignment match", "[ra][data]") {
  std::deque<std::string> files; // a borrowed view needs its memory to outlive it
  const auto view_over = [&files](const std::string& file) {
    files.push_back(file);
    array_data array;
    require_ok(array_data::over(files.back().data(), files.back().size(), array));
    return array;
  };
  ra_fields f;
  f.dims = {2};

  SECTION("the other byte order") {
    f.flags = foreign_flags;
    f.eltype = 1;
    f.elbyte = 4;
    const array_data array = view_over(ra_with(f, std::string(8, '\1')));
    CHECK_FALSE(array.view<std::int32_t>());
    f.elbyte = 1; // one byte has no order
    const array_data bytes = view_over(ra_with(f, std::string("\x05\xFB", 2)));
    const auto view = bytes.view<std::int8_t>();
    REQUIRE(view);
    CHECK(view.data[1] == -5);
  }
  SECTION("wrong type or signedness") {
    f.eltype = 3;
    f.elbyte = 4;
    const array_data floats = view_over(ra_with(f, std::string(8, '\0')));
    CHECK(floats.view<float>());
    CHECK_FALSE(floats.view<std::int32_t>());
    CHECK_FALSE(floats.view<std::uint32_t>());
    f.eltype = 1;
    const array_data ints = view_over(ra_with(f, std::string(8, '\0')));
    CHECK(ints.view<std::int32_t>());
    CHECK_FALSE(ints.view<std::uint32_t>());
    CHECK_FALSE(ints.view<float>());
  }
  SECTION("wrong size") {
    f.eltype = 3;
    f.elbyte = 8;
    const array_data doubles = view_over(ra_with(f, std::string(16, '\0')));
    CHECK_FALSE(doubles.view<float>());
    CHECK_FALSE(doubles.view<std::complex<float>>());
  }
  SECTION("user types, bfloat16, float16 and 16-byte integers have no view") {
    f.eltype = 0;
    f.elbyte = 8;
    CHECK_FALSE(view_over(ra_with(f, std::string(16, '\0'))).view<std::uint64_t>());
    f.eltype = 5;
    f.elbyte = 2; // bfloat16
    const array_data bf16 = view_over(ra_with(f, std::string(4, '\0')));
    CHECK_FALSE(bf16.view<std::uint16_t>());
    CHECK_FALSE(bf16.view<std::int16_t>());
    f.eltype = 3; // float16
    CHECK_FALSE(view_over(ra_with(f, std::string(4, '\0'))).view<std::uint16_t>());
    f.eltype = 1;
    f.elbyte = 16;
    const array_data wide = view_over(ra_with(f, std::string(32, '\0')));
    CHECK_FALSE(wide.view<std::int64_t>());
  }
  SECTION("bool needs type 5 of one byte, each 0 or 1") {
    f.eltype = 2;
    f.elbyte = 1;
    CHECK_FALSE(view_over(ra_with(f, std::string("\0\1", 2))).view<bool>()); // uint8 is not bool
    f.eltype = 5;
    CHECK(view_over(ra_with(f, std::string("\0\1", 2))).view<bool>());
    const array_data two = view_over(ra_with(f, std::string("\1\2", 2)));
    CHECK_FALSE(two.view<bool>());
    CHECK(two.view<std::uint8_t>().data == nullptr); // and no integer view of type 5 either
  }
  SECTION("misaligned: the caller's memory at an odd address") {
    f.eltype = 3;
    f.elbyte = 8;
    const std::string file = ra_with(f, std::string(16, '\0'));
    std::string shifted = " " + file;
    array_data array;
    require_ok(array_data::over(shifted.data() + 1, file.size(), array));
    CHECK(array.bytes() != nullptr);
    CHECK_FALSE(array.view<double>());
  }
  SECTION("nothing open") {
    const array_data nothing;
    CHECK(nothing.bytes() == nullptr);
    CHECK(nothing.size() == 0);
    CHECK_FALSE(nothing.view<float>());
    CHECK_FALSE(nothing.copy_native(nullptr, 0).has_value());
    require_failure(nothing.verify_unchanged(), error_code::io_error, std::nullopt);
  }
}

TEST_CASE("ra data: copy_native and read_array put each element in the machine's order", "[ra][data]") {
  scratch_dir dir;
  struct row {
    const char* name;
    std::uint64_t eltype;
    std::uint64_t elbyte;
    std::size_t width; // of each reversed unit
  };
  const row rows[] = {
      {"int16", 1, 2, 2},     {"uint32", 2, 4, 4},    {"int64", 1, 8, 8},       {"int128", 1, 16, 16},
      {"float16", 3, 2, 2},   {"float32", 3, 4, 4},   {"float64", 3, 8, 8},     {"float128", 3, 16, 16},
      {"complex32", 4, 4, 2}, {"complex64", 4, 8, 4}, {"complex128", 4, 16, 8}, {"complex256", 4, 32, 16},
      {"bfloat16", 5, 2, 2},  {"bool", 5, 1, 1},      {"uint8", 2, 1, 1},
  };
  for (const row& r : rows) {
    INFO(r.name);
    ra_fields f;
    f.eltype = r.eltype;
    f.elbyte = r.elbyte;
    f.dims = {3};
    std::string natural; // the elements in the machine's order
    for (std::size_t i = 0; i < 3 * r.elbyte; ++i)
      natural.push_back(static_cast<char>(r.eltype == 5 && r.elbyte == 1 ? i % 2 : i * 5 + 1));
    const std::string stored = reversed_each(natural, r.width);
    f.flags = foreign_flags;
    const std::string path = dir.write("foreign.ra", ra_with(f, stored, "meta"));
    for (const data_access access : both_modes) {
      const array_data array = open_ok(path, access);
      CHECK(as_string(array.bytes(), array.size()) == stored);
      std::string out(natural.size(), '\x77');
      CHECK_FALSE(array.copy_native(&out[0], out.size()).has_value());
      CHECK(out == natural);
    }
    std::string buffer(natural.size(), '\0');
    require_ok(npyguard::ra::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::native));
    CHECK(buffer == natural);
    require_ok(npyguard::ra::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::as_stored));
    CHECK(buffer == stored);
    // In the machine's order nothing moves.
    f.flags = native_flags;
    const std::string same = dir.write("native.ra", ra_with(f, natural));
    const array_data array = open_ok(same, data_access::read);
    std::string out(natural.size(), '\0');
    CHECK_FALSE(array.copy_native(&out[0], out.size()).has_value());
    CHECK(out == natural);
  }
}

TEST_CASE("ra data: a user type in the other byte order cannot be put in the machine's order", "[ra][data]") {
  scratch_dir dir;
  ra_fields f;
  f.eltype = 0;
  f.elbyte = 12;
  f.dims = {2};
  const std::string data = "abcdefghijklmnopqrstuvwx";
  f.flags = foreign_flags;
  const std::string path = dir.write("user.ra", ra_with(f, data));
  const array_data array = open_ok(path, data_access::map);
  CHECK(as_string(array.bytes(), array.size()) == data); // the bytes themselves stay available
  std::string out(data.size(), '\x77');
  require_failure(array.copy_native(&out[0], out.size()), error_code::not_convertible, 8);
  CHECK(out == std::string(data.size(), '\x77')); // nothing written
  std::string buffer(data.size(), '\x77');
  const auto refused =
      npyguard::ra::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::native);
  require_error(refused, error_code::not_convertible, 8);
  CHECK(buffer == std::string(data.size(), '\x77')); // refused before any data byte was read
  require_ok(npyguard::ra::read_array(path.c_str(), &buffer[0], buffer.size(), {}, npyguard::data_order::as_stored));
  CHECK(buffer == data);
  // Single bytes, or the machine's own order: copied as they are.
  f.flags = native_flags;
  const array_data same = open_ok(dir.write("user-native.ra", ra_with(f, data)), data_access::read);
  CHECK_FALSE(same.copy_native(&out[0], out.size()).has_value());
  CHECK(out == data);
  f.flags = foreign_flags;
  f.elbyte = 1;
  f.dims = {3};
  const array_data bytes = open_ok(dir.write("user-bytes.ra", ra_with(f, "xyz")), data_access::read);
  std::string three(3, '\0');
  CHECK_FALSE(bytes.copy_native(&three[0], three.size()).has_value());
  CHECK(three == "xyz");
}

TEST_CASE("ra data: copy_native and read_array refuse a destination that is too small", "[ra][data]") {
  scratch_dir dir;
  ra_fields f;
  f.eltype = 3;
  f.elbyte = 4;
  f.dims = {4};
  const std::string path = dir.write("x.ra", ra_with(f, std::string(16, '\x11')));
  const array_data array = open_ok(path, data_access::map);
  std::string out(15, '\x77');
  require_failure(array.copy_native(&out[0], out.size()), error_code::buffer_too_small, std::nullopt);
  CHECK(out == std::string(15, '\x77'));
  require_failure(array.copy_native(nullptr, 16), error_code::buffer_too_small, std::nullopt);
  require_error(npyguard::ra::read_array(path.c_str(), &out[0], out.size()), error_code::buffer_too_small,
                std::nullopt);
  CHECK(out == std::string(15, '\x77'));
}

TEST_CASE("ra data: invalid files give the validation error and leave out alone", "[ra][data]") {
  scratch_dir dir;
  ra_fields good;
  good.dims = {1};
  const std::string good_path = dir.write("good.ra", ra_file(good));
  ra_fields bad;
  bad.eltype = 3;
  bad.elbyte = 3;
  const std::string bad_file = ra_file(bad);
  const std::string bad_path = dir.write("bad.ra", bad_file);
  for (const data_access access : both_modes) {
    array_data out = open_ok(good_path, access);
    const unsigned char* before = out.bytes();
    require_error(array_data::open(bad_path.c_str(), out, {}, access), error_code::bad_element_size, 24);
    CHECK(out.bytes() == before);
    CHECK(out.model().dims == std::vector<std::uint64_t>{1});
  }
  array_data out;
  require_error(array_data::over(bad_file.data(), bad_file.size(), out), error_code::bad_element_size, 24);
  CHECK(out.bytes() == nullptr);
  std::string buffer(64, '\0');
  require_error(npyguard::ra::read_array(bad_path.c_str(), &buffer[0], buffer.size()), error_code::bad_element_size,
                24);
  // The options reach the validation: metadata refused where asked.
  npyguard::options strict;
  strict.ra_reject_metadata = true;
  const std::string with_metadata = dir.write("meta.ra", ra_file(good, "m"));
  require_error(array_data::open(with_metadata.c_str(), out, strict), error_code::trailing_data, 64);
}

TEST_CASE("ra data: only regular files; directories, FIFOs and missing paths are io_error", "[ra][data]") {
  scratch_dir dir;
  const std::string fifo = dir.file("pipe.ra");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  for (const std::string& path : {dir.path(), fifo, dir.file("missing.ra")}) {
    INFO(path);
    array_data out;
    require_error(array_data::open(path.c_str(), out), error_code::io_error, std::nullopt);
    std::string buffer(8, '\0');
    require_error(npyguard::ra::read_array(path.c_str(), &buffer[0], buffer.size()), error_code::io_error,
                  std::nullopt);
  }
}

TEST_CASE("ra data: zero elements give a non-null empty view", "[ra][data]") {
  scratch_dir dir;
  ra_fields f;
  f.eltype = 3;
  f.elbyte = 4;
  f.dims = {3, 0};
  const std::string path = dir.write("empty.ra", ra_with(f, "", "meta"));
  for (const data_access access : both_modes) {
    const array_data array = open_ok(path, access);
    CHECK(array.size() == 0);
    REQUIRE(array.bytes() != nullptr);
    const auto view = array.view<float>();
    CHECK(view);
    CHECK(view.count == 0);
    CHECK_FALSE(array.copy_native(nullptr, 0).has_value());
  }
  require_ok(npyguard::ra::read_array(path.c_str(), nullptr, 0, {}, npyguard::data_order::native));
}

TEST_CASE("ra data: a file changed after open is detected by verify_unchanged", "[ra][data]") {
  scratch_dir dir;
  ra_fields f;
  f.eltype = 2;
  f.elbyte = 1;
  f.dims = {8};
  const std::string metadata = "0123456789";
  const std::string file = ra_with(f, "ABCDEFGH", metadata); // data at [56, 64), metadata after
  for (const data_access access : both_modes) {
    const std::string mode = access == data_access::map ? ", map" : ", read";
    const std::string path = dir.write("changing.ra", file);
    SECTION("cut into the data" + mode) {
      const array_data array = open_ok(path, access);
      REQUIRE(::truncate(path.c_str(), 60) == 0);
      require_failure(array.verify_unchanged(), error_code::truncated_data, 60);
    }
    SECTION("metadata cut: still a valid file, but not the one validated" + mode) {
      const array_data array = open_ok(path, access);
      REQUIRE(::truncate(path.c_str(), 64) == 0);
      require_failure(array.verify_unchanged(), error_code::io_error, std::nullopt);
    }
    SECTION("grown while metadata is refused" + mode) {
      npyguard::options strict;
      strict.ra_reject_metadata = true;
      const std::string bare = dir.write("bare.ra", ra_with(f, "ABCDEFGH"));
      const array_data array = open_ok(bare, access, strict);
      REQUIRE(::truncate(bare.c_str(), 70) == 0);
      require_failure(array.verify_unchanged(), error_code::trailing_data, 64);
    }
    SECTION("same size, new modification time" + mode) {
      const array_data array = open_ok(path, access);
      const struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 678}};
      REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
      require_failure(array.verify_unchanged(), error_code::io_error, std::nullopt);
    }
  }
}

TEST_CASE("ra data: array_data moves its file, mapping and model", "[ra][data]") {
  scratch_dir dir;
  ra_fields f;
  f.eltype = 1;
  f.elbyte = 8;
  f.dims = {2};
  const std::string path = dir.write("x.ra", ra_with(f, encoded(7, 8) + encoded(9, 8)));
  for (const data_access access : both_modes) {
    array_data first = open_ok(path, access);
    const unsigned char* bytes = first.bytes();
    array_data second(std::move(first));
    CHECK(second.bytes() == bytes);
    const auto moved = second.view<std::int64_t>();
    REQUIRE(moved.count == 2);
    CHECK(moved.data[1] == 9);
    CHECK(first.bytes() == nullptr); // NOLINT(bugprone-use-after-move): moved-from is documented empty
    CHECK(first.model().dims.empty());
    array_data third = open_ok(path, access);
    third = std::move(second);
    CHECK(third.bytes() == bytes);
    const auto assigned = third.view<std::int64_t>();
    REQUIRE(assigned.count == 2);
    CHECK(assigned.data[0] == 7);
    CHECK_FALSE(third.verify_unchanged().has_value());
    CHECK(second.size() == 0); // NOLINT(bugprone-use-after-move)
  }
}
