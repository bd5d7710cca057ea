// The data view: one open(), validation of that descriptor, then a mapping
// or a read of exactly the validated data range, checked again with fstat.
#include "npyguard/npy/data.hpp"
#include "npyguard/npy/validate.hpp"

#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "core/byte_swap.hpp"
#include "npy/data.hpp"
#include "npy/entry_points.hpp"
#include "platform/data_range.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard {
namespace detail {
namespace {

constexpr byte_order machine_order = machine_big_endian ? byte_order::big : byte_order::little;

bool needs_swap(byte_order order) noexcept { return order != byte_order::not_applicable && order != machine_order; }

// ---------------------------------------------------------------------------
// Byte swapping. A dtype compiles into a flat list of steps, built once per
// call and bounded by the size of the dtype tree (never by the data):
// - a run: `count` adjacent scalars of `width` bytes at `offset`;
// - a group (width 0): `count` repetitions, `stride` bytes apart, of the
//   `subtree` steps that follow it (a subarray of structs).
// Scalars that need no swap produce no step, adjacent runs of one width merge,
// and a group whose body is one run covering its whole stride becomes a run,
// so '>f8' data is a single run and a struct of three '>i4' is too.
struct swap_step {
  std::size_t offset = 0;
  std::size_t count = 0;
  std::size_t stride = 0;
  std::size_t subtree = 0;
  std::uint32_t width = 0;
};

constexpr std::size_t no_step = std::numeric_limits<std::size_t>::max();

class swap_plan {
public:
  // `count` items of `type` from offset 0.
  swap_plan(const dtype& type, std::size_t count) {
    std::size_t last = no_step;
    add_elements(type, 0, count, last);
  }

  [[nodiscard]] bool empty() const noexcept { return steps_.empty(); }

  void apply(unsigned char* base) const noexcept { run(steps_.data(), steps_.data() + steps_.size(), base); }

private:
  void add_run(std::size_t offset, std::uint32_t width, std::size_t count, std::size_t& last) {
    if (last != no_step) {
      swap_step& previous = steps_[last];
      if (previous.width == width && previous.offset + previous.count * width == offset) {
        previous.count += count;
        return;
      }
    }
    last = steps_.size();
    steps_.push_back(swap_step{offset, count, 0, 0, width});
  }

  void add_fields(const dtype& type, std::size_t base, std::size_t& last) {
    for (const field& member : type.fields) {
      if (member.type.itemsize == 0 || member.itemsize == 0) continue;
      const auto elements = static_cast<std::size_t>(member.itemsize / member.type.itemsize);
      add_elements(member.type, base + static_cast<std::size_t>(member.offset), elements, last);
    }
  }

  // `count` adjacent elements of `type` at `offset`.
  void add_elements(const dtype& type, std::size_t offset, std::size_t count, std::size_t& last) {
    if (count == 0 || type.itemsize == 0) return;
    if (type.kind == dtype_kind::structured) {
      if (count == 1) {
        add_fields(type, offset, last);
        return;
      }
      const std::size_t group = steps_.size();
      const auto stride = static_cast<std::size_t>(type.itemsize);
      steps_.push_back(swap_step{offset, count, stride, 0, 0});
      std::size_t inner_last = no_step;
      add_fields(type, 0, inner_last);
      const std::size_t subtree = steps_.size() - group - 1;
      if (subtree == 0) {
        steps_.pop_back();
        return;
      }
      const swap_step body = steps_[group + 1];
      if (subtree == 1 && body.width != 0 && body.offset == 0 && body.count * body.width == stride) {
        steps_.resize(group);
        add_run(offset, body.width, body.count * count, last);
        return;
      }
      steps_[group].subtree = subtree;
      last = group; // a group never merges with a run
      return;
    }
    std::uint32_t width = 0;
    std::size_t units = 1;
    switch (type.kind) {
      case dtype_kind::signed_integer:
      case dtype_kind::unsigned_integer:
      case dtype_kind::floating:
      case dtype_kind::datetime:
      case dtype_kind::timedelta: width = static_cast<std::uint32_t>(type.itemsize); break;
      case dtype_kind::complex_floating: // real and imaginary parts
        width = static_cast<std::uint32_t>(type.itemsize / 2);
        units = 2;
        break;
      case dtype_kind::unicode: // UCS-4 code units
        width = 4;
        units = static_cast<std::size_t>(type.itemsize / 4);
        break;
      case dtype_kind::boolean:
      case dtype_kind::bytes:
      case dtype_kind::raw_void:
      case dtype_kind::object:
      case dtype_kind::structured: return;
    }
    if (width <= 1 || !needs_swap(type.order)) return;
    add_run(offset, width, units * count, last);
  }

  static void run(const swap_step* first, const swap_step* end, unsigned char* base) noexcept {
    while (first != end) {
      const swap_step& step = *first;
      if (step.width != 0) {
        swap_scalars(base + step.offset, step.width, step.count);
        ++first;
        continue;
      }
      const swap_step* body = first + 1;
      const swap_step* body_end = body + step.subtree;
      unsigned char* item = base + step.offset;
      for (std::size_t i = 0; i < step.count; ++i, item += step.stride) run(body, body_end, item);
      first = body_end;
    }
  }

  std::vector<swap_step> steps_;
};

// Converts the data of `model` (nbytes bytes at `data`) to the machine's byte
// order. May throw std::bad_alloc (the plan).
void to_native_in_place(unsigned char* data, const header& model) {
  if (model.nbytes == 0) return;
  const swap_plan plan(model.descr, static_cast<std::size_t>(model.count));
  if (!plan.empty()) plan.apply(data);
}

// ---------------------------------------------------------------------------
// Files.

// Opens `path` for the data view: one descriptor, a regular file, validated.
// On success `fd` is open; on failure it is empty.
result open_and_validate(const char* path, const options& opts, platform::unique_fd& fd, platform::file_status& info) {
  if (auto failure = data_range_access::open_regular(path, fd, info)) return *failure;
  result checked = validate_open_file(fd.get(), opts, info);
  if (!checked.ok()) fd.reset();
  return checked;
}

std::optional<error> refuse_pickle(const header& model) {
  if (!model.data_is_pickle) return std::nullopt;
  return error{error_code::object_dtype, model.data_offset,
               "the data is a pickle of Python objects: the data view cannot describe it and never reads it"};
}

validated_range range_of(const header& model, const options& opts) noexcept {
  return validated_range{model.data_offset, model.nbytes, opts.allow_trailing_data};
}

} // namespace

struct data_view_access {
  // Maps or reads the data of a validated descriptor into `out`. Always takes
  // ownership of `fd` (closed on failure).
  static result attach(int fd, result checked, const platform::file_status& info, const options& opts,
                       data_access access, array_data& out) {
    platform::unique_fd owned(fd);
    if (!checked.ok()) return checked;
    if (auto failure = refuse_pickle(checked.value())) return *failure;
    array_data local;
    if (auto failure =
            data_range_access::attach(owned.release(), info, range_of(checked.value(), opts), access, local.range_)) {
      return *failure;
    }
    local.model_ = checked.value();
    out = std::move(local);
    return checked;
  }

  // Views the validated data range of a whole file held by the caller.
  static result borrow(const unsigned char* file, result checked, array_data& out) {
    if (!checked.ok()) return checked;
    if (auto failure = refuse_pickle(checked.value())) return *failure;
    array_data local;
    local.model_ = checked.value();
    // validate_buffer checked data_offset + nbytes == size (or <= with
    // allow_trailing_data), so the range lies inside the caller's memory.
    data_range_access::borrow(file + local.model_.data_offset, local.model_.nbytes, local.range_);
    out = std::move(local);
    return checked;
  }
};

// The steps after validation (npy/data.hpp), separate so a test can change
// the file between the verdict and the data.
result attach_validated(int fd, result checked, const platform::file_status& info, const options& opts,
                        data_access access, array_data& out) noexcept {
  return guarded([&] { return data_view_access::attach(fd, std::move(checked), info, opts, access, out); });
}

// The steps of read_array after validation; `fd` stays open.
result read_validated(int fd, result checked, const platform::file_status& info, const options& opts, void* buffer,
                      std::size_t buffer_size, data_order order) noexcept {
  return guarded([&]() -> result {
    if (!checked.ok()) return checked;
    const header& model = checked.value();
    if (auto failure = refuse_pickle(model)) return *failure;
    if (auto failure = data_range_access::destination_too_small(model.nbytes, buffer == nullptr ? 0 : buffer_size)) {
      return *failure;
    }
    auto* bytes = static_cast<unsigned char*>(buffer);
    const validated_range range = range_of(model, opts);
    if (model.nbytes != 0) {
      if (auto failure = data_range_access::read_range(fd, range, bytes)) return *failure;
    }
    if (auto failure = data_range_access::check_unchanged(fd, range, info)) return *failure;
    if (order == data_order::native) to_native_in_place(bytes, model);
    return checked;
  });
}

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
  return detail::guarded([&]() -> result {
    platform::unique_fd fd;
    platform::file_status info;
    result checked = detail::open_and_validate(path, opts, fd, info);
    if (!checked.ok()) return checked;
    return detail::data_view_access::attach(fd.release(), std::move(checked), info, opts, access, out);
  });
}

result array_data::over(const void* data, std::size_t size, array_data& out, const options& opts) noexcept {
  result checked = validate_buffer(data, size, opts);
  return detail::guarded([&] {
    return detail::data_view_access::borrow(static_cast<const unsigned char*>(data), std::move(checked), out);
  });
}

const void* array_data::typed_data(dtype_kind kind, std::size_t size, std::size_t alignment) const noexcept {
  const dtype& type = model_.descr;
  if (type.kind == dtype_kind::structured || type.kind != kind || type.itemsize != size) return nullptr;
  if (size > 1 && detail::needs_swap(type.order)) return nullptr;
  return range_.typed(alignment, kind == dtype_kind::boolean);
}

std::optional<error> array_data::copy_native(void* destination, std::size_t destination_size) const noexcept {
  return detail::guarded([&]() -> std::optional<error> {
    if (range_.data() == nullptr || range_.size() == 0) return std::nullopt;
    if (auto failure = detail::data_range_access::destination_too_small(
            range_.size(), destination == nullptr ? 0 : destination_size)) {
      return failure;
    }
    // The plan is built before anything is written, so out_of_memory leaves
    // the destination untouched.
    const detail::swap_plan plan(model_.descr, static_cast<std::size_t>(model_.count));
    auto* target = static_cast<unsigned char*>(destination);
    std::memcpy(target, range_.data(), static_cast<std::size_t>(range_.size()));
    if (!plan.empty()) plan.apply(target);
    return std::nullopt;
  });
}

std::optional<error> array_data::verify_unchanged() const noexcept { return range_.verify_unchanged(); }

result read_array(const char* path, void* buffer, std::size_t buffer_size, const options& opts,
                  data_order order) noexcept {
  return detail::guarded([&]() -> result {
    platform::unique_fd fd;
    platform::file_status info;
    result checked = detail::open_and_validate(path, opts, fd, info);
    if (!checked.ok()) return checked;
    return detail::read_validated(fd.get(), std::move(checked), info, opts, buffer, buffer_size, order);
  });
}

} // namespace npyguard
