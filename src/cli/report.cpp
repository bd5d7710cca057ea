#include "report.hpp"

#include <algorithm>
#include <string_view>

#include "json_writer.hpp"
#include "text.hpp"
#include "unicode.hpp"

namespace npyguard_cli {
namespace {

std::string shape_text(const std::vector<std::uint64_t>& shape) { return npyguard::shape_repr(shape); }

std::string version_text(const npyguard::header& model) {
  return std::to_string(model.major_version) + "." + std::to_string(model.minor_version);
}

const char* kind_name(npyguard::dtype_kind kind) {
  switch (kind) {
    case npyguard::dtype_kind::boolean: return "boolean";
    case npyguard::dtype_kind::signed_integer: return "signed integer";
    case npyguard::dtype_kind::unsigned_integer: return "unsigned integer";
    case npyguard::dtype_kind::floating: return "floating point";
    case npyguard::dtype_kind::complex_floating: return "complex floating point";
    case npyguard::dtype_kind::bytes: return "bytes";
    case npyguard::dtype_kind::unicode: return "unicode (UCS-4)";
    case npyguard::dtype_kind::raw_void: return "raw bytes";
    case npyguard::dtype_kind::datetime: return "datetime";
    case npyguard::dtype_kind::timedelta: return "timedelta";
    case npyguard::dtype_kind::object: return "Python object (pickled)";
    case npyguard::dtype_kind::structured: return "struct";
  }
  return "unknown";
}

const char* order_name(npyguard::byte_order order) {
  switch (order) {
    case npyguard::byte_order::little: return "little-endian";
    case npyguard::byte_order::big: return "big-endian";
    case npyguard::byte_order::not_applicable: return "no byte order";
  }
  return "unknown";
}

std::string quoted(const std::string& name) { return "'" + escaped(name, shown_as::name) + "'"; }

std::string plural(std::uint64_t n, const char* unit) { return std::to_string(n) + " " + unit + (n == 1 ? "" : "s"); }

// "<M8[10ms], datetime, little-endian, unit 10 ms" and the like.
std::string scalar_text(const npyguard::dtype& type) {
  std::string out = npyguard::type_string(type) + ", " + kind_name(type.kind);
  if (type.order != npyguard::byte_order::not_applicable) out += std::string(", ") + order_name(type.order);
  if ((type.kind == npyguard::dtype_kind::datetime || type.kind == npyguard::dtype_kind::timedelta)) {
    out += type.datetime_unit == npyguard::time_unit::generic
               ? std::string(", generic unit")
               : ", unit " + std::to_string(type.datetime_multiplier) + " " +
                     std::string(npyguard::time_unit_name(type.datetime_unit));
  }
  return out;
}

void append_struct(std::string& out, const npyguard::dtype& type, const std::string& indent);

void append_type(std::string& out, const npyguard::dtype& type, const std::string& indent) {
  if (type.kind == npyguard::dtype_kind::structured) {
    out += "struct of " + plural(type.fields.size(), "field") + ", " + plural(type.itemsize, "byte") + "\n";
    append_struct(out, type, indent + "  ");
  } else {
    out += scalar_text(type) + "\n"; // the type string says the size
  }
}

void append_padding(std::string& out, const std::string& indent, std::uint64_t offset, std::uint64_t size) {
  out += indent + "(padding) at offset " + std::to_string(offset) + ", " + plural(size, "byte") + "\n";
}

void append_struct(std::string& out, const npyguard::dtype& type, const std::string& indent) {
  std::uint64_t cursor = 0;
  for (const npyguard::field& member : type.fields) {
    if (member.offset > cursor) append_padding(out, indent, cursor, member.offset - cursor);
    out += indent + quoted(member.name);
    if (member.title) out += " (title " + quoted(*member.title) + ")";
    out += " at offset " + std::to_string(member.offset) + ", " + plural(member.itemsize, "byte") + ": ";
    if (!member.subarray_shape.empty()) out += "subarray " + shape_text(member.subarray_shape) + " of ";
    append_type(out, member.type, indent);
    cursor = std::max(cursor, member.offset + member.itemsize);
  }
  if (type.itemsize > cursor) append_padding(out, indent, cursor, type.itemsize - cursor);
}

// A library message as the command says it: the library's words (which
// name no option) and, when an option or limit refused the input, its flag
// in parentheses: "... above the limit of 64 (--max-header-bytes)". Built
// from the error's fields; the library's text is never edited.
std::string command_message(const npyguard::error& failure) {
  const std::string_view flag = flag_of(failure.option);
  if (flag.empty()) return failure.message;
  return failure.message + " (" + std::string(flag) + ")";
}

// "FILE:OFFSET: CODE: message" with the member's path and offset inside it
// when the error has them (SPEC-npz.md section 13).
std::string error_line(const std::string& file, const npyguard::error& failure) {
  std::string line = escaped(file, shown_as::name) + ":";
  if (failure.member && failure.member_offset) {
    line += escaped(*failure.member, shown_as::name) + ":" + std::to_string(*failure.member_offset) + ":";
  } else if (failure.offset) {
    line += std::to_string(*failure.offset) + ":";
  }
  line += " " + std::string(npyguard::error_code_name(failure.code)) + ": ";
  if (failure.member && !failure.member_offset) line += "member " + quoted(*failure.member) + ": ";
  return line + escaped(command_message(failure), shown_as::escaped_text);
}

} // namespace

std::string verdict_line(const std::string& file, const npyguard::result& verdict) {
  const std::string name = escaped(file, shown_as::name);
  if (const auto* model = verdict.value_if()) {
    // numpy's repr escapes what Python does not print, but nothing from a
    // header reaches the terminal unchecked.
    std::string line = name + ": ok, version " + version_text(*model) + ", descr " +
                       escaped(npyguard::descr_repr(model->descr), shown_as::escaped_text) + ", shape " +
                       shape_text(model->shape);
    if (model->fortran_order) line += ", fortran order";
    if (model->data_is_pickle) return line + ", data is a pickle (not read)";
    return line + ", nbytes " + std::to_string(model->nbytes);
  }
  return error_line(file, verdict.failure());
}

std::string verdict_line(const std::string& file, const npyguard::npz::archive_result& verdict) {
  if (const auto* archive = verdict.value_if()) {
    std::uint64_t nbytes = 0;
    for (const auto& member : archive->members) nbytes += member.npy.nbytes;
    return escaped(file, shown_as::name) + ": ok, npz, " + plural(archive->members.size(), "member") + ", nbytes " +
           std::to_string(nbytes) + (archive->verified ? ", verified" : "");
  }
  return error_line(file, verdict.failure());
}

namespace {

std::string dims_text(const std::vector<std::uint64_t>& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) out += (i == 0 ? "" : ", ") + std::to_string(dims[i]);
  return out + "]";
}

std::string ra_type_text(const npyguard::ra::header& model) {
  return npyguard::ra::type_name(model.eltype, model.elbyte);
}

} // namespace

std::string verdict_line(const std::string& file, const npyguard::ra::result& verdict) {
  if (const auto* model = verdict.value_if()) {
    std::string line = escaped(file, shown_as::name) + ": ok, ra, " + ra_type_text(*model) + ", dims " +
                       dims_text(model->dims) + ", nbytes " + std::to_string(model->data_length);
    if (model->big_endian) line += ", big-endian";
    if (model->metadata_length.value_or(0) != 0) line += ", metadata " + plural(*model->metadata_length, "byte");
    return line;
  }
  return error_line(file, verdict.failure());
}

std::string excerpt_lines(const checked& result) {
  if (result.format != file_format::npy) return {};
  const npyguard::error* failure = result.verdict.failure_if();
  if (failure == nullptr || !failure->offset || result.excerpt.empty()) return {};
  const std::uint64_t at = *failure->offset;
  if (at < result.excerpt_start || at > result.excerpt_start + result.excerpt.size()) return {};
  const auto& bytes = result.excerpt;
  const auto index = static_cast<std::size_t>(at - result.excerpt_start);
  // The line holding the offset: the header is one line ending in '\n' (a
  // raw '\n' anywhere else is an error of its own). An offset just after a
  // '\n' is the data offset or the end of the input: it shows the header
  // line that '\n' ends, with the caret after it.
  std::size_t begin = index;
  const bool after_header = begin > 0 && bytes[begin - 1] == '\n';
  if (after_header) --begin;
  while (begin > 0 && bytes[begin - 1] != '\n') --begin;
  std::size_t end = index;
  if (!after_header) {
    while (end < bytes.size() && bytes[end] != '\n') ++end;
    if (end < bytes.size()) ++end; // show the '\n' itself, escaped
  }

  std::string line = "  ";
  if (begin == 0 && result.excerpt_start > 0) line += "..."; // the excerpt cut the line
  std::size_t caret = line.size();
  for (std::size_t i = begin; i < end; ++i) {
    if (i == index) caret = line.size();
    line += escaped(std::string_view(bytes).substr(i, 1), shown_as::bytes);
  }
  if (index >= end) caret = line.size(); // the end of the input
  if (end == bytes.size() && result.excerpt_continues && bytes.back() != '\n') line += "...";
  return line + "\n" + std::string(caret, ' ') + "^\n";
}

namespace {

// numpy's dtype.kind: the type string's kind letter; 'V' for a struct.
char numpy_kind(npyguard::dtype_kind kind) {
  switch (kind) {
    case npyguard::dtype_kind::boolean: return 'b';
    case npyguard::dtype_kind::signed_integer: return 'i';
    case npyguard::dtype_kind::unsigned_integer: return 'u';
    case npyguard::dtype_kind::floating: return 'f';
    case npyguard::dtype_kind::complex_floating: return 'c';
    case npyguard::dtype_kind::bytes: return 'S';
    case npyguard::dtype_kind::unicode: return 'U';
    case npyguard::dtype_kind::raw_void: return 'V';
    case npyguard::dtype_kind::datetime: return 'M';
    case npyguard::dtype_kind::timedelta: return 'm';
    case npyguard::dtype_kind::object: return 'O';
    case npyguard::dtype_kind::structured: return 'V';
  }
  return 'V';
}

// "file": the name as UTF-8 with each byte that is not part of valid UTF-8
// as the four characters \xNN, so names that differ only there stay
// different (U+FFFD would merge them).
std::string json_file_name(std::string_view raw) {
  std::string out;
  out.reserve(raw.size() + 8);
  for (std::size_t at = 0; at < raw.size();) {
    const utf8_step step = next_utf8(raw, at);
    if (step.valid) {
      out.append(raw, at, step.length);
    } else {
      for (std::size_t i = at; i < at + step.length; ++i) {
        const auto byte = static_cast<unsigned char>(raw[i]);
        out += "\\x";
        out += hex_digits[byte >> 4];
        out += hex_digits[byte & 0xF];
      }
    }
    at += step.length;
  }
  return out;
}

// RFC 4648 base64 with padding.
std::string base64(std::string_view raw) {
  static constexpr char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((raw.size() + 2) / 3 * 4);
  for (std::size_t at = 0; at < raw.size(); at += 3) {
    const std::size_t n = std::min<std::size_t>(3, raw.size() - at);
    std::uint32_t group = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      group = (group << 8) | (i < n ? static_cast<unsigned char>(raw[at + i]) : 0u);
    }
    for (std::size_t i = 0; i < 4; ++i) {
      out += i <= n ? alphabet[(group >> (18 - 6 * i)) & 0x3F] : '=';
    }
  }
  return out;
}

void write_shape(json_writer& out, const std::vector<std::uint64_t>& shape) {
  out.begin_array();
  for (const std::uint64_t dim : shape) out.number(dim);
  out.end_array();
}

// inspect's tree. Keys in alphabetical order (json_writer.hpp).
void write_dtype_tree(json_writer& out, const npyguard::dtype& type) {
  const bool structured = type.kind == npyguard::dtype_kind::structured;
  const bool timelike = type.kind == npyguard::dtype_kind::datetime || type.kind == npyguard::dtype_kind::timedelta;
  out.begin_object();
  if (!structured) {
    out.key("byte_order");
    out.string(type.order == npyguard::byte_order::little ? "little"
               : type.order == npyguard::byte_order::big  ? "big"
                                                          : "not_applicable");
  } else {
    out.key("fields");
    out.begin_array();
    for (const npyguard::field& member : type.fields) {
      out.begin_object();
      out.key("dtype");
      write_dtype_tree(out, member.type);
      out.key("itemsize");
      out.number(member.itemsize);
      out.key("name");
      out.string(member.name);
      out.key("offset");
      out.number(member.offset);
      out.key("subarray_shape");
      write_shape(out, member.subarray_shape);
      out.key("title");
      if (member.title) {
        out.string(*member.title);
      } else {
        out.null();
      }
      out.end_object();
    }
    out.end_array();
  }
  out.key("itemsize");
  out.number(type.itemsize);
  out.key("kind");
  out.string(kind_name(type.kind));
  if (timelike) {
    out.key("multiplier");
    out.number(type.datetime_multiplier);
  }
  if (!structured) {
    out.key("type");
    out.string(npyguard::type_string(type));
  }
  if (timelike) {
    out.key("unit");
    out.string(npyguard::time_unit_name(type.datetime_unit));
  }
  out.end_object();
}

// "nbytes": null when the data is a pickle of unknown length.
void write_nbytes(json_writer& out, const npyguard::header& model) {
  out.key("nbytes");
  if (model.data_is_pickle) {
    out.null();
  } else {
    out.number(model.nbytes);
  }
}

// "file", and "file_bytes" when the name is not UTF-8.
void write_file_keys(json_writer& out, const std::string& file) {
  const bool utf8 = is_valid_utf8(file);
  out.key("file");
  out.string(utf8 ? std::string_view(file) : std::string_view(json_file_name(file)));
  if (!utf8) {
    out.key("file_bytes");
    out.string(base64(file));
  }
}

void optional_number(json_writer& out, const std::optional<std::uint64_t>& value) {
  if (value) {
    out.number(*value);
  } else {
    out.null();
  }
}

// A rejection: error {actual, code, limit, message, offset, option}, file,
// format, member and member_offset when they apply, valid false. The
// error's keys are always there, null where they do not apply; "option" is
// the library's name of the option or limit that refused the input (the
// message names its flag).
void write_rejection(json_writer& out, const std::string& file, const char* format, const npyguard::error& failure) {
  out.key("error");
  out.begin_object();
  out.key("actual");
  optional_number(out, failure.actual);
  out.key("code");
  out.string(npyguard::error_code_name(failure.code));
  out.key("limit");
  optional_number(out, failure.limit);
  out.key("message");
  out.string(command_message(failure));
  out.key("offset");
  optional_number(out, failure.offset);
  out.key("option");
  if (failure.option.empty()) {
    out.null();
  } else {
    out.string(failure.option);
  }
  out.end_object();
  write_file_keys(out, file);
  out.key("format");
  out.string(format);
  if (failure.member) {
    out.key("member");
    out.string(*failure.member);
  }
  if (failure.member_offset) {
    out.key("member_offset");
    out.number(*failure.member_offset);
  }
  out.key("valid");
  out.boolean(false);
}

// The object of check --json (dtype_tree false) or inspect --json (true).
void write_verdict(json_writer& out, const std::string& file, const npyguard::result& verdict, bool dtype_tree) {
  const auto write_file = [&] {
    write_file_keys(out, file);
    out.key("format");
    out.string("npy");
  };
  out.begin_object();
  if (const auto* model = verdict.value_if()) {
    const bool structured = model->descr.kind == npyguard::dtype_kind::structured;
    out.key("count");
    out.number(model->count);
    out.key("data_alignment");
    out.number(model->data_alignment);
    out.key("data_is_pickle");
    out.boolean(model->data_is_pickle);
    out.key("data_offset");
    out.number(model->data_offset);
    out.key("descr");
    out.string(npyguard::descr_repr(model->descr));
    out.key("dtype");
    if (dtype_tree) {
      write_dtype_tree(out, model->descr);
    } else if (structured) {
      out.null();
    } else {
      out.string(npyguard::type_string(model->descr)); // numpy's dtype.str
    }
    write_file();
    out.key("fortran_order");
    out.boolean(model->fortran_order);
    out.key("header_length");
    out.number(model->header_length);
    out.key("itemsize");
    out.number(model->descr.itemsize);
    out.key("kind");
    out.string(std::string(1, numpy_kind(model->descr.kind)));
    write_nbytes(out, *model);
    out.key("shape");
    write_shape(out, model->shape);
    out.key("valid");
    out.boolean(true);
    out.key("version");
    out.string(version_text(*model));
  } else {
    write_rejection(out, file, "npy", verdict.failure());
  }
  out.end_object();
  out.end_line();
}

// An archive: members in central-directory order, each with the keys its
// .npy model has in check --json (inspect adds the dtype tree).
void write_archive(json_writer& out, const std::string& file, const npyguard::npz::archive_result& verdict,
                   bool dtype_tree) {
  out.begin_object();
  if (const auto* archive = verdict.value_if()) {
    write_file_keys(out, file);
    out.key("format");
    out.string("npz");
    out.key("members");
    out.begin_array();
    for (const auto& member : archive->members) {
      const npyguard::header& model = member.npy;
      out.begin_object();
      out.key("data_offset");
      out.number(model.data_offset);
      out.key("descr");
      out.string(npyguard::descr_repr(model.descr));
      // As for a .npy file (SPEC.md section 9): numpy's dtype.str, null for
      // a struct (inspect: the dtype tree), and dtype.kind.
      out.key("dtype");
      if (dtype_tree) {
        write_dtype_tree(out, model.descr);
      } else if (model.descr.kind == npyguard::dtype_kind::structured) {
        out.null();
      } else {
        out.string(npyguard::type_string(model.descr));
      }
      out.key("fortran_order");
      out.boolean(model.fortran_order);
      out.key("itemsize");
      out.number(model.descr.itemsize);
      out.key("key");
      out.string(member.key);
      out.key("kind");
      out.string(std::string(1, numpy_kind(model.descr.kind)));
      out.key("name");
      out.string(member.name);
      write_nbytes(out, model);
      out.key("shape");
      write_shape(out, model.shape);
      out.end_object();
    }
    out.end_array();
    out.key("valid");
    out.boolean(true);
    out.key("verified");
    out.boolean(archive->verified);
  } else {
    write_rejection(out, file, "npz", verdict.failure());
  }
  out.end_object();
  out.end_line();
}

// A RawArray file: its model (SPEC-ra.md section 9), the same for check and
// inspect.
void write_rawarray(json_writer& out, const std::string& file, const npyguard::ra::result& verdict) {
  out.begin_object();
  if (const auto* model = verdict.value_if()) {
    const auto optional_number = [&out](const char* key, const std::optional<std::uint64_t>& value) {
      out.key(key);
      if (value) {
        out.number(*value);
      } else {
        out.null();
      }
    };
    out.key("big_endian");
    out.boolean(model->big_endian);
    out.key("count");
    out.number(model->count);
    out.key("data_length");
    out.number(model->data_length);
    out.key("data_offset");
    out.number(model->data_offset);
    out.key("dims");
    write_shape(out, model->dims);
    out.key("elbyte");
    out.number(model->elbyte);
    out.key("eltype");
    out.number(static_cast<std::uint64_t>(model->eltype));
    write_file_keys(out, file);
    out.key("flags");
    out.number(model->flags);
    out.key("format");
    out.string("ra");
    optional_number("metadata_length", model->metadata_length);
    optional_number("metadata_offset", model->metadata_offset);
    out.key("ndims");
    out.number(model->dims.size());
    out.key("type_name");
    out.string(ra_type_text(*model));
    out.key("valid");
    out.boolean(true);
  } else {
    write_rejection(out, file, "ra", verdict.failure());
  }
  out.end_object();
  out.end_line();
}

} // namespace

std::string verdict_json(const std::string& file, const npyguard::ra::result& verdict) {
  std::string text;
  {
    json_writer out(text);
    write_rawarray(out, file, verdict);
  }
  return text;
}

void write_inspect_json(std::FILE* sink, const std::string& file, const npyguard::ra::result& verdict) {
  std::string buffer;
  json_writer out(buffer, sink);
  write_rawarray(out, file, verdict);
}

std::string inspect_text(const std::string& file, const npyguard::ra::header& model) {
  std::string out = escaped(file, shown_as::name) + "\n";
  const auto row = [&out](const char* label, const std::string& value) {
    out += "  ";
    out += label;
    out.append(16 - std::string(label).size(), ' ');
    out += value + "\n";
  };
  const std::vector<std::uint64_t> reversed(model.dims.rbegin(), model.dims.rend());
  row("format", "RawArray (ra)");
  row("flags", std::to_string(model.flags) + (model.big_endian ? " (big-endian data)" : " (little-endian data)"));
  row("element type", std::to_string(static_cast<unsigned>(model.eltype)) + ", " + ra_type_text(model) + ", " +
                          plural(model.elbyte, "byte") + " per element");
  row("dims", dims_text(model.dims) + ", dims[0] varies fastest");
  row("numpy view", "shape " + npyguard::shape_repr(model.dims) + " with order='F', or " +
                        npyguard::shape_repr(reversed) + " in C order");
  row("count", std::to_string(model.count));
  row("data offset", std::to_string(model.data_offset));
  row("data length", plural(model.data_length, "byte"));
  if (model.metadata_offset && model.metadata_length) {
    row("metadata", plural(*model.metadata_length, "byte") + " at offset " + std::to_string(*model.metadata_offset) +
                        (*model.metadata_length != 0 ? " (not read)" : ""));
  } else {
    row("metadata", "not counted (read as a stream, which stops at the end of the data)");
  }
  return out;
}

std::string verdict_json(const std::string& file, const npyguard::result& verdict) {
  std::string text;
  {
    json_writer out(text);
    write_verdict(out, file, verdict, false);
  }
  return text;
}

void write_inspect_json(std::FILE* sink, const std::string& file, const npyguard::result& verdict) {
  std::string buffer;
  json_writer out(buffer, sink);
  write_verdict(out, file, verdict, true);
}

std::string verdict_json(const std::string& file, const npyguard::npz::archive_result& verdict) {
  std::string text;
  {
    json_writer out(text);
    write_archive(out, file, verdict, false);
  }
  return text;
}

void write_inspect_json(std::FILE* sink, const std::string& file, const npyguard::npz::archive_result& verdict) {
  std::string buffer;
  json_writer out(buffer, sink);
  write_archive(out, file, verdict, true);
}

std::string inspect_text(const std::string& file, const npyguard::header& model) {
  return escaped(file, shown_as::name) + "\n" + model_rows(model, "  ");
}

std::string inspect_text(const std::string& file, const npyguard::npz::archive& archive) {
  std::string out = escaped(file, shown_as::name) + "\n  format          npz, " +
                    plural(archive.members.size(), "member") + (archive.verified ? ", verified" : "") + "\n";
  for (const auto& member : archive.members) {
    out += "  member " + quoted(member.name) + " (key " + quoted(member.key) + "), " +
           (member.method == npyguard::npz::compression::stored ? "stored" : "deflated") + ", " +
           plural(member.uncompressed_size, "byte") + "\n";
    out += model_rows(member.npy, "    ");
  }
  return out;
}

std::string model_rows(const npyguard::header& model, const std::string& indent) {
  std::string out;
  const auto row = [&out, &indent](const char* label, const std::string& value) {
    out += indent;
    out += label;
    out.append(16 - std::string(label).size(), ' ');
    out += value + "\n";
  };
  row("version", version_text(model));
  row("header length", plural(model.header_length, "byte"));
  row("data offset",
      std::to_string(model.data_offset) + " (aligned to " + std::to_string(model.data_alignment) + " bytes)");
  row("fortran order", model.fortran_order ? "True" : "False");
  row("shape", shape_text(model.shape));
  row("count", std::to_string(model.count));
  row("itemsize", plural(model.descr.itemsize, "byte"));
  row("nbytes", model.data_is_pickle ? "unknown: the data is a pickle (not read)" : std::to_string(model.nbytes));
  row("descr", escaped(npyguard::descr_repr(model.descr), shown_as::escaped_text));
  out += indent + "dtype           ";
  append_type(out, model.descr, indent);
  return out;
}

} // namespace npyguard_cli
