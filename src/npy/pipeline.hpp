// The .npy pipeline: bytes -> framing -> text -> parse -> model_builder ->
// (canonical) -> data size -> verdict. It reads from the sources of
// npyguard/io.hpp or from memory and never calls the OS itself: the entry
// points adapt files, descriptors and buffers to it, and an archive member
// runs through it over inflated bytes.
#ifndef NPYGUARD_SRC_NPY_PIPELINE_HPP
#define NPYGUARD_SRC_NPY_PIPELINE_HPP

#include <cstddef>
#include <cstdint>

#include "npy/framing.hpp"
#include "npyguard/io.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard::detail {

// The header text (HEADER_LEN bytes after `framing`) to a model, without the
// data-size verdict. May throw std::bad_alloc.
[[nodiscard]] result validate_text(const preamble& framing, const unsigned char* text, const options& opts);

// A whole file in memory, read in place.
[[nodiscard]] result validate_contiguous(const unsigned char* data, std::size_t size, const options& opts);

// An input of known size read by offset: the preamble and header only.
[[nodiscard]] result validate_random_access(random_access_source& input, const options& opts);

// An input of unknown size: the header in bounded chunks, the data counted
// only until the verdict is certain.
[[nodiscard]] result validate_sequential(byte_source& source, const options& opts);

} // namespace npyguard::detail

#endif
