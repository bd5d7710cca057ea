// Entry points shared inside the library: the writer and the data view
// validate the descriptor they then read from, so nothing is opened twice.
#ifndef NPYGUARD_SRC_NPY_ENTRY_POINTS_HPP
#define NPYGUARD_SRC_NPY_ENTRY_POINTS_HPP

#include <optional>

#include "core/guard.hpp"    // guarded, for the writer and the data view
#include "core/io_error.hpp" // io_error_from, likewise
#include "npy/workspace.hpp"
#include "npyguard/error.hpp"
#include "npyguard/npy/model.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"
#include "platform/file_status.hpp"

namespace npyguard::detail {

// Validates an open descriptor: fstat into `info`, then a regular file by
// pread (the descriptor's offset is untouched, the data never read) and
// anything else as a stream. Directories are io_error.
[[nodiscard]] result validate_open_file(int fd, const options& opts, platform::file_status& info) noexcept;

// The same stages in a caller's workspace and model (npy/pipeline.hpp), for
// npyguard::validator. May throw std::bad_alloc.
[[nodiscard]] std::optional<error> validate_open_file(workspace& space, int fd, const options& opts,
                                                      platform::file_status& info, header& model);
[[nodiscard]] std::optional<error> validate_path(workspace& space, const char* path, const options& opts,
                                                 header& model);
[[nodiscard]] std::optional<error> validate_fd(workspace& space, int fd, const options& opts, header& model);
[[nodiscard]] std::optional<error> validate_header_text(workspace& space, const void* text, std::size_t size,
                                                        unsigned major_version, const options& opts, header& model);

} // namespace npyguard::detail

#endif
