// The .npy pipeline: bytes -> framing -> text -> parse -> model_builder ->
// (canonical) -> data size -> verdict. It reads from the sources of
// npyguard/io.hpp or from memory and never calls the OS itself: the entry
// points adapt files, descriptors and buffers to it, and an archive member
// runs through it over inflated bytes.
//
// Each stage fills a caller's `model` (new, or an earlier one to overwrite)
// and works in a caller's workspace, so a reused validator allocates
// nothing in steady state; each returns the error that rejected the input,
// or nothing. On an error `model` holds a partial model. All may throw
// std::bad_alloc.
#ifndef NPYGUARD_SRC_NPY_PIPELINE_HPP
#define NPYGUARD_SRC_NPY_PIPELINE_HPP

#include <cstddef>
#include <cstdint>
#include <optional>

#include "npy/framing.hpp"
#include "npy/workspace.hpp"
#include "npyguard/error.hpp"
#include "npyguard/io.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard::detail {

// The header text (HEADER_LEN bytes after `framing`) to a model, without the
// data-size verdict.
[[nodiscard]] std::optional<error> validate_text(workspace& space, const preamble& framing, const unsigned char* text,
                                                 const options& opts, header& model);

// A whole file in memory, read in place.
[[nodiscard]] std::optional<error> validate_contiguous(workspace& space, const unsigned char* data, std::size_t size,
                                                       const options& opts, header& model);

// An input of known size read by offset: the preamble and header only.
[[nodiscard]] std::optional<error> validate_random_access(workspace& space, random_access_source& input,
                                                          const options& opts, header& model);

// An input of unknown size: the header in bounded chunks, the data counted
// only until the verdict is certain.
[[nodiscard]] std::optional<error> validate_sequential(workspace& space, byte_source& source, const options& opts,
                                                       header& model);

// One of the stages above as a result, with a new model.
template <typename Stage>
[[nodiscard]] result to_result(Stage&& stage) {
  header model;
  if (std::optional<error> failure = stage(model)) return std::move(*failure);
  return model;
}

} // namespace npyguard::detail

#endif
