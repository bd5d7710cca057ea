// Archives from streams (SPEC-npz.md section 17): validate_stream holds the
// bytes in chunks it never moves or zeroes, validate_stream_spooled writes
// them to an unlinked temporary file; both give validate_buffer's verdict,
// and both stop at the same limit.
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <functional>
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

void require_io_error(const archive_result& r) { require_error(r, error_code::io_error, std::nullopt); }

// A .npy of `count` uint16 whose data varies (so deflate has work to do).
zip_entry member(std::string name, std::size_t count, std::uint16_t method) {
  zip_entry e;
  e.name = std::move(name);
  e.data =
      npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (" + std::to_string(count) + ",), }", 1, 2 * count);
  const std::size_t data_start = e.data.size() - 2 * count;
  for (std::size_t i = data_start; i < e.data.size(); ++i) e.data[i] = static_cast<char>(i * 131 % 251 % (i % 7 + 1));
  e.method = method;
  return e;
}

// About 3.4 MB: stored and deflated members that straddle the in-memory
// chunks' boundaries (64 KiB, 192 KiB, 448 KiB, 960 KiB, then every MiB).
const std::string& large_archive() {
  static const std::string bytes =
      build_zip({member("a.npy", 50000, 0), member("b.npy", 300000, 8), member("c.npy", 700000, 0),
                 member("d.npy", 3, 0), member("e.npy", 650000, 0)})
          .bytes;
  return bytes;
}

// Reads of sizes taken in turn from `sizes`, then a read error if `fail_at`
// bytes were delivered.
class uneven_source final : public npyguard::byte_source {
public:
  uneven_source(const std::string& bytes, std::vector<std::size_t> sizes) : bytes_(bytes), sizes_(std::move(sizes)) {}
  std::size_t fail_at = std::string::npos;
  std::function<void()> at_end; // called when the last byte has been delivered

  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    if (at_ >= fail_at) return -EIO;
    const std::size_t n = std::min({size, sizes_[turn_++ % sizes_.size()], bytes_.size() - at_});
    std::memcpy(buffer, bytes_.data() + at_, n);
    at_ += n;
    if (n == 0 && at_end) at_end();
    return static_cast<std::ptrdiff_t>(n);
  }
  [[nodiscard]] std::size_t delivered() const noexcept { return at_; }

private:
  const std::string& bytes_;
  std::vector<std::size_t> sizes_;
  std::size_t turn_ = 0;
  std::size_t at_ = 0;
};

npyguard::options verifying() {
  npyguard::options opts;
  opts.verify = true;
  return opts;
}

// A fresh directory under /tmp, removed (with what is left in it) at the end.
class scratch_directory {
public:
  scratch_directory() {
    char name[] = "/tmp/npyguard-spool-test-XXXXXX";
    REQUIRE(::mkdtemp(name) != nullptr);
    path_ = name;
  }
  ~scratch_directory() {
    for (const std::string& name : entries()) ::unlink((path_ + "/" + name).c_str());
    ::rmdir(path_.c_str());
  }
  scratch_directory(const scratch_directory&) = delete;
  scratch_directory& operator=(const scratch_directory&) = delete;
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR* listing = ::opendir(path_.c_str())) {
      while (const dirent* entry = ::readdir(listing)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(listing);
    }
    return names;
  }

private:
  std::string path_;
};

// An environment variable set for one scope, then restored.
class scoped_environment {
public:
  scoped_environment(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~scoped_environment() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  scoped_environment(const scoped_environment&) = delete;
  scoped_environment& operator=(const scoped_environment&) = delete;

private:
  const char* name_;
  std::optional<std::string> old_;
};

// The files this process has open under `directory`, as /proc names them
// (Linux; empty elsewhere).
std::vector<std::string> files_open_in(const std::string& directory) {
  std::vector<std::string> found;
  DIR* listing = ::opendir("/proc/self/fd");
  if (listing == nullptr) return found;
  while (const dirent* entry = ::readdir(listing)) {
    char target[4096];
    const std::string link = std::string("/proc/self/fd/") + entry->d_name;
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target);
    if (n <= 0) continue;
    const std::string name(target, static_cast<std::size_t>(n));
    if (name.compare(0, directory.size() + 1, directory + "/") == 0) found.push_back(name);
  }
  ::closedir(listing);
  return found;
}

} // namespace

TEST_CASE("a stream in chunks of memory or on a temporary file gets the buffer's verdict", "[npz][entry][spool]") {
  const std::string& bytes = large_archive();
  scratch_directory directory;
  for (const auto& opts : {npyguard::options{}, verifying(), npyguard::options::loosest()}) {
    const archive_result expected = npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
    INFO(describe(expected));
    REQUIRE(expected.ok());
    REQUIRE(expected.value().members.size() == 5);
    for (const auto& sizes : std::vector<std::vector<std::size_t>>{{7}, {4093, 1, 65537}, {1000003, 13}}) {
      INFO("reads of " << sizes.front() << " bytes first; verify " << opts.verify);
      uneven_source in_memory(bytes, sizes);
      const archive_result held = npyguard::npz::validate_stream(in_memory, opts);
      INFO(describe(held));
      CHECK(held == expected);
      uneven_source on_disk(bytes, sizes);
      // The file has no name while it is written: the directory stays empty.
      std::size_t names_seen = 0;
      on_disk.at_end = [&] { names_seen += directory.entries().size(); };
      const archive_result spooled = npyguard::npz::validate_stream_spooled(on_disk, opts, directory.path().c_str());
      INFO(describe(spooled));
      CHECK(spooled == expected);
      CHECK(names_seen == 0);
    }
  }
  CHECK(directory.entries().empty());
}

TEST_CASE("a stream past its limit is io_error, read one byte past it and no further", "[npz][entry][spool]") {
  const std::string& bytes = large_archive();
  scratch_directory directory;
  npyguard::options opts;
  opts.limits.max_stream_bytes = bytes.size() - 1;
  uneven_source in_memory(bytes, {65536});
  require_io_error(npyguard::npz::validate_stream(in_memory, opts));
  CHECK(in_memory.delivered() == bytes.size());
  uneven_source on_disk(bytes, {65536});
  require_io_error(npyguard::npz::validate_stream_spooled(on_disk, opts, directory.path().c_str()));
  CHECK(on_disk.delivered() == bytes.size());

  // At the limit exactly: accepted.
  opts.limits.max_stream_bytes = bytes.size();
  uneven_source exact(bytes, {65536});
  CHECK(npyguard::npz::validate_stream(exact, opts).ok());
  uneven_source exact_on_disk(bytes, {65536});
  CHECK(npyguard::npz::validate_stream_spooled(exact_on_disk, opts, directory.path().c_str()).ok());

  // max_total_bytes + 64 MiB caps max_stream_bytes: with max_total_bytes
  // 1024 a stream two bytes longer than 64 MiB + 1024 is read one byte past that.
  const std::string zeros((std::size_t{64} << 20) + 1024 + 2, '\0');
  npyguard::options total;
  total.limits.max_total_bytes = 1024;
  uneven_source long_zeros(zeros, {1 << 20});
  require_io_error(npyguard::npz::validate_stream_spooled(long_zeros, total, directory.path().c_str()));
  CHECK(long_zeros.delivered() == zeros.size() - 1);
  uneven_source long_zeros_in_memory(zeros, {1 << 20});
  require_io_error(npyguard::npz::validate_stream(long_zeros_in_memory, total));
  CHECK(long_zeros_in_memory.delivered() == zeros.size() - 1);
  CHECK(directory.entries().empty());
}

TEST_CASE("a read error while a stream is held is io_error", "[npz][entry][spool]") {
  const std::string& bytes = large_archive();
  scratch_directory directory;
  for (const std::size_t at : {std::size_t{0}, std::size_t{100000}, bytes.size() - 1}) {
    uneven_source in_memory(bytes, {4096});
    in_memory.fail_at = at;
    require_io_error(npyguard::npz::validate_stream(in_memory, {}));
    uneven_source on_disk(bytes, {4096});
    on_disk.fail_at = at;
    require_io_error(npyguard::npz::validate_stream_spooled(on_disk, {}, directory.path().c_str()));
  }
}

TEST_CASE("a temporary directory that cannot hold the stream is io_error", "[npz][entry][spool]") {
  const std::string small = build_zip({member("a.npy", 10, 0)}).bytes;
  // Missing, named by the caller or by $TMPDIR; a file, not a directory.
  uneven_source named(small, {4096});
  require_io_error(npyguard::npz::validate_stream_spooled(named, {}, "/nonexistent/npyguard-spool"));
  {
    const scoped_environment missing("TMPDIR", "/nonexistent/npyguard-spool");
    uneven_source from_environment(small, {4096});
    require_io_error(npyguard::npz::validate_stream_spooled(from_environment, {}));
  }
  uneven_source not_directory(small, {4096});
  require_io_error(npyguard::npz::validate_stream_spooled(not_directory, {}, "/dev/null"));

  // $TMPDIR names the directory when the caller does not; the file there
  // has no name ("(deleted)") while the stream is written.
  scratch_directory directory;
  const scoped_environment chosen("TMPDIR", directory.path().c_str());
  uneven_source watched(small, {4096});
  std::vector<std::string> open_files;
  watched.at_end = [&] { open_files = files_open_in(directory.path()); };
  CHECK(npyguard::npz::validate_stream_spooled(watched, {}).ok());
  if (::access("/proc/self/fd", R_OK) == 0) {
    REQUIRE(open_files.size() == 1);
    CHECK(open_files.front().size() > 10);
    CHECK(open_files.front().compare(open_files.front().size() - 10, 10, " (deleted)") == 0);
  }
  CHECK(directory.entries().empty());
}

TEST_CASE("a temporary file that cannot be written is io_error", "[npz][entry][spool]") {
  // RLIMIT_FSIZE turns writes past 64 KiB into EFBIG, as a full disk turns
  // them into ENOSPC (SIGXFSZ ignored, as the kernel then asks).
  const std::string& bytes = large_archive();
  scratch_directory directory;
  rlimit old{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &old) == 0);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction old_action {};
  REQUIRE(::sigaction(SIGXFSZ, &ignore, &old_action) == 0);
  rlimit small = old;
  small.rlim_cur = 65536;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  uneven_source on_disk(bytes, {65536});
  const archive_result r = npyguard::npz::validate_stream_spooled(on_disk, {}, directory.path().c_str());
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::sigaction(SIGXFSZ, &old_action, nullptr);
  require_io_error(r);
}
