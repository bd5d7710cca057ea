// Phases F and G of SPEC-npz.md: each member's .npy bytes through the .npy
// pipeline (inflated only as far as its header and one more byte), then,
// with verification, every member read in full. No I/O: reads through an
// archive_reader.
#ifndef NPYGUARD_SRC_NPZ_MEMBERS_HPP
#define NPYGUARD_SRC_NPZ_MEMBERS_HPP

#include <optional>
#include <vector>

#include "npyguard/npz/archive.hpp"
#include "npyguard/npz/data.hpp"
#include "npyguard/options.hpp"
#include "npz/entry.hpp"
#include "npz/reader.hpp"

namespace npyguard::npz::detail {

// Phase F: appends each member's model to `out`. May throw std::bad_alloc.
[[nodiscard]] std::optional<error> validate_members(archive_reader& reader, const std::vector<entry>& entries,
                                                    const options& opts, std::vector<member>& out);

// Phase G. With a sink, each member's array data (the bytes of
// [npy.data_offset, npy.data_offset + npy.nbytes) of `models`, the members
// phase F built) is also copied where the sink says, as it streams past;
// object members are then refused (object_dtype). May throw std::bad_alloc.
[[nodiscard]] std::optional<error> verify_members(archive_reader& reader, const std::vector<entry>& entries,
                                                  const std::vector<member>& models, member_sink* sink);

} // namespace npyguard::npz::detail

#endif
