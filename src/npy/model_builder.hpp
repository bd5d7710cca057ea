// AST -> typed header model: the three keys, shape, the dtype tree, and the
// size math of SPEC.md section 4. Data-size verdicts come later (check.cpp).
#ifndef NPYGUARD_SRC_VALIDATE_HPP
#define NPYGUARD_SRC_VALIDATE_HPP

#include <cstdint>
#include <optional>

#include "npy/ast.hpp"
#include "npyguard/error.hpp"
#include "npyguard/model.hpp"
#include "npyguard/options.hpp"

namespace npyguard::detail {

// Fills `out` (whose version, header_length and data_offset are already set)
// from the AST. `base_offset` is the file offset of the header text.
[[nodiscard]] std::optional<error> build_model(const ast& tree, std::uint64_t base_offset, const options& opts,
                                               header& out);

} // namespace npyguard::detail

#endif
