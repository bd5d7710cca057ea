// What the command prints: one line per file, the compiler-style excerpt
// under an error, JSON objects, and inspect's dtype tree.
#ifndef NPYGUARD_CLI_REPORT_HPP
#define NPYGUARD_CLI_REPORT_HPP

#include <cstdio>
#include <string>

#include "inputs.hpp"
#include "npyguard/npyguard.hpp"

namespace npyguard_cli {

// "FILE: ok, version 1.0, descr '<f8', shape (3,), nbytes 24" or
// "FILE:OFFSET: CODE: message", escaped for a terminal (text.hpp), the
// message naming the command's flags.
[[nodiscard]] std::string verdict_line(const std::string& file, const npyguard::result& verdict);
// An archive: "FILE: ok, npz, N members, nbytes N" or the error, with
// "FILE:MEMBER:OFFSET:" for .npy errors inside a member.
[[nodiscard]] std::string verdict_line(const std::string& file, const npyguard::npz::archive_result& verdict);

// A RawArray file: "FILE: ok, ra, float64, dims [2, 3], nbytes 48" (with
// ", big-endian" and ", metadata N bytes" when they apply), or the error.
[[nodiscard]] std::string verdict_line(const std::string& file, const npyguard::ra::result& verdict);

// For an error with an offset: the line of the file around the offset (the
// header is one line) with every byte that is not printable ASCII escaped,
// and a caret under the byte at the offset; empty when there is nothing to
// show (the offset is in the data, or the bytes cannot be read again).
[[nodiscard]] std::string excerpt_lines(const checked& result);

// check --json: one line with file, valid, and the model's summary (with
// numpy's dtype.str as "dtype" and dtype.kind as "kind") or the error.
[[nodiscard]] std::string verdict_json(const std::string& file, const npyguard::result& verdict);
// An archive: file, format "npz", valid, verified, members [{name, key,
// shape, fortran_order, descr, itemsize, data_offset, nbytes}]; or error
// {code, offset, message} with member and member_offset when they apply.
[[nodiscard]] std::string verdict_json(const std::string& file, const npyguard::npz::archive_result& verdict);

// A RawArray file: file, format "ra", valid, and SPEC-ra.md section 9's
// keys (big_endian, count, data_length, data_offset, dims, elbyte, eltype,
// flags, metadata_length, metadata_offset, ndims, type_name); or error.
[[nodiscard]] std::string verdict_json(const std::string& file, const npyguard::ra::result& verdict);

// inspect --json: the same object, except that "dtype" is the dtype tree
// (inspect's contract from before dtype.str was added), written to `sink`
// through a bounded buffer.
void write_inspect_json(std::FILE* sink, const std::string& file, const npyguard::result& verdict);
// An archive, each member with its dtype tree.
void write_inspect_json(std::FILE* sink, const std::string& file, const npyguard::npz::archive_result& verdict);

// RawArray: the same object as check --json.
void write_inspect_json(std::FILE* sink, const std::string& file, const npyguard::ra::result& verdict);

// inspect's text: the model as a list of properties and an indented dtype tree.
[[nodiscard]] std::string inspect_text(const std::string& file, const npyguard::header& model);
// An archive: each member's name, key and method, then its model.
[[nodiscard]] std::string inspect_text(const std::string& file, const npyguard::npz::archive& archive);
// A RawArray file: its fields, and how numpy would view its data.
[[nodiscard]] std::string inspect_text(const std::string& file, const npyguard::ra::header& model);
// The model's properties, one per line, each line starting with `indent`.
[[nodiscard]] std::string model_rows(const npyguard::header& model, const std::string& indent);

} // namespace npyguard_cli

#endif
