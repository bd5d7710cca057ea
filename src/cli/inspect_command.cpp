// npyguard inspect: everything the header says about one file.
#include <cstdio>

#include "commands.hpp"
#include "common.hpp"
#include "report.hpp"

namespace npyguard_cli {

int run_inspect(const std::string& file, const npyguard::options& opts, bool json, file_format format) {
  const input item{file, file == "-", {}};
  const checked result = check_input(item, opts, json ? 0 : excerpt_context, format);
  const bool archive = result.format == file_format::npz;
  if (result.format == file_format::ra) {
    if (json) {
      write_inspect_json(stdout, file, result.rawarray);
    } else if (const npyguard::ra::header* model = result.rawarray.value_if()) {
      write_out(inspect_text(file, *model));
    } else {
      write_out(verdict_line(file, result.rawarray) + "\n");
    }
  } else if (json) {
    // Streamed: the dtype tree of a large header is never held as a whole.
    if (archive) {
      write_inspect_json(stdout, file, result.archive);
    } else {
      write_inspect_json(stdout, file, result.verdict);
    }
  } else if (archive) {
    write_out(result.ok() ? inspect_text(file, result.archive.value()) : verdict_line(file, result.archive) + "\n");
  } else if (const npyguard::header* model = result.verdict.value_if()) {
    write_out(inspect_text(file, *model));
  } else {
    write_out(verdict_line(file, result.verdict) + "\n" + excerpt_lines(result));
  }
  if (result.ok()) return exit_valid;
  return is_io(result.failure()) ? exit_usage_or_io : exit_invalid;
}

} // namespace npyguard_cli
