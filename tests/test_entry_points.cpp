// The three entry points agree: a buffer, a file path and a stream of
// unknown size (in any chunking) give the same verdict and model.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "support.hpp"

using namespace npyguard_test;
using npyguard::error_code;

namespace {

class failing_source final : public npyguard::byte_source {
public:
  explicit failing_source(std::size_t good_bytes) : good_(good_bytes) {}
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    if (good_ == 0) {
      errno = 0; // the answer alone reports the error (byte_source's contract)
      return -EIO;
    }
    const std::size_t n = std::min(size, good_);
    std::memset(buffer, 0, n);
    if (sent_ == 0 && n >= 6) std::memcpy(buffer, "\x93NUMPY\x01\x00\x10\x00", std::min<std::size_t>(n, 10));
    good_ -= n;
    sent_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }

private:
  std::size_t good_;
  std::size_t sent_ = 0;
};

// Per process: two runs of the suite at once (a developer's and CI's) must
// not remove each other's files.
std::string temp_path(const char* name) {
  return std::string(P_tmpdir) + "/npyguard_test_" + std::to_string(getpid()) + "_" + name;
}

void require_same(const npyguard::result& a, const npyguard::result& b) {
  REQUIRE(a.ok() == b.ok());
  if (!a.ok()) {
    CHECK(a.failure().code == b.failure().code);
    CHECK(a.failure().offset == b.failure().offset);
    return;
  }
  const auto& x = a.value();
  const auto& y = b.value();
  CHECK(x.major_version == y.major_version);
  CHECK(x.header_length == y.header_length);
  CHECK(x.data_offset == y.data_offset);
  CHECK(x.shape == y.shape);
  CHECK(x.nbytes == y.nbytes);
  CHECK(x.fortran_order == y.fortran_order);
  CHECK(npyguard::descr_repr(x.descr) == npyguard::descr_repr(y.descr));
}

std::vector<std::string> sample_inputs() {
  std::vector<std::string> inputs;
  const std::string ok = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 1, 24);
  inputs.push_back(ok);
  inputs.push_back(ok + "trailing");
  inputs.push_back(ok.substr(0, ok.size() - 5));
  inputs.push_back(ok.substr(0, 40));
  inputs.push_back(ok.substr(0, 11));
  inputs.push_back(ok.substr(0, 3));
  inputs.push_back("");
  inputs.push_back(raw_file("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 2)}\n", 1, 8));
  inputs.push_back(raw_file("{'descr': '<i2', 'fortran_order': True, 'shape': ()}\n", 2, 2));
  inputs.push_back(raw_file("{}\n", 1, 0)); // 3-byte header: the preamble read holds data bytes
  inputs.push_back(raw_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1,)}\n", 3, 1));
  std::string fields = "[";
  for (int i = 0; i < 3000; ++i) fields += "('f" + std::to_string(i) + "', '|u1'), ";
  fields += "]";
  inputs.push_back(npy_file("{'descr': " + fields + ", 'fortran_order': False, 'shape': (2,), }", 2, 6000));
  inputs.push_back(npy_file("{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1000,), }", 1, 4000));
  return inputs;
}

} // namespace

TEST_CASE("buffer, file and stream give the same verdict", "[entry]") {
  const std::string path = temp_path("same.npy");
  for (const std::string& bytes : sample_inputs()) {
    const auto from_buffer = check_bytes(bytes);
    write_file(path, bytes);
    require_same(from_buffer, npyguard::validate_file(path.c_str()));
    for (std::size_t chunk : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{4096}, bytes.size() + 1}) {
      INFO("chunk " << chunk << " size " << bytes.size());
      chunked_source source(bytes, chunk);
      require_same(from_buffer, npyguard::validate_stream(source));
    }
  }
  std::remove(path.c_str());
}

TEST_CASE("a file larger than the prefix read: header read with a second pread", "[entry]") {
  std::string fields = "[";
  for (int i = 0; i < 400; ++i) fields += "('name" + std::to_string(i) + "', '<f4'), ";
  fields += "]";
  const std::string bytes = npy_file("{'descr': " + fields + ", 'fortran_order': False, 'shape': (1,), }", 1, 1600);
  REQUIRE(bytes.size() > 8192);
  const std::string path = temp_path("large.npy");
  write_file(path, bytes);
  const auto checked = npyguard::validate_file(path.c_str());
  require_ok(checked);
  CHECK(checked.value().descr.fields.size() == 400);
  write_file(path, bytes.substr(0, 5000)); // header cut short
  require_error(npyguard::validate_file(path.c_str()), error_code::truncated_header, 5000);
  std::remove(path.c_str());
}

TEST_CASE("validate_fd on a pipe drains and counts the data", "[entry]") {
  const std::string bytes = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (100000,), }", 1, 800000);
  for (std::size_t extra : {std::size_t{0}, std::size_t{1}}) {
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    std::thread writer([&] {
      const std::string payload = bytes + std::string(extra, 'x');
      std::size_t at = 0;
      while (at < payload.size()) {
        const ssize_t n = write(fds[1], payload.data() + at, payload.size() - at);
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      close(fds[1]);
    });
    const auto checked = npyguard::validate_fd(fds[0]);
    writer.join();
    close(fds[0]);
    if (extra == 0) {
      require_ok(checked);
    } else {
      require_error(checked, error_code::trailing_data, bytes.size());
    }
  }
  // A path naming a FIFO goes through the same reader.
  const std::string fifo = temp_path("fifo");
  std::remove(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  std::thread writer([&] { write_file(fifo, bytes.substr(0, bytes.size() - 8)); });
  const auto checked = npyguard::validate_file(fifo.c_str());
  writer.join();
  std::remove(fifo.c_str());
  require_error(checked, error_code::truncated_data, bytes.size() - 8);
}

TEST_CASE("read errors are io_error", "[entry]") {
  for (std::size_t good : {std::size_t{0}, std::size_t{5}, std::size_t{12}}) {
    failing_source source(good);
    require_error(npyguard::validate_stream(source), error_code::io_error, std::nullopt);
  }
}

TEST_CASE("validate_header_text: the text alone", "[entry]") {
  const std::string text = padded_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }");
  const auto checked = npyguard::validate_header_text(text.data(), text.size(), 1);
  require_ok(checked);
  CHECK(checked.value().data_offset == 10 + text.size());
  CHECK(checked.value().nbytes == 24);
  require_error(npyguard::validate_header_text(text.data(), text.size(), 4), error_code::unsupported_version, 6);
  npyguard::options small;
  small.limits.max_header_bytes = 10;
  require_error(npyguard::validate_header_text(text.data(), text.size(), 2, small), error_code::header_too_large, 8);
  const std::string bad = "{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }\n";
  require_error(npyguard::validate_header_text(bad.data(), bad.size(), 3), error_code::negative_dimension,
                12 + bad.find("-3"));
}

TEST_CASE("model fields: version, alignment, count", "[entry]") {
  const auto v1 = check_bytes(npy_file("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", 1, 24));
  require_ok(v1);
  CHECK(v1.value().major_version == 1);
  CHECK(v1.value().data_offset == 128);
  CHECK(v1.value().data_alignment == 128); // largest power of two dividing it
  CHECK(v1.value().count == 6);
  CHECK(v1.value().fortran_order);
  const auto scalar = check_bytes(raw_file("{'descr': '<i4', 'fortran_order': False, 'shape': ()}\n", 2, 4));
  require_ok(scalar);
  CHECK(scalar.value().count == 1);
  CHECK(scalar.value().shape.empty());
  CHECK(scalar.value().data_alignment == 2); // 12 + 54 = 66
}

TEST_CASE("result equality compares whole models and whole errors", "[entry]") {
  const std::string dict =
      "{'descr': [('a', '<i4'), ('b', [('c', '|u1', (2,))])], 'fortran_order': False, 'shape': (3,), }";
  const auto first = check_bytes(npy_file(dict, 1, 18));
  REQUIRE(first.ok());
  CHECK(first == check_bytes(npy_file(dict, 1, 18)));

  // A difference deep in the dtype tree: the nested subarray's shape.
  std::string changed = dict;
  changed.replace(changed.find("(2,)"), 4, "(1,)");
  const auto nested = check_bytes(npy_file(changed, 1, 15));
  REQUIRE(nested.ok());
  CHECK(first != nested);
  CHECK(first.value().descr != nested.value().descr);
  CHECK(first.value().descr.fields[0] == nested.value().descr.fields[0]);
  CHECK(first.value().descr.fields[1] != nested.value().descr.fields[1]);

  // The same shape in another format version: only the framing differs.
  const auto version2 = check_bytes(npy_file(dict, 2, 18));
  REQUIRE(version2.ok());
  CHECK(first.value() != version2.value());
  CHECK(first.value().descr == version2.value().descr);

  // Errors: code, offset and message all count.
  const auto truncated = check_bytes(npy_file(dict, 1, 17));
  const auto trailing = check_bytes(npy_file(dict, 1, 19));
  REQUIRE_FALSE(truncated.ok());
  CHECK(truncated == check_bytes(npy_file(dict, 1, 17)));
  CHECK(truncated != trailing);
  CHECK(truncated != first);
  npyguard::error moved = truncated.failure();
  moved.offset = *moved.offset + 1;
  CHECK(moved != truncated.failure());
  npyguard::error reworded = truncated.failure();
  reworded.message += ".";
  CHECK(reworded != truncated.failure());
}

namespace {

// A file followed by zeros (`cat ok.npy /dev/zero`), counting what it
// delivers; it ends after 64 MiB of zeros so that a reader that drains
// everything fails the test instead of hanging it.
class endless_source final : public npyguard::byte_source {
public:
  explicit endless_source(const std::string& file) : file_(file) {}
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    if (size == 0) return 0;
    auto* out = static_cast<unsigned char*>(buffer);
    std::size_t n = 0;
    if (delivered_ < file_.size()) {
      n = std::min(size, file_.size() - static_cast<std::size_t>(delivered_));
      std::memcpy(out, file_.data() + delivered_, n);
    } else {
      if (delivered_ >= file_.size() + (64u << 20)) return 0;
      n = size;
      std::memset(out, 0, n);
    }
    delivered_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }
  [[nodiscard]] std::uint64_t delivered() const noexcept { return delivered_; }

private:
  const std::string& file_;
  std::uint64_t delivered_ = 0;
};

} // namespace

TEST_CASE("a stream is read only until the verdict is certain", "[entry][stream]") {
  // (cat ok.npy; cat /dev/zero) | npyguard check -: the first byte past the
  // data decides trailing_data; with trailing data allowed, the data's end.
  for (const std::uint64_t data_bytes : {std::uint64_t{0}, std::uint64_t{24}, std::uint64_t{3'000'000}}) {
    const std::string dict =
        "{'descr': '|u1', 'fortran_order': False, 'shape': (" + std::to_string(data_bytes) + ",), }";
    const std::string ok = npy_file(dict, 1, static_cast<std::size_t>(data_bytes));
    INFO("data bytes " << data_bytes);
    endless_source endless(ok);
    require_error(npyguard::validate_stream(endless), error_code::trailing_data, ok.size());
    CHECK(endless.delivered() == ok.size() + 1);

    npyguard::options relaxed;
    relaxed.allow_trailing_data = true;
    endless_source allowed(ok);
    require_ok(npyguard::validate_stream(allowed, relaxed));
    CHECK(allowed.delivered() == std::max<std::uint64_t>(ok.size(), 10));
  }
  // A pickle has no known length: nothing is read after the header.
  npyguard::options objects;
  objects.allow_object = true;
  const std::string pickle = npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 1, 0);
  endless_source after_pickle(pickle);
  require_ok(npyguard::validate_stream(after_pickle, objects));
  CHECK(after_pickle.delivered() == pickle.size());
}

TEST_CASE("validate_fd stops reading an endless pipe", "[entry][stream]") {
  const std::string ok = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 1, 24);
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::signal(SIGPIPE, SIG_IGN);              // the writer learns of the closed pipe from EPIPE
  constexpr std::size_t endless = 256u << 20; // a reader that drains it all fails below
  std::size_t written = 0;
  std::thread writer([&] {
    std::string chunk = ok + std::string(65536, '\0');
    while (written < endless) {
      const ssize_t n = write(fds[1], chunk.data(), chunk.size());
      if (n < 0) break;
      written += static_cast<std::size_t>(n);
      chunk.assign(65536, '\0');
    }
    close(fds[1]);
  });
  const auto checked = npyguard::validate_fd(fds[0]);
  close(fds[0]); // ends the writer
  writer.join();
  require_error(checked, error_code::trailing_data, ok.size());
  CHECK(written < endless);
}

TEST_CASE("a FIFO without a writer: opened without blocking, waited on up to the timeout", "[entry][fifo]") {
  const std::string fifo = temp_path("lonely_fifo");
  std::remove(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  npyguard::options patient;
  patient.timeout_ms = 300;
  const auto started = std::chrono::steady_clock::now();
  const auto checked = within(std::chrono::seconds(20), [&] { return npyguard::validate_file(fifo.c_str(), patient); });
  const auto waited = std::chrono::steady_clock::now() - started;
  require_error(checked, error_code::io_error, std::nullopt);
  CHECK(waited >= std::chrono::milliseconds(300));

  // A writer that comes later is waited for (no timeout: no limit).
  const std::string ok = npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 1, 24);
  std::thread late_writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    write_file(fifo, ok);
  });
  const auto late = within(std::chrono::seconds(20), [&] { return npyguard::validate_file(fifo.c_str()); });
  late_writer.join();
  require_ok(late);

  // A writer that connects and then stalls: the timeout covers the whole validation.
  std::thread stalling_writer([&] {
    const int fd = open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const ssize_t n = write(fd, ok.data(), 20); // part of the header
    static_cast<void>(n);
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    close(fd);
  });
  const auto stalled = within(std::chrono::seconds(20), [&] { return npyguard::validate_file(fifo.c_str(), patient); });
  stalling_writer.join();
  require_error(stalled, error_code::io_error, std::nullopt);
  std::remove(fifo.c_str());
}

namespace {

// The signal that ended a child running `body`, or 0 if it exited.
template <typename Body>
int child_signal(Body body) {
  std::fflush(nullptr);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::freopen("/dev/null", "w", stderr); // the precondition message
    body();
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

} // namespace

TEST_CASE("the wrong accessor of a result aborts with SIGABRT", "[entry][result]") {
  const npyguard::result failed = check_bytes("not an npy file");
  REQUIRE_FALSE(failed.ok());
  CHECK(child_signal([&] { static_cast<void>(failed.value().shape.size()); }) == SIGABRT);
  const npyguard::result accepted =
      check_bytes(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 1, 24));
  REQUIRE(accepted.ok());
  CHECK(child_signal([&] { static_cast<void>(accepted.failure().message.size()); }) == SIGABRT);
  CHECK(child_signal([&] { static_cast<void>(accepted.value().shape.size()); }) == 0);
  CHECK(failed.value_if() == nullptr);
  CHECK(accepted.failure_if() == nullptr);
}

TEST_CASE("one version: the header, the library and CMake agree", "[entry][version]") {
  CHECK(std::string(npyguard::version()) == NPYGUARD_VERSION_STRING);
  CHECK(std::string(NPYGUARD_VERSION_STRING) == NPYGUARD_PROJECT_VERSION);
  CHECK(std::string(NPYGUARD_VERSION_STRING) == std::to_string(NPYGUARD_VERSION_MAJOR) + "." +
                                                    std::to_string(NPYGUARD_VERSION_MINOR) + "." +
                                                    std::to_string(NPYGUARD_VERSION_PATCH));
}

namespace {

// A file in memory behind the random-access interface, remembering the
// furthest byte it was asked for; it can fail from a given offset on.
class memory_range final : public npyguard::random_access_source {
public:
  explicit memory_range(const std::string& bytes, std::uint64_t fail_from = ~0ull)
      : bytes_(bytes), fail_from_(fail_from) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return bytes_.size(); }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (offset + size > fail_from_) return -EIO;
    furthest_ = std::max<std::uint64_t>(furthest_, offset + size);
    ++reads_;
    if (offset >= bytes_.size()) return 0;
    const std::size_t n = std::min<std::size_t>(size, bytes_.size() - static_cast<std::size_t>(offset));
    std::memcpy(buffer, bytes_.data() + offset, n);
    bytes_read_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }
  [[nodiscard]] std::uint64_t furthest() const noexcept { return furthest_; }
  [[nodiscard]] int reads() const noexcept { return reads_; }
  [[nodiscard]] std::uint64_t bytes_read() const noexcept { return bytes_read_; }

private:
  const std::string& bytes_;
  std::uint64_t fail_from_;
  std::uint64_t furthest_ = 0;
  int reads_ = 0;
  std::uint64_t bytes_read_ = 0;
};

} // namespace

TEST_CASE("validate_source: a random-access source gives the buffer's verdict and reads no data", "[entry][source]") {
  for (const std::string& bytes : sample_inputs()) {
    INFO("size " << bytes.size());
    memory_range range(bytes);
    const npyguard::result from_source = npyguard::validate_source(range);
    CHECK(from_source == check_bytes(bytes));
    if (from_source.ok()) {
      // The preamble and header (at most the 4 KiB prefix read), never past them otherwise.
      CHECK(range.furthest() <= std::max<std::uint64_t>(from_source.value().data_offset, 4096));
    }
  }
  // A read error is io_error, whatever errno says.
  const std::string big_header = sample_inputs()[11]; // a struct of 3,000 fields: two reads
  REQUIRE(big_header.size() > 8192);
  memory_range failing(big_header, 5000);
  require_error(npyguard::validate_source(failing), error_code::io_error, std::nullopt);
  memory_range failing_first(big_header, 0);
  require_error(npyguard::validate_source(failing_first), error_code::io_error, std::nullopt);
}

TEST_CASE("minimal reads: the preamble, then the rest of the header, and the same verdict", "[entry][source]") {
  npyguard::options minimal;
  minimal.minimal_reads = true;
  for (const std::string& bytes : sample_inputs()) {
    INFO("size " << bytes.size());
    memory_range range(bytes);
    const npyguard::result from_source = npyguard::validate_source(range, minimal);
    CHECK(from_source == check_bytes(bytes));
    if (from_source.ok()) {
      // Not one byte of the data, and nothing read twice.
      const std::uint64_t data_offset = from_source.value().data_offset;
      CHECK(range.furthest() == data_offset);
      CHECK(range.bytes_read() == data_offset);
      CHECK(range.reads() == 2);
    }
  }
  // A file shorter than the preamble is one read of what there is.
  const std::string tiny = "\x93NUMPY\x01";
  memory_range short_range(tiny);
  require_error(npyguard::validate_source(short_range, minimal), error_code::truncated_preamble, 7);
  CHECK(short_range.reads() == 1);
  CHECK(short_range.bytes_read() == tiny.size());
}

namespace {

// A source that claims more bytes than it was asked for.
class boastful_source final : public npyguard::byte_source, public npyguard::random_access_source {
public:
  std::ptrdiff_t read(void* /*buffer*/, std::size_t size) noexcept override {
    return static_cast<std::ptrdiff_t>(size + 1);
  }
  [[nodiscard]] std::uint64_t size() const noexcept override { return 1000; }
  std::ptrdiff_t read_at(std::uint64_t /*offset*/, void* /*buffer*/, std::size_t size) noexcept override {
    return static_cast<std::ptrdiff_t>(size + 1);
  }
};

} // namespace

TEST_CASE("a source that answers more bytes than asked is a read error, never a length", "[entry][source]") {
  boastful_source boastful;
  require_error(npyguard::validate_stream(boastful), error_code::io_error, std::nullopt);
  require_error(npyguard::validate_source(boastful), error_code::io_error, std::nullopt);
}

TEST_CASE("file_source: a regular file by offset; anything else refused, never read", "[entry][source]") {
  const std::string path = temp_path("file_source.npy");
  for (const std::string& bytes : sample_inputs()) {
    write_file(path, bytes);
    npyguard::file_source file(path.c_str());
    REQUIRE_FALSE(file.failure());
    CHECK(file.size() == bytes.size());
    require_same(npyguard::validate_file(path.c_str()), npyguard::validate_source(file));
  }
  std::remove(path.c_str());

  const auto refused = [](const std::string& name, const std::string& message) {
    INFO(name);
    npyguard::file_source file(name.c_str());
    REQUIRE(file.failure());
    CHECK(file.failure()->code == error_code::io_error);
    CHECK_FALSE(file.failure()->offset);
    CHECK(file.failure()->message == message);
    CHECK(file.size() == 0);
    char byte = 0;
    CHECK(file.read_at(0, &byte, 1) == -EBADF);
    require_error(npyguard::validate_source(file), error_code::io_error, std::nullopt);
  };
  refused(temp_path("no_such_file.npy"), "cannot open: No such file or directory");
  refused(P_tmpdir, "is a directory");
  // A FIFO without a writer: opened without blocking, and refused.
  const std::string fifo = temp_path("file_source_fifo");
  std::remove(fifo.c_str());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  refused(fifo, "is a FIFO, not a regular file");
  std::remove(fifo.c_str());
  refused("/dev/null", "is a character device, not a regular file");
}
