#include "npy/data_size.hpp"

#include "core/checked_math.hpp"
#include "core/refused.hpp"

namespace npyguard::detail {

std::optional<size_failure> size_array(header& model, const options& opts) {
  std::size_t failing = 0;
  const auto size = compute_array_size(model.shape.data(), model.shape.size(), model.descr.itemsize, failing);
  if (!size) {
    return size_failure{error_code::size_overflow, failing, "the array's element count or byte size exceeds 2^63-1"};
  }
  model.count = size->count;
  model.nbytes = size->nbytes;
  if (!checked_add(model.data_offset, model.nbytes)) {
    return size_failure{error_code::size_overflow, std::nullopt, "data_offset + nbytes exceeds 2^63-1"};
  }
  if (model.nbytes > opts.limits.max_data_bytes) {
    return size_failure{error_code::data_too_large,
                        std::nullopt,
                        "the array holds " + std::to_string(model.nbytes) + " bytes, above the limit of " +
                            std::to_string(opts.limits.max_data_bytes),
                        "max_data_bytes",
                        opts.limits.max_data_bytes,
                        model.nbytes};
  }
  return std::nullopt;
}

std::optional<error> check_data_size(const header& model, std::uint64_t input_size, const options& opts,
                                     bool read_all) {
  if (model.data_is_pickle) return std::nullopt;
  const std::uint64_t expected = model.data_offset + model.nbytes; // checked by size_array
  if (input_size < expected) {
    return error{error_code::truncated_data, input_size,
                 "the header implies " + std::to_string(model.nbytes) + " data bytes (input of " +
                     std::to_string(expected) + " bytes), but the input has " + std::to_string(input_size) + " bytes"};
  }
  if (input_size > expected && !opts.allow_trailing_data) {
    return refused(error{error_code::trailing_data, expected,
                         (read_all ? std::to_string(input_size - expected) + " bytes follow the "
                                   : std::string("the stream goes on after the ")) +
                             std::to_string(model.nbytes) + " bytes of array data"},
                   "allow_trailing_data");
  }
  return std::nullopt;
}

} // namespace npyguard::detail
