// The .npz pipeline: end records (A-C) -> central directory (D) -> local
// entries (E) -> member headers through the .npy pipeline (F) ->
// verification (G). Reads through an archive_reader and never calls the OS.
#ifndef NPYGUARD_SRC_NPZ_ARCHIVE_PIPELINE_HPP
#define NPYGUARD_SRC_NPZ_ARCHIVE_PIPELINE_HPP

#include "npyguard/npz/archive.hpp"
#include "npyguard/options.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// May throw std::bad_alloc.
[[nodiscard]] archive_result validate_archive(archive_reader& reader, const options& opts);

} // namespace npyguard::npz::detail

#endif
