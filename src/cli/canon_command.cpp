// npyguard canon: a copy with the header np.save writes.
#include <cstdio>

#include "commands.hpp"
#include "common.hpp"
#include "report.hpp"

namespace npyguard_cli {

int run_canon(const std::string& input, const std::string& output, const npyguard::options& opts) {
  const npyguard::result written = npyguard::canonicalize_file(input.c_str(), output.c_str(), opts);
  if (written.ok()) return exit_valid;
  std::fprintf(stderr, "npyguard canon: %s\n", verdict_line(input, written).c_str());
  return is_io(written) ? exit_usage_or_io : exit_invalid;
}

} // namespace npyguard_cli
