#include "report.hpp"

#include <algorithm>

namespace npyguard_cli {
namespace {

constexpr char hex_digits[] = "0123456789abcdef";

void append_hex(std::string& out, unsigned char byte) {
  out += "\\x";
  out.push_back(hex_digits[byte >> 4]);
  out.push_back(hex_digits[byte & 0xF]);
}

// One byte as the excerpt shows it.
std::string shown_byte(unsigned char byte) {
  std::string out;
  if (byte == '\\') {
    out = "\\\\";
  } else if (byte == '\n') {
    out = "\\n";
  } else if (byte == '\t') {
    out = "\\t";
  } else if (byte >= 0x20 && byte < 0x7F) {
    out.push_back(static_cast<char>(byte));
  } else {
    append_hex(out, byte);
  }
  return out;
}

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

std::string quoted(const std::string& name) { return "'" + escaped(name, false) + "'"; }

std::string plural(std::uint64_t n, const char* unit) {
  return std::to_string(n) + " " + unit + (n == 1 ? "" : "s");
}

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

} // namespace

std::string escaped(const std::string& bytes, bool escape_non_ascii) {
  std::string out;
  out.reserve(bytes.size());
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == '\\') {
      out += "\\\\";
    } else if (byte == '\n') {
      out += "\\n";
    } else if (byte == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7F || (escape_non_ascii && byte >= 0x80)) {
      append_hex(out, byte);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string verdict_line(const std::string& file, const npyguard::result& verdict) {
  const std::string name = escaped(file);
  if (const auto* model = verdict.value_if()) {
    std::string line = name + ": ok, version " + version_text(*model) + ", descr " +
                       npyguard::descr_repr(model->descr) + ", shape " + shape_text(model->shape);
    if (model->fortran_order) line += ", fortran order";
    if (model->data_is_pickle) return line + ", data is a pickle (not read)";
    return line + ", nbytes " + std::to_string(model->nbytes);
  }
  const npyguard::error& failure = verdict.failure();
  std::string line = name + ":";
  if (failure.offset) line += std::to_string(*failure.offset) + ":";
  return line + " " + std::string(npyguard::error_code_name(failure.code)) + ": " + failure.message;
}

std::string excerpt_lines(const checked& result) {
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
    line += shown_byte(static_cast<unsigned char>(bytes[i]));
  }
  if (index >= end) caret = line.size(); // the end of the input
  if (end == bytes.size() && result.excerpt_continues && bytes.back() != '\n') line += "...";
  return line + "\n" + std::string(caret, ' ') + "^\n";
}

nlohmann::json verdict_json(const std::string& file, const npyguard::result& verdict) {
  nlohmann::json out;
  out["file"] = file;
  out["valid"] = verdict.ok();
  if (const auto* model = verdict.value_if()) {
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
    const npyguard::error& failure = verdict.failure();
    nlohmann::json error;
    error["code"] = std::string(npyguard::error_code_name(failure.code));
    error["offset"] = failure.offset ? nlohmann::json(*failure.offset) : nlohmann::json(nullptr);
    error["message"] = failure.message;
    out["error"] = std::move(error);
  }
  return out;
}

nlohmann::json dtype_json(const npyguard::dtype& type) {
  nlohmann::json out;
  out["kind"] = kind_name(type.kind);
  out["itemsize"] = type.itemsize;
  if (type.kind != npyguard::dtype_kind::structured) {
    out["type"] = npyguard::type_string(type);
    out["byte_order"] = type.order == npyguard::byte_order::little ? "little"
                        : type.order == npyguard::byte_order::big ? "big"
                                                                   : "not_applicable";
    if (type.kind == npyguard::dtype_kind::datetime || type.kind == npyguard::dtype_kind::timedelta) {
      out["unit"] = std::string(npyguard::time_unit_name(type.datetime_unit));
      out["multiplier"] = type.datetime_multiplier;
    }
    return out;
  }
  nlohmann::json fields = nlohmann::json::array();
  for (const npyguard::field& member : type.fields) {
    nlohmann::json entry;
    entry["name"] = member.name;
    entry["title"] = member.title ? nlohmann::json(*member.title) : nlohmann::json(nullptr);
    entry["offset"] = member.offset;
    entry["itemsize"] = member.itemsize;
    entry["subarray_shape"] = member.subarray_shape;
    entry["dtype"] = dtype_json(member.type);
    fields.push_back(std::move(entry));
  }
  out["fields"] = std::move(fields);
  return out;
}

std::string inspect_text(const std::string& file, const npyguard::header& model) {
  std::string out = escaped(file) + "\n";
  const auto row = [&out](const char* label, const std::string& value) {
    out += "  ";
    out += label;
    out.append(16 - std::string(label).size(), ' ');
    out += value + "\n";
  };
  row("version", version_text(model));
  row("header length", plural(model.header_length, "byte"));
  row("data offset", std::to_string(model.data_offset) + " (aligned to " + std::to_string(model.data_alignment) +
                         " bytes)");
  row("fortran order", model.fortran_order ? "True" : "False");
  row("shape", shape_text(model.shape));
  row("count", std::to_string(model.count));
  row("itemsize", plural(model.descr.itemsize, "byte"));
  row("nbytes", model.data_is_pickle ? "unknown: the data is a pickle (not read)" : std::to_string(model.nbytes));
  row("descr", npyguard::descr_repr(model.descr));
  out += "  dtype           ";
  append_type(out, model.descr, "  ");
  return out;
}

} // namespace npyguard_cli
