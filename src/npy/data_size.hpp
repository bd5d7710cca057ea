// The size math of a .npy file, both stages in one place: what the header
// implies (SPEC.md section 4: count, nbytes, the end of the data, the data
// limit), and the verdict on the input's size (section 5).
#ifndef NPYGUARD_SRC_NPY_DATA_SIZE_HPP
#define NPYGUARD_SRC_NPY_DATA_SIZE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"

namespace npyguard::detail {

// Why the header's sizes were refused, and where: a dimension of the shape
// (its index), or the shape as a whole.
struct size_failure {
  error_code code;
  std::optional<std::size_t> dimension;
  std::string message;
  // A limit's refusal (error.hpp): its name, the limit and the value found.
  std::string_view option{};
  std::optional<std::uint64_t> limit{};
  std::optional<std::uint64_t> actual{};
};

// Section 4 on a model whose shape, descr and data_offset are set: fills
// count and nbytes, or says why they cannot exist. May throw std::bad_alloc.
[[nodiscard]] std::optional<size_failure> size_array(header& model, const options& opts);

// Section 5 on `model`: the input must hold exactly data_offset + nbytes
// bytes (more only with allow_trailing_data). `read_all` false: a stream
// stopped reading, so `input_size` is a lower bound (trailing_data's message
// then cannot count the rest). May throw std::bad_alloc.
[[nodiscard]] std::optional<error> check_data_size(const header& model, std::uint64_t input_size, const options& opts,
                                                   bool read_all = true);

} // namespace npyguard::detail

#endif
