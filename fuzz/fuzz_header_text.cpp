// The header text alone through text decoding, grammar and validation, in
// each format version's decoding (latin-1 for 1.0 and 2.0, UTF-8 for 3.0).
//
// Input: one byte choosing the version (1, 2 or 3; others modulo 3), two configuration bytes
// (fuzz_common.hpp), then the header text.
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace npyguard;
  fuzz::input_reader in(data, size);
  const unsigned version = 1u + (in.byte() + 2u) % 3u; // 1, 2, 3 mean themselves
  const std::uint8_t first = in.byte();
  const options opts = fuzz::decode_options(first, in.byte());
  const auto text = fuzz::exact_copy(in.data(), in.size());

  const result verdict = validate_header_text(text.get(), in.size(), version, opts);
  const result loose = validate_header_text(text.get(), in.size(), version, fuzz::loosest_options());
  fuzz::check_against_loosest(verdict, loose);
  if (const header* model = verdict.value_if()) {
    fuzz::check_model(*model, opts);
    NPYGUARD_FUZZ_CHECK(model->major_version == version);
    NPYGUARD_FUZZ_CHECK(model->header_length == in.size());
    fuzz::check_descr_round_trip(*model, opts);
  } else {
    const error& failure = verdict.failure();
    NPYGUARD_FUZZ_CHECK(failure.offset.has_value());
    NPYGUARD_FUZZ_CHECK(*failure.offset <= (version == 1 ? 10u : 12u) + in.size());
    NPYGUARD_FUZZ_CHECK(!failure.message.empty());
  }
  return 0;
}
