// The .npz pipeline: end records (A-C) -> central directory (D) -> local
// entries (E) -> member headers through the .npy pipeline (F) ->
// verification (G). Reads through an archive_reader and never calls the OS.
#ifndef NPYGUARD_SRC_NPZ_ARCHIVE_PIPELINE_HPP
#define NPYGUARD_SRC_NPZ_ARCHIVE_PIPELINE_HPP

#include "npyguard/npz/archive.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/options.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// With a sink (npz/data.hpp), verification is on whatever opts say, and the
// members' array data goes where the sink says. May throw std::bad_alloc.
[[nodiscard]] archive_result validate_archive(archive_reader& reader, const options& opts, member_sink* sink = nullptr);

} // namespace npyguard::npz::detail

#endif
