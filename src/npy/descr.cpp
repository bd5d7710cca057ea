// numpy's spelling of a dtype: repr(numpy.lib.format.dtype_to_descr(dtype)).
#include "npyguard/npy/descr.hpp"

#include <new>

#include "core/python_repr.hpp"
#include "npy/time_units.hpp"

namespace npyguard {
namespace {

char kind_letter(dtype_kind kind) noexcept {
  switch (kind) {
    case dtype_kind::boolean: return 'b';
    case dtype_kind::signed_integer: return 'i';
    case dtype_kind::unsigned_integer: return 'u';
    case dtype_kind::floating: return 'f';
    case dtype_kind::complex_floating: return 'c';
    case dtype_kind::bytes: return 'S';
    case dtype_kind::unicode: return 'U';
    case dtype_kind::raw_void: return 'V';
    case dtype_kind::datetime: return 'M';
    case dtype_kind::timedelta: return 'm';
    case dtype_kind::object: return 'O';
    case dtype_kind::structured: return 'V';
  }
  return '?';
}

char order_letter(byte_order order) noexcept {
  switch (order) {
    case byte_order::little: return '<';
    case byte_order::big: return '>';
    case byte_order::not_applicable: return '|';
  }
  return '|';
}

void append_type_string(std::string& out, const dtype& type) {
  out.push_back(order_letter(type.order));
  out.push_back(kind_letter(type.kind));
  switch (type.kind) {
    case dtype_kind::object: return; // numpy spells it '|O'
    case dtype_kind::unicode: out += std::to_string(type.itemsize / 4); return;
    case dtype_kind::datetime:
    case dtype_kind::timedelta:
      out.push_back('8');
      if (type.datetime_unit != time_unit::generic) {
        out.push_back('[');
        if (type.datetime_multiplier != 1) out += std::to_string(type.datetime_multiplier);
        out += time_unit_name(type.datetime_unit);
        out.push_back(']');
      }
      return;
    default: out += std::to_string(type.itemsize); return;
  }
}

void append_shape(std::string& out, const std::vector<std::uint64_t>& shape) {
  out.push_back('(');
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out.push_back(',');
  out.push_back(')');
}

void append_padding(std::string& out, std::uint64_t bytes, bool& first) {
  if (!first) out += ", ";
  first = false;
  out += "('', '|V";
  out += std::to_string(bytes);
  out += "')";
}

void append_descr(std::string& out, const dtype& type);

// numpy's _array_descr: fields in order, every gap as one ('', '|Vn').
void append_fields(std::string& out, const dtype& type) {
  out.push_back('[');
  bool first = true;
  std::uint64_t cursor = 0;
  for (const field& member : type.fields) {
    if (member.offset > cursor) append_padding(out, member.offset - cursor, first);
    if (!first) out += ", ";
    first = false;
    out.push_back('(');
    if (member.title) {
      out.push_back('(');
      detail::append_python_repr(out, *member.title);
      out += ", ";
      detail::append_python_repr(out, member.name);
      out.push_back(')');
    } else {
      detail::append_python_repr(out, member.name);
    }
    out += ", ";
    append_descr(out, member.type);
    if (!member.subarray_shape.empty()) {
      out += ", ";
      append_shape(out, member.subarray_shape);
    }
    out.push_back(')');
    cursor = member.offset + member.itemsize;
  }
  if (type.itemsize > cursor) append_padding(out, type.itemsize - cursor, first);
  out.push_back(']');
}

void append_descr(std::string& out, const dtype& type) {
  if (type.kind == dtype_kind::structured) {
    append_fields(out, type);
  } else {
    out.push_back('\'');
    append_type_string(out, type);
    out.push_back('\'');
  }
}

// The spelling `append` writes, or an empty string when memory runs out:
// the public spelling functions are noexcept.
template <typename Append>
std::string spelled(Append append) noexcept {
  try {
    std::string out;
    append(out);
    return out;
  } catch (const std::bad_alloc&) {
    return {};
  }
}

} // namespace

std::string_view time_unit_name(time_unit unit) noexcept { return detail::time_unit_spelling(unit); }

std::string descr_repr(const dtype& type) noexcept {
  return spelled([&](std::string& out) { append_descr(out, type); });
}

std::string shape_repr(const std::vector<std::uint64_t>& shape) noexcept {
  return spelled([&](std::string& out) { append_shape(out, shape); });
}

std::string type_string(const dtype& type) noexcept {
  return spelled([&](std::string& out) {
    if (type.kind != dtype_kind::structured) append_type_string(out, type);
  });
}

} // namespace npyguard
