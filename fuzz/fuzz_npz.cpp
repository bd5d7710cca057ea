// Whole .npz archives through the buffer and random-access entry points, and
// with verification through read_archive (the members' data copied out).
//
// Input: four configuration bytes (the first two choose the .npy options and
// limits as in fuzz_common.hpp; the third the archive's: bit 0 verify, bits
// 1-2 max_members, bits 3-4 max_total_bytes, bits 5-6 max_ratio; the fourth
// is reserved), then the archive.
#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <vector>

#include "fuzz_common.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/npz/validate.hpp"
#include "npz_mutator.hpp"

namespace {

using namespace npyguard;

void check_archive(const npz::archive& archive, const options& opts, std::size_t size) {
  NPYGUARD_FUZZ_CHECK(archive.size == size);
  NPYGUARD_FUZZ_CHECK(archive.members.size() <= opts.limits.max_members);
  NPYGUARD_FUZZ_CHECK(archive.central_directory_offset + archive.central_directory_size <= size);
  std::uint64_t total = 0;
  for (const npz::member& m : archive.members) {
    NPYGUARD_FUZZ_CHECK(m.name.size() > 4 && m.name.compare(m.name.size() - 4, 4, ".npy") == 0);
    NPYGUARD_FUZZ_CHECK(m.key == m.name.substr(0, m.name.size() - 4));
    NPYGUARD_FUZZ_CHECK(m.local_header_offset < m.data_start);
    NPYGUARD_FUZZ_CHECK(m.data_start + m.compressed_size <= archive.central_directory_offset);
    if (m.method == npz::compression::stored) NPYGUARD_FUZZ_CHECK(m.compressed_size == m.uncompressed_size);
    total += m.uncompressed_size;
    NPYGUARD_FUZZ_CHECK(total <= opts.limits.max_total_bytes);
    fuzz::check_model(m.npy, opts);
    if (!m.npy.data_is_pickle) {
      const std::uint64_t end = m.npy.data_offset + m.npy.nbytes;
      NPYGUARD_FUZZ_CHECK(opts.allow_trailing_data ? end <= m.uncompressed_size : end == m.uncompressed_size);
    }
  }
}

// Copies every member's data into buffers of its own (read_archive's sink).
struct copying_sink final : npz::member_sink {
  std::vector<std::unique_ptr<unsigned char[]>> buffers;
  bool destination(std::size_t index, const npz::member& m, void*& out) noexcept override {
    NPYGUARD_FUZZ_CHECK(index == buffers.size());
    buffers.emplace_back(new (std::nothrow) unsigned char[m.npy.nbytes + 1]);
    out = buffers.back().get();
    return out != nullptr;
  }
};

// read_archive is validation with verify on, plus the copy: the same verdict
// (object members aside, which it refuses), and each stored member's copy
// equals its bytes in the archive.
void check_read(const unsigned char* file, std::size_t size, const options& opts, const npz::archive_result& verified) {
  copying_sink sink;
  const npz::archive_result read = npz::read_archive(file, size, sink, opts);
  if (!read.ok() && read.failure().code == error_code::object_dtype && read.failure().member) {
    // Accepted by validation: then only for a member whose data is a pickle.
    bool pickled = !verified.ok();
    for (const npz::member& m : verified.ok() ? verified.value().members : std::vector<npz::member>{}) {
      pickled = pickled || m.npy.data_is_pickle;
    }
    NPYGUARD_FUZZ_CHECK(pickled);
    return;
  }
  NPYGUARD_FUZZ_CHECK(read == verified);
  if (!read.ok()) return;
  const auto& members = read.value().members;
  NPYGUARD_FUZZ_CHECK(sink.buffers.size() == members.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    const npz::member& m = members[i];
    if (m.method != npz::compression::stored || m.npy.nbytes == 0) continue;
    NPYGUARD_FUZZ_CHECK(std::memcmp(sink.buffers[i].get(), file + m.data_start + m.npy.data_offset,
                                    static_cast<std::size_t>(m.npy.nbytes)) == 0);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input_reader in(data, size);
  const std::uint8_t first = in.byte();
  options opts = fuzz::decode_options(first, in.byte());
  const std::uint8_t third = in.byte();
  in.byte();
  constexpr std::uint64_t members[4] = {65535, 0, 1, 3};
  constexpr std::uint64_t totals[4] = {std::uint64_t{1} << 32, 0, 100, 4096};
  constexpr std::uint64_t ratios[4] = {1032, 1, 2, 100};
  opts.verify = (third & 1) != 0;
  opts.limits.max_members = members[(third >> 1) & 3];
  opts.limits.max_total_bytes = totals[(third >> 3) & 3];
  opts.limits.max_ratio = ratios[(third >> 5) & 3];
  const auto file = fuzz::exact_copy(in.data(), in.size());

  const npz::archive_result verdict = npz::validate_buffer(file.get(), in.size(), opts);
  // Both readers of the archive reach the same verdict.
  fuzz::memory_source source(file.get(), in.size());
  const npz::archive_result by_offset = npz::validate_source(source, opts);
  NPYGUARD_FUZZ_CHECK(verdict == by_offset);
  options minimal = opts;
  minimal.minimal_reads = true;
  fuzz::memory_source exact(file.get(), in.size());
  NPYGUARD_FUZZ_CHECK(npz::validate_source(exact, minimal) == verdict);
  if (opts.verify) check_read(file.get(), in.size(), opts, verdict);
  if (const npz::archive* archive = verdict.value_if()) {
    check_archive(*archive, opts, in.size());
    // Verification only adds checks; the loosest options only remove some.
    options unverified = opts;
    unverified.verify = false;
    const npz::archive_result lighter = npz::validate_buffer(file.get(), in.size(), unverified);
    NPYGUARD_FUZZ_CHECK(lighter.ok() && lighter.value().members == archive->members);
    options loosest = options::loosest();
    loosest.verify = opts.verify;
    const npz::archive_result loose = npz::validate_buffer(file.get(), in.size(), loosest);
    NPYGUARD_FUZZ_CHECK(loose.ok() && loose.value().members.size() == archive->members.size());
  } else {
    const error& failure = verdict.failure();
    NPYGUARD_FUZZ_CHECK(failure.code != error_code::io_error);
    NPYGUARD_FUZZ_CHECK(failure.code == error_code::not_zip || failure.offset.has_value());
    NPYGUARD_FUZZ_CHECK(!failure.offset || *failure.offset <= in.size());
    NPYGUARD_FUZZ_CHECK(!failure.member_offset || failure.member.has_value());
    NPYGUARD_FUZZ_CHECK(!failure.message.empty());
  }
  return 0;
}

// libFuzzer calls this instead of its own mutator (npz_mutator.hpp): one
// input in eight, and any input that does not parse as a zip, still gets a
// plain byte-level mutation.
extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  namespace m = npyguard::fuzz::npz_mutator;
  std::mt19937 random(seed);
  const auto plain = [&] { return LLVMFuzzerMutate != nullptr ? LLVMFuzzerMutate(data, size, max_size) : size; };
  std::optional<m::archive> parsed = m::parse(std::string(reinterpret_cast<const char*>(data), size));
  if (!parsed || random() % 8 == 0) return plain();
  if (random() % 16 == 0) parsed->config[random() % 4] = static_cast<char>(random());
  m::mutate(*parsed, random, max_size);
  const std::string out = m::serialise(*parsed);
  if (out.size() > max_size) return plain();
  std::memcpy(data, out.data(), out.size());
  return out.size();
}
