#include "core/io_error.hpp"

#include <cerrno>
#include <cstring>
#include <string>

#include "core/refused.hpp"

namespace npyguard::detail {

error io_error_from(const char* what, int errno_value) {
  if (errno_value <= 0) errno_value = EIO; // a source that gave no reason
  if (errno_value == ETIMEDOUT) {
    return refused(error{error_code::io_error, std::nullopt, std::string(what) + ": no input within the time allowed"},
                   "timeout_ms");
  }
  return error{error_code::io_error, std::nullopt, std::string(what) + ": " + std::strerror(errno_value)};
}

error read_error_from(std::ptrdiff_t answer) {
  return io_error_from("cannot read", answer < -4095 ? EIO : static_cast<int>(-answer));
}

} // namespace npyguard::detail
