// The npyguard command itself: exit codes, the human format, and --json
// reporting exactly what numpy 1.24 read from the golden files.
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace {

struct run_result {
  int status = -1;
  std::string output;
};

std::string quoted(const std::string& argument) {
  std::string out = "'";
  for (char c : argument) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

run_result run(const std::vector<std::string>& arguments) {
  std::string command = quoted(NPYGUARD_TOOL_PATH);
  for (const auto& argument : arguments) command += " " + quoted(argument);
  command += " 2>/dev/null";
  run_result result;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
    lines.push_back(text.substr(start, end - start));
  }
  return lines;
}

const std::string golden = NPYGUARD_SOURCE_DIR "/tests/golden/files/";

std::vector<nlohmann::json> expectations() {
  std::ifstream in(NPYGUARD_SOURCE_DIR "/tests/golden/expected.jsonl");
  REQUIRE(in);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  }
  return rows;
}

} // namespace

TEST_CASE("check --json reports exactly what numpy read", "[cli]") {
  for (const bool objects : {false, true}) {
    std::vector<std::string> arguments = {"check", "--json"};
    if (objects) arguments.push_back("--allow-object");
    std::vector<nlohmann::json> expected;
    for (const auto& row : expectations()) {
      if (row["options"].value("allow_object", false) != objects) continue;
      arguments.push_back(golden + row["file"].get<std::string>());
      expected.push_back(row);
    }
    REQUIRE(expected.size() >= (objects ? 2u : 150u));
    const run_result result = run(arguments);
    CHECK(result.status == 0);
    const auto lines = lines_of(result.output);
    REQUIRE(lines.size() == expected.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const auto got = nlohmann::json::parse(lines[i]);
      const auto& want = expected[i];
      INFO(want["file"].get<std::string>());
      CHECK(got["file"] == golden + want["file"].get<std::string>());
      CHECK(got["valid"] == true);
      for (const char* key : {"version", "shape", "fortran_order", "descr", "itemsize", "data_offset", "header_length"}) {
        INFO(key);
        CHECK(got[key] == want[key]);
      }
      if (want.contains("nbytes") && !want["nbytes"].is_null()) {
        CHECK(got["nbytes"] == want["nbytes"]);
      } else {
        CHECK(got["nbytes"].is_null());
        CHECK(got["data_is_pickle"] == true);
      }
    }
  }
}

TEST_CASE("check --json shape of an error", "[cli]") {
  const run_result result = run({"check", "--json", golden + "object_mixed.npy"});
  CHECK(result.status == 1);
  const auto got = nlohmann::json::parse(lines_of(result.output).at(0));
  CHECK(got["valid"] == false);
  CHECK(got["error"]["code"] == "object_dtype");
  CHECK(got["error"]["offset"].is_number_unsigned());
  CHECK(got["error"]["message"].is_string());
  const run_result missing = run({"check", "--json", "/nonexistent/x.npy"});
  CHECK(missing.status == 2);
  const auto io = nlohmann::json::parse(lines_of(missing.output).at(0));
  CHECK(io["error"]["code"] == "io_error");
  CHECK(io["error"]["offset"].is_null());
}

TEST_CASE("exit status and human output", "[cli]") {
  const std::string ok = golden + "scalar_lt_f8.npy";
  const std::string invalid = golden + "object_mixed.npy";
  run_result result = run({"check", ok});
  CHECK(result.status == 0);
  CHECK(result.output.rfind(ok + ": ok, version 1.0, descr '<f8'", 0) == 0);

  result = run({"check", ok, invalid});
  CHECK(result.status == 1);
  const auto lines = lines_of(result.output);
  REQUIRE(lines.size() == 2);
  CHECK(lines[1].rfind(invalid + ":", 0) == 0);
  CHECK(lines[1].find(": object_dtype: ") != std::string::npos);

  CHECK(run({"check", "--allow-object", ok, invalid}).status == 0);
  CHECK(run({"check", ok, invalid, "/nonexistent/x.npy"}).status == 2); // unreadable wins
  CHECK(run({"check"}).status == 2);                                   // no FILE
  CHECK(run({"check", "--no-such-option", ok}).status == 2);
  CHECK(run({"check", "--max-depth", "abc", ok}).status == 2);
  CHECK(run({}).status == 2); // no command
  CHECK(run({"--help"}).status == 0);
  CHECK(run({"check", "--help"}).status == 0);
  CHECK(run({"--version"}).status == 0);
  // Limits reach the library.
  CHECK(run({"check", "--max-header-bytes", "64", ok}).status == 1);
  CHECK(run({"check", "--max-data-bytes", "7", ok}).status == 1);
}
