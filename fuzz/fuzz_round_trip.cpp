// The writer against the validator: validate -> encode_header -> validate.
//
// Input: the format of fuzz_npy_file (four configuration bytes, then the
// file), so its corpus seeds this one. For every file the options accept:
//   - encode_header of its model succeeds (every valid model can be written);
//   - the written header with the same data is valid and canonical, and
//     gives the same dtype, shape, count and nbytes; fortran_order as numpy
//     writes it; the data at a multiple of 64;
//   - writing the written model again gives the same bytes (a fixed point);
//   - the input itself is canonical exactly when its header bytes are the
//     written ones, and otherwise not_canonical at the first differing byte.
#include <algorithm>

#include "fuzz_common.hpp"

namespace {

// numpy writes fortran_order True only for arrays that are not also
// C-contiguous: no empty axis, at least two axes longer than 1, and an
// itemsize above 0 (strides of 0 are contiguous both ways).
bool numpy_writes_fortran(const npyguard::header& model) {
  if (!model.fortran_order || model.count == 0 || model.descr.itemsize == 0) return false;
  return std::count_if(model.shape.begin(), model.shape.end(), [](std::uint64_t d) { return d > 1; }) >= 2;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace npyguard;
  fuzz::input_reader in(data, size);
  const std::uint8_t first = in.byte();
  options opts = fuzz::decode_options(first, in.byte());
  opts.canonical = false;
  in.byte();
  in.byte();
  const auto file = fuzz::exact_copy(in.data(), in.size());

  const result verdict = validate_buffer(file.get(), in.size(), opts);
  const header* model = verdict.value_if();
  if (model == nullptr) return 0;

  std::string written;
  const result encoded = encode_header(*model, written);
  if (!encoded.ok()) {
    std::fprintf(stderr, "encode_header refused a valid model: %s: %s\n",
                 std::string(error_code_name(encoded.failure().code)).c_str(), encoded.failure().message.c_str());
  }
  NPYGUARD_FUZZ_CHECK(encoded.ok());
  const header& rewritten = encoded.value();
  NPYGUARD_FUZZ_CHECK(rewritten.descr == model->descr);
  NPYGUARD_FUZZ_CHECK(rewritten.shape == model->shape);
  NPYGUARD_FUZZ_CHECK(rewritten.count == model->count);
  NPYGUARD_FUZZ_CHECK(rewritten.nbytes == model->nbytes);
  NPYGUARD_FUZZ_CHECK(rewritten.data_is_pickle == model->data_is_pickle);
  NPYGUARD_FUZZ_CHECK(rewritten.fortran_order == numpy_writes_fortran(*model));
  NPYGUARD_FUZZ_CHECK(rewritten.data_offset == written.size());
  NPYGUARD_FUZZ_CHECK(rewritten.data_offset % 64 == 0);
  NPYGUARD_FUZZ_CHECK(written.back() == '\n');

  // The written header followed by the input's data.
  const std::uint64_t data_end = model->data_is_pickle ? in.size() : model->data_offset + model->nbytes;
  std::string output = written;
  output.append(reinterpret_cast<const char*>(file.get()) + model->data_offset,
                static_cast<std::size_t>(data_end - model->data_offset));
  options strict = fuzz::loosest_options();
  strict.allow_trailing_data = false;
  strict.allow_object = model->data_is_pickle;
  strict.canonical = true;
  const result reread = validate_buffer(output.data(), output.size(), strict);
  NPYGUARD_FUZZ_CHECK(reread.ok());
  NPYGUARD_FUZZ_CHECK(reread.value() == rewritten);

  std::string again;
  NPYGUARD_FUZZ_CHECK(encode_header(rewritten, again).ok());
  NPYGUARD_FUZZ_CHECK(again == written);

  // The canonical profile on the input: the first byte where it differs
  // from the written header, computed here independently.
  options canonical = opts;
  canonical.canonical = true;
  const result profile = validate_buffer(file.get(), in.size(), canonical);
  const auto* input_bytes = reinterpret_cast<const char*>(file.get());
  const std::size_t header_size = static_cast<std::size_t>(model->data_offset);
  const std::size_t common = std::min(header_size, written.size());
  const std::size_t differs =
      static_cast<std::size_t>(std::mismatch(input_bytes, input_bytes + common, written.data()).first - input_bytes);
  if (differs == common && header_size == written.size()) {
    NPYGUARD_FUZZ_CHECK(profile == verdict);
  } else {
    NPYGUARD_FUZZ_CHECK(!profile.ok());
    NPYGUARD_FUZZ_CHECK(profile.failure().code == error_code::not_canonical);
    NPYGUARD_FUZZ_CHECK(profile.failure().offset == std::optional<std::uint64_t>(differs));
  }
  return 0;
}
