// Golden corpus: every file in tests/golden/files was written by numpy 1.24
// (or hand-built like a legacy writer), and tests/golden/expected.jsonl holds
// numpy's own reading of it (tests/golden/generate.py). npyguard must accept
// each file and report exactly what numpy read.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "npyguard/npyguard.hpp"
#include "support.hpp"

#ifndef NPYGUARD_SOURCE_DIR
#error "NPYGUARD_SOURCE_DIR must be defined as a string literal: the repository root"
#endif

namespace {

const std::string golden_dir = std::string(NPYGUARD_SOURCE_DIR) + "/tests/golden";

npyguard::options options_from(const nlohmann::json& line) {
  npyguard::options opts;
  const auto it = line.find("options");
  if (it == line.end()) return opts;
  REQUIRE(it->is_object());
  for (const auto& item : it->items()) {
    INFO("option " << item.key());
    if (item.key() == "allow_object") {
      opts.allow_object = item.value().get<bool>();
    } else if (item.key() == "allow_trailing_data") {
      opts.allow_trailing_data = item.value().get<bool>();
    } else {
      FAIL("expected.jsonl names an option this test does not know");
    }
  }
  return opts;
}

} // namespace

TEST_CASE("golden files: npyguard reads what numpy read", "[golden]") {
  const std::string expected_path = golden_dir + "/expected.jsonl";
  std::ifstream expected(expected_path, std::ios::binary);
  INFO("expectations: " << expected_path);
  REQUIRE(expected.is_open());

  std::size_t checked = 0;
  std::size_t line_number = 0;
  std::string text;
  while (std::getline(expected, text)) {
    ++line_number;
    if (text.empty()) continue;
    INFO("expected.jsonl line " << line_number);
    const nlohmann::json line = nlohmann::json::parse(text);
    const std::string file = line.at("file").get<std::string>();
    INFO("file " << file);
    const npyguard::options opts = options_from(line);

    const std::string path = golden_dir + "/files/" + file;
    const npyguard::result r = npyguard::validate_file(path.c_str(), opts);
    INFO(npyguard_test::describe_failure(r));
    ++checked;

    if (!line.value("valid", true)) {
      CHECK_FALSE(r.ok());
      continue;
    }
    CHECK(r.ok());
    if (!r.ok()) continue;
    const npyguard::header& h = r.value();

    const std::string version =
        std::to_string(unsigned{h.major_version}) + "." + std::to_string(unsigned{h.minor_version});
    CHECK(version == line.at("version").get<std::string>());
    CHECK(h.shape == line.at("shape").get<std::vector<std::uint64_t>>());
    CHECK(h.fortran_order == line.at("fortran_order").get<bool>());
    CHECK(npyguard::descr_repr(h.descr) == line.at("descr").get<std::string>());
    CHECK(h.descr.itemsize == line.at("itemsize").get<std::uint64_t>());
    CHECK(h.data_offset == line.at("data_offset").get<std::uint64_t>());
    CHECK(h.header_length == line.at("header_length").get<std::uint64_t>());
    CHECK(h.data_offset == (h.major_version == 1 ? 10U : 12U) + std::uint64_t{h.header_length});

    // generate.py leaves nbytes out exactly when the dtype holds objects.
    const auto nbytes = line.find("nbytes");
    if (nbytes != line.end()) {
      CHECK(h.nbytes == nbytes->get<std::uint64_t>());
      CHECK_FALSE(h.data_is_pickle);
    } else {
      CHECK(h.data_is_pickle);
    }
  }

  // The corpus holds 164 files; guard against a test that passes vacuously.
  REQUIRE(checked >= 150);
}
