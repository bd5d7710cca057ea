// Phase D of SPEC-npz.md: every central directory header, in order, with
// its extra fields, flags, method, type, name, duplicates, bounds and
// declared sizes. No I/O: reads through an archive_reader.
#ifndef NPYGUARD_SRC_NPZ_CENTRAL_HPP
#define NPYGUARD_SRC_NPZ_CENTRAL_HPP

#include <optional>
#include <vector>

#include "npyguard/error.hpp"
#include "npyguard/options.hpp"
#include "npz/end_records.hpp"
#include "npz/entry.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// Fills `entries` in directory order. May throw std::bad_alloc.
[[nodiscard]] std::optional<error> read_central_directory(archive_reader& reader, const directory_location& where,
                                                          const options& opts, std::vector<entry>& entries);

} // namespace npyguard::npz::detail

#endif
