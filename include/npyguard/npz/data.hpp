// npyguard: the data of a .npz archive's members, read in the same pass that
// verifies them (SPEC-npz.md phase G), from the same input that was
// validated.
//
// read_archive validates the archive exactly as npz::validate_* with
// options::verify on (every member inflated in full with fixed buffers,
// exact lengths, CRC-32), and, as each member is read, copies its array data
// (the bytes [npy.data_offset, npy.data_offset + npy.nbytes) of the member's
// .npy bytes) where the caller's sink says. The sink is asked only once every
// member's header has passed (phase F), so the sizes it is given are
// validated ones: their sum is at most limits.max_total_bytes.
//
// Members with an object dtype (only with options::allow_object) are refused
// as object_dtype: their data is a pickle, which npyguard never reads.
//
// Thread safety: every function may run concurrently on distinct inputs.
#ifndef NPYGUARD_NPZ_DATA_HPP
#define NPYGUARD_NPZ_DATA_HPP

#include "npyguard/export.hpp"

#include <cstddef>

#include "npyguard/io.hpp"
#include "npyguard/npz/archive.hpp"
#include "npyguard/options.hpp"

namespace npyguard::npz {

// Where read_archive puts each member's array data.
class NPYGUARD_API member_sink {
public:
  virtual ~member_sink() = default;
  // Member `index` of the archive (central-directory order; `m` is its
  // model, m.npy.nbytes its data size) is about to be read in full. Set `out`
  // to memory for m.npy.nbytes bytes, which receive the data in file byte
  // order, or to nullptr to have the member read and checked without a copy
  // (a caller viewing a stored member of its own buffer in place). Return
  // false to stop: read_archive then fails with out_of_memory. The verdict
  // is final only when read_archive returns: a later member may still fail,
  // and on failure the memory handed out holds unspecified bytes.
  virtual bool destination(std::size_t index, const member& m, void*& out) noexcept = 0;
};

// The whole archive in memory.
[[nodiscard]] NPYGUARD_API archive_result read_archive(const void* data, std::size_t size, member_sink& sink,
                                                       const options& opts = {}) noexcept;

// Any input of known size read by offset.
[[nodiscard]] NPYGUARD_API archive_result read_archive(random_access_source& source, member_sink& sink,
                                                       const options& opts = {}) noexcept;

// A path, opened once: a regular file read by offset, anything else held in
// memory first as npz::validate_file does.
[[nodiscard]] NPYGUARD_API archive_result read_archive_file(const char* path, member_sink& sink,
                                                            const options& opts = {}) noexcept;

} // namespace npyguard::npz

#endif
