// A program that embeds npyguard the way a user would: the public header
// only, one validation, the version. Built by find_package, by
// add_subdirectory and by pkg-config (tests/consumers/run.sh).
#include <npyguard/npyguard.hpp>

#include <cstdio>
#include <cstring>
#include <string>

int main() {
  const std::string dict = "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }";
  std::string file("\x93NUMPY\x01\x00", 8);
  std::string header = dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n"; // data at 128
  file.push_back(static_cast<char>(header.size()));
  file.push_back('\0');
  file += header + std::string(24, '\0');
  const npyguard::result checked = npyguard::validate_buffer(file.data(), file.size());
  if (!checked || checked.value().nbytes != 24) return 1;
  const npyguard::result polyglot = npyguard::validate_buffer((file + "PK").data(), file.size() + 2);
  if (polyglot || polyglot.failure().code != npyguard::error_code::trailing_data) return 1;
  if (std::strcmp(npyguard::version(), NPYGUARD_VERSION_STRING) != 0) return 1;
  std::printf("npyguard %s: %s\n", npyguard::version(), npyguard::descr_repr(checked.value().descr).c_str());
  return 0;
}
