// .npz member data (npyguard/npz/data.hpp): read_archive verifies every
// member and copies each one's array data where the sink says, from the same
// input; the sink is asked only after every header passed.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "npyguard/npz/data.hpp"
#include "support.hpp"
#include "zip_builder.hpp"

using npyguard::error_code;
using npyguard::npz::archive_result;
using namespace npyguard_test;

namespace {

// A .npy file whose data bytes are 0, 1, 2, ... (mod 251), so that a copy
// from the wrong offset shows.
std::string counting_npy(std::string_view dict, std::size_t data_bytes) {
  std::string file = npy_file(dict, 1, 0);
  for (std::size_t i = 0; i < data_bytes; ++i) file.push_back(static_cast<char>(i % 251));
  return file;
}

const std::string ints = counting_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 12);
const std::string big = counting_npy("{'descr': '<u2', 'fortran_order': False, 'shape': (100000,), }", 200000);
const std::string empty = counting_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", 0);
const std::string objects = npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 1, 7);

zip_entry entry(std::string name, std::string data, std::uint16_t method) {
  zip_entry e;
  e.name = std::move(name);
  e.data = std::move(data);
  e.method = method;
  return e;
}

// The data part of a .npy file.
std::string data_of(const std::string& npy) { return npy.substr(npy.find('\n') + 1); }

// Owns one buffer per member, or hands out none (`copy` false).
struct collecting_sink final : npyguard::npz::member_sink {
  bool copy = true;
  int refuse_at = -1;
  std::vector<std::size_t> asked;
  std::vector<std::unique_ptr<unsigned char[]>> buffers;
  std::vector<std::uint64_t> sizes;

  bool destination(std::size_t index, const npyguard::npz::member& m, void*& out) noexcept override {
    asked.push_back(index);
    if (static_cast<int>(index) == refuse_at) return false;
    if (!copy) {
      out = nullptr;
      return true;
    }
    auto& buffer = buffers.emplace_back(new unsigned char[m.npy.nbytes + 1]);
    sizes.push_back(m.npy.nbytes);
    std::memset(buffer.get(), 0xEE, m.npy.nbytes + 1);
    out = buffer.get();
    return true;
  }
  [[nodiscard]] std::string held(std::size_t i) const {
    return {reinterpret_cast<const char*>(buffers[i].get()), static_cast<std::size_t>(sizes[i])};
  }
};

archive_result read_zip(const std::string& bytes, npyguard::npz::member_sink& sink,
                        const npyguard::options& opts = {}) {
  return npyguard::npz::read_archive(bytes.data(), bytes.size(), sink, opts);
}

} // namespace

TEST_CASE("read_archive copies each member's data, stored and deflated", "[npz][data]") {
  const zip_archive zip =
      build_zip({entry("a.npy", ints, 0), entry("b.npy", big, 8), entry("c.npy", empty, 8), entry("d.npy", big, 0)});
  collecting_sink sink;
  const archive_result r = read_zip(zip.bytes, sink);
  require_ok(r);
  CHECK(r.value().verified);
  CHECK(sink.asked == std::vector<std::size_t>{0, 1, 2, 3});
  REQUIRE(sink.buffers.size() == 4);
  CHECK(sink.held(0) == data_of(ints));
  CHECK(sink.held(1) == data_of(big));
  CHECK(sink.held(2).empty());
  CHECK(sink.held(3) == data_of(big));
  // Nothing written past nbytes.
  CHECK(sink.buffers[0][12] == 0xEE);
  CHECK(sink.buffers[2][0] == 0xEE);
  // The same model as validation with verify.
  npyguard::options verify;
  verify.verify = true;
  CHECK(r == npyguard::npz::validate_buffer(zip.bytes.data(), zip.bytes.size(), verify));
}

TEST_CASE("read_archive from a file and from a source reads what the buffer gives", "[npz][data]") {
  const zip_archive zip = build_zip({entry("a.npy", ints, 8), entry("b.npy", big, 0)});
  scratch_dir dir;
  const std::string path = dir.write("x.npz", zip.bytes);
  collecting_sink from_file;
  const archive_result by_path = npyguard::npz::read_archive_file(path.c_str(), from_file);
  require_ok(by_path);
  CHECK(from_file.held(0) == data_of(ints));
  CHECK(from_file.held(1) == data_of(big));

  struct memory final : npyguard::random_access_source {
    const std::string* bytes = nullptr;
    std::uint64_t size() const noexcept override { return bytes->size(); }
    std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
      const std::size_t n = std::min<std::size_t>(size, bytes->size() - offset);
      std::memcpy(buffer, bytes->data() + offset, n);
      return static_cast<std::ptrdiff_t>(n);
    }
  } source;
  source.bytes = &zip.bytes;
  collecting_sink from_source;
  const archive_result by_source = npyguard::npz::read_archive(source, from_source);
  require_ok(by_source);
  CHECK(from_source.held(1) == data_of(big));
  CHECK(by_source.value().members == by_path.value().members);

  collecting_sink none;
  require_error(npyguard::npz::read_archive_file(dir.file("missing.npz").c_str(), none), error_code::io_error,
                std::nullopt);
  CHECK(none.asked.empty());
}

TEST_CASE("read_archive verifies members it does not copy", "[npz][data]") {
  zip_archive zip = build_zip({entry("a.npy", ints, 0), entry("b.npy", big, 0)});
  // One data byte of b.npy changed: its CRC-32 no longer matches.
  const std::uint64_t changed = zip.entries[1].data + 200;
  zip.bytes[changed] = static_cast<char>(zip.bytes[changed] ^ 1);
  // validate without verify does not read the data...
  require_ok(npyguard::npz::validate_buffer(zip.bytes.data(), zip.bytes.size()));
  // ...read_archive reads it all, with or without a copy.
  for (const bool copy : {true, false}) {
    collecting_sink sink;
    sink.copy = copy;
    const archive_result r = read_zip(zip.bytes, sink);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure().code == error_code::crc_mismatch);
    CHECK(r.failure().offset == zip.entries[1].data);
    CHECK(r.failure().member == std::string("b.npy"));
  }
}

TEST_CASE("read_archive asks the sink only when every header passed", "[npz][data]") {
  std::string bad = ints;
  bad[offset_of(bad, "'<i4'", 1)] = 'q'; // descr '<q4' is not a type
  const zip_archive zip = build_zip({entry("a.npy", ints, 0), entry("b.npy", bad, 0)});
  collecting_sink sink;
  const archive_result r = read_zip(zip.bytes, sink);
  REQUIRE_FALSE(r.ok());
  CHECK(r.failure().code == error_code::bad_descr);
  CHECK(r.failure().member == std::string("b.npy"));
  CHECK(sink.asked.empty());
}

TEST_CASE("a sink that refuses stops read_archive with out_of_memory", "[npz][data]") {
  const zip_archive zip = build_zip({entry("a.npy", ints, 0), entry("b.npy", big, 8)});
  collecting_sink sink;
  sink.refuse_at = 1;
  const archive_result r = read_zip(zip.bytes, sink);
  REQUIRE_FALSE(r.ok());
  CHECK(r.failure().code == error_code::out_of_memory);
  CHECK(r.failure().offset == zip.entries[1].data);
  CHECK(r.failure().member == std::string("b.npy"));
  CHECK(sink.asked == std::vector<std::size_t>{0, 1});
}

TEST_CASE("read_archive refuses object members even when they are allowed", "[npz][data]") {
  npyguard::options opts;
  opts.allow_object = true;
  const std::uint64_t data_offset = objects.size() - 7;
  for (const std::uint16_t method : {std::uint16_t{0}, std::uint16_t{8}}) {
    const zip_archive zip = build_zip({entry("a.npy", ints, 0), entry("o.npy", objects, method)});
    require_ok(npyguard::npz::validate_buffer(zip.bytes.data(), zip.bytes.size(), opts));
    collecting_sink sink;
    const archive_result r = read_zip(zip.bytes, sink, opts);
    REQUIRE_FALSE(r.ok());
    CHECK(r.failure().code == error_code::object_dtype);
    // Stored: the data's own byte in the archive; deflated: the member's data start.
    CHECK(r.failure().offset == (method == 0 ? zip.entries[1].data + data_offset : zip.entries[1].data));
    CHECK(r.failure().member == std::string("o.npy"));
    CHECK(r.failure().member_offset == data_offset);
    CHECK(sink.asked == std::vector<std::size_t>{0});
  }
}
