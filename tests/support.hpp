// Test helpers: building .npy byte strings and checking verdicts.
#ifndef NPYGUARD_TESTS_SUPPORT_HPP
#define NPYGUARD_TESTS_SUPPORT_HPP

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "npyguard/npyguard.hpp"

namespace npyguard_test {

inline std::string preamble(unsigned major, std::uint64_t header_length) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back('\0');
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out.push_back(static_cast<char>((header_length >> (8 * i)) & 0xFF));
  return out;
}

// The header text exactly as given (no padding added).
inline std::string raw_file(std::string_view header_text, unsigned major = 1, std::size_t data_bytes = 0) {
  return preamble(major, header_text.size()) + std::string(header_text) + std::string(data_bytes, '\xAB');
}

// numpy's layout: dict, spaces, '\n', data offset a multiple of 64.
inline std::string padded_header(std::string_view dict, unsigned major = 1) {
  const std::size_t preamble_size = major == 1 ? 10 : 12;
  std::string text(dict);
  const std::size_t total = preamble_size + text.size() + 1;
  text.append((64 - total % 64) % 64, ' ');
  text.push_back('\n');
  return text;
}

inline std::string npy_file(std::string_view dict, unsigned major = 1, std::size_t data_bytes = 0) {
  return raw_file(padded_header(dict, major), major, data_bytes);
}

inline npyguard::result check_bytes(const std::string& bytes, const npyguard::options& opts = {}) {
  return npyguard::validate_buffer(bytes.data(), bytes.size(), opts);
}

// File offset of the first occurrence of `marker` in `bytes` (plus `delta`).
inline std::uint64_t offset_of(const std::string& bytes, std::string_view marker, std::size_t delta = 0) {
  const auto at = bytes.find(marker);
  REQUIRE(at != std::string::npos);
  return at + delta;
}

// "accepted", or "rejected: CODE at offset N" for INFO messages.
inline std::string describe_failure(const npyguard::result& r) {
  const npyguard::error* failure = r.failure_if();
  if (!failure) return "accepted";
  std::ostringstream out;
  out << "rejected: " << npyguard::error_code_name(failure->code) << " at offset ";
  if (failure->offset) {
    out << *failure->offset;
  } else {
    out << "none";
  }
  return out.str();
}

// Any format's result (.npy's npyguard::result, RawArray's ra::result).
template <typename Model>
void require_error(const npyguard::basic_result<Model>& checked, npyguard::error_code code,
                   std::optional<std::uint64_t> offset) {
  REQUIRE_FALSE(checked.ok());
  INFO("message: " << checked.failure().message);
  CHECK(npyguard::error_code_name(checked.failure().code) == npyguard::error_code_name(code));
  CHECK(checked.failure().offset.has_value() == offset.has_value());
  CHECK(checked.failure().offset.value_or(~0ull) == offset.value_or(~0ull));
  CHECK_FALSE(checked.failure().message.empty());
}

template <typename Model>
void require_ok(const npyguard::basic_result<Model>& checked) {
  if (!checked.ok()) {
    INFO("unexpected " << npyguard::error_code_name(checked.failure().code) << " at "
                       << checked.failure().offset.value_or(~0ull) << ": " << checked.failure().message);
    REQUIRE(checked.ok());
  }
}

// Runs `check` on a thread and waits at most `limit`: a hang or a quadratic
// path fails the test instead of stalling the suite (the thread is then left
// behind; the process ends with the run).
template <typename Check>
auto within(std::chrono::seconds limit, Check check) -> decltype(check()) {
  using verdict = decltype(check());
  auto promise = std::make_shared<std::promise<verdict>>();
  std::future<verdict> answer = promise->get_future();
  std::thread([promise, check = std::move(check)] { promise->set_value(check()); }).detach();
  if (answer.wait_for(limit) != std::future_status::ready) {
    FAIL("no verdict within " << limit.count() << " s");
  }
  return answer.get();
}

// The bytes in chunks of at most `chunk` (validate_stream's input).
class chunked_source final : public npyguard::byte_source {
public:
  chunked_source(const std::string& bytes, std::size_t chunk) : bytes_(bytes), chunk_(chunk) {}
  std::ptrdiff_t read(void* buffer, std::size_t size) noexcept override {
    const std::size_t n = std::min(std::min(size, chunk_), bytes_.size() - at_);
    std::memcpy(buffer, bytes_.data() + at_, n);
    at_ += n;
    return static_cast<std::ptrdiff_t>(n);
  }
  // How many bytes were handed out so far.
  [[nodiscard]] std::size_t delivered() const noexcept { return at_; }

private:
  const std::string& bytes_;
  std::size_t chunk_;
  std::size_t at_ = 0;
};

// Replaces the file at `path` with `bytes`.
inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  REQUIRE(out.good());
}

// A fresh directory under $TMPDIR (or /tmp), removed with what it holds
// (files and empty directories) at the end of the test.
class scratch_dir {
public:
  scratch_dir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/npyguard_test_XXXXXX";
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~scratch_dir() {
    for (const auto& name : entries()) {
      const std::string full = file(name);
      if (::rmdir(full.c_str()) != 0) ::unlink(full.c_str());
    }
    ::rmdir(path_.c_str());
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string file(const std::string& name) const { return path_ + "/" + name; }
  // Writes `bytes` to the file `name`; returns its path.
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string full = file(name);
    write_file(full, bytes);
    return full;
  }
  [[nodiscard]] std::vector<std::string> entries() const {
    std::vector<std::string> names;
    if (DIR* dir = ::opendir(path_.c_str())) {
      while (const dirent* entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(dir);
    }
    return names;
  }

private:
  std::string path_;
};

} // namespace npyguard_test

#endif
