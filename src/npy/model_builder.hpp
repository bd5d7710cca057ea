// AST -> typed header model: the three keys, shape, the dtype tree, and the
// sizes the header implies (npy/data_size.hpp). The input-size verdict
// comes later (the pipeline).
#ifndef NPYGUARD_SRC_NPY_MODEL_BUILDER_HPP
#define NPYGUARD_SRC_NPY_MODEL_BUILDER_HPP

#include <cstdint>
#include <optional>

#include "npy/ast.hpp"
#include "npy/framing.hpp"
#include "npy/workspace.hpp"
#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"

namespace npyguard::detail {

// Fills `model` (new, or an earlier model to overwrite) with the header whose
// text `framing` frames, parsed into `tree`; or returns the first error in
// document order (`model` then holds a partial model). Names are indexed
// and fields reused through `space`. May throw std::bad_alloc.
[[nodiscard]] std::optional<error> build_model(const ast& tree, const preamble& framing, const options& opts,
                                               workspace& space, header& model);

} // namespace npyguard::detail

#endif
