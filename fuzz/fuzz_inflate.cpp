// deflate_decoder (src/npz/deflate_decoder.cpp) against zlib's raw inflate:
// the same stream, handed over in fuzzer-chosen pieces with fuzzer-chosen
// output sizes, must give the same output, outcome and bytes consumed after
// every call (fuzz/inflate_differential.hpp). Then the same decoder, reset,
// must do it again with the whole stream at once, as the .npz reader reuses
// one decoder for every member.
//
// Input: 8 plan bytes, then the raw deflate stream.
//   bytes 0-3  the input handed before each call (cycled): input_steps[b & 15];
//              byte 0's bit 4 set: single code lengths by the pair table
//              (and packed literals by 4 index bits) even where the
//              processor has the vector instructions
//   bytes 4-7  the output asked for in each call (cycled): output_sizes[b & 15]
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "fuzz_common.hpp"
#include "inflate_differential.hpp"

namespace {

constexpr std::size_t input_steps[16] = {0, 1,  2,  3,  4,   5,    7,     8,
                                         9, 16, 31, 64, 255, 4096, 65536, std::numeric_limits<std::size_t>::max()};
constexpr std::size_t output_sizes[16] = {0, 1, 2, 3, 7, 8, 100, 257, 258, 300, 321, 322, 1000, 4096, 32768, 65536};

void check(const npyguard::fuzz::inflate_comparison& comparison) {
  if (!comparison.agree) std::fprintf(stderr, "deflate_decoder and zlib differ: %s\n", comparison.disagreement.c_str());
  NPYGUARD_FUZZ_CHECK(comparison.agree);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  npyguard::fuzz::input_reader reader(data, size);
  std::vector<std::size_t> steps;
  std::vector<std::size_t> outputs;
  const unsigned first = reader.byte();
  steps.push_back(input_steps[first & 15]);
  for (int i = 1; i < 4; ++i) steps.push_back(input_steps[reader.byte() & 15]);
  for (int i = 0; i < 4; ++i) outputs.push_back(output_sizes[reader.byte() & 15]);
  if (outputs == std::vector<std::size_t>(4, 0)) outputs[0] = 1; // some output, or no progress
  const auto stream = npyguard::fuzz::exact_copy(reader.data(), reader.size());
  auto ours = std::make_unique<npyguard::npz::detail::deflate_decoder>();
  // Single code lengths by vectors where the processor has them, or by the
  // pair table: bit 4 of the first byte.
  ours->use_vector_lengths((first & 0x10U) == 0);
  npyguard::fuzz::zlib_inflater theirs;
  const auto planned = npyguard::fuzz::compare_inflate(stream.get(), reader.size(), steps, outputs, *ours, theirs);
  check(planned);
  const auto whole = npyguard::fuzz::compare_inflate(stream.get(), reader.size(), {reader.size()},
                                                     {std::size_t{1} << 16}, *ours, theirs);
  check(whole);
  // The verdict does not depend on how the stream was cut.
  NPYGUARD_FUZZ_CHECK(planned.verdict == whole.verdict ||
                      planned.verdict == npyguard::fuzz::inflate_verdict::needs_input ||
                      whole.verdict == npyguard::fuzz::inflate_verdict::needs_input);
  return 0;
}
