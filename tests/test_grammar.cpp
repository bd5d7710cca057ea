// The grammar itself: PEGTL's analysis, and the normative PEG file kept in
// step with the PEGTL rules.
#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <tao/pegtl/contrib/analyze.hpp>

#include "grammar/npy_header.hpp"

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Identifiers in `text`, skipping quoted literals ('x', "x" with escapes),
// PEG character classes [...] and numbers.
std::vector<std::string> identifiers(const std::string& text, bool peg) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '\'' || c == '"') {
      for (++i; i < text.size() && text[i] != c; ++i) {
        if (text[i] == '\\') ++i;
      }
      ++i;
    } else if (peg && c == '[') {
      for (++i; i < text.size() && text[i] != ']'; ++i) {
        if (text[i] == '\\') ++i;
      }
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t end = i;
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_')) ++end;
      out.push_back(text.substr(i, end - i));
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (i < text.size() && std::isalnum(static_cast<unsigned char>(text[i]))) ++i;
    } else {
      ++i;
    }
  }
  return out;
}

struct rule_line {
  std::string name;
  std::string body;
};

// "name <- body" lines of the PEG, comments removed.
std::vector<rule_line> peg_rules(const std::string& text) {
  std::vector<rule_line> rules;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto arrow = line.find("<-");
    if (line.empty() || line[0] == '#' || arrow == std::string::npos) continue;
    std::string body = line.substr(arrow + 2);
    // A '#' outside quotes starts a comment.
    bool quoted = false;
    for (std::size_t i = 0; i < body.size(); ++i) {
      if (body[i] == '\\') {
        ++i;
        continue;
      }
      if (body[i] == '\'') quoted = !quoted;
      if (body[i] == '#' && !quoted) {
        body.resize(i);
        break;
      }
    }
    const auto names = identifiers(line.substr(0, arrow), true);
    REQUIRE(names.size() == 1);
    rules.push_back({names[0], body});
  }
  return rules;
}

// "struct name : base {};" lines of the first clang-format-off block.
std::vector<rule_line> pegtl_rules(const std::string& text) {
  std::vector<rule_line> rules;
  const auto begin = text.find("// clang-format off");
  const auto end = text.find("// clang-format on", begin);
  REQUIRE(begin != std::string::npos);
  std::istringstream lines(text.substr(begin, end - begin));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("struct ", 0) != 0) continue;
    const auto colon = line.find(" : ");
    if (colon == std::string::npos) continue; // forward declaration
    rules.push_back({line.substr(7, colon - 7), line.substr(colon + 3)});
  }
  return rules;
}

// For each rule, the rules it refers to, in order.
std::map<std::string, std::vector<std::string>> references(const std::vector<rule_line>& rules, bool peg) {
  std::map<std::string, bool> known;
  for (const auto& rule : rules) known[rule.name] = true;
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& rule : rules) {
    for (const auto& name : identifiers(rule.body, peg)) {
      if (known.count(name)) out[rule.name].push_back(name);
    }
  }
  return out;
}

} // namespace

TEST_CASE("PEGTL analyze finds no problem in the grammar", "[grammar]") {
  CHECK(tao::pegtl::analyze<npyguard::grammar::header>(1) == 0);
}

TEST_CASE("grammar/npy_header.peg and the PEGTL rules agree", "[grammar]") {
  const auto peg = peg_rules(read_text(NPYGUARD_SOURCE_DIR "/grammar/npy_header.peg"));
  const auto pegtl = pegtl_rules(read_text(NPYGUARD_SOURCE_DIR "/grammar/npy_header.hpp"));
  REQUIRE(peg.size() > 40);
  REQUIRE(peg.size() == pegtl.size());
  for (std::size_t i = 0; i < peg.size(); ++i) {
    INFO("rule " << i);
    CHECK(peg[i].name == pegtl[i].name);
  }
  const auto peg_refs = references(peg, true);
  const auto pegtl_refs = references(pegtl, false);
  for (const auto& rule : peg) {
    INFO("rule " << rule.name);
    const auto found = pegtl_refs.find(rule.name);
    const auto expected = peg_refs.find(rule.name);
    CHECK((found == pegtl_refs.end()) == (expected == peg_refs.end()));
    if (found != pegtl_refs.end() && expected != peg_refs.end()) CHECK(found->second == expected->second);
  }
}

TEST_CASE("the drift check itself notices a change", "[grammar]") {
  // Guard against a vacuous comparison: renaming or reordering a reference
  // in a copy of the PEG must be seen.
  auto peg = peg_rules(read_text(NPYGUARD_SOURCE_DIR "/grammar/npy_header.peg"));
  const auto pegtl = pegtl_rules(read_text(NPYGUARD_SOURCE_DIR "/grammar/npy_header.hpp"));
  for (auto& rule : peg) {
    if (rule.name == "elements") rule.body = " value sep (comma value sep sep)* (comma sep)?";
  }
  CHECK(references(peg, true).at("elements") != references(pegtl, false).at("elements"));
}
