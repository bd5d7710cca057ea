// The writer: encode_header against numpy 1.24's layout rules, the
// canonical profile's offsets, and the output discipline of write_array and
// canonicalize_file (no partial file, never over the input). Byte identity
// with numpy over thousands of files is tests/canon/run.py.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "npyguard/npyguard.hpp"
#include "support.hpp"

using npyguard::dtype;
using npyguard::dtype_kind;
using npyguard::error_code;
using npyguard_test::check_bytes;
using npyguard_test::npy_file;
using npyguard_test::raw_file;
using npyguard_test::scratch_dir;
using npyguard_test::write_file;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in.good());
  return std::string(std::istreambuf_iterator<char>(in), {});
}

dtype scalar(dtype_kind kind, npyguard::byte_order order, std::uint64_t itemsize) {
  dtype type;
  type.kind = kind;
  type.order = order;
  type.itemsize = itemsize;
  return type;
}

dtype little_f8() { return scalar(dtype_kind::floating, npyguard::byte_order::little, 8); }
dtype little_i4() { return scalar(dtype_kind::signed_integer, npyguard::byte_order::little, 4); }

dtype one_field(const std::string& name, const dtype& element) {
  dtype type;
  type.kind = dtype_kind::structured;
  type.itemsize = element.itemsize;
  npyguard::field member;
  member.name = name;
  member.type = element;
  member.itemsize = element.itemsize;
  type.fields.push_back(member);
  return type;
}

std::string encoded(const dtype& type, const std::vector<std::uint64_t>& shape, bool fortran = false) {
  std::string out;
  const npyguard::result written = npyguard::encode_header(type, shape, fortran, out);
  INFO(npyguard_test::describe_failure(written));
  REQUIRE(written.ok());
  return out;
}

npyguard::options canonical() {
  npyguard::options opts;
  opts.canonical = true;
  return opts;
}

void require_not_canonical(const std::string& bytes, std::uint64_t offset) {
  npyguard_test::require_error(check_bytes(bytes, canonical()), error_code::not_canonical, offset);
  CHECK(check_bytes(bytes).ok()); // valid by every other rule
}

// Runs `body` in a child process (for rlimits and credentials); true when it
// exited with status 0.
template <typename Body>
bool in_child(Body&& body) {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) _exit(body() ? 0 : 1);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} // namespace

TEST_CASE("encode_header writes numpy's bytes for a plain array", "[write]") {
  // np.save(np.zeros(3)): the dict, 21 - len('3') growth spaces, then
  // padding so that 10 + HEADER_LEN is a multiple of 64, and '\n'.
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  std::string text = dict + std::string(20, ' ');
  text += std::string(128 - 10 - text.size() - 1, ' ') + "\n";
  const std::string expected = npyguard_test::preamble(1, text.size()) + text;
  CHECK(encoded(little_f8(), {3}) == expected);

  npyguard::header model = check_bytes(expected + std::string(24, '\0'), canonical()).value();
  CHECK(model.header_length == 118);
  std::string again;
  REQUIRE(npyguard::encode_header(model, again).ok());
  CHECK(again == expected);
}

TEST_CASE("encode_header: growth spaces follow the first axis, or the last in Fortran order", "[write]") {
  // 1 digit -> 20 spaces; 5 digits -> 16; scalars get none.
  const std::string c_order = encoded(little_f8(), {12345, 1});
  CHECK(c_order.find("'shape': (12345, 1), }" + std::string(16, ' ')) != std::string::npos);
  const std::string fortran = encoded(little_f8(), {2, 12345}, true);
  CHECK(fortran.find("'fortran_order': True, 'shape': (2, 12345), }" + std::string(16, ' ')) != std::string::npos);
  const std::string scalar_array = encoded(little_f8(), {});
  CHECK(scalar_array.find("'shape': (), }") != std::string::npos);
  CHECK(scalar_array.size() % 64 == 0);
}

TEST_CASE("encode_header pads by 64 when the header is already aligned, as numpy does", "[write]") {
  // numpy's padlen is 64 - (10 + len + 1) % 64: never 0. Find a field name
  // that makes 10 + len(dict) + 1 a multiple of 64.
  for (std::size_t n = 1; n <= 64; ++n) {
    const std::string name(n, 'a');
    const std::string dict = "{'descr': [('" + name + "', '<i4')], 'fortran_order': False, 'shape': (), }";
    if ((10 + dict.size() + 1) % 64 != 0) continue;
    const std::string bytes = encoded(one_field(name, little_i4()), {});
    CHECK(bytes.size() == 10 + dict.size() + 1 + 64);
    CHECK(bytes.substr(10, dict.size()) == dict);
    // The same dict with no padding is valid but not canonical: HEADER_LEN differs.
    require_not_canonical(raw_file(dict + "\n", 1, 4), 8);
    return;
  }
  FAIL("no name length aligns the header");
}

TEST_CASE("encode_header chooses the smallest version, as np.save does", "[write]") {
  SECTION("latin-1 names stay in 1.0, written as latin-1 bytes") {
    const std::string bytes = encoded(one_field("caf\xC3\xA9", little_i4()), {2});
    CHECK(bytes[6] == 1);
    CHECK(bytes.find("'caf\xE9'") != std::string::npos);
    CHECK(check_bytes(bytes + std::string(8, '\0'), canonical()).ok());
  }
  SECTION("a name beyond latin-1 needs 3.0 and UTF-8") {
    const std::string bytes = encoded(one_field("\xE4\xB8\xAD", little_i4()), {2});
    CHECK(bytes[6] == 3);
    CHECK(bytes.find("'\xE4\xB8\xAD'") != std::string::npos);
    CHECK(check_bytes(bytes + std::string(8, '\0'), canonical()).ok());
  }
  SECTION("as on Python 3.12: U+1FAE8 (Unicode 15.0) written raw in 3.0, unassigned U+1FAE9 escaped in 1.0") {
    const std::string shaking = encoded(one_field("\xF0\x9F\xAB\xA8", little_i4()), {2});
    CHECK(shaking[6] == 3);
    CHECK(shaking.find("'\xF0\x9F\xAB\xA8'") != std::string::npos);
    const std::string unassigned = encoded(one_field("\xF0\x9F\xAB\xA9", little_i4()), {2});
    CHECK(unassigned[6] == 1);
    CHECK(unassigned.find("'\\U0001fae9'") != std::string::npos);
    // np.save of numpy 1.24 on Python 3.11 (Unicode 14) escapes U+1FAE8 in
    // 1.0; these are its bytes. Valid, but not Python 3.12's header.
    std::string text =
        "{'descr': [('\\U0001fae8', '<i4')], 'fortran_order': False, 'shape': (2,), }" + std::string(20, ' ');
    text += std::string(64 - (10 + text.size() + 1) % 64, ' ') + "\n";
    require_not_canonical(npyguard_test::preamble(1, text.size()) + text + std::string(8, '\0'), 6);
  }
  SECTION("a header above 65535 bytes needs 2.0") {
    dtype wide;
    wide.kind = dtype_kind::structured;
    for (int i = 0; i < 5000; ++i) {
      npyguard::field member;
      member.name = "f" + std::to_string(i);
      member.type = little_i4();
      member.itemsize = 4;
      member.offset = wide.itemsize;
      wide.itemsize += 4;
      wide.fields.push_back(member);
    }
    const std::string bytes = encoded(wide, {1});
    CHECK(bytes[6] == 2);
    CHECK(bytes.size() > 65535);
    CHECK(bytes.size() % 64 == 0);
    npyguard::options opts = canonical();
    opts.limits.max_header_bytes = 1 << 20;
    CHECK(check_bytes(bytes + std::string(wide.itemsize, '\0'), opts).ok());
  }
}

TEST_CASE("encode_header writes fortran_order True only for arrays that are not also C-contiguous", "[write]") {
  const auto written = [](std::vector<std::uint64_t> shape) {
    std::string out;
    const npyguard::result model = npyguard::encode_header(little_f8(), shape, true, out);
    REQUIRE(model.ok());
    return model.value().fortran_order;
  };
  CHECK(written({2, 3}));
  CHECK(written({2, 1, 2}));
  CHECK_FALSE(written({3}));
  CHECK_FALSE(written({1, 3}));
  CHECK_FALSE(written({3, 1}));
  CHECK_FALSE(written({1, 1, 5, 1}));
  CHECK_FALSE(written({0, 3}));
  CHECK_FALSE(written({3, 0, 2}));
  CHECK_FALSE(written({}));
  // itemsize 0: numpy reads it with all strides 0, C- and F-contiguous.
  std::string out;
  const npyguard::result empty_items =
      npyguard::encode_header(scalar(dtype_kind::bytes, npyguard::byte_order::not_applicable, 0), {2, 2}, true, out);
  REQUIRE(empty_items.ok());
  CHECK_FALSE(empty_items.value().fortran_order);
}

TEST_CASE("encode_header refuses what its own header would not give back", "[write]") {
  std::string out = "untouched";
  const auto refused = [&](const dtype& type, std::vector<std::uint64_t> shape, error_code code) {
    const npyguard::result written = npyguard::encode_header(type, shape, false, out);
    INFO(npyguard_test::describe_failure(written));
    REQUIRE_FALSE(written.ok());
    CHECK(written.failure().code == code);
    CHECK_FALSE(written.failure().offset.has_value());
    CHECK(out == "untouched");
  };
  refused(scalar(dtype_kind::signed_integer, npyguard::byte_order::little, 3), {1}, error_code::bad_descr);
  refused(scalar(dtype_kind::signed_integer, npyguard::byte_order::little, 1), {1}, error_code::bad_descr);
  refused(scalar(dtype_kind::floating, npyguard::byte_order::not_applicable, 8), {1}, error_code::bad_descr);
  dtype overlapping = one_field("a", little_f8());
  npyguard::field second = overlapping.fields[0];
  second.name = "b";
  second.offset = 4;
  overlapping.fields.push_back(second);
  overlapping.itemsize = 12;
  refused(overlapping, {1}, error_code::bad_descr);
  dtype wrong_field_size = one_field("a", little_f8());
  wrong_field_size.fields[0].itemsize = 4;
  refused(wrong_field_size, {1}, error_code::bad_descr);
  refused(little_f8(), {1ull << 62, 4}, error_code::size_overflow);
  refused(one_field("", little_f8()), {1}, error_code::empty_field_name);
}

TEST_CASE("the canonical profile reports the first byte that differs from np.save's", "[write][errors]") {
  const std::string saved = encoded(little_f8(), {3}) + std::string(24, '\0');
  CHECK(check_bytes(saved, canonical()).ok());

  SECTION("the version byte: 2.0 where 1.0 holds it") {
    require_not_canonical(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 2, 24), 6);
  }
  SECTION("keys out of order") {
    require_not_canonical(npy_file("{'shape': (3,), 'fortran_order': False, 'descr': '<f8', }", 1, 24), 12);
  }
  SECTION("double quotes") {
    require_not_canonical(npy_file("{\"descr\": '<f8', 'fortran_order': False, 'shape': (3,), }", 1, 24), 11);
  }
  SECTION("a Python 2 long") {
    const std::string bytes = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3L,), }", 1, 24);
    require_not_canonical(bytes, npyguard_test::offset_of(bytes, "L,)"));
  }
  SECTION("fortran_order True for a one-dimensional array") {
    const std::string bytes = npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }", 1, 24);
    require_not_canonical(bytes, npyguard_test::offset_of(bytes, "True"));
  }
  SECTION("padding to 16 (numpy before 1.9 and other writers)") {
    std::string text = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
    text.append(16 - (10 + text.size() + 1) % 16, ' ');
    require_not_canonical(raw_file(text + "\n", 1, 24), 8);
  }
  SECTION("no growth spaces where they change HEADER_LEN") {
    // 'shape': (3,) with a descr whose dict ends 20 bytes before a multiple of 64.
    std::string bytes;
    for (std::size_t n = 1; n <= 64 && bytes.empty(); ++n) {
      const std::string dict =
          "{'descr': [('" + std::string(n, 'a') + "', '<i4')], 'fortran_order': False, 'shape': (3,), }";
      if ((10 + dict.size() + 1) % 64 == 44) bytes = npy_file(dict, 1, 12);
    }
    REQUIRE_FALSE(bytes.empty());
    require_not_canonical(bytes, 8);
  }
  SECTION("a non-canonical header is reported before the data-size verdict") {
    const std::string bytes = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,) }", 1, 23);
    npyguard_test::require_error(check_bytes(bytes, canonical()), error_code::not_canonical,
                                 npyguard_test::offset_of(bytes, ") }", 1));
    npyguard_test::require_error(check_bytes(bytes), error_code::truncated_data, bytes.size());
  }
  SECTION("other errors come first") {
    npyguard_test::require_error(
        check_bytes(npy_file("{'descr': '<f9', 'fortran_order': False, 'shape': (3,) }", 1, 24), canonical()),
        error_code::bad_descr, 20);
  }
  SECTION("every entry point agrees") {
    const std::string bytes = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 2, 24);
    const npyguard::result in_memory = check_bytes(bytes, canonical());
    const npyguard::result text_only =
        npyguard::validate_header_text(bytes.data() + 12, bytes.size() - 12 - 24, 2, canonical());
    CHECK(text_only == in_memory);
    npyguard_test::chunked_source stream(bytes, 7);
    CHECK(npyguard::validate_stream(stream, canonical()) == in_memory);
  }
}

TEST_CASE("write_array writes a canonical file or nothing", "[write]") {
  scratch_dir dir;
  const std::string path = dir.file("out.npy");
  std::vector<std::int32_t> values = {1, -2, 3, -4, 5, -6};

  const npyguard::result written =
      npyguard::write_array(path.c_str(), little_i4(), {2, 3}, true, values.data(), values.size() * 4);
  REQUIRE(written.ok());
  CHECK(written.value().fortran_order);
  const std::string bytes = read_file(path);
  REQUIRE(bytes.size() == written.value().data_offset + 24);
  CHECK(bytes.compare(written.value().data_offset, 24, reinterpret_cast<const char*>(values.data()), 24) == 0);
  CHECK(npyguard::validate_file(path.c_str(), canonical()).ok());

  SECTION("a data size other than nbytes writes nothing") {
    npyguard_test::require_error(
        npyguard::write_array(dir.file("short.npy").c_str(), little_i4(), {2, 3}, false, values.data(), 20),
        error_code::truncated_data, std::nullopt);
    npyguard_test::require_error(
        npyguard::write_array(dir.file("long.npy").c_str(), little_i4(), {2, 2}, false, values.data(), 20),
        error_code::trailing_data, std::nullopt);
    CHECK(dir.entries() == std::vector<std::string>{"out.npy"});
  }
  SECTION("an existing file is replaced whole") {
    std::vector<std::int32_t> others = {7, 8};
    REQUIRE(npyguard::write_array(path.c_str(), little_i4(), {2}, false, others.data(), 8).ok());
    CHECK(npyguard::validate_file(path.c_str(), canonical()).value().shape == std::vector<std::uint64_t>{2});
    CHECK(dir.entries() == std::vector<std::string>{"out.npy"});
  }
  SECTION("object arrays are not written") {
    const dtype object = scalar(dtype_kind::object, npyguard::byte_order::not_applicable, 8);
    npyguard_test::require_error(npyguard::write_array(dir.file("o.npy").c_str(), object, {1}, false, values.data(), 8),
                                 error_code::object_dtype, std::nullopt);
  }
  SECTION("a missing directory is an I/O error") {
    npyguard_test::require_error(
        npyguard::write_array(dir.file("no/such/dir.npy").c_str(), little_i4(), {1}, false, values.data(), 4),
        error_code::io_error, std::nullopt);
  }
}

TEST_CASE("canonicalize_file copies the data under the canonical header", "[write][canon]") {
  scratch_dir dir;
  const std::string input = dir.file("in.npy");
  const std::string output = dir.file("out.npy");
  std::string data;
  for (int i = 0; i < 24; ++i) data.push_back(static_cast<char>(i * 7 + 1));
  const std::string legacy_dict = "{\"shape\": (3L,), \"descr\": \"<f8\", \"fortran_order\": False}";

  SECTION("legacy header, same data") {
    write_file(input, npy_file(legacy_dict, 2, 0) + data);
    const npyguard::result checked = npyguard::canonicalize_file(input.c_str(), output.c_str());
    REQUIRE(checked.ok());
    CHECK(checked.value().major_version == 2); // the input's model
    CHECK(read_file(output) == encoded(little_f8(), {3}) + data);
  }
  SECTION("trailing bytes are dropped, and only accepted when allowed") {
    write_file(input, npy_file(legacy_dict, 1, 0) + data + "PK\x03\x04");
    npyguard_test::require_error(npyguard::canonicalize_file(input.c_str(), output.c_str()), error_code::trailing_data,
                                 read_file(input).size() - 4);
    CHECK(dir.entries() == std::vector<std::string>{"in.npy"});
    npyguard::options opts;
    opts.allow_trailing_data = true;
    REQUIRE(npyguard::canonicalize_file(input.c_str(), output.c_str(), opts).ok());
    CHECK(read_file(output) == encoded(little_f8(), {3}) + data);
  }
  SECTION("a pickle is copied as it is") {
    write_file(input, npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 1, 0) + "pickle bytes");
    npyguard_test::require_error(npyguard::canonicalize_file(input.c_str(), output.c_str()), error_code::object_dtype,
                                 20);
    npyguard::options opts;
    opts.allow_object = true;
    REQUIRE(npyguard::canonicalize_file(input.c_str(), output.c_str(), opts).ok());
    CHECK(read_file(output) ==
          encoded(scalar(dtype_kind::object, npyguard::byte_order::not_applicable, 8), {2}) + "pickle bytes");
  }
  SECTION("an invalid input leaves no output, and an existing output untouched") {
    write_file(input, npy_file(legacy_dict, 1, 0) + data.substr(0, 23));
    write_file(output, "precious");
    npyguard_test::require_error(npyguard::canonicalize_file(input.c_str(), output.c_str()), error_code::truncated_data,
                                 read_file(input).size());
    CHECK(read_file(output) == "precious");
    CHECK(dir.entries().size() == 2);
  }
  SECTION("the output is never the input") {
    const std::string original = npy_file(legacy_dict, 1, 0) + data;
    write_file(input, original);
    REQUIRE(::link(input.c_str(), dir.file("hard.npy").c_str()) == 0);
    REQUIRE(::symlink("in.npy", dir.file("soft.npy").c_str()) == 0);
    for (const char* name : {"in.npy", "hard.npy", "soft.npy"}) {
      INFO(name);
      npyguard_test::require_error(npyguard::canonicalize_file(input.c_str(), dir.file(name).c_str()),
                                   error_code::io_error, std::nullopt);
    }
    npyguard_test::require_error(npyguard::canonicalize_file(dir.file("soft.npy").c_str(), input.c_str()),
                                 error_code::io_error, std::nullopt);
    CHECK(read_file(input) == original);
    CHECK(dir.entries().size() == 3);
  }
  SECTION("only a regular file is ever replaced") {
    write_file(input, npy_file(legacy_dict, 1, 0) + data);
    write_file(dir.file("target.npy"), "precious");
    REQUIRE(::symlink("target.npy", dir.file("link.npy").c_str()) == 0);
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0);
    REQUIRE(::mkdir(dir.file("sub").c_str(), 0700) == 0);
    for (const char* name : {"link.npy", "fifo", "sub"}) {
      INFO(name);
      npyguard_test::require_error(npyguard::canonicalize_file(input.c_str(), dir.file(name).c_str()),
                                   error_code::io_error, std::nullopt);
      std::vector<std::int32_t> values = {1};
      npyguard_test::require_error(
          npyguard::write_array(dir.file(name).c_str(), little_i4(), {1}, false, values.data(), 4),
          error_code::io_error, std::nullopt);
    }
    struct stat info {};
    REQUIRE(::lstat(dir.file("link.npy").c_str(), &info) == 0);
    CHECK(S_ISLNK(info.st_mode));
    REQUIRE(::lstat(dir.file("fifo").c_str(), &info) == 0);
    CHECK(S_ISFIFO(info.st_mode));
    CHECK(read_file(dir.file("target.npy")) == "precious");
    CHECK(dir.entries().size() == 5);
    ::rmdir(dir.file("sub").c_str());
  }
  SECTION("a missing or non-regular input") {
    npyguard_test::require_error(npyguard::canonicalize_file(dir.file("none.npy").c_str(), output.c_str()),
                                 error_code::io_error, std::nullopt);
    npyguard_test::require_error(npyguard::canonicalize_file("/dev/null", output.c_str()), error_code::io_error,
                                 std::nullopt);
    npyguard_test::require_error(npyguard::canonicalize_file(dir.path().c_str(), output.c_str()), error_code::io_error,
                                 std::nullopt);
    REQUIRE(::mkfifo(dir.file("fifo").c_str(), 0600) == 0); // no writer: opening must not block
    npyguard_test::require_error(npyguard::canonicalize_file(dir.file("fifo").c_str(), output.c_str()),
                                 error_code::io_error, std::nullopt);
    CHECK(dir.entries() == std::vector<std::string>{"fifo"});
  }
  SECTION("a full disk: an I/O error and no partial file") {
    // RLIMIT_FSIZE makes write(2) fail with EFBIG past 4 KiB, as a full disk
    // fails with ENOSPC; the data is 64 KiB.
    write_file(input, npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (8192,), }", 1, 65536));
    write_file(output, "precious");
    CHECK(in_child([&] {
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit small{4096, 4096};
      if (::setrlimit(RLIMIT_FSIZE, &small) != 0) return false;
      const npyguard::result checked = npyguard::canonicalize_file(input.c_str(), output.c_str());
      return !checked.ok() && checked.failure().code == error_code::io_error &&
             checked.failure().message.find("cannot write") != std::string::npos;
    }));
    CHECK(read_file(output) == "precious");
    CHECK(dir.entries().size() == 2);
  }
  SECTION("an unwritable directory: an I/O error and nothing written") {
    write_file(input, npy_file(legacy_dict, 1, 0) + data);
    const std::string locked = dir.file("locked");
    REQUIRE(::mkdir(locked.c_str(), 0555) == 0);
    CHECK(in_child([&] {
      // root ignores directory permissions: drop to nobody first.
      if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) return false;
      const npyguard::result checked = npyguard::canonicalize_file(input.c_str(), (locked + "/out.npy").c_str());
      return !checked.ok() && checked.failure().code == error_code::io_error;
    }));
    DIR* listing = ::opendir(locked.c_str());
    REQUIRE(listing != nullptr);
    int entries = 0;
    while (const dirent* entry = ::readdir(listing)) entries += entry->d_name[0] != '.';
    ::closedir(listing);
    CHECK(entries == 0);
    ::rmdir(locked.c_str());
  }
}
