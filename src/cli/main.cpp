// npyguard: the command-line tool. This file sets up the commands and their
// options (CLI11) and dispatches; each command has its own file.
#include <cstdint>
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common.hpp"
#include "npyguard/npyguard.hpp"
#include "options.hpp"

namespace {

using namespace npyguard_cli;

int run(int argc, char** argv) {
  // Output goes through one large buffer: thousands of result lines cost a
  // few write(2) calls.
  static char output_buffer[1 << 16];
  std::setvbuf(stdout, output_buffer, _IOFBF, sizeof output_buffer);

  CLI::App app{
      "npyguard: decide whether NumPy .npy files, .npz archives and RawArray .ra files are well formed,\n"
      "from their headers and structure alone, before anything reads the data.",
      "npyguard"};
  app.set_version_flag("--version", std::string("npyguard ") + npyguard::version());
  app.require_subcommand(1);
  app.footer(std::string("Run 'npyguard COMMAND --help' for a command's options; the manual is npyguard(1).\n") +
             exit_status_text);

  check_settings settings;
  CLI::App* check = app.add_subcommand(
      "check", "Validate .npy files, .npz archives and .ra files against the npyguard acceptance policy");
  check->add_flag("--json", settings.json,
                  "One JSON object per line per file: file (file_bytes too when the name is not UTF-8), valid, and "
                  "version, shape, fortran_order, descr (numpy's repr of dtype_to_descr), dtype (numpy's dtype.str, "
                  "null for a struct), kind (numpy's dtype.kind), itemsize, header_length, data_offset, "
                  "data_alignment, count, nbytes, data_is_pickle; or error {actual, code, limit, message, offset, "
                  "option} (option: the library's name of the option or limit that refused the file, with its "
                  "limit and the actual value; null where none applies). With format "
                  "npz: members [...]; with format ra: flags, big_endian, eltype, elbyte, type_name, ndims, dims, "
                  "count, data_offset, data_length, metadata_offset, metadata_length");
  check->add_flag("-q,--quiet", settings.quiet,
                  "Print only invalid and unreadable files, without the excerpt; no summary, no progress");
  check->add_flag(
      "-r,--recursive", settings.walk.recursive,
      "Check the files in directories, recursively: regular *.npy, *.npz and *.ra files, in sorted order; symbolic "
      "links inside directories are not followed");
  CLI::Option* recursive = check->get_option("--recursive");
  check->add_flag("--all-files", settings.walk.all_files, "With -r: every regular file, not only *.npy, *.npz and *.ra")
      ->needs(recursive);
  check->add_option("-j,--jobs", settings.jobs, "Files checked in parallel, 1 to 1024 (default: the number of cores)")
      ->transform(decimal_number(1, 1024))
      ->type_name("N");
  add_policy_options(*check, settings.opts);
  add_format_options(*check, settings.opts, settings.format);
  add_timeout_option(*check, settings.timeout_seconds);
  check->add_flag("--canonical", settings.opts.canonical,
                  "Also require the exact header bytes numpy's np.save writes (error not_canonical at the first "
                  "byte that differs)");
  check->add_option("FILE", settings.arguments, "Files or (with -r) directories to check; '-' reads standard input")
      ->required();
  check->footer(
      "Output, in the order of the arguments: 'FILE: ok, version ..., descr ..., shape ..., nbytes N' or\n"
      "'FILE:OFFSET: CODE: message' (OFFSET is a 0-based byte offset into the file), followed by the\n"
      "header line around OFFSET with a caret under the byte (bytes that are not printable ASCII are\n"
      "shown as \\xNN). In names, \\xNN is a control byte or a byte that is not UTF-8, and \\uNNNN a C1 or\n"
      "bidirectional control character. A summary 'N files: V valid, I invalid' goes to standard error\n"
      "when more than one file was checked, and a progress line too when it is a terminal and the run\n"
      "is long (neither with -q). An archive is one line: 'FILE: ok, npz, N members, nbytes N', or its\n"
      "error as 'FILE:MEMBER:OFFSET: ...' (OFFSET inside the member) for a .npy error in a member, else\n"
      "'FILE:OFFSET: CODE: member NAME: message' with the archive offset. A RawArray file is one line:\n"
      "'FILE: ok, ra, TYPE, dims [D0, D1, ...], nbytes N' (dims in file order, D0 varying fastest),\n"
      "with ', big-endian' and ', metadata N bytes' when they apply.\n" +
      std::string(exit_status_text));

  CLI::App* inspect = app.add_subcommand(
      "inspect", "Show everything the header says about one .npy file, every member of an .npz archive, or a .ra file");
  std::string inspect_file;
  bool inspect_json = false;
  inspect->add_flag("--json", inspect_json,
                    "One JSON object: the keys of check --json, except that dtype is the dtype tree: {kind, "
                    "itemsize, and type (numpy's dtype.str), byte_order, unit, multiplier; or fields: [{name, title, "
                    "offset, itemsize, subarray_shape, dtype}]}");
  npyguard::options inspect_opts;
  std::uint32_t inspect_timeout_seconds = 0;
  file_format inspect_format = file_format::detect;
  add_policy_options(*inspect, inspect_opts);
  add_format_options(*inspect, inspect_opts, inspect_format);
  add_timeout_option(*inspect, inspect_timeout_seconds);
  inspect->add_flag("--canonical", inspect_opts.canonical, "Apply the canonical profile too");
  inspect->add_option("FILE", inspect_file, "The file; '-' reads standard input")->required();
  inspect->footer(
      "Prints the format version, header length, data offset and its alignment, fortran order, shape,\n"
      "element count, itemsize, nbytes, numpy's descr, and the dtype as an indented tree: fields with\n"
      "names, titles, offsets, sizes, subarray shapes, byte order and datetime units, and padding.\n"
      "A RawArray file: flags, element type and size, dims in file order and the numpy view of them,\n"
      "data offset and length, and the metadata after the data (never read).\n"
      "An invalid file is reported as by check.\n"
      "Exit status: 0 valid; 1 invalid; 2 usage error or unreadable file.");

  npyguard::options canon_opts;
  CLI::App* canon =
      app.add_subcommand("canon", "Write a copy of a valid .npy file with the header numpy's np.save would write");
  std::string canon_input;
  std::string canon_output;
  add_policy_options(*canon, canon_opts);
  canon->add_option("IN", canon_input, "The file to copy (a regular file)")->required();
  canon->add_option("OUT", canon_output, "Where to write the copy (never IN itself)")->required();
  canon->footer(
      "IN is validated first (with the options above); the copy has the canonical header and the same data\n"
      "bytes, copied in 1 MiB chunks. Bytes after the data are dropped (they are only accepted with\n"
      "--allow-trailing-data); a pickle is copied as it is. OUT appears only when complete: the copy is\n"
      "written to a new file in OUT's directory, flushed and renamed over OUT, so on any error OUT is\n"
      "untouched and nothing partial is left.\n"
      "OUT, if it exists, must be a regular file: a link, directory, device or FIFO is never replaced.\n"
      "Errors go to standard error as 'npyguard canon: IN:OFFSET: CODE: message'.\n"
      "Exit status: 0 written, 1 IN is invalid, 2 usage error or I/O error (IN unreadable or not a\n"
      "regular file, OUT is IN or not a regular file, OUT cannot be written).");

  npyguard::options convert_opts;
  CLI::App* convert = app.add_subcommand(
      "convert", "Convert a RawArray .ra file to .npy, or a .npy file to .ra, validating both sides");
  std::string convert_input;
  std::string convert_output;
  add_policy_options(*convert, convert_opts);
  convert->add_flag("--ra-reject-metadata", convert_opts.ra_reject_metadata,
                    ".ra input: refuse bytes after the data instead of leaving them behind");
  convert->add_flag_callback(
      "--no-ra-type5", [&convert_opts] { convert_opts.ra_allow_type5 = false; }, ".ra input: refuse element type 5");
  convert
      ->add_option("IN", convert_input,
                   "The file to convert: a regular file (a FIFO or device is refused at once, never waited on)")
      ->required();
  convert->add_option("OUT", convert_output, "Where to write the result (never IN itself)")->required();
  convert->footer(
      "The direction comes from IN: a name ending in .ra or .npy, else its first bytes (rawarray or\n"
      "\\x93NUMPY), else OUT's name. IN is validated first (with the options above).\n"
      ".ra -> .npy: shape = dims in file order (dims[0] varies fastest), fortran_order True unless at most\n"
      "one dim is above 1, the header np.save writes, the data bytes unchanged. Refused (not_convertible,\n"
      "at the field that says why): user types (0), bfloat16 (5 with 2 bytes), 16-byte integers, 4-byte\n"
      "complex, more than 32 dims. Metadata after the data is not carried over (said on standard error).\n"
      ".npy -> .ra: what the Python reference ra.write writes: dims = shape, flags 1 for big-endian data,\n"
      "the data column-major (a C-order array with two or more dims above 1 is transposed); bool becomes\n"
      "type 5. Refused: structured, object, string, void, datetime and timedelta dtypes.\n"
      "OUT appears only when complete and validated, as with canon: on any error OUT is untouched.\n"
      "An OUT whose name ends in .npy, .npz or .ra must name the format written, or nothing is written.\n"
      "On success the written file's line, as check prints it, goes to standard output.\n"
      "Errors go to standard error as 'npyguard convert: IN:OFFSET: CODE: message'.\n"
      "Exit status: 0 written, 1 IN is invalid or cannot be expressed in the other format, 2 usage error\n"
      "or I/O error.");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) { // --help, --version
      app.exit(e);
      return exit_valid;
    }
    // The command is the first argument: npyguard itself has no option
    // that takes a value.
    const std::string first = argc > 1 ? argv[1] : "";
    for (const CLI::App* command : {check, inspect, canon, convert}) {
      if (command->parsed() || first == command->get_name()) return usage_error(e.what(), command->get_name());
    }
    if (first.empty() || first == "--")
      return usage_error("a command is required (check, inspect, canon or convert)", {});
    if (first[0] == '-') {
      return usage_error("'" + first + "' is not an option of npyguard itself (a command comes first)", {});
    }
    return usage_error("'" + first + "' is not a command (check, inspect, canon or convert)", {});
  }

  if (canon->parsed()) {
    if (canon_input == "-" || canon_output == "-") {
      return usage_error("IN and OUT must be files: '-' (standard input or output) is not accepted", "canon");
    }
    return run_canon(canon_input, canon_output, canon_opts);
  }
  if (convert->parsed()) {
    if (convert_input == "-" || convert_output == "-") {
      return usage_error("IN and OUT must be files: '-' (standard input or output) is not accepted", "convert");
    }
    return run_convert(convert_input, convert_output, convert_opts);
  }
  if (inspect->parsed()) {
    inspect_opts.timeout_ms = inspect_timeout_seconds * 1000u;
    return run_inspect(inspect_file, inspect_opts, inspect_json, inspect_format);
  }
  settings.opts.timeout_ms = settings.timeout_seconds * 1000u;
  return run_check(settings);
}

} // namespace

int main(int argc, char** argv) {
  // Nothing the command calls should throw past here (the library never
  // throws; CLI11's parse errors are handled in run()); if something does,
  // it is a bug, reported as such with the usage-or-I/O status.
  // canon and convert write beside their OUT: SIGINT, SIGTERM and SIGHUP
  // remove what they were writing.
  npyguard::remove_temporary_files_on_signals();
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "npyguard: internal error: %s\n", e.what());
    return exit_usage_or_io;
  }
}
