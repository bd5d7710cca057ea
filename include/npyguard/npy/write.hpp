// npyguard: writing .npy files exactly as numpy 1.24's np.save does.
#ifndef NPYGUARD_NPY_WRITE_HPP
#define NPYGUARD_NPY_WRITE_HPP

#include "npyguard/export.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"

namespace npyguard {

// The bytes np.save writes before the data of an array of this dtype, shape
// and memory order: magic, version, HEADER_LEN, the header dict (keys in
// alphabetical order, numpy's repr of the descr, the spare spaces numpy
// leaves for growing the first axis, or the last in Fortran order), space
// padding so the data starts at a multiple of 64, and '\n'. The version is
// the smallest that holds the header: 1.0, 2.0 when it exceeds 65535 bytes,
// 3.0 when a name or title cannot be written in latin-1.
//
// fortran_order is written as numpy writes it: True only when the array is
// Fortran-contiguous and not also C-contiguous (at least two axes longer
// than 1, no empty axis, and an itemsize above 0: numpy reads an itemsize-0
// array with all strides 0, which is both); the data layout is the same
// either way. (np.save of an itemsize-0 array numpy built in Fortran order
// writes True; saving it again after np.load writes False. The canonical
// form follows the file, so it is the second.)
//
// The bytes are then validated like any input (with the loosest limits and
// allow_object): on success `out` holds them and the result is their model;
// a dtype that does not survive that round trip (an itemsize that does not
// match its kind, overlapping or unordered fields, a 1-byte type with a byte
// order) is bad_descr, sizes beyond 2^63-1 are size_overflow. Error offsets
// are empty: the bytes are the writer's, not the caller's.
[[nodiscard]] NPYGUARD_API result encode_header(const dtype& type, const std::vector<std::uint64_t>& shape,
                                                bool fortran_order, std::string& out) noexcept;

// The same for a model's descr, shape and fortran_order (its version and
// lengths are recomputed).
[[nodiscard]] NPYGUARD_API result encode_header(const header& model, std::string& out) noexcept;

// Writes a .npy file: the encoded header, then `size` data bytes, which must
// be exactly the nbytes the header implies (otherwise truncated_data or
// trailing_data, and nothing is written). Object dtypes are refused
// (object_dtype): npyguard never writes pickles. The file appears at `path`
// only when complete: it is written to a new file in the same directory,
// flushed to disk, and renamed over `path`; on any error no file is left
// behind and an existing `path` is untouched. An existing `path` must be a
// regular file: a symbolic link, directory, device or FIFO there is an
// io_error, never replaced. Returns the written model.
[[nodiscard]] NPYGUARD_API result write_array(const char* path, const dtype& type,
                                              const std::vector<std::uint64_t>& shape, bool fortran_order,
                                              const void* data, std::size_t size) noexcept;

// npyguard canon: validates the regular file `input` with `opts`, then writes
// `output` with the canonical header (encode_header of its model) followed
// by the data bytes copied unchanged in bounded chunks (the whole array is
// never in memory). Bytes after the data are dropped (they are accepted only
// with allow_trailing_data); with allow_object, the pickle (everything after
// the header) is copied as it is.
//
// Returns the validation result of `input`, or an io_error when `output`
// names the input file itself (also through a link), or cannot be written.
// The output appears only when complete, exactly as write_array's; on any
// error, including an invalid input, no file is left behind and an existing
// `output` is untouched. `opts.canonical` is ignored for the input.
[[nodiscard]] NPYGUARD_API result canonicalize_file(const char* input, const char* output,
                                                    const options& opts = {}) noexcept;

// Files in progress are written as ".npyguard-<16 hex digits>.tmp" beside
// their destination (write_array, canonicalize_file, and convert.hpp's
// functions) and renamed over it when complete. A process that lets SIGINT,
// SIGTERM or SIGHUP end it calls this once, early (the command does): those
// signals then first remove the temporary files in progress, and end the
// process as before. Signals with a handler of the program's own, or
// ignored, are left alone. A leftover of that name comes from a process
// killed otherwise (SIGKILL, a crash) and may be deleted.
NPYGUARD_API void remove_temporary_files_on_signals() noexcept;

} // namespace npyguard

#endif
