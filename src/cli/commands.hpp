// The subcommands, one file each: check_command.cpp, inspect_command.cpp,
// canon_command.cpp, convert_command.cpp. Each returns the command's exit status.
#ifndef NPYGUARD_CLI_COMMANDS_HPP
#define NPYGUARD_CLI_COMMANDS_HPP

#include <string>
#include <vector>

#include "inputs.hpp"
#include "npyguard/npyguard.hpp"

namespace npyguard_cli {

struct check_settings {
  npyguard::options opts;
  bool json = false;
  bool quiet = false;
  unsigned jobs = 0; // 0: the number of cores
  walk_options walk;
  std::vector<std::string> arguments;
  std::uint32_t timeout_seconds = 0;
  file_format format = file_format::detect;
};

int run_check(const check_settings& settings);
int run_inspect(const std::string& file, const npyguard::options& opts, bool json, file_format format);
int run_canon(const std::string& input, const std::string& output, const npyguard::options& opts);
int run_convert(const std::string& input, const std::string& output, const npyguard::options& opts);

} // namespace npyguard_cli

#endif
