// AST -> typed header model: the three keys, shape, the dtype tree, and the
// sizes the header implies (npy/data_size.hpp). The input-size verdict
// comes later (the pipeline).
#ifndef NPYGUARD_SRC_NPY_MODEL_BUILDER_HPP
#define NPYGUARD_SRC_NPY_MODEL_BUILDER_HPP

#include <cstdint>
#include <optional>

#include "npy/ast.hpp"
#include "npy/framing.hpp"
#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard::detail {

// The model of the header whose text `framing` frames, parsed into `tree`,
// or the first error in document order. May throw std::bad_alloc.
[[nodiscard]] result build_model(const ast& tree, const preamble& framing, const options& opts);

} // namespace npyguard::detail

#endif
