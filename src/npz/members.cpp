#include "npz/members.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "npy/framing.hpp"
#include "npy/pipeline.hpp"
#include "npy/workspace.hpp"
#include "npz/crc32.hpp"
#include "npz/failure.hpp"
#include "npz/inflater.hpp"
#include "npz/records.hpp"

namespace npyguard::npz::detail {

namespace {

using std::to_string;

constexpr std::size_t small_member = std::size_t{64} * 1024;

// A stored member read through the archive: bytes [0, size) of the member
// are the archive's bytes from data_start. A read error is kept for the
// caller (the pipeline sees -EIO).
class stored_source final : public random_access_source {
public:
  stored_source(archive_reader& reader, const entry& e) noexcept : reader_(reader), entry_(e) {}
  [[nodiscard]] std::uint64_t size() const noexcept override { return entry_.uncompressed.value; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (offset >= entry_.uncompressed.value) return 0;
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(size, entry_.uncompressed.value - offset));
    try {
      // A small member is read with what follows it (the next entries' local
      // headers and first bytes, usually): one read serves many members.
      // A large one, and any with minimal reads, is read no further than asked.
      const std::size_t ahead =
          entry_.uncompressed.value <= small_member && !reader_.minimal_reads() ? small_member : n;
      const unsigned char* bytes = nullptr;
      failure = reader_.view(entry_.data_start + offset, n, bytes, ahead);
      if (!failure && n != 0) std::memcpy(buffer, bytes, n);
    } catch (const std::bad_alloc&) {
      failure = error{error_code::out_of_memory, std::nullopt, "out of memory", std::nullopt, std::nullopt};
    }
    return failure ? -EIO : static_cast<std::ptrdiff_t>(n);
  }
  std::optional<error> failure;

private:
  archive_reader& reader_;
  const entry& entry_;
};

// SPEC-npz.md section 9, "compressed bytes buy output": the stream asked
// for more compressed bytes than its output so far pays for.
error unbought(const inflater& stream, const entry& e) {
  return fail(error_code::bad_deflate, e.data_start,
              "the member's deflate stream spends " + to_string(stream.consumed()) + " compressed bytes on its first " +
                  to_string(stream.produced()) + " bytes of output, more than the " +
                  to_string(input_allowance(stream.produced())) + " (512 + P + P/16) they pay for",
              e.name);
}

// A deflate member's first bytes, inflated in the stages of SPEC-npz.md
// section 9; the pipeline reads them as an input of the declared size.
// `bytes` holds them: emptied here, its capacity kept from the archive's
// earlier members.
class deflate_prefix final : public random_access_source {
public:
  deflate_prefix(inflater& stream, const entry& e, std::vector<unsigned char>& bytes) noexcept
      : entry_(e), inflater_(stream), bytes_(bytes) {
    inflater_.start(e);
    bytes_.clear();
  }
  [[nodiscard]] std::uint64_t size() const noexcept override { return entry_.uncompressed.value; }
  std::ptrdiff_t read_at(std::uint64_t offset, void* buffer, std::size_t size) noexcept override {
    if (offset >= bytes_.size()) return 0;
    const std::size_t n = std::min(size, bytes_.size() - static_cast<std::size_t>(offset));
    std::memcpy(buffer, bytes_.data() + offset, n);
    return static_cast<std::ptrdiff_t>(n);
  }

  // Inflates until min(target, declared size) bytes are held. The buffer
  // grows with what the stream actually produced, never by a declared size.
  std::optional<error> fill(std::uint64_t target) {
    const auto goal = static_cast<std::size_t>(std::min(target, entry_.uncompressed.value));
    inflater::status outcome = inflater::status::ok;
    while (bytes_.size() < goal && outcome == inflater::status::ok) {
      const std::size_t have = bytes_.size();
      const std::size_t step = std::min(goal - have, std::max<std::size_t>(4096, have));
      bytes_.resize(have + step);
      std::size_t written = 0;
      std::optional<error> failure;
      outcome = inflater_.inflate(bytes_.data() + have, step, written, failure);
      bytes_.resize(have + written);
      if (failure) return failure;
    }
    switch (outcome) {
      case inflater::status::ok: return std::nullopt;
      case inflater::status::corrupt:
        return fail(
            error_code::bad_deflate, entry_.data_start,
            "the member's deflate stream is corrupt within its first " + to_string(bytes_.size() + 1) + " bytes",
            entry_.name);
      case inflater::status::unbought: return unbought(inflater_, entry_);
      case inflater::status::ended:
      case inflater::status::exhausted: break;
    }
    return fail(error_code::size_mismatch, entry_.data_start,
                "the member's deflate stream ends after " + to_string(bytes_.size()) + " bytes, short of the " +
                    to_string(entry_.uncompressed.value) + " declared",
                entry_.name);
  }

private:
  const entry& entry_;
  inflater& inflater_;
  std::vector<unsigned char>& bytes_;
};

// A .npy error inside a member, placed in the archive.
error inside(error failure, const entry& e) {
  failure.member_offset = failure.offset;
  failure.offset = e.method == method_stored && failure.offset ? e.data_start + *failure.offset : e.data_start;
  failure.member = e.name;
  return failure;
}

// A stored member's header into `model`, read in place or by range.
std::optional<error> validate_stored(archive_reader& reader, const entry& e, const options& opts,
                                     npyguard::detail::workspace& space, header& model, std::optional<error>& failure) {
  if (reader.in_memory()) {
    const unsigned char* bytes = nullptr;
    if ((failure = reader.view(e.data_start, 0, bytes))) return failure;
    return npyguard::detail::validate_contiguous(space, bytes, static_cast<std::size_t>(e.uncompressed.value), opts,
                                                 model);
  }
  stored_source source(reader, e);
  std::optional<error> checked = npyguard::detail::validate_random_access(space, source, opts, model);
  failure = source.failure;
  return checked;
}

// What phase F keeps from one deflate member to the next.
struct deflate_state {
  explicit deflate_state(archive_reader& archive) noexcept : reader(archive) {}
  archive_reader& reader;
  std::optional<inflater> stream;   // made for the first deflate member, reused for the others
  std::vector<unsigned char> bytes; // its members' first bytes, one at a time
  std::uint64_t unpaid_header = 0;  // header bytes beyond what the members' compressed bytes pay for
};

// Header amplification (SPEC-npz.md section 9, docs/SPEC-npz.md's settled
// points): a deflate member's header is paid for by the compressed bytes it
// inflates from, 1 KiB plus eight times them (K: what zlib has consumed
// when the header's last byte comes out; the bytes of the data after it pay
// for nothing); beyond that, the archive's headers together may run over by
// at most 64 KiB plus an eighth of the archive's size, and never more than
// limits.max_header_bytes. Checked before the header is inflated with the
// member's whole compressed size C (K <= C, so the charge can only be
// larger), after every 64 KiB of header output with the bytes consumed so
// far, and at the header's end: a kilobyte of deflate never costs a
// megabyte of parsing, and the header text no member pays for grows with
// the archive, 192 KiB at 1 MiB (about a quarter of a millisecond to
// inflate and parse as white space). A 4,000-field struct's 71 KB header
// deflates to 10 KB, 7 to 1, and pays for itself; white space deflates
// 1,000 to 1.
constexpr std::uint64_t header_grace = 1024;
constexpr std::uint64_t header_ratio = 8;
constexpr std::uint64_t unpaid_floor = std::uint64_t{64} * 1024;
constexpr std::uint64_t unpaid_share = 8; // the archive's size over this
constexpr std::uint64_t header_step = std::uint64_t{64} * 1024;

// What the archive's headers may run over in all: a bound on the header text no member pays for.
std::uint64_t unpaid_allowance(std::uint64_t archive_size, const options& opts) noexcept {
  return std::min<std::uint64_t>(opts.limits.max_header_bytes, unpaid_floor + archive_size / unpaid_share);
}

// How far `header` bytes of header run past what `compressed` bytes pay for.
std::uint64_t header_excess(std::uint64_t header, std::uint64_t compressed) noexcept {
  const std::uint64_t paid = header_grace + header_ratio * std::min<std::uint64_t>(compressed, 1ull << 59);
  return header > paid ? header - paid : 0;
}

// header_too_large when the archive's unpaid header bytes so far plus this
// member's `excess` (`header` bytes from `compressed` bytes) pass the allowance.
std::optional<error> charge_header(const deflate_state& state, std::uint64_t header, std::uint64_t compressed,
                                   std::uint64_t excess, const options& opts) {
  const std::uint64_t unpaid = state.unpaid_header + excess;
  const std::uint64_t allowance = unpaid_allowance(state.reader.size(), opts);
  if (unpaid <= allowance) return std::nullopt;
  error failure{error_code::header_too_large, 8,
                "the member's header of " + to_string(header) + " bytes inflates from " + to_string(compressed) +
                    " compressed bytes; the archive's headers run " + to_string(unpaid) +
                    " bytes past 1 KiB plus eight times the compressed bytes they inflate from, more than the " +
                    to_string(allowance) + " allowed (64 KiB plus an eighth of the archive's " +
                    to_string(state.reader.size()) + " bytes, capped at the header limit of " +
                    to_string(opts.limits.max_header_bytes) + ")"};
  // The option decides only where its limit is the smaller bound.
  if (allowance < opts.limits.max_header_bytes) return failure;
  return refused(std::move(failure), "max_header_bytes", opts.limits.max_header_bytes, unpaid);
}

// Inflates the member's header (up to the data, or all its declared bytes
// when they end first), charging it as it comes (header amplification).
std::optional<error> inflate_header(deflate_state& state, deflate_prefix& prefix, const entry& e,
                                    const npyguard::detail::preamble& framing, const options& opts,
                                    std::optional<error>& failure) {
  const std::uint64_t header_end = std::min(framing.data_offset(), e.uncompressed.value);
  const std::uint64_t header = header_end > framing.header_offset ? header_end - framing.header_offset : 0;
  if (auto bad = charge_header(state, header, e.compressed.value, header_excess(header, e.compressed.value), opts)) {
    return bad;
  }
  const inflater& stream = *state.stream;
  for (;;) {
    // The next multiple of 64 KiB of header text, or the header's end.
    const std::uint64_t held =
        state.bytes.size() > framing.header_offset ? state.bytes.size() - framing.header_offset : 0;
    const std::uint64_t target = std::min(header_end, framing.header_offset + header_step * (held / header_step + 1));
    if ((failure = prefix.fill(target))) return failure;
    const std::uint64_t so_far = target > framing.header_offset ? target - framing.header_offset : 0;
    const std::uint64_t excess = header_excess(so_far, stream.consumed());
    if (auto bad = charge_header(state, so_far, stream.consumed(), excess, opts)) return bad;
    if (target == header_end) {
      state.unpaid_header += excess;
      return std::nullopt;
    }
  }
}

// A deflated member's header into `model`: the preamble, the header and
// one byte more are inflated into the state's bytes.
std::optional<error> validate_deflated(deflate_state& state, const entry& e, const options& opts,
                                       npyguard::detail::workspace& space, header& model,
                                       std::optional<error>& failure) {
  if (!state.stream) state.stream.emplace(state.reader);
  deflate_prefix prefix(*state.stream, e, state.bytes);
  if ((failure = prefix.fill(npyguard::detail::max_preamble_size))) return failure;
  unsigned char preamble_bytes[npyguard::detail::max_preamble_size];
  const auto held = static_cast<std::size_t>(prefix.read_at(0, preamble_bytes, sizeof preamble_bytes));
  npyguard::detail::preamble framing;
  if (auto bad = npyguard::detail::read_preamble(preamble_bytes, held, opts, framing)) return bad;
  if (auto bad = inflate_header(state, prefix, e, framing, opts, failure)) return bad;
  // The header is held whole now (up to the data, or all the member's
  // declared bytes when it is shorter): read in place, not copied again. The
  // pipeline reads no byte past the header of a contiguous input; the
  // declared size decides the data verdict, as for any input.
  const std::uint64_t held_bytes = state.bytes.size();
  const std::uint64_t declared = e.uncompressed.value;
  if (held_bytes < std::min(framing.data_offset(), declared) || declared > std::numeric_limits<std::size_t>::max()) {
    if (auto bad = npyguard::detail::validate_random_access(space, prefix, opts, model)) return bad;
  } else if (auto bad = npyguard::detail::validate_contiguous(space, state.bytes.data(),
                                                              static_cast<std::size_t>(declared), opts, model)) {
    return bad;
  }
  // One byte past the header: a stream that stops right after it is seen.
  if ((failure = prefix.fill(model.data_offset + 1))) return failure;
  return std::nullopt;
}

// Where one member's array data goes while it streams past: the bytes
// [begin, end) of the member's .npy bytes, to `destination`.
struct data_copy {
  unsigned char* destination = nullptr;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;

  // `bytes` are the member's bytes [at, at + size): copies what of them is data.
  void take(std::uint64_t at, const unsigned char* bytes, std::size_t size) const noexcept {
    if (destination == nullptr) return;
    const std::uint64_t from = std::max(at, begin);
    const std::uint64_t to = std::min(at + size, end);
    if (from >= to) return;
    std::memcpy(destination + (from - begin), bytes + (from - at), static_cast<std::size_t>(to - from));
  }
};

// The sink's answer for one member; object members are refused before it is asked.
std::optional<error> ask_sink(member_sink& sink, std::size_t index, const member& m, const entry& e, data_copy& out) {
  if (m.npy.data_is_pickle) {
    error refused{error_code::object_dtype, m.npy.data_offset,
                  "the member's data is a pickle of Python objects (object dtype), which npyguard never reads"};
    return inside(std::move(refused), e);
  }
  void* destination = nullptr;
  // Where size_t is narrower than the data (32-bit), no caller could hold it.
  const bool addressable = m.npy.nbytes <= std::numeric_limits<std::size_t>::max();
  if (!addressable || !sink.destination(index, m, destination)) {
    return fail(error_code::out_of_memory, e.data_start,
                "no memory for the member's " + to_string(m.npy.nbytes) + " data bytes", e.name);
  }
  out.destination = static_cast<unsigned char*>(destination);
  out.begin = m.npy.data_offset;
  out.end = m.npy.data_offset + m.npy.nbytes; // within the member's size (phase F)
  return std::nullopt;
}

// Verification's output buffer: large, so that zlib returns (and copies
// its window) seldom, and no larger than the largest deflate member needs.
std::size_t inflate_buffer_size(const std::vector<entry>& entries) {
  constexpr std::uint64_t max_buffer = std::uint64_t{1} << 20;
  std::uint64_t size = 1;
  for (const entry& e : entries) {
    if (e.method != method_stored) size = std::max(size, std::min(max_buffer, e.uncompressed.value + 1));
  }
  return static_cast<std::size_t>(size);
}

} // namespace

std::optional<error> validate_members(archive_reader& reader, const std::vector<entry>& entries, const options& opts,
                                      std::vector<member>& out) {
  out.reserve(entries.size());
  deflate_state deflated(reader);
  npyguard::detail::workspace_lease lease; // one workspace for every member's header
  for (const entry& e : entries) {
    std::optional<error> archive_failure; // the archive's own (reads, inflation)
    member m;
    std::optional<error> rejected = e.method == method_stored
                                        ? validate_stored(reader, e, opts, lease.get(), m.npy, archive_failure)
                                        : validate_deflated(deflated, e, opts, lease.get(), m.npy, archive_failure);
    if (archive_failure) {
      if (!archive_failure->member) archive_failure->member = e.name;
      return archive_failure;
    }
    if (rejected) return inside(std::move(*rejected), e);
    m.name = e.name;
    m.key = e.key;
    m.method = e.method == method_stored ? compression::stored : compression::deflate;
    m.crc32 = e.crc;
    m.compressed_size = e.compressed.value;
    m.uncompressed_size = e.uncompressed.value;
    m.local_header_offset = e.local_offset.value;
    m.data_start = e.data_start;
    out.push_back(std::move(m));
  }
  return std::nullopt;
}

std::optional<error> verify_members(archive_reader& reader, const std::vector<entry>& entries,
                                    const std::vector<member>& models, member_sink* sink) {
  constexpr std::size_t stored_chunk = std::size_t{64} * 1024;
  std::vector<unsigned char> buffer(inflate_buffer_size(entries));
  std::optional<inflater> stream;
  for (std::size_t index = 0; index < entries.size(); ++index) {
    const entry& e = entries[index];
    data_copy copy;
    if (sink != nullptr) {
      if (auto failure = ask_sink(*sink, index, models[index], e, copy)) return failure;
    }
    std::uint32_t crc = 0;
    if (e.method == method_stored) {
      for (std::uint64_t done = 0; done < e.compressed.value;) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(stored_chunk, e.compressed.value - done));
        const unsigned char* bytes = nullptr;
        if (auto failure = reader.view(e.data_start + done, n, bytes)) {
          failure->member = e.name;
          return failure;
        }
        crc = crc32_update(crc, bytes, n);
        copy.take(done, bytes, n);
        done += n;
      }
    } else {
      if (!stream) stream.emplace(reader);
      stream->start(e);
      std::optional<error> failure;
      std::size_t written = 0;
      inflater::status outcome = inflater::status::ok;
      // Stop at the declared size + 1: a longer stream is seen, never followed.
      while (outcome == inflater::status::ok && stream->produced() <= e.uncompressed.value && !stream->ended()) {
        const auto n = static_cast<std::size_t>(
            std::min<std::uint64_t>(buffer.size(), e.uncompressed.value + 1 - stream->produced()));
        const std::uint64_t at = stream->produced();
        outcome = stream->inflate(buffer.data(), n, written, failure);
        crc = crc32_update(crc, buffer.data(), written);
        copy.take(at, buffer.data(), written);
        if (failure) {
          failure->member = e.name;
          return failure;
        }
      }
      if (outcome == inflater::status::corrupt) {
        return fail(error_code::bad_deflate, e.data_start,
                    "the member's deflate stream is corrupt after " + to_string(stream->produced()) + " bytes", e.name);
      }
      if (outcome == inflater::status::unbought) return unbought(*stream, e);
      if (stream->produced() != e.uncompressed.value || !stream->ended() || stream->consumed() != e.compressed.value) {
        const std::string why = stream->produced() > e.uncompressed.value
                                    ? "inflates to more than the " + to_string(e.uncompressed.value) + " bytes declared"
                                : !stream->ended() ? "does not reach its final block within its " +
                                                         to_string(e.compressed.value) + " compressed bytes"
                                : stream->produced() != e.uncompressed.value
                                    ? "inflates to " + to_string(stream->produced()) + " bytes, not the " +
                                          to_string(e.uncompressed.value) + " declared"
                                    : "ends after " + to_string(stream->consumed()) + " of its " +
                                          to_string(e.compressed.value) + " compressed bytes";
        return fail(error_code::size_mismatch, e.data_start, "the member's deflate stream " + why, e.name);
      }
    }
    if (crc != e.crc) {
      return fail(error_code::crc_mismatch, e.data_start,
                  "the member's CRC-32 is " + to_string(crc) + ", the directory says " + to_string(e.crc), e.name);
    }
  }
  return std::nullopt;
}

} // namespace npyguard::npz::detail
