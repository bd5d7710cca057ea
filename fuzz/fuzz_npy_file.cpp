// Whole files through the memory-buffer entry point.
//
// Input: four configuration bytes (the first two choose the options and
// limits, see fuzz_common.hpp; the other two belong to fuzz_npy_stream and
// are skipped so both targets share one corpus), then the file.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace npyguard;
  fuzz::input_reader in(data, size);
  const std::uint8_t first = in.byte();
  const options opts = fuzz::decode_options(first, in.byte());
  in.byte();
  in.byte();
  const auto file = fuzz::exact_copy(in.data(), in.size());

  const result verdict = validate_buffer(file.get(), in.size(), opts);
  fuzz::check_against_loosest(verdict, validate_buffer(file.get(), in.size(), fuzz::loosest_options()));
  // Read by offset, reading ahead or only what it needs, the file gets the
  // same verdict; with minimal reads no byte past the header is read.
  for (const bool minimal : {false, true}) {
    options by_offset = opts;
    by_offset.minimal_reads = minimal;
    fuzz::memory_source source(file.get(), in.size());
    NPYGUARD_FUZZ_CHECK(validate_source(source, by_offset) == verdict);
    if (const header* model = verdict.value_if(); model != nullptr && minimal) {
      NPYGUARD_FUZZ_CHECK(source.furthest() <= std::max<std::uint64_t>(model->data_offset, 12));
    }
  }
  if (const header* model = verdict.value_if()) {
    fuzz::check_model(*model, opts);
    if (!model->data_is_pickle) {
      const std::uint64_t end = model->data_offset + model->nbytes;
      NPYGUARD_FUZZ_CHECK(opts.allow_trailing_data ? end <= in.size() : end == in.size());
    }
    NPYGUARD_FUZZ_CHECK(model->data_offset <= in.size());
    fuzz::check_descr_round_trip(*model, opts);
  } else {
    const error& failure = verdict.failure();
    NPYGUARD_FUZZ_CHECK(failure.code != error_code::io_error);
    NPYGUARD_FUZZ_CHECK(failure.offset.has_value());
    // An offset may name the end of the input (a truncation), never beyond.
    NPYGUARD_FUZZ_CHECK(*failure.offset <= in.size());
    NPYGUARD_FUZZ_CHECK(!failure.message.empty());
  }
  return 0;
}
