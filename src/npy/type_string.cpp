#include "npy/type_string.hpp"

#include "core/checked_math.hpp"
#include "core/python_repr.hpp"
#include "npy/time_units.hpp"

namespace npyguard::detail {
namespace {

constexpr std::uint64_t max_unicode_chars = max_itemsize / 4;

// Decimal digits without leading zeros ("0" alone is allowed when
// `allow_zero`), saturating at max_signed_size so 5,000 digits stay cheap.
struct decimal {
  bool valid = false;
  std::uint64_t value = 0;
  std::size_t length = 0;
};

decimal read_decimal(std::string_view text, std::size_t at) noexcept {
  decimal result;
  std::size_t i = at;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const auto digit = static_cast<std::uint64_t>(text[i] - '0');
    result.value = result.value > (max_signed_size - digit) / 10 ? max_signed_size : result.value * 10 + digit;
    ++i;
  }
  result.length = i - at;
  result.valid = result.length > 0 && !(result.length > 1 && text[at] == '0');
  return result;
}

bool fail(type_string_failure& failure, error_code code, std::string_view text, const char* why) {
  failure.code = code;
  failure.message = "type string " + python_repr_for_message(text) + ": " + why;
  return false;
}

// The named units (not generic), by their numpy spelling.
bool find_time_unit(std::string_view name, time_unit& out) noexcept {
  for (auto unit = static_cast<std::uint8_t>(time_unit::years);
       unit <= static_cast<std::uint8_t>(time_unit::attoseconds); ++unit) {
    if (time_unit_spelling(static_cast<time_unit>(unit)) == name) {
      out = static_cast<time_unit>(unit);
      return true;
    }
  }
  return false;
}

// "[unit]" or "[Nunit]" after "<M8".
bool parse_datetime_unit(std::string_view text, std::size_t at, dtype& out, type_string_failure& failure) {
  if (at == text.size()) return true; // generic
  if (text[at] != '[' || text.back() != ']') {
    return fail(failure, error_code::bad_descr, text, "a datetime unit is written in brackets, as in [ms] or [10ms]");
  }
  const std::string_view inside = text.substr(at + 1, text.size() - at - 2);
  std::size_t unit_at = 0;
  if (!inside.empty() && inside[0] >= '0' && inside[0] <= '9') {
    const decimal multiplier = read_decimal(inside, 0);
    if (!multiplier.valid || multiplier.value == 0) {
      return fail(failure, error_code::bad_descr, text, "a datetime multiplier is at least 1, without leading zeros");
    }
    if (multiplier.value > max_itemsize) {
      return fail(failure, error_code::bad_descr, text, "a datetime multiplier is at most 2^31-1");
    }
    out.datetime_multiplier = static_cast<std::uint32_t>(multiplier.value);
    unit_at = multiplier.length;
  }
  const std::string_view unit = inside.substr(unit_at);
  if (!find_time_unit(unit, out.datetime_unit)) {
    return fail(failure, error_code::bad_descr, text, "datetime unit is not one of Y M W D h m s ms us ns ps fs as");
  }
  return true;
}

} // namespace

bool parse_type_string(std::string_view text, dtype& out, type_string_failure& failure) {
  reset_dtype(out);
  if (text.size() < 2)
    return fail(failure, error_code::bad_descr, text, "expected byte order, kind and size, as in '<f8'");
  const char order = text[0];
  if (order != '<' && order != '>' && order != '|') {
    return fail(failure, error_code::bad_descr, text,
                "must start with a byte order '<', '>' or '|' ('=' and no order mean the writer's native order)");
  }
  out.order = order == '<' ? byte_order::little : order == '>' ? byte_order::big : byte_order::not_applicable;
  const char kind = text[1];

  if (kind == 'O') {
    const std::string_view size = text.substr(2);
    if (order != '|') return fail(failure, error_code::bad_descr, text, "the object kind takes the byte order '|'");
    if (!size.empty() && size != "4" && size != "8") {
      return fail(failure, error_code::bad_descr, text, "the object kind has no size, or 4 or 8");
    }
    out.kind = dtype_kind::object;
    out.itemsize = 8;
    return true;
  }

  const decimal size = read_decimal(text, 2);
  if (!size.valid)
    return fail(failure, error_code::bad_descr, text, "expected a decimal size without leading zeros after the kind");
  const std::size_t after_size = 2 + size.length;
  const bool is_datetime = kind == 'M' || kind == 'm';
  if (after_size != text.size() && !is_datetime) {
    return fail(failure, error_code::bad_descr, text, "unexpected characters after the size");
  }

  bool order_free = false; // '|' '<' '>' all mean the same, reported as '|'
  bool sizes_ok = false;
  switch (kind) {
    case 'b':
      out.kind = dtype_kind::boolean;
      sizes_ok = size.value == 1;
      order_free = true;
      break;
    case 'i':
    case 'u':
      out.kind = kind == 'i' ? dtype_kind::signed_integer : dtype_kind::unsigned_integer;
      sizes_ok = size.value == 1 || size.value == 2 || size.value == 4 || size.value == 8;
      order_free = size.value == 1;
      break;
    case 'f':
      out.kind = dtype_kind::floating;
      sizes_ok = size.value == 2 || size.value == 4 || size.value == 8 || size.value == 16;
      break;
    case 'c':
      out.kind = dtype_kind::complex_floating;
      sizes_ok = size.value == 8 || size.value == 16 || size.value == 32;
      break;
    case 'S':
    case 'V':
      out.kind = kind == 'S' ? dtype_kind::bytes : dtype_kind::raw_void;
      if (size.value > max_itemsize) return fail(failure, error_code::itemsize_overflow, text, "itemsize above 2^31-1");
      sizes_ok = true;
      order_free = true;
      break;
    case 'U':
      out.kind = dtype_kind::unicode;
      if (size.value > max_unicode_chars) {
        return fail(failure, error_code::itemsize_overflow, text, "itemsize (4 bytes a character) above 2^31-1");
      }
      sizes_ok = true;
      break;
    case 'M':
    case 'm':
      out.kind = kind == 'M' ? dtype_kind::datetime : dtype_kind::timedelta;
      sizes_ok = size.value == 8;
      break;
    default: return fail(failure, error_code::bad_descr, text, "unknown kind (expected one of b i u f c S U V M m O)");
  }
  if (!sizes_ok) return fail(failure, error_code::bad_descr, text, "size not valid for this kind on every machine");
  if (order_free) {
    out.order = byte_order::not_applicable;
  } else if (order == '|') {
    return fail(failure, error_code::bad_descr, text, "a multi-byte number needs the byte order '<' or '>', not '|'");
  }
  out.itemsize = kind == 'U' ? size.value * 4 : size.value;
  if (is_datetime) return parse_datetime_unit(text, after_size, out, failure);
  return true;
}

} // namespace npyguard::detail
