// deflate_decoder against zlib's raw inflate (inflateInit2(-15),
// Z_NO_FLUSH) on the same stream, handed over in the same pieces and asked
// for output in the same sizes: after every call the outcome, the bytes
// consumed and written and the output must be the same (after a data error,
// the bytes consumed are not compared: nobody reads them). Used by
// fuzz/fuzz_inflate.cpp and tests/test_deflate_decoder.cpp.
#ifndef NPYGUARD_FUZZ_INFLATE_DIFFERENTIAL_HPP
#define NPYGUARD_FUZZ_INFLATE_DIFFERENTIAL_HPP

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <zlib.h>

#include "npz/deflate_decoder.hpp"

namespace npyguard::fuzz {

enum class inflate_verdict { ended, corrupt, needs_input };

struct inflate_comparison {
  bool agree = true;
  std::string disagreement; // the first difference, for the failure message
  inflate_verdict verdict = inflate_verdict::needs_input;
  std::vector<unsigned char> output;
  std::uint64_t consumed = 0; // zlib's total_in at the end (not after an error)
};

// zlib's raw inflate state, reset for each stream.
class zlib_inflater {
public:
  zlib_inflater() {
    if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) std::abort();
  }
  ~zlib_inflater() { inflateEnd(&stream_); }
  zlib_inflater(const zlib_inflater&) = delete;
  zlib_inflater& operator=(const zlib_inflater&) = delete;
  z_stream& stream() noexcept { return stream_; }

private:
  z_stream stream_{};
};

inline const char* verdict_name(inflate_verdict verdict) {
  switch (verdict) {
    case inflate_verdict::ended: return "ended";
    case inflate_verdict::corrupt: return "corrupt";
    case inflate_verdict::needs_input: return "more";
  }
  return "?";
}

// Each call first makes input_steps[i] more bytes available (cycling; the
// bytes not consumed yet stay available), then asks for output_sizes[i]
// bytes. Stops at the end, a data error, or once all input is handed over
// and a call leaves output room (more input needed).
inline inflate_comparison compare_inflate(const unsigned char* data, std::size_t size,
                                          const std::vector<std::size_t>& input_steps,
                                          const std::vector<std::size_t>& output_sizes,
                                          npz::detail::deflate_decoder& ours, zlib_inflater& theirs) {
  inflate_comparison result;
  ours.reset();
  z_stream& z = theirs.stream();
  inflateReset(&z);
  std::size_t handed = 0;
  std::size_t ours_at = 0;
  std::size_t zlib_at = 0;
  std::size_t idle_calls = 0; // calls in a row with nothing consumed or written
  for (std::size_t call = 0;; ++call) {
    const std::size_t step = input_steps[call % input_steps.size()];
    const std::size_t handed_before = handed;
    handed = step >= size - handed ? size : handed + step;
    const std::size_t out_size = output_sizes[call % output_sizes.size()];
    // Exactly sized output blocks, so that ASan sees a write past the end
    // (left uninitialised: only the bytes written are compared).
    const std::unique_ptr<unsigned char[]> zlib_out(new unsigned char[std::max<std::size_t>(out_size, 1)]);
    const std::unique_ptr<unsigned char[]> ours_out(new unsigned char[std::max<std::size_t>(out_size, 1)]);
    z.next_in = size == 0 ? nullptr : const_cast<Bytef*>(data + zlib_at); // zlib only reads
    z.avail_in = static_cast<uInt>(handed - zlib_at);
    z.next_out = zlib_out.get();
    z.avail_out = static_cast<uInt>(out_size);
    const int code = inflate(&z, Z_NO_FLUSH);
    const std::size_t zlib_consumed = (handed - zlib_at) - z.avail_in;
    const std::size_t zlib_written = out_size - z.avail_out;
    const inflate_verdict zlib_verdict = code == Z_STREAM_END   ? inflate_verdict::ended
                                         : code == Z_DATA_ERROR ? inflate_verdict::corrupt
                                                                : inflate_verdict::needs_input;
    if (code != Z_OK && code != Z_BUF_ERROR && code != Z_STREAM_END && code != Z_DATA_ERROR) std::abort();
    const auto step_result =
        ours.decode(size == 0 ? nullptr : data + ours_at, handed - ours_at, ours_out.get(), out_size);
    const inflate_verdict ours_verdict =
        step_result.result == npz::detail::deflate_decoder::outcome::ended     ? inflate_verdict::ended
        : step_result.result == npz::detail::deflate_decoder::outcome::corrupt ? inflate_verdict::corrupt
                                                                               : inflate_verdict::needs_input;
    const std::string where = "call " + std::to_string(call) + " (input at " + std::to_string(zlib_at) + " of " +
                              std::to_string(handed) + " handed, output " + std::to_string(out_size) + "): ";
    if (ours_verdict != zlib_verdict) {
      result.agree = false;
      result.disagreement = where + "zlib says " + verdict_name(zlib_verdict) + ", ours " + verdict_name(ours_verdict);
      return result;
    }
    if (step_result.written != zlib_written ||
        (zlib_written != 0 && std::memcmp(zlib_out.get(), ours_out.get(), zlib_written) != 0)) {
      result.agree = false;
      result.disagreement = where + "zlib wrote " + std::to_string(zlib_written) + " bytes, ours " +
                            std::to_string(step_result.written) + " (or other bytes)";
      return result;
    }
    result.output.insert(result.output.end(), zlib_out.get(), zlib_out.get() + zlib_written);
    result.verdict = zlib_verdict;
    if (zlib_verdict == inflate_verdict::corrupt) return result;
    if (step_result.consumed != zlib_consumed) {
      result.agree = false;
      result.disagreement = where + "zlib consumed " + std::to_string(zlib_consumed) + " bytes, ours " +
                            std::to_string(step_result.consumed);
      return result;
    }
    if (ours.total_out() != z.total_out) {
      result.agree = false;
      result.disagreement = where + "total_out differs";
      return result;
    }
    zlib_at += zlib_consumed;
    ours_at += step_result.consumed;
    result.consumed = zlib_at;
    if (zlib_verdict == inflate_verdict::ended) return result;
    if (handed == size && zlib_written < out_size) return result; // needs input that is not there
    idle_calls = zlib_consumed == 0 && zlib_written == 0 && handed == handed_before ? idle_calls + 1 : 0;
    if (idle_calls > 2 * (input_steps.size() + output_sizes.size())) return result; // the plan makes no progress
  }
}

} // namespace npyguard::fuzz

#endif
