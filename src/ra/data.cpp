// The RawArray data view: one open(), validation of that descriptor, then a
// mapping or a read of exactly the data range (platform/data_range.hpp).
#include "npyguard/ra/data.hpp"
#include "npyguard/ra/validate.hpp"

#include <cstring>
#include <string>
#include <utility>

#include "core/byte_swap.hpp"
#include "core/guard.hpp"
#include "platform/data_range.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard::ra {
namespace detail {
namespace {

using npyguard::detail::data_range_access;
using npyguard::detail::validated_range;

bool needs_swap(const header& model) noexcept {
  return model.elbyte > 1 && model.big_endian != npyguard::detail::machine_big_endian;
}

// A user type has no known inner layout to put in the machine's order.
std::optional<error> refuse_foreign_user_type(const header& model) {
  if (model.eltype != element_type::user || !needs_swap(model)) return std::nullopt;
  return error{error_code::not_convertible, 8,
               "the elements are of a user-defined type (eltype 0) of " + std::to_string(model.elbyte) +
                   " bytes in the other byte order: their layout is unknown, so they cannot be put in this "
                   "machine's order"};
}

// Puts `model.data_length` bytes at `data` in the machine's byte order;
// refuse_foreign_user_type must have passed.
void to_native_in_place(unsigned char* data, const header& model) noexcept {
  if (!needs_swap(model) || model.eltype == element_type::user) return;
  const bool complex = model.eltype == element_type::complex_floating;
  const auto width = static_cast<std::uint32_t>(complex ? model.elbyte / 2 : model.elbyte);
  const auto count = static_cast<std::size_t>(complex ? model.count * 2 : model.count);
  npyguard::detail::swap_scalars(data, width, count);
}

validated_range range_of(const header& model, const options& opts) noexcept {
  return validated_range{model.data_offset, model.data_length, !opts.ra_reject_metadata};
}

// Opens `path` for the data view: one descriptor, a regular file, validated.
// On success `fd` is open; on failure it is empty.
result open_and_validate(const char* path, const options& opts, platform::unique_fd& fd, platform::file_status& info) {
  if (auto failure = data_range_access::open_regular(path, fd, info)) return *failure;
  platform::pread_source input(fd.get(), info.size, opts.cancel);
  result checked = validate_source(input, opts);
  if (!checked.ok()) fd.reset();
  return checked;
}

} // namespace

struct data_view_access {
  static result attach(platform::unique_fd fd, result checked, const platform::file_status& info, const options& opts,
                       data_access access, array_data& out) {
    if (!checked.ok()) return checked;
    array_data local;
    if (auto failure =
            data_range_access::attach(fd.release(), info, range_of(checked.value(), opts), access, local.range_)) {
      return *failure;
    }
    local.model_ = checked.value();
    out = std::move(local);
    return checked;
  }

  static result borrow(const unsigned char* file, result checked, array_data& out) {
    if (!checked.ok()) return checked;
    array_data local;
    local.model_ = checked.value();
    // validate_buffer checked data_offset + data_length <= size.
    data_range_access::borrow(file + local.model_.data_offset, local.model_.data_length, local.range_);
    out = std::move(local);
    return checked;
  }
};

} // namespace detail

array_data::array_data() noexcept = default;

array_data::~array_data() = default;

array_data::array_data(array_data&& other) noexcept
    : model_(std::exchange(other.model_, header{})), range_(std::move(other.range_)) {}

array_data& array_data::operator=(array_data&& other) noexcept {
  if (this == &other) return *this;
  model_ = std::exchange(other.model_, header{});
  range_ = std::move(other.range_);
  return *this;
}

result array_data::open(const char* path, array_data& out, const options& opts, data_access access) noexcept {
  return npyguard::detail::guarded([&]() -> result {
    platform::unique_fd fd;
    platform::file_status info;
    result checked = detail::open_and_validate(path, opts, fd, info);
    if (!checked.ok()) return checked;
    return detail::data_view_access::attach(std::move(fd), std::move(checked), info, opts, access, out);
  });
}

result array_data::over(const void* data, std::size_t size, array_data& out, const options& opts) noexcept {
  result checked = validate_buffer(data, size, opts);
  return npyguard::detail::guarded([&] {
    return detail::data_view_access::borrow(static_cast<const unsigned char*>(data), std::move(checked), out);
  });
}

const void* array_data::typed_data(std::size_t alignment, bool boolean) const noexcept {
  if (detail::needs_swap(model_)) return nullptr;
  return range_.typed(alignment, boolean);
}

std::optional<error> array_data::copy_native(void* destination, std::size_t destination_size) const noexcept {
  return npyguard::detail::guarded([&]() -> std::optional<error> {
    if (range_.data() == nullptr || range_.size() == 0) return std::nullopt;
    if (auto failure = detail::refuse_foreign_user_type(model_)) return failure;
    if (auto failure = npyguard::detail::data_range_access::destination_too_small(
            range_.size(), destination == nullptr ? 0 : destination_size)) {
      return failure;
    }
    auto* target = static_cast<unsigned char*>(destination);
    std::memcpy(target, range_.data(), static_cast<std::size_t>(range_.size()));
    detail::to_native_in_place(target, model_);
    return std::nullopt;
  });
}

result read_array(const char* path, void* buffer, std::size_t buffer_size, const options& opts,
                  data_order order) noexcept {
  return npyguard::detail::guarded([&]() -> result {
    platform::unique_fd fd;
    platform::file_status info;
    result checked = detail::open_and_validate(path, opts, fd, info);
    if (!checked.ok()) return checked;
    const header& model = checked.value();
    if (order == data_order::native) {
      if (auto failure = detail::refuse_foreign_user_type(model)) return *failure;
    }
    if (auto failure = npyguard::detail::data_range_access::destination_too_small(
            model.data_length, buffer == nullptr ? 0 : buffer_size)) {
      return *failure;
    }
    auto* bytes = static_cast<unsigned char*>(buffer);
    const npyguard::detail::validated_range range = detail::range_of(model, opts);
    if (model.data_length != 0) {
      if (auto failure = npyguard::detail::data_range_access::read_range(fd.get(), range, bytes)) return *failure;
    }
    if (auto failure = npyguard::detail::data_range_access::check_unchanged(fd.get(), range, info)) return *failure;
    if (order == data_order::native) detail::to_native_in_place(bytes, model);
    return checked;
  });
}

} // namespace npyguard::ra
