// The data view: one open(), validation of that descriptor, then a mapping
// or a read of exactly the validated data range, checked again with fstat.
#include "npyguard/npy/data.hpp"
#include "npyguard/npy/validate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "npy/data.hpp"
#include "npy/entry_points.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"
#include "platform/mapping.hpp"

namespace npyguard {
namespace detail {
namespace {

// bytes() of an empty array: non-null, aligned for every scalar, never read.
alignas(alignof(std::max_align_t)) constexpr unsigned char no_bytes[1] = {0};

constexpr byte_order machine_order =
#if defined(__BYTE_ORDER__) && defined(__ORDER_BIG_ENDIAN__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    byte_order::big;
#else
    byte_order::little;
#endif

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

  template <typename Unsigned, typename Swap>
  static void swap_each(unsigned char* at, std::size_t count, Swap swap) noexcept {
    for (std::size_t i = 0; i < count; ++i, at += sizeof(Unsigned)) {
      Unsigned value;
      std::memcpy(&value, at, sizeof value);
      value = swap(value);
      std::memcpy(at, &value, sizeof value);
    }
  }

  static void swap_run(unsigned char* at, std::uint32_t width, std::size_t count) noexcept {
    switch (width) {
      case 2: swap_each<std::uint16_t>(at, count, [](std::uint16_t v) { return __builtin_bswap16(v); }); break;
      case 4: swap_each<std::uint32_t>(at, count, [](std::uint32_t v) { return __builtin_bswap32(v); }); break;
      case 8: swap_each<std::uint64_t>(at, count, [](std::uint64_t v) { return __builtin_bswap64(v); }); break;
      case 16: // float128 / long double, and each half of a c32: all 16 bytes reversed
        for (std::size_t i = 0; i < count; ++i, at += 16) {
          std::uint64_t low;
          std::uint64_t high;
          std::memcpy(&low, at, 8);
          std::memcpy(&high, at + 8, 8);
          low = __builtin_bswap64(low);
          high = __builtin_bswap64(high);
          std::memcpy(at, &high, 8);
          std::memcpy(at + 8, &low, 8);
        }
        break;
      default: // no dtype has another scalar width
        break;
    }
  }

  static void run(const swap_step* first, const swap_step* end, unsigned char* base) noexcept {
    while (first != end) {
      const swap_step& step = *first;
      if (step.width != 0) {
        swap_run(base + step.offset, step.width, step.count);
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

struct file_identity {
  std::uint64_t size = 0;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::int64_t mtime_seconds = 0;
  std::int64_t mtime_nanoseconds = 0;
};

file_identity identity_of(const platform::file_status& info) noexcept {
  return file_identity{info.size, info.device, info.inode, info.mtime_seconds, info.mtime_nanoseconds};
}

std::string file_kind(platform::file_type type) {
  switch (type) {
    case platform::file_type::directory: return "a directory";
    case platform::file_type::fifo: return "a FIFO";
    case platform::file_type::character_device: return "a character device";
    case platform::file_type::block_device: return "a block device";
    case platform::file_type::socket: return "a socket";
    case platform::file_type::regular:
    case platform::file_type::symbolic_link:
    case platform::file_type::other: break;
  }
  return "not a regular file";
}

// Opens `path` for the data view: one descriptor, a regular file, validated.
// On success `fd` is open; on failure it is empty.
result open_and_validate(const char* path, const options& opts, platform::unique_fd& fd, platform::file_status& info) {
  fd = platform::open_for_reading(path);
  if (!fd) return io_error_from("cannot open", errno);
  if (const int failed = platform::stat_fd(fd.get(), info); failed != 0) {
    fd.reset();
    return io_error_from("cannot stat", -failed);
  }
  if (!info.is_regular()) {
    fd.reset();
    return error{error_code::io_error, std::nullopt,
                 "the data view needs a regular file, and this is " + file_kind(info.type)};
  }
  result checked = validate_open_file(fd.get(), opts, info);
  if (!checked.ok()) fd.reset();
  return checked;
}

std::optional<error> refuse_pickle(const header& model) {
  if (!model.data_is_pickle) return std::nullopt;
  return error{error_code::object_dtype, model.data_offset,
               "the data is a pickle of Python objects: the data view cannot describe it and never reads it"};
}

// Reads the nbytes of data into `buffer`. A short read means the file shrank
// after validation: truncated_data where the data ended.
std::optional<error> read_data(int fd, const header& model, unsigned char* buffer) {
  const auto size = static_cast<std::size_t>(model.nbytes);
  const std::ptrdiff_t got = platform::pread_full(fd, buffer, size, model.data_offset);
  if (got < 0) return io_error_from("cannot read the data", static_cast<int>(-got));
  if (static_cast<std::size_t>(got) < size) {
    return error{error_code::truncated_data, model.data_offset + static_cast<std::uint64_t>(got),
                 "the file shrank after validation: the header implies " + std::to_string(model.nbytes) +
                     " data bytes, but only " + std::to_string(got) + " could be read"};
  }
  return std::nullopt;
}

// The file behind `fd` compared with what validation saw.
std::optional<error> check_unchanged(int fd, const header& model, bool allow_trailing_data,
                                     const file_identity& validated) {
  platform::file_status info;
  if (const int failed = platform::stat_fd(fd, info); failed != 0) return io_error_from("cannot stat", -failed);
  const file_identity now = identity_of(info);
  const std::uint64_t data_end = model.data_offset + model.nbytes; // checked by validation
  if (now.size < data_end) {
    return error{error_code::truncated_data, now.size,
                 "the file shrank after validation to " + std::to_string(now.size) + " bytes: the header implies " +
                     std::to_string(model.nbytes) + " data bytes (input of " + std::to_string(data_end) + " bytes)"};
  }
  if (now.size > data_end && !allow_trailing_data) {
    return error{error_code::trailing_data, data_end,
                 "the file grew after validation: " + std::to_string(now.size - data_end) + " bytes follow the " +
                     std::to_string(model.nbytes) + " bytes of array data"};
  }
  if (now.size != validated.size) {
    return error{error_code::io_error, std::nullopt,
                 "the file changed after validation: its size went from " + std::to_string(validated.size) + " to " +
                     std::to_string(now.size) + " bytes"};
  }
  if (now.device != validated.device || now.inode != validated.inode) {
    return error{error_code::io_error, std::nullopt, "the file changed after validation: another file"};
  }
  if (now.mtime_seconds != validated.mtime_seconds || now.mtime_nanoseconds != validated.mtime_nanoseconds) {
    return error{error_code::io_error, std::nullopt,
                 "the file changed after validation: its modification time is not the one validated"};
  }
  return std::nullopt;
}

std::optional<error> destination_too_small(std::uint64_t nbytes, std::size_t destination_size) {
  if (destination_size >= nbytes) return std::nullopt;
  return error{error_code::buffer_too_small, std::nullopt,
               "the array data is " + std::to_string(nbytes) + " bytes, but the destination holds only " +
                   std::to_string(destination_size)};
}

} // namespace

struct data_view_access {
  // Maps or reads the data of a validated descriptor into `out`. Always takes
  // ownership of `fd` (closed on failure).
  static result attach(int fd, result checked, const platform::file_status& info, const options& opts,
                       data_access access, array_data& out) {
    array_data local;
    local.state_.fd = fd; // from here on the destructor of `local` closes it
    if (!checked.ok()) return checked;
    if (auto failure = refuse_pickle(checked.value())) return *failure;
    local.model_ = checked.value();
    const header& model = local.model_;
    const file_identity validated = identity_of(info);
    local.state_.access = access;
    local.state_.allow_trailing_data = opts.allow_trailing_data;
    local.state_.file_size = validated.size;
    local.state_.device = validated.device;
    local.state_.inode = validated.inode;
    local.state_.mtime_seconds = validated.mtime_seconds;
    local.state_.mtime_nanoseconds = validated.mtime_nanoseconds;

    if (model.nbytes > std::numeric_limits<std::size_t>::max() / 2) {
      return error{error_code::data_too_large, std::nullopt,
                   "the array data (" + std::to_string(model.nbytes) + " bytes) does not fit in this address space"};
    }
    const auto nbytes = static_cast<std::size_t>(model.nbytes);
    if (nbytes == 0) {
      local.state_.data = no_bytes;
    } else if (access == data_access::map) {
      platform::mapping mapped;
      if (const int failed = platform::map_readonly(fd, model.data_offset, nbytes, mapped); failed != 0) {
        return io_error_from("cannot map the data", -failed);
      }
      // From here on the destructor of `local` unmaps it.
      local.state_.data = mapped.data();
      local.state_.mapping_length = mapped.length();
      local.state_.mapping = mapped.release();
    } else {
      // operator new[] memory is aligned for every scalar type; it is filled
      // completely or handed to nobody.
      local.buffer_.reset(new (std::nothrow) unsigned char[nbytes]);
      if (!local.buffer_) {
        return error{error_code::out_of_memory, std::nullopt,
                     "out of memory for " + std::to_string(nbytes) + " data bytes"};
      }
      if (auto failure = read_data(fd, model, local.buffer_.get())) return *failure;
      local.state_.data = local.buffer_.get();
    }
    local.state_.size = model.nbytes;
    // Mapping a range past the end of the file succeeds; touching it would
    // raise SIGBUS. The fstat after the mapping catches a file that shrank
    // (or changed) since validation.
    if (auto failure = check_unchanged(fd, model, opts.allow_trailing_data, validated)) return *failure;
    out = std::move(local);
    return checked;
  }

  // Views the validated data range of a whole file held by the caller.
  static result borrow(const unsigned char* file, result checked, array_data& out) {
    if (!checked.ok()) return checked;
    if (auto failure = refuse_pickle(checked.value())) return *failure;
    array_data local;
    local.model_ = checked.value();
    local.state_.access = data_access::borrowed;
    // validate_buffer checked data_offset + nbytes == size (or <= with
    // allow_trailing_data), so the range lies inside the caller's memory.
    local.state_.data = local.model_.nbytes == 0 ? no_bytes : file + local.model_.data_offset;
    local.state_.size = local.model_.nbytes;
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
    if (auto failure = destination_too_small(model.nbytes, buffer == nullptr ? 0 : buffer_size)) return *failure;
    auto* bytes = static_cast<unsigned char*>(buffer);
    if (model.nbytes != 0) {
      if (auto failure = read_data(fd, model, bytes)) return *failure;
    }
    if (auto failure = check_unchanged(fd, model, opts.allow_trailing_data, identity_of(info))) return *failure;
    if (order == data_order::native) to_native_in_place(bytes, model);
    return checked;
  });
}

} // namespace detail

array_data::array_data() noexcept = default;

array_data::~array_data() { release(); }

array_data::array_data(array_data&& other) noexcept
    : model_(std::exchange(other.model_, header{})),
      buffer_(std::move(other.buffer_)),
      state_(std::exchange(other.state_, view_state{})) {}

array_data& array_data::operator=(array_data&& other) noexcept {
  if (this == &other) return *this;
  release();
  model_ = std::exchange(other.model_, header{});
  buffer_ = std::move(other.buffer_);
  state_ = std::exchange(other.state_, view_state{});
  return *this;
}

void array_data::release() noexcept {
  platform::unmap(state_.mapping, state_.mapping_length);
  platform::close_fd(state_.fd);
  model_ = header{};
  buffer_.reset();
  state_ = view_state{};
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
  if (state_.data == nullptr || type.kind == dtype_kind::structured || type.kind != kind || type.itemsize != size) {
    return nullptr;
  }
  if (size > 1 && detail::needs_swap(type.order)) return nullptr;
  if (alignment == 0 || reinterpret_cast<std::uintptr_t>(state_.data) % alignment != 0) return nullptr;
  if (kind == dtype_kind::boolean) {
    const auto count = static_cast<std::size_t>(state_.size);
    for (std::size_t i = 0; i < count; ++i) {
      if (state_.data[i] > 1) return nullptr;
    }
  }
  return state_.data;
}

std::optional<error> array_data::copy_native(void* destination, std::size_t destination_size) const noexcept {
  return detail::guarded([&]() -> std::optional<error> {
    if (state_.data == nullptr || state_.size == 0) return std::nullopt;
    if (auto failure = detail::destination_too_small(state_.size, destination == nullptr ? 0 : destination_size)) {
      return failure;
    }
    // The plan is built before anything is written, so out_of_memory leaves
    // the destination untouched.
    const detail::swap_plan plan(model_.descr, static_cast<std::size_t>(model_.count));
    auto* target = static_cast<unsigned char*>(destination);
    std::memcpy(target, state_.data, static_cast<std::size_t>(state_.size));
    if (!plan.empty()) plan.apply(target);
    return std::nullopt;
  });
}

std::optional<error> array_data::verify_unchanged() const noexcept {
  return detail::guarded([&]() -> std::optional<error> {
    if (state_.access == data_access::borrowed && state_.data != nullptr) return std::nullopt; // the caller's memory
    if (state_.fd < 0) return error{error_code::io_error, std::nullopt, "no file is open"};
    return detail::check_unchanged(state_.fd, model_, state_.allow_trailing_data,
                                   detail::file_identity{state_.file_size, state_.device, state_.inode,
                                                         state_.mtime_seconds, state_.mtime_nanoseconds});
  });
}

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
