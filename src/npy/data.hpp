// The data view's steps after validation, separate so that tests can change
// the file between the verdict and the data (tests/test_data.cpp).
#ifndef NPYGUARD_SRC_DATA_HPP
#define NPYGUARD_SRC_DATA_HPP

#include <cstddef>

#include "npyguard/npy/data.hpp"
#include "npyguard/options.hpp"
#include "npyguard/result.hpp"
#include "platform/file_status.hpp"

namespace npyguard::detail {

// Maps or reads the data of the descriptor `checked` was validated from
// (`info` is its fstat then) into `out`. Always takes ownership of `fd`.
[[nodiscard]] result attach_validated(int fd, result checked, const platform::file_status& info, const options& opts,
                                      data_access access, array_data& out) noexcept;

// read_array's steps after validation; `fd` stays open.
[[nodiscard]] result read_validated(int fd, result checked, const platform::file_status& info, const options& opts,
                                    void* buffer, std::size_t buffer_size, data_order order) noexcept;

} // namespace npyguard::detail

#endif
