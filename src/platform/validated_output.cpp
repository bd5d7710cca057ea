#include "platform/validated_output.hpp"

#include <algorithm>
#include <memory>

#include "core/io_error.hpp"
#include "platform/fd.hpp"
#include "platform/file_status.hpp"

namespace npyguard::platform {

std::optional<error> validated_output::create() {
  file_status existing;
  if (lstat_path(output_.destination().c_str(), existing) == 0 && !existing.is_regular()) {
    return error{error_code::io_error, std::nullopt,
                 "the output " + output_.destination() +
                     " exists and is not a regular file (a link, directory, device or FIFO); it is never replaced"};
  }
  return describe(output_.create());
}

std::optional<error> validated_output::write_all(const void* data, std::size_t size) {
  return describe(output_.write_all(data, size));
}

std::optional<error> validated_output::copy_from(int input, std::uint64_t offset, std::uint64_t length) {
  constexpr std::size_t chunk = std::size_t{1024} * 1024;
  const auto buffer =
      std::make_unique<unsigned char[]>(static_cast<std::size_t>(std::min<std::uint64_t>(length, chunk)));
  while (length > 0) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(length, chunk));
    const std::ptrdiff_t n = pread_full(input, buffer.get(), want, offset);
    if (n < 0) return npyguard::detail::io_error_from("cannot read the input", static_cast<int>(-n));
    if (n > 0) {
      if (auto failure = write_all(buffer.get(), static_cast<std::size_t>(n))) return failure;
    }
    offset += static_cast<std::uint64_t>(n);
    length -= static_cast<std::uint64_t>(n);
    if (static_cast<std::size_t>(n) < want) {
      return error{
          error_code::truncated_data, offset,
          "the input ended at byte " + std::to_string(offset) + " while it was copied (it shrank after validation)"};
    }
  }
  return std::nullopt;
}

// What a failed step says: the directory for create, the destination for the rest.
std::optional<error> validated_output::describe(const std::optional<output_failure>& failure) const {
  if (!failure) return std::nullopt;
  const auto say = [&](const char* what, const std::string& path) {
    return npyguard::detail::io_error_from((what + (" " + path)).c_str(), failure->errno_value);
  };
  switch (failure->step) {
    case output_step::create: return say("cannot create a file in", output_.directory());
    case output_step::flush: return say("cannot flush", output_.destination());
    case output_step::rename: return say("cannot rename the finished file to", output_.destination());
    case output_step::write:
    case output_step::close: break;
  }
  return say("cannot write", output_.destination());
}

} // namespace npyguard::platform
