// Phase E of SPEC-npz.md: the local entries in file order tile the archive
// from offset 0 to the central directory, each agreeing with its central
// header. No I/O: reads through an archive_reader.
#ifndef NPYGUARD_SRC_NPZ_LOCAL_HPP
#define NPYGUARD_SRC_NPZ_LOCAL_HPP

#include <optional>
#include <vector>

#include "npyguard/error.hpp"
#include "npz/end_records.hpp"
#include "npz/entry.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// Sets each entry's data_start. May throw std::bad_alloc.
[[nodiscard]] std::optional<error> check_local_entries(archive_reader& reader, const directory_location& where,
                                                       std::vector<entry>& entries);

} // namespace npyguard::npz::detail

#endif
