// Structured errors (issue 36): every option and limit that can refuse an
// input, each on a minimal input, with the error's code, offset (and member)
// and the fields that say which setting refused it and with which numbers
// (error.hpp's table). Errors no setting can lift name no option.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "npyguard/npz/validate.hpp"
#include "npyguard/ra/validate.hpp"
#include "ra_support.hpp"
#include "support.hpp"
#include "zip_builder.hpp"

using npyguard::error_code;
using namespace npyguard_test;

namespace {

struct expected {
  error_code code;
  std::optional<std::uint64_t> offset;
  std::string_view option;
  std::optional<std::uint64_t> limit = std::nullopt;
  std::optional<std::uint64_t> actual = std::nullopt;
  std::optional<std::string> member = std::nullopt;
  std::optional<std::uint64_t> member_offset = std::nullopt;
};

template <typename Result>
void require_refusal(const Result& r, const expected& want) {
  REQUIRE_FALSE(r.ok());
  const npyguard::error& e = r.failure();
  INFO(npyguard::error_code_name(e.code) << ": " << e.message);
  CHECK(npyguard::error_code_name(e.code) == npyguard::error_code_name(want.code));
  CHECK(e.offset == want.offset);
  CHECK(e.member == want.member);
  CHECK(e.member_offset == want.member_offset);
  CHECK(e.option == want.option);
  CHECK(e.limit == want.limit);
  CHECK(e.actual == want.actual);
  CHECK(e.limit.has_value() == e.actual.has_value());
  // The library's words name no interface's spelling of the option.
  if (!want.option.empty()) {
    CHECK(e.message.find(want.option) == std::string::npos);
    CHECK(e.message.find("limits.") == std::string::npos);
    CHECK(e.message.find("--") == std::string::npos);
  }
}

std::uint64_t header_len_of(const std::string& file) {
  return static_cast<unsigned char>(file[8]) | (static_cast<std::uint64_t>(static_cast<unsigned char>(file[9])) << 8);
}

const std::string ints = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 1, 12);
const std::string floats = npy_file("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 2), }", 1, 32);

npyguard::npz::archive_result check_zip(const std::string& bytes, const npyguard::options& opts) {
  return npyguard::npz::validate_buffer(bytes.data(), bytes.size(), opts);
}

npyguard::ra::result check_ra(const std::string& bytes, const npyguard::options& opts) {
  return npyguard::ra::validate_buffer(bytes.data(), bytes.size(), opts);
}

zip_entry member(std::string name, std::string data, std::uint16_t method = 0) {
  zip_entry e;
  e.name = std::move(name);
  e.data = std::move(data);
  e.method = method;
  return e;
}

// A pipe whose writer stays open and silent: a read waits for the timeout.
class silent_pipe {
public:
  silent_pipe() { REQUIRE(::pipe(ends_) == 0); }
  ~silent_pipe() {
    ::close(ends_[0]);
    ::close(ends_[1]);
  }
  silent_pipe(const silent_pipe&) = delete;
  silent_pipe& operator=(const silent_pipe&) = delete;
  [[nodiscard]] int reader() const noexcept { return ends_[0]; }

private:
  int ends_[2] = {-1, -1};
};

} // namespace

TEST_CASE("max_header_bytes: HEADER_LEN, header text, and an archive's unpaid header bytes", "[errors]") {
  npyguard::options opts;
  opts.limits.max_header_bytes = 64;
  require_refusal(check_bytes(ints, opts),
                  {error_code::header_too_large, 8, "max_header_bytes", 64, header_len_of(ints)});
  // validate_header_text: the text's size.
  const std::string text = ints.substr(10, header_len_of(ints));
  require_refusal(npyguard::validate_header_text(text.data(), text.size(), 1, opts),
                  {error_code::header_too_large, 8, "max_header_bytes", 64, text.size()});
  // A member's own HEADER_LEN, placed in the archive.
  const zip_archive stored = build_zip({member("a.npy", ints)});
  require_refusal(check_zip(stored.bytes, opts), {error_code::header_too_large, stored.entries[0].data + 8,
                                                  "max_header_bytes", 64, header_len_of(ints), "a.npy", 8});
  // Header amplification: each header fits, the second one's unpaid bytes
  // take the archive's sum past the limit.
  std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (0,), }";
  dict += std::string(20000 - dict.size() - 1, ' ') + "\n";
  const std::string white = raw_file(dict, 1, 0);
  const zip_archive zip = build_zip({member("a.npy", white, 8), member("b.npy", white, 8)});
  const std::uint64_t unpaid = 20000 - (1024 + 8 * raw_deflate(white).size());
  opts.limits.max_header_bytes = 20000;
  require_refusal(check_zip(zip.bytes, opts), {error_code::header_too_large, zip.entries[1].data, "max_header_bytes",
                                               20000, 2 * unpaid, "b.npy", 8});
}

TEST_CASE("max_depth: the limit and one past it", "[errors]") {
  const std::string deep = npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': ((1,),), }", 1, 4);
  npyguard::options opts;
  opts.limits.max_depth = 1;
  require_refusal(check_bytes(deep, opts), {error_code::depth_exceeded, offset_of(deep, "(1,)"), "max_depth", 1, 2});
  // Values above hard_max_depth count as hard_max_depth.
  std::string nested = "{'descr': '<i4', 'fortran_order': False, 'shape': ";
  nested += std::string(200, '(') + std::string(200, ')') + ", }";
  const std::string hostile = npy_file(nested, 1, 0);
  opts.limits.max_depth = std::numeric_limits<std::uint32_t>::max();
  require_refusal(check_bytes(hostile, opts), {error_code::depth_exceeded, offset_of(hostile, "(") + 199, "max_depth",
                                               npyguard::hard_max_depth, npyguard::hard_max_depth + 1});
}

TEST_CASE("max_ndim: .npy files, .npz members and RawArray headers", "[errors]") {
  const std::string three = npy_file("{'descr': '|u1', 'fortran_order': False, 'shape': (1, 1, 1), }", 1, 1);
  const std::uint64_t third = offset_of(three, "(") + 1 + 2 * 3;
  npyguard::options opts;
  opts.limits.max_ndim = 2;
  require_refusal(check_bytes(three, opts), {error_code::too_many_dimensions, third, "max_ndim", 2, 3});
  const zip_archive zip = build_zip({member("a.npy", three)});
  require_refusal(check_zip(zip.bytes, opts),
                  {error_code::too_many_dimensions, zip.entries[0].data + third, "max_ndim", 2, 3, "a.npy", third});
  ra_fields f;
  f.dims = {1, 1, 1};
  require_refusal(check_ra(ra_file(f), opts), {error_code::too_many_dimensions, 40, "max_ndim", 2, 3});
  // RawArray counts at most hard_max_ndim.
  f.dims = {};
  f.ndims = std::uint64_t{npyguard::ra::hard_max_ndim} + 1;
  opts.limits.max_ndim = std::numeric_limits<std::uint32_t>::max();
  require_refusal(check_ra(ra_header(f), opts),
                  {error_code::too_many_dimensions, 40, "max_ndim", npyguard::ra::hard_max_ndim, *f.ndims});
}

TEST_CASE("max_data_bytes: .npy nbytes and RawArray data length", "[errors]") {
  npyguard::options opts;
  opts.limits.max_data_bytes = 11;
  require_refusal(check_bytes(ints, opts),
                  {error_code::data_too_large, offset_of(ints, "(3,)"), "max_data_bytes", 11, 12});
  ra_fields f; // 2 x 3 float64: 48 bytes
  opts.limits.max_data_bytes = 47;
  require_refusal(check_ra(ra_file(f), opts), {error_code::data_too_large, 32, "max_data_bytes", 47, 48});
}

TEST_CASE("allow_object, allow_trailing_data, canonical: settings without numbers", "[errors]") {
  const std::string objects = npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", 1, 0);
  require_refusal(check_bytes(objects), {error_code::object_dtype, offset_of(objects, "'|O'"), "allow_object"});

  const std::string trailing = ints + "x";
  require_refusal(check_bytes(trailing), {error_code::trailing_data, ints.size(), "allow_trailing_data"});
  chunked_source stream(trailing, 7);
  require_refusal(npyguard::validate_stream(stream), {error_code::trailing_data, ints.size(), "allow_trailing_data"});

  const std::string odd =
      raw_file("{'descr':'<i4','fortran_order':False,'shape':(3,)}" + std::string(69, ' ') + "\n", 1, 12);
  std::uint64_t differs = 0;
  while (differs < odd.size() && odd[differs] == ints[differs]) ++differs;
  npyguard::options canonical;
  canonical.canonical = true;
  require_refusal(check_bytes(odd, canonical), {error_code::not_canonical, differs, "canonical"});
}

TEST_CASE("max_members, max_total_bytes, max_ratio: the archive's declared numbers", "[errors]") {
  const zip_archive zip = build_zip({member("a.npy", ints), member("b.npy", floats, 8)});
  npyguard::options opts;
  opts.limits.max_members = 1;
  require_refusal(check_zip(zip.bytes, opts), {error_code::too_many_members, zip.eocd + 10, "max_members", 1, 2});

  opts = {};
  opts.limits.max_total_bytes = ints.size() + floats.size() - 1;
  require_refusal(check_zip(zip.bytes, opts),
                  {error_code::total_size_exceeded, zip.entries[1].central + 24, "max_total_bytes",
                   ints.size() + floats.size() - 1, ints.size() + floats.size(), "b.npy"});

  opts = {};
  opts.limits.max_ratio = 1;
  const std::uint64_t compressed = raw_deflate(floats).size();
  REQUIRE(compressed < floats.size());
  const std::uint64_t ratio = (floats.size() + compressed - 1) / compressed;
  require_refusal(check_zip(zip.bytes, opts),
                  {error_code::ratio_exceeded, zip.entries[1].central + 24, "max_ratio", 1, ratio, "b.npy"});
  // No compressed bytes: an unbounded ratio.
  zip_entry empty = member("c.npy", ints, 8);
  empty.compressed = std::string();
  const zip_archive nothing = build_zip({empty});
  require_refusal(check_zip(nothing.bytes, {}),
                  {error_code::ratio_exceeded, nothing.entries[0].central + 24, "max_ratio", 1032,
                   std::numeric_limits<std::uint64_t>::max(), "c.npy"});
}

TEST_CASE("max_stream_bytes, or max_total_bytes + 64 MiB: a stream read one byte past its limit", "[errors]") {
  const zip_archive zip = build_zip({member("a.npy", ints)});
  npyguard::options opts;
  opts.limits.max_stream_bytes = zip.bytes.size() - 1;
  const expected want{error_code::io_error, std::nullopt, "max_stream_bytes", zip.bytes.size() - 1, zip.bytes.size()};
  chunked_source in_memory(zip.bytes, 5);
  require_refusal(npyguard::npz::validate_stream(in_memory, opts), want);
  chunked_source spooled(zip.bytes, 5);
  require_refusal(npyguard::npz::validate_stream_spooled(spooled, opts), want);

  const std::string zeros((std::size_t{64} << 20) + 16 + 1, '\0');
  npyguard::options total;
  total.limits.max_total_bytes = 16;
  const std::uint64_t limit = (std::uint64_t{64} << 20) + 16;
  chunked_source long_stream(zeros, 1 << 20);
  require_refusal(npyguard::npz::validate_stream(long_stream, total),
                  {error_code::io_error, std::nullopt, "max_total_bytes", limit, limit + 1});
}

TEST_CASE("timeout_ms: a descriptor that delivers nothing in time", "[errors]") {
  npyguard::options opts;
  opts.timeout_ms = 20;
  const expected want{error_code::io_error, std::nullopt, "timeout_ms"};
  {
    const silent_pipe pipe;
    require_refusal(npyguard::validate_fd(pipe.reader(), opts), want);
  }
  {
    const silent_pipe pipe;
    require_refusal(npyguard::npz::validate_fd(pipe.reader(), opts), want);
  }
  {
    const silent_pipe pipe;
    require_refusal(npyguard::ra::validate_fd(pipe.reader(), opts), want);
  }
}

TEST_CASE("ra_allow_type5 and ra_reject_metadata", "[errors]") {
  ra_fields bool_type;
  bool_type.eltype = 5;
  bool_type.elbyte = 1;
  npyguard::options opts;
  opts.ra_allow_type5 = false;
  require_refusal(check_ra(ra_file(bool_type), opts), {error_code::unknown_element_type, 16, "ra_allow_type5"});

  const ra_fields f;
  const std::string with_metadata = ra_file(f, "meta");
  const std::uint64_t data_end = with_metadata.size() - 4;
  opts = {};
  opts.ra_reject_metadata = true;
  require_refusal(check_ra(with_metadata, opts), {error_code::trailing_data, data_end, "ra_reject_metadata"});
  chunked_source stream(with_metadata, 3);
  require_refusal(npyguard::ra::validate_stream(stream, opts),
                  {error_code::trailing_data, data_end, "ra_reject_metadata"});
}

TEST_CASE("errors no setting can lift name no option", "[errors]") {
  std::string bad = ints;
  bad[0] = 'X';
  require_refusal(check_bytes(bad), {error_code::bad_magic, 0, ""});
  require_refusal(check_bytes(ints.substr(0, ints.size() - 1)), {error_code::truncated_data, ints.size() - 1, ""});
  // A v1 header text longer than HEADER_LEN's 16 bits, whatever the limit.
  const std::string text(70000, ' ');
  require_refusal(npyguard::validate_header_text(text.data(), text.size(), 1, npyguard::options::loosest()),
                  {error_code::header_too_large, 8, ""});
  // numpy's own limit on a field's subarray dimensions is no option.
  std::string shape = "(";
  for (int i = 0; i < 33; ++i) shape += "1,";
  const std::string fields =
      npy_file("{'descr': [('a', '<i4', " + shape + "))], 'fortran_order': False, 'shape': (), }", 1, 4);
  const npyguard::result r = check_bytes(fields, npyguard::options::loosest());
  REQUIRE_FALSE(r.ok());
  CHECK(r.failure().code == error_code::too_many_dimensions);
  CHECK(r.failure().option.empty());
  CHECK_FALSE(r.failure().limit.has_value());
  ra_fields f;
  f.elbyte = 3;
  require_refusal(check_ra(ra_file(f), {}), {error_code::bad_element_size, 24, ""});
}

TEST_CASE("errors compare equal only with equal fields", "[errors]") {
  npyguard::error a{error_code::header_too_large, 8, "m"};
  npyguard::error b = a;
  CHECK(a == b);
  b.option = "max_header_bytes";
  CHECK(a != b);
  a.option = "max_header_bytes";
  CHECK(a == b);
  b.limit = 1;
  b.actual = 2;
  CHECK(a != b);
}
