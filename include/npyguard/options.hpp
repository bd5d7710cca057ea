// npyguard: what the caller may configure.
#ifndef NPYGUARD_OPTIONS_HPP
#define NPYGUARD_OPTIONS_HPP

#include <atomic>
#include <cstdint>
#include <limits>

namespace npyguard {

struct limits {
  // HEADER_LEN above this is header_too_large, decided before any allocation.
  std::uint32_t max_header_bytes = 1024 * 1024;
  // Nesting of lists and tuples in the header. Values above
  // hard_max_depth are treated as hard_max_depth.
  std::uint32_t max_depth = 32;
  // Dimensions of the array shape, of .npy files and .npz members alike
  // (numpy 2 builds 64, numpy 1.x 32: set 32 for consumers on numpy 1.x).
  // (Subarray shapes of fields are capped at 32, numpy's NPY_MAXDIMS.
  // RawArray: values above 2^20, ra::hard_max_ndim, count as
  // 2^20, which keeps the header size 48 + 8 * ndims far from wrapping.)
  std::uint32_t max_ndim = 64;
  // nbytes above this is data_too_large.
  std::uint64_t max_data_bytes = std::numeric_limits<std::uint64_t>::max();

  // .npz archives (SPEC-npz.md section 8), decided from declared sizes
  // before anything is inflated.
  // Entries declared by the end of central directory record (or Zip64 record).
  std::uint64_t max_members = 65535;
  // Sum of the members' declared uncompressed sizes, stored members included.
  std::uint64_t max_total_bytes = std::uint64_t{1} << 32;
  // Declared uncompressed / compressed size of each deflate member (DEFLATE
  // cannot exceed 1032:1, so a member above it lies about its size).
  std::uint64_t max_ratio = 1032;
  // An archive read from a stream (a pipe) is held in memory
  // (npz::validate_stream: what arrived plus one chunk of at most 1 MiB) or
  // on an unlinked temporary file (npz::validate_stream_spooled, the
  // command): at most this many bytes, and never more than max_total_bytes
  // + 64 MiB; past that the stream is refused (io_error) rather than read on.
  std::uint64_t max_stream_bytes = (std::uint64_t{1} << 32) + (std::uint64_t{64} << 20);
};

// Python's own parser refuses more than 200 open brackets, and the dict's
// own '{' is one of them, so numpy never reads more than 199 lists and
// tuples nested inside the dict; the cap also bounds the parser's recursion.
inline constexpr std::uint32_t hard_max_depth = 199;

struct options {
  ::npyguard::limits limits{};
  // Accept 'O' (pickled Python objects). The pickle is never read or
  // executed; the data-size checks are skipped because its length is unknown.
  bool allow_object = false;
  // Accept bytes after the array data (otherwise trailing_data).
  bool allow_trailing_data = false;
  // The canonical profile (SPEC.md section 6): a file valid by every other
  // rule must also have exactly the header bytes np.save writes for its
  // model (encode_header), or it is not_canonical at the first byte that
  // differs.
  bool canonical = false;
  // validate_file on a FIFO, socket or device, and validate_fd: the longest
  // wait, in milliseconds, for the input to deliver what the verdict needs
  // (the whole validation of that input); then io_error. 0: no limit.
  // Regular files never wait.
  std::uint32_t timeout_ms = 0;
  // .npz: after the members' headers, read every member in full with fixed
  // buffers: inflate to the end, compare exact lengths and the CRC-32
  // (SPEC-npz.md section 10). Off: a verdict from the first bytes only.
  bool verify = false;
  // RawArray (SPEC-ra.md): accept element type 5 (RawArray.jl's Bool with
  // elbyte 1, rawarray-rust's bfloat16 with elbyte 2); off: code 5 is
  // unknown_element_type like 6 and above.
  bool ra_allow_type5 = true;
  // RawArray: refuse metadata, the bytes after the data (trailing_data at
  // the data end), for callers who want no polyglot. Off: metadata is
  // accepted, never read, and reported.
  bool ra_reject_metadata = false;
  // Sources read by offset (validate_source, validate_file): read only the
  // bytes the verdict needs, in exact reads, instead of reading ahead to save
  // calls. For inputs where every byte is billed or slow (object storage by
  // range requests). A .npy costs two reads (its 12-byte preamble, then the
  // rest of its header); a .npz the end-record window SPEC-npz.md section 14
  // counts, the central directory, and each member's local header and first
  // bytes, never a stored member's data. The verdict is the same either way.
  bool minimal_reads = false;
  // Set by another thread to stop a call on a path or a descriptor (the
  // validate_file, validate_fd and read_archive_file of each format, and
  // validate_input): every later read of the input, and a wait for a
  // stream's bytes within about 50 ms, then answers io_error ("Operation
  // canceled"). Null: the call runs to its verdict. Python's Ctrl-C sets
  // one.
  const std::atomic<bool>* cancel = nullptr;

  // The format's own limits only: every limit at its maximum, objects and
  // trailing data allowed, the default profile. Accepts a superset of what
  // any other options accept (the writer checks its own output with it, the
  // fuzzers compare against it).
  [[nodiscard]] static options loosest() noexcept {
    options out;
    out.allow_object = true;
    out.allow_trailing_data = true;
    out.limits.max_header_bytes = std::numeric_limits<std::uint32_t>::max();
    out.limits.max_depth = hard_max_depth;
    out.limits.max_ndim = std::numeric_limits<std::uint32_t>::max();
    out.limits.max_data_bytes = std::numeric_limits<std::uint64_t>::max();
    out.limits.max_members = std::numeric_limits<std::uint64_t>::max();
    out.limits.max_total_bytes = std::numeric_limits<std::uint64_t>::max();
    out.limits.max_ratio = std::numeric_limits<std::uint64_t>::max();
    out.limits.max_stream_bytes = std::numeric_limits<std::uint64_t>::max();
    return out;
  }
};

} // namespace npyguard

#endif
