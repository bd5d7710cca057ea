// What the command's test files share: running the tool as a child process
// and measuring it (NPYGUARD_TOOL_PATH names the tool).
#ifndef NPYGUARD_TESTS_CLI_SUPPORT_HPP
#define NPYGUARD_TESTS_CLI_SUPPORT_HPP

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace npyguard_cli_test {

// Runs the tool with stdout and stderr discarded; returns the exit status
// and the child's peak resident set size in KiB (getrusage of the child).
struct measured_run {
  int status = -1;
  long max_rss_kib = 0;
};

inline measured_run run_measured(const std::vector<std::string>& arguments) {
  std::vector<char*> argv;
  std::string tool = NPYGUARD_TOOL_PATH;
  argv.push_back(tool.data());
  std::vector<std::string> copies = arguments;
  for (auto& argument : copies) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 1);
    ::dup2(null, 2);
    ::execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  REQUIRE(::wait4(child, &status, 0, &usage) == child);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, usage.ru_maxrss};
}

} // namespace npyguard_cli_test

#endif
