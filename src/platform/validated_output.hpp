// An atomic_output whose steps answer with npyguard errors, which refuses
// to replace anything but a regular file, and whose commit first checks the
// flushed file with the caller's validator: a writer never hands out bytes
// its own validator rejects. Shared by the .npy writer and the converters.
#ifndef NPYGUARD_SRC_PLATFORM_VALIDATED_OUTPUT_HPP
#define NPYGUARD_SRC_PLATFORM_VALIDATED_OUTPUT_HPP

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "npyguard/error.hpp"
#include "platform/atomic_output.hpp"

namespace npyguard::platform {

class validated_output {
public:
  // May throw std::bad_alloc.
  explicit validated_output(std::string destination) : output_(std::move(destination)) {}

  // An existing destination must be a regular file: a link, directory,
  // device or FIFO there is io_error (as root, "/dev/null" would otherwise
  // become a regular file).
  [[nodiscard]] std::optional<error> create();
  [[nodiscard]] std::optional<error> write_all(const void* data, std::size_t size);
  // Appends `length` bytes of the regular file `input` from `offset`,
  // through one 1 MiB buffer (memory stays constant whatever the length). An
  // input that ends early shrank after validation: truncated_data where it
  // ended.
  [[nodiscard]] std::optional<error> copy_from(int input, std::uint64_t offset, std::uint64_t length);

  // Flushes, runs `check(fd)` on the written file (a read-write descriptor
  // to read by offset), and renames only when it answers nullopt; its error
  // comes back prefixed "internal error, the output does not validate".
  template <typename Check>
  [[nodiscard]] std::optional<error> commit(Check check) {
    if (auto failure = describe(output_.flush())) return failure;
    if (std::optional<error> failure = check(output_.fd())) {
      failure->message = "internal error, the output does not validate: " + failure->message;
      return failure;
    }
    return describe(output_.commit());
  }

private:
  [[nodiscard]] std::optional<error> describe(const std::optional<output_failure>& failure) const;

  atomic_output output_;
};

} // namespace npyguard::platform

#endif
