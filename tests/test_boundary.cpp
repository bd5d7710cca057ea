// The input boundary (npyguard/input.hpp): one open without blocking, the
// format of SPEC.md section 9 (the caller's, the name's claim, the first
// bytes), the kind fstat gives, the deadline on streams, and the bytes
// around an error read from the same descriptor. Also validate_fd on a
// regular .npy file: by offset, the descriptor's offset untouched.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "npyguard/npyguard.hpp"
#include "tests/ra_support.hpp"
#include "tests/support.hpp"
#include "tests/zip_builder.hpp"

using namespace npyguard_test;

namespace {

using npyguard::error_code;
using npyguard::file_format;
using npyguard::input_kind;
using npyguard::input_request;

const std::string npy_bytes = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 1, 8);

std::string zip_bytes() {
  zip_entry member;
  member.name = "a.npy";
  member.data = npy_bytes;
  return build_zip({member}).bytes;
}

std::string ra_bytes() {
  ra_fields fields;
  fields.dims = {2};
  return ra_file(fields);
}

// Bytes read by this process so far (the kernel's count of read(2) and
// pread(2) bytes, /proc/self/io's rchar).
std::uint64_t bytes_read_so_far() {
  std::ifstream io("/proc/self/io");
  std::string key;
  std::uint64_t value = 0;
  while (io >> key >> value) {
    if (key == "rchar:") return value;
  }
  return 0;
}

} // namespace

TEST_CASE("validate_input: a name ending in .npy, .npz or .ra is a claim judged by that format alone", "[boundary]") {
  scratch_dir dir;
  SECTION("a zip named .npy is bad_magic at 0, as a .npy") {
    const auto checked = npyguard::validate_input(dir.write("x.npy", zip_bytes()).c_str());
    CHECK(checked.format == file_format::npy);
    CHECK(checked.kind == input_kind::regular);
    require_error(checked.npy, error_code::bad_magic, 0);
  }
  SECTION("RawArray bytes named .npy are bad_magic at 0, as a .npy") {
    const auto checked = npyguard::validate_input(dir.write("y.npy", ra_bytes()).c_str());
    CHECK(checked.format == file_format::npy);
    require_error(checked.npy, error_code::bad_magic, 0);
  }
  SECTION(".npy bytes named .ra are the RawArray validator's bad_magic at 0") {
    const auto checked = npyguard::validate_input(dir.write("z.ra", npy_bytes).c_str());
    CHECK(checked.format == file_format::ra);
    require_error(checked.ra, error_code::bad_magic, 0);
  }
  SECTION(".npy bytes named .npz are judged as an archive: not_zip") {
    const auto checked = npyguard::validate_input(dir.write("w.npz", npy_bytes).c_str());
    CHECK(checked.format == file_format::npz);
    REQUIRE_FALSE(checked.ok());
    CHECK(checked.failure() == checked.npz.failure_if());
    CHECK(checked.npz.failure().code == error_code::not_zip);
  }
  SECTION("without a claim the first bytes decide") {
    const auto zip = npyguard::validate_input(dir.write("archive.bin", zip_bytes()).c_str());
    CHECK(zip.format == file_format::npz);
    require_ok(zip.npz);
    const auto ra = npyguard::validate_input(dir.write("image", ra_bytes()).c_str());
    CHECK(ra.format == file_format::ra);
    require_ok(ra.ra);
    const auto npy = npyguard::validate_input(dir.write("array.data", npy_bytes).c_str());
    CHECK(npy.format == file_format::npy);
    require_ok(npy.npy);
  }
  SECTION("the caller's format is above the name's claim") {
    input_request request;
    request.format = file_format::npz;
    const auto checked = npyguard::validate_input(dir.write("v.npy", zip_bytes()).c_str(), {}, request);
    CHECK(checked.format == file_format::npz);
    require_ok(checked.npz);
  }
  SECTION("request.name is the claim validate_input_fd judges") {
    const std::string path = dir.write("u.bin", zip_bytes());
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    input_request request;
    request.name = "upload.npy";
    const auto claimed = npyguard::validate_input_fd(fd, {}, request);
    CHECK(claimed.format == file_format::npy);
    require_error(claimed.npy, error_code::bad_magic, 0);
    const auto unnamed = npyguard::validate_input_fd(fd, {});
    CHECK(unnamed.format == file_format::npz);
    require_ok(unnamed.npz);
    ::close(fd);
  }
}

TEST_CASE("validate_input: what cannot be read is io_error in the claimed format, with the kind fstat gave",
          "[boundary]") {
  scratch_dir dir;
  SECTION("a missing path: kind unknown, the name's format") {
    const auto checked = npyguard::validate_input(dir.file("missing.npz").c_str());
    CHECK(checked.kind == input_kind::unknown);
    CHECK(checked.format == file_format::npz);
    require_error(checked.npz, error_code::io_error, std::nullopt);
    CHECK(checked.npz.failure().message.find("cannot open") != std::string::npos);
  }
  SECTION("a directory") {
    const auto checked = npyguard::validate_input(dir.path().c_str());
    CHECK(checked.kind == input_kind::directory);
    require_error(checked.npy, error_code::io_error, std::nullopt);
  }
  SECTION("a null path") {
    const auto checked = npyguard::validate_input(nullptr);
    require_error(checked.npy, error_code::io_error, std::nullopt);
  }
}

TEST_CASE("validate_input_at: a path relative to a directory descriptor, judged as validate_input judges it",
          "[boundary]") {
  scratch_dir dir;
  dir.write("good.npy", npy_bytes);
  dir.write("bad.npy", npy_bytes.substr(0, npy_bytes.size() - 1));
  dir.write("archive.npz", zip_bytes());
  REQUIRE(::mkdir(dir.file("sub").c_str(), 0700) == 0);
  const int directory = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(directory >= 0);
  for (const char* name : {"good.npy", "bad.npy", "archive.npz", "missing.npz", "sub"}) {
    INFO(name);
    const auto at = npyguard::validate_input_at(directory, name);
    const auto by_path = npyguard::validate_input(dir.file(name).c_str());
    CHECK(at.format == by_path.format);
    CHECK(at.kind == by_path.kind);
    const npyguard::error* at_failure = at.failure();
    const npyguard::error* path_failure = by_path.failure();
    REQUIRE((at_failure == nullptr) == (path_failure == nullptr));
    if (at_failure != nullptr) {
      CHECK(at_failure->code == path_failure->code);
      CHECK(at_failure->offset == path_failure->offset);
    }
  }
  SECTION("the verdicts themselves") {
    CHECK(npyguard::validate_input_at(directory, "good.npy").ok());
    const auto bad = npyguard::validate_input_at(directory, "bad.npy");
    require_error(bad.npy, error_code::truncated_data, npy_bytes.size() - 1); // where the input ends
    const auto missing = npyguard::validate_input_at(directory, "missing.npz");
    CHECK(missing.kind == input_kind::unknown);
    CHECK(missing.format == file_format::npz); // the claim of the name given
    require_error(missing.npz, error_code::io_error, std::nullopt);
    CHECK(missing.npz.failure().message.find("cannot open") != std::string::npos);
    CHECK(npyguard::validate_input_at(directory, "sub").kind == input_kind::directory);
  }
  SECTION("request.name, when given, is the claim") {
    input_request request;
    request.name = "shown/as/good.npz";
    const auto claimed = npyguard::validate_input_at(directory, "good.npy", {}, request);
    CHECK(claimed.format == file_format::npz);
    CHECK_FALSE(claimed.ok());
  }
  SECTION("a descriptor that is not a directory: io_error, nothing opened") {
    const auto checked = npyguard::validate_input_at(-1, "good.npy");
    CHECK(checked.kind == input_kind::unknown);
    require_error(checked.npy, error_code::io_error, std::nullopt);
  }
  ::close(directory);
}

TEST_CASE("validate_input: a FIFO without a writer is opened without blocking and waited on up to timeout_ms",
          "[boundary]") {
  scratch_dir dir;
  const std::string fifo = dir.file("f.npz");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  npyguard::options opts;
  opts.timeout_ms = 100;
  const auto checked = within(std::chrono::seconds(20), [&] { return npyguard::validate_input(fifo.c_str(), opts); });
  CHECK(checked.kind == input_kind::fifo);
  CHECK(checked.format == file_format::npz);
  require_error(checked.npz, error_code::io_error, std::nullopt);
  CHECK(checked.npz.failure().message.find("no input within the time allowed") != std::string::npos);
  // read_input_head never reads a FIFO: it says what it is at once.
  const auto head = within(std::chrono::seconds(20), [&] { return npyguard::read_input_head(fifo.c_str()); });
  require_ok(head);
  CHECK(head.value().kind == input_kind::fifo);
  CHECK(head.value().length == 0);
  ::unlink(fifo.c_str());
}

TEST_CASE("validate_input: the bytes around an error come from the same descriptor", "[boundary]") {
  scratch_dir dir;
  const std::string bad = raw_file("{'descr': '<i4', 'fortran_order': Flase, 'shape': (2,), }\n");
  const std::uint64_t at = offset_of(bad, "Flase");
  input_request request;
  request.context = 4;
  SECTION("a regular file, by offset") {
    const auto checked = npyguard::validate_input(dir.write("bad.npy", bad).c_str(), {}, request);
    require_error(checked.npy, error_code::syntax_error, at);
    CHECK(checked.context_start == at - 4);
    CHECK(checked.context == bad.substr(at - 4, 4 + 4 + 1));
    CHECK(checked.context_continues);
  }
  SECTION("a pipe, from the bytes it delivered") {
    int ends[2] = {-1, -1};
    REQUIRE(::pipe(ends) == 0);
    REQUIRE(::write(ends[1], bad.data(), bad.size()) == static_cast<ssize_t>(bad.size()));
    ::close(ends[1]);
    const auto checked = npyguard::validate_input_fd(ends[0], {}, request);
    ::close(ends[0]);
    CHECK(checked.kind == input_kind::fifo);
    require_error(checked.npy, error_code::syntax_error, at);
    CHECK(checked.context_start == at - 4);
    CHECK(checked.context == bad.substr(at - 4, checked.context.size()));
    CHECK_FALSE(checked.context.empty());
  }
  SECTION("none unless asked") {
    const auto checked = npyguard::validate_input(dir.write("bad.npy", bad).c_str());
    require_error(checked.npy, error_code::syntax_error, at);
    CHECK(checked.context.empty());
  }
}

TEST_CASE("validate_fd (.npy) reads a regular file by offset: the header only, the offset untouched", "[boundary]") {
  scratch_dir dir;
  // A 2 GiB file (sparse: the data is a hole) whose header claims it all.
  const std::uint64_t data = std::uint64_t{2} << 30;
  const std::string header = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (2147483648,), }");
  const std::string path = dir.write("big.npy", header);
  REQUIRE(::truncate(path.c_str(), static_cast<off_t>(header.size() + data)) == 0);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::lseek(fd, 7, SEEK_SET) == 7);
  const std::uint64_t before = bytes_read_so_far();
  const auto checked = npyguard::validate_fd(fd);
  const std::uint64_t read = bytes_read_so_far() - before;
  require_ok(checked);
  CHECK(checked.value().nbytes == data);
  CHECK(read < 64 * 1024);
  CHECK(::lseek(fd, 0, SEEK_CUR) == 7);
  // The boundary reads it the same way.
  const std::uint64_t again = bytes_read_so_far();
  const auto boundary = npyguard::validate_input_fd(fd);
  CHECK(bytes_read_so_far() - again < 64 * 1024);
  require_ok(boundary.npy);
  CHECK(::lseek(fd, 0, SEEK_CUR) == 7);
  ::close(fd);
}

TEST_CASE("validate_input: a cancel flag set by another thread stops a wait and every read", "[boundary]") {
  scratch_dir dir;
  std::atomic<bool> cancel{false};
  input_request request;
  request.cancel = &cancel;
  SECTION("a FIFO without a writer and without a timeout") {
    const std::string fifo = dir.file("f.npy");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      cancel = true;
    });
    const auto checked =
        within(std::chrono::seconds(20), [&] { return npyguard::validate_input(fifo.c_str(), {}, request); });
    canceller.join();
    CHECK(checked.kind == input_kind::fifo);
    require_error(checked.npy, error_code::io_error, std::nullopt);
    CHECK(checked.npy.failure().message.find("canceled") != std::string::npos);
    ::unlink(fifo.c_str());
  }
  SECTION("a regular file: the first read after the flag") {
    cancel = true;
    const auto checked = npyguard::validate_input(dir.write("a.npz", zip_bytes()).c_str(), {}, request);
    CHECK(checked.format == file_format::npz);
    require_error(checked.npz, error_code::io_error, std::nullopt);
    CHECK(checked.npz.failure().message.find("canceled") != std::string::npos);
  }
  SECTION("unset, it changes nothing") {
    const auto checked = npyguard::validate_input(dir.write("a.npz", zip_bytes()).c_str(), {}, request);
    require_ok(checked.npz);
  }
}

TEST_CASE("options::cancel stops every format's file entry points", "[boundary]") {
  scratch_dir dir;
  std::atomic<bool> cancel{true};
  npyguard::options opts;
  opts.cancel = &cancel;
  const std::string npy = dir.write("a.npy", npy_bytes);
  const std::string npz = dir.write("a.npz", zip_bytes());
  const std::string ra = dir.write("a.ra", ra_bytes());
  const auto canceled = [](const auto& checked) {
    require_error(checked, error_code::io_error, std::nullopt);
    CHECK(checked.failure().message.find("canceled") != std::string::npos);
  };
  canceled(npyguard::validate_file(npy.c_str(), opts));
  canceled(npyguard::npz::validate_file(npz.c_str(), opts));
  canceled(npyguard::ra::validate_file(ra.c_str(), opts));
  canceled(npyguard::validate_input(npz.c_str(), opts).npz);
  struct nothing final : npyguard::npz::member_sink {
    bool destination(std::size_t, const npyguard::npz::member&, void*& out) noexcept override {
      out = nullptr;
      return true;
    }
  } sink;
  canceled(npyguard::npz::read_archive_file(npz.c_str(), sink, opts));
  // Unset, the same calls give their verdicts.
  cancel = false;
  require_ok(npyguard::validate_file(npy.c_str(), opts));
  require_ok(npyguard::npz::validate_file(npz.c_str(), opts));
  require_ok(npyguard::ra::validate_file(ra.c_str(), opts));
  SECTION("a FIFO without a writer, waited on with no timeout, until another thread sets it") {
    const std::string fifo = dir.file("f.npz");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::thread canceller([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      cancel = true;
    });
    const auto checked =
        within(std::chrono::seconds(20), [&] { return npyguard::npz::validate_file(fifo.c_str(), opts); });
    canceller.join();
    canceled(checked);
    ::unlink(fifo.c_str());
  }
}
