#include "npyguard/npy/validator.hpp"

#include <new>
#include <optional>
#include <utility>

#include "core/guard.hpp"
#include "npy/entry_points.hpp"
#include "npy/pipeline.hpp"
#include "npy/workspace.hpp"

namespace npyguard {
namespace detail {

struct validator_state {
  workspace space;
  // The last verdict. While it holds an error, the model's storage waits in
  // `spare_model`, so the next model gets its capacity back.
  result current{header{}};
  header spare_model;
};

namespace {

const result& no_memory() noexcept {
  static const result failure{error{error_code::out_of_memory, std::nullopt, "out of memory"}};
  return failure;
}

} // namespace
} // namespace detail

validator::validator() noexcept = default;
validator::~validator() = default;
validator::validator(validator&&) noexcept = default;
validator& validator::operator=(validator&&) noexcept = default;

template <typename Stage>
const result& validator::run(Stage&& stage) noexcept {
  if (!state_) {
    state_.reset(new (std::nothrow) detail::validator_state);
    if (!state_) return detail::no_memory();
    state_->space.track_fields = true;
  }
  detail::validator_state& state = *state_;
  if (state.current.value_if() == nullptr) state.current = result(std::move(state.spare_model));
  header& model = *state.current.value_if();
  std::optional<error> failure = detail::guarded([&] { return stage(state.space, model); });
  if (failure) {
    state.spare_model = std::move(model);
    state.current = result(std::move(*failure));
  }
  return state.current;
}

const result& validator::validate_buffer(const void* data, std::size_t size, const options& opts) noexcept {
  return run([&](detail::workspace& space, header& model) {
    return detail::validate_contiguous(space, static_cast<const unsigned char*>(data), size, opts, model);
  });
}

const result& validator::validate_file(const char* path, const options& opts) noexcept {
  return run([&](detail::workspace& space, header& model) { return detail::validate_path(space, path, opts, model); });
}

const result& validator::validate_source(random_access_source& source, const options& opts) noexcept {
  return run([&](detail::workspace& space, header& model) {
    return detail::validate_random_access(space, source, opts, model);
  });
}

const result& validator::validate_stream(byte_source& source, const options& opts) noexcept {
  return run(
      [&](detail::workspace& space, header& model) { return detail::validate_sequential(space, source, opts, model); });
}

const result& validator::validate_fd(int fd, const options& opts) noexcept {
  return run([&](detail::workspace& space, header& model) { return detail::validate_fd(space, fd, opts, model); });
}

const result& validator::validate_header_text(const void* text, std::size_t size, unsigned major_version,
                                              const options& opts) noexcept {
  return run([&](detail::workspace& space, header& model) {
    return detail::validate_header_text(space, text, size, major_version, opts, model);
  });
}

std::size_t validator::memory_held() const noexcept {
  if (!state_) return 0;
  const detail::validator_state& state = *state_;
  std::size_t bytes =
      sizeof(detail::validator_state) + state.space.memory_held() + detail::model_heap(state.spare_model);
  if (const header* model = state.current.value_if()) bytes += detail::model_heap(*model);
  if (const error* failure = state.current.failure_if()) bytes += failure->message.capacity();
  return bytes;
}

void validator::release() noexcept { state_.reset(); }

} // namespace npyguard
