// npyguard: the command-line tool.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "npyguard/npyguard.hpp"

namespace {

constexpr int exit_valid = 0;
constexpr int exit_invalid = 1;
constexpr int exit_usage_or_io = 2;

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

std::string version_text(const npyguard::header& model) {
  return std::to_string(model.major_version) + "." + std::to_string(model.minor_version);
}

nlohmann::json to_json(const std::string& file, const npyguard::result& checked) {
  nlohmann::json out;
  out["file"] = file;
  out["valid"] = checked.ok();
  if (const auto* model = checked.value_if()) {
    out["version"] = version_text(*model);
    out["shape"] = model->shape;
    out["fortran_order"] = model->fortran_order;
    out["descr"] = npyguard::descr_repr(model->descr);
    out["itemsize"] = model->descr.itemsize;
    out["header_length"] = model->header_length;
    out["data_offset"] = model->data_offset;
    out["data_alignment"] = model->data_alignment;
    out["count"] = model->count;
    out["data_is_pickle"] = model->data_is_pickle;
    out["nbytes"] = model->data_is_pickle ? nlohmann::json(nullptr) : nlohmann::json(model->nbytes);
  } else {
    const npyguard::error& failure = checked.failure();
    nlohmann::json error;
    error["code"] = std::string(npyguard::error_code_name(failure.code));
    error["offset"] = failure.offset ? nlohmann::json(*failure.offset) : nlohmann::json(nullptr);
    error["message"] = failure.message;
    out["error"] = std::move(error);
  }
  return out;
}

std::string to_text(const std::string& file, const npyguard::result& checked) {
  if (const auto* model = checked.value_if()) {
    std::string line = file + ": ok, version " + version_text(*model) + ", descr " +
                       npyguard::descr_repr(model->descr) + ", shape " + shape_text(model->shape);
    if (model->fortran_order) line += ", fortran order";
    if (model->data_is_pickle) return line + ", data is a pickle (not read)";
    return line + ", nbytes " + std::to_string(model->nbytes);
  }
  const npyguard::error& failure = checked.failure();
  std::string line = file + ":";
  if (failure.offset) line += std::to_string(*failure.offset) + ":";
  return line + " " + std::string(npyguard::error_code_name(failure.code)) + ": " + failure.message;
}

// The acceptance policy, shared by the commands that validate.
void add_policy_options(CLI::App& command, npyguard::options& opts) {
  command.add_flag("--allow-object", opts.allow_object,
                   "Accept object ('O') dtypes; the pickle is never read, data-size checks are skipped");
  command.add_flag("--allow-trailing-data", opts.allow_trailing_data, "Accept bytes after the array data");
  command.add_option("--max-header-bytes", opts.limits.max_header_bytes, "Largest accepted HEADER_LEN")
      ->default_val(opts.limits.max_header_bytes)
      ->check(CLI::Range(0u, 0xFFFF'FFFFu));
  command.add_option("--max-depth", opts.limits.max_depth, "Deepest nesting of lists and tuples (at most 200)")
      ->default_val(opts.limits.max_depth)
      ->check(CLI::Range(0u, npyguard::hard_max_depth));
  command.add_option("--max-ndim", opts.limits.max_ndim, "Most dimensions in the shape")
      ->default_val(opts.limits.max_ndim);
  command.add_option("--max-data-bytes", opts.limits.max_data_bytes, "Largest accepted array size in bytes");
}

int run_canon(const std::string& input, const std::string& output, const npyguard::options& opts) {
  const npyguard::result written = npyguard::canonicalize_file(input.c_str(), output.c_str(), opts);
  if (written.ok()) return exit_valid;
  const npyguard::error& failure = written.failure();
  const bool io = failure.code == npyguard::error_code::io_error || failure.code == npyguard::error_code::out_of_memory;
  std::cerr << "npyguard canon: " << to_text(input, written) << '\n';
  return io ? exit_usage_or_io : exit_invalid;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"npyguard: decide whether NumPy .npy files are well formed, from the header and the file size\n"
               "alone, before anything reads the data.",
               "npyguard"};
  app.set_version_flag("--version", NPYGUARD_VERSION_STRING);
  app.require_subcommand(1);
  app.footer("Exit status: 0 every file valid, 1 some file invalid, 2 usage error or a file that cannot be read.");

  npyguard::options opts;
  CLI::App* check = app.add_subcommand("check", "Validate .npy files against the npyguard acceptance policy");
  bool json = false;
  std::vector<std::string> files;
  check->add_flag("--json", json,
                  "One JSON object per line per file: file, valid, and version, shape, fortran_order, descr "
                  "(numpy's repr of dtype_to_descr), itemsize, data_offset, nbytes; or error {code, offset, message}");
  add_policy_options(*check, opts);
  check->add_flag("--canonical", opts.canonical,
                  "Also require the exact header bytes numpy's np.save writes (error not_canonical at the first "
                  "byte that differs)");
  check->add_option("FILE", files, "Files to check; '-' reads standard input")->required();
  check->footer("Output: 'FILE: ok, ...' or 'FILE:OFFSET: CODE: message' (OFFSET is a 0-based byte offset).\n"
                "Exit status: 0 every file valid, 1 some file invalid, 2 usage error or unreadable file.");

  CLI::App* canon = app.add_subcommand(
      "canon", "Write a copy of a valid .npy file with the header numpy's np.save would write");
  std::string canon_input;
  std::string canon_output;
  add_policy_options(*canon, opts);
  canon->add_option("IN", canon_input, "The file to copy (a regular file)")->required();
  canon->add_option("OUT", canon_output, "Where to write the copy (never IN itself)")->required();
  canon->footer(
      "IN is validated first (with the options above); the copy has the canonical header and the same data\n"
      "bytes, copied in 1 MiB chunks. Bytes after the data are dropped (they are only accepted with\n"
      "--allow-trailing-data); a pickle is copied as it is. OUT appears only when complete: the copy is\n"
      "written to a new file in OUT's directory, flushed and renamed over OUT, so on any error OUT is\n"
      "untouched and nothing partial is left.\n"
      "Exit status: 0 written, 1 IN is invalid (the error is printed as by check), 2 usage error or I/O\n"
      "error (unreadable IN, OUT is IN, OUT cannot be written).");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int status = app.exit(e);
    return status == 0 ? exit_valid : exit_usage_or_io;
  }

  if (canon->parsed()) return run_canon(canon_input, canon_output, opts);

  int status = exit_valid;
  for (const std::string& file : files) {
    const npyguard::result checked =
        file == "-" ? npyguard::validate_fd(0, opts) : npyguard::validate_file(file.c_str(), opts);
    if (json) {
      std::cout << to_json(file, checked).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    } else {
      std::cout << to_text(file, checked) << '\n';
    }
    if (!checked.ok()) {
      const bool unreadable = checked.failure().code == npyguard::error_code::io_error;
      status = unreadable ? exit_usage_or_io : (status == exit_usage_or_io ? status : exit_invalid);
    }
  }
  return status;
}
