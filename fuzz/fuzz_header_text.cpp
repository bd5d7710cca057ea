// The header text alone through text decoding, grammar and validation, in
// each format version's decoding (latin-1 for 1.0 and 2.0, UTF-8 for 3.0).
//
// It also holds the parser's fast path to the grammar it stands in for
// (npy/parse.hpp): on every text the decoding step passes, the fast path
// accepts exactly when the grammar does, with the same tree.
//
// Input: one byte choosing the version (modulo 5: 1, 2, 3, or 0 and 4, which
// must be unsupported_version), two configuration bytes
// (fuzz_common.hpp), then the header text.
#include "fuzz_common.hpp"

#include <algorithm>

#include "npy/ast_compare.hpp"
#include "npy/entry_points.hpp"
#include "npy/parse.hpp"
#include "npy/text.hpp"
#include "npy/workspace.hpp"

namespace {

void check_fast_path(const unsigned char* text, std::size_t size, unsigned version, const npyguard::options& opts) {
  using namespace npyguard::detail;
  parse_settings settings;
  settings.utf8 = version == 3;
  settings.allow_long_suffix = version != 3;
  settings.max_depth = std::min(opts.limits.max_depth, npyguard::hard_max_depth);
  settings.base_offset = version == 1 ? 10 : 12;
  if (check_header_text(text, size, settings.utf8, settings.base_offset, settings.ascii_only)) return;
  ast fast;
  ast grammar;
  const bool fast_accepts = parse_header_text_fast(reinterpret_cast<const char*>(text), size, settings, fast);
  const bool grammar_accepts =
      !parse_header_text_grammar(reinterpret_cast<const char*>(text), size, settings, grammar).has_value();
  NPYGUARD_FUZZ_CHECK(fast_accepts == grammar_accepts);
  if (fast_accepts) NPYGUARD_FUZZ_CHECK(same_tree(fast, grammar));
}

// The duplicate-name check's fallback (sorting by keyed hash) against its
// hash table: the same verdict, the same first repeat.
void check_sorted_names(const unsigned char* text, std::size_t size, unsigned version, const npyguard::options& opts,
                        const npyguard::result& verdict) {
  using namespace npyguard::detail;
  workspace space;
  space.sort_names = true;
  npyguard::header model;
  const std::optional<npyguard::error> failure = validate_header_text(space, text, size, version, opts, model);
  const npyguard::result sorted = failure ? npyguard::result(*failure) : npyguard::result(model);
  NPYGUARD_FUZZ_CHECK(sorted == verdict);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace npyguard;
  fuzz::input_reader in(data, size);
  const unsigned version = in.byte() % 5u; // 0 and 4 are not versions
  const std::uint8_t first = in.byte();
  const options opts = fuzz::decode_options(first, in.byte());
  const auto text = fuzz::exact_copy(in.data(), in.size());

  const result verdict = validate_header_text(text.get(), in.size(), version, opts);
  if (version < 1 || version > 3) {
    NPYGUARD_FUZZ_CHECK(!verdict.ok() && verdict.failure().code == error_code::unsupported_version);
    return 0;
  }
  check_fast_path(text.get(), in.size(), version, opts);
  check_sorted_names(text.get(), in.size(), version, opts, verdict);
  const result loose = validate_header_text(text.get(), in.size(), version, fuzz::loosest_options());
  fuzz::check_against_loosest(verdict, loose);
  if (const header* model = verdict.value_if()) {
    fuzz::check_model(*model, opts);
    NPYGUARD_FUZZ_CHECK(model->major_version == version);
    NPYGUARD_FUZZ_CHECK(model->header_length == in.size());
    fuzz::check_descr_round_trip(*model, opts);
  } else {
    const error& failure = verdict.failure();
    NPYGUARD_FUZZ_CHECK(failure.offset.has_value());
    NPYGUARD_FUZZ_CHECK(*failure.offset <= (version == 1 ? 10u : 12u) + in.size());
    NPYGUARD_FUZZ_CHECK(!failure.message.empty());
  }
  return 0;
}
