"""Valid .npy files: a seeded walk over numpy's dtype space and every writer form.

Every file comes back as a ``Sample`` (name, bytes, how it was made, and the
deviation it is expected to hit, if any). The walk is both systematic (every
scalar kind, size and byte order; S/U/V sizes; every datetime unit) and random
(nested structs with titles, subarrays, padding, awkward field names; shapes
of rank 0 to 8 with zero-length axes; C and Fortran order). Files are written
by ``np.save``, by ``numpy.lib.format.write_array`` with an explicit version,
by numpy's header writer, and by ``hand_header``, which spells the header as
other writers do (Python 2 ``L`` suffixes, 16-byte alignment, no trailing
comma, reordered keys, double quotes, other white space, tolerated byte
orders such as cnpy's ``'<i1'``, control characters raw inside strings).
``foreign_file`` writes byte for byte as other writers' sources do: Julia's
NPZ.jl (16-byte padding, none at all when none is needed, so the text ends
with ``}``), npyz (names raw, version 3.0 for non-ASCII, or 1.0 with raw
UTF-8 as before it chose 3.0), npy-rs (version 1.0, raw UTF-8 names, the
19-byte length filler) and ndarray-npy (py_literal: ASCII controls raw).

Given the same seed the output is byte-identical.
"""

import io
import math
import random
import struct
import warnings
from dataclasses import dataclass
from typing import Optional

import numpy as np
from numpy.lib import format as npformat

MAGIC = b"\x93NUMPY"
INT63 = 2 ** 63 - 1
INT31 = 2 ** 31 - 1

# kind -> (sizes, byte orders numpy accepts in a written header)
SCALARS = {
    "b": ((1,), "<>|"),
    "i": ((1, 2, 4, 8), "<>"),
    "u": ((1, 2, 4, 8), "<>"),
    "f": ((2, 4, 8, 16), "<>"),
    "c": ((8, 16, 32), "<>"),
}
FLEXIBLE_SIZES = (0, 1, 2, 3, 5, 8, 16, 31, 64, 100, 255, 1000, 4096)
DATETIME_UNITS = ("Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as")

# Field names that stress quoting and encodings. Names with a character
# outside latin-1 make numpy write version 3.0.
NAMES_PLAIN = ("a", "b", "c", "x", "y", "id", "pos", "label", "value", "f0", "with space", "x1_2")
NAMES_AWKWARD = (
    "quote'", 'dq"', "both'\"", "back\\slash", "tab\t", "nl\n", "cr\r", "nul\x00", "del\x7f",
    "ctl\x01", "\\x41", "\\u0041", "'", '"', "\\", "{}", "[('x', '<i4')]", "#", ":", ",",
)
NAMES_LATIN1 = ("é", "ñame", "ÿ", "nb\xa0sp", "c1\x85", "µ", "×÷", "Ü\xad", "\xbf?")
NAMES_UNICODE = (
    "Ω", "日本", "emoji😀", "zw\u200b", "ls\u2028", "u\u0301", "rtl\u202e", "ſ", "\U0010fffd",
    "\ufeffbom", "한국어", "\u0394x",
)
# Names with control characters that numpy reads raw inside a string (every
# C0 but NUL, LF and CR; DEL; C1): npyz writes names raw, ndarray-npy's
# py_literal writes ASCII controls raw, and Style.raw_controls does the same.
NAMES_RAW_CONTROL = (
    "tab\t", "ctl\x01", "del\x7f", "nel\x85", "bs\x08", "vt\x0b", "ff\x0c", "so\x0e", "esc\x1b", "us\x1f",
    "c1\x80", "c1\x9f", "\t", "\x7f\x85", "a\tb\x01c", "\x1b[0m", "\x0c\x0b",
)
# UTF-8 names whose bytes include 0x80-0x9F: read as latin-1 (version 1.0
# headers of early npyz and npy-rs), those bytes are C1 controls.
NAMES_UTF8_C1 = ("é", "Ā", "€uro", "日本", "emoji😀", "Ω", "\u0085", "ñ\t")
ALL_NAMES = NAMES_PLAIN + NAMES_AWKWARD + NAMES_LATIN1 + NAMES_UNICODE + NAMES_RAW_CONTROL


@dataclass
class Sample:
    """One generated file and what it is expected to be."""

    name: str
    data: bytes
    how: str  # writer and notes, for violation reports
    expect: Optional[str] = None  # deviation ID the file is built to hit


# ---------------------------------------------------------------------------
# Type strings and dtypes
# ---------------------------------------------------------------------------

def scalar_type_strings():
    """Every scalar kind, size and byte order numpy's header can carry."""
    out = []
    for kind, (sizes, orders) in SCALARS.items():
        for size in sizes:
            for order in orders:
                if order == "|" and size > 1:
                    continue
                out.append("%s%s%d" % (order, kind, size))
            if size == 1 and "|" not in orders:
                out.append("|%s%d" % (kind, size))
    return out


def flexible_type_strings(sizes=FLEXIBLE_SIZES):
    """S, U and V of several sizes."""
    out = []
    for size in sizes:
        out += ["|S%d" % size, "|V%d" % size, "<U%d" % size, ">U%d" % size]
    return out


def datetime_type_strings(rng):
    """datetime64/timedelta64: generic, every unit, multipliers 1, random, extreme."""
    out = []
    for kind in "Mm":
        for order in "<>":
            out.append("%s%s8" % (order, kind))
            for unit in DATETIME_UNITS:
                out.append("%s%s8[%s]" % (order, kind, unit))
                multiplier = rng.choice((1, 2, 3, 7, 10, 25, 100, 1000, 65536, INT31))
                out.append("%s%s8[%d%s]" % (order, kind, multiplier, unit))
    return out


def random_leaf(rng):
    """A random non-struct type string."""
    r = rng.random()
    if r < 0.55:
        kind = rng.choice(sorted(SCALARS))
        sizes, orders = SCALARS[kind]
        size = rng.choice(sizes)
        order = rng.choice(orders if size == 1 else orders.replace("|", ""))
        return "%s%s%d" % (order, kind, size)
    if r < 0.85:
        kind = rng.choice("SUV")
        size = rng.choice(FLEXIBLE_SIZES[:9])
        return ("%sU%d" % (rng.choice("<>"), size)) if kind == "U" else "|%s%d" % (kind, size)
    kind = rng.choice("Mm")
    unit = rng.choice(("",) + DATETIME_UNITS)
    if unit and rng.random() < 0.4:
        unit = "%d%s" % (rng.choice((2, 5, 10, 60, 1000)), unit)
    return "%s%s8%s" % (rng.choice("<>"), kind, "[%s]" % unit if unit else "")


def pick_names(rng, n, unicode_ok):
    """n distinct field names, mostly plain, sometimes awkward."""
    pool = NAMES_PLAIN + NAMES_AWKWARD + NAMES_LATIN1 + NAMES_RAW_CONTROL + (NAMES_UNICODE if unicode_ok else ())
    names = []
    while len(names) < n:
        if rng.random() < 0.7:
            candidate = rng.choice(NAMES_PLAIN) + ("" if rng.random() < 0.5 else str(len(names)))
        else:
            candidate = rng.choice(pool)
        if candidate not in names:
            names.append(candidate)
    return names


def random_subarray_shape(rng):
    """A small field subarray shape of 1 to 3 dimensions."""
    return tuple(rng.choice((1, 2, 2, 3, 4, 0)) for _ in range(rng.choice((1, 1, 2, 3))))


def random_struct(rng, depth, unicode_ok=True):
    """A structured dtype: packed, aligned or with explicit offsets; titles,
    subarray fields (also of structs), nested up to ``depth`` more levels."""
    n = rng.choice((0, 1, 1, 2, 2, 3, 3, 4, 5, 8))
    names = pick_names(rng, n, unicode_ok)
    titles = []
    for name in names:
        title = None
        if rng.random() < 0.15:
            title = "T:" + rng.choice(ALL_NAMES if unicode_ok else NAMES_PLAIN + NAMES_LATIN1) + str(len(titles))
            if title in names or title in titles:
                title = None
        titles.append(title)
    formats = []
    for _ in names:
        base = random_dtype(rng, depth - 1, unicode_ok) if depth > 0 else np.dtype(random_leaf(rng))
        if rng.random() < 0.2:
            shape = random_subarray_shape(rng)
            if base.itemsize == 0:
                shape = ()
            formats.append(np.dtype((base, shape)) if shape else base)
        else:
            formats.append(base)
    layout = rng.choice(("packed", "packed", "aligned", "offsets"))
    if layout == "offsets":
        offsets, at = [], 0
        for fmt in formats:
            at += rng.choice((0, 0, 1, 3, 8))
            offsets.append(at)
            at += fmt.itemsize
        spec = {"names": names, "formats": formats, "offsets": offsets, "titles": titles,
                "itemsize": at + rng.choice((0, 0, 1, 4, 16))}
        return np.dtype(spec)
    fields = [((title, name) if title is not None else name, fmt) for name, title, fmt in zip(names, titles, formats)]
    return np.dtype(fields, align=(layout == "aligned"))


def random_dtype(rng, depth=3, unicode_ok=True):
    """A random dtype: mostly leaves, structs nested up to ``depth`` levels."""
    if depth <= 0 or rng.random() < 0.55:
        return np.dtype(random_leaf(rng))
    return random_struct(rng, depth, unicode_ok)


def many_fields_dtype(rng, n):
    """A struct with ``n`` fields: its header needs version 2.0 (or 3.0)."""
    return np.dtype([("field_%05d" % i, random_leaf(rng)) for i in range(n)])


# ---------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------

def random_shape(rng, itemsize, max_bytes=1 << 16):
    """Rank 0 to 8; small counts; sometimes a zero-length axis next to huge
    ones. The data never exceeds ``max_bytes``."""
    rank = rng.choice((0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 5, 6, 7, 8))
    shape = []
    count = 1
    for _ in range(rank):
        d = rng.choice((0, 1, 1, 2, 2, 3, 3, 4, 5, 7)) if rng.random() < 0.95 else rng.choice((10, 16, 64))
        if count * max(d, 1) > 64:
            d = 1
        shape.append(d)
        count *= d
    if count * itemsize > max_bytes:
        shape = [0] + shape[1:] if shape else [0]
    if shape and 0 in shape and rng.random() < 0.3:
        # Large extents are legal next to a zero-length axis, as long as
        # numpy could still make the array (product of the rest * itemsize).
        for i, d in enumerate(shape):
            if d != 0:
                big = rng.choice((2 ** 20, 10 ** 9, 2 ** 40, 2 ** 62))
                rest = math.prod(x for x in shape if x) // d * max(itemsize, 1)
                if rest * big <= INT63:
                    shape[i] = big
                break
    return tuple(shape)


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------

def zeros(shape, dtype, order="C"):
    """np.zeros without warnings (some dtypes warn on creation)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.zeros(shape, dtype=dtype, order=order)


def write_save(arr):
    """np.save: numpy's own choice of version and layout."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(buf, arr, allow_pickle=True)
    return buf.getvalue()


def write_array(arr, version):
    """numpy.lib.format.write_array with an explicit version."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        npformat.write_array(buf, arr, version=version, allow_pickle=True)
    return buf.getvalue()


def write_numpy_header(descr, fortran_order, shape, version, data_length):
    """numpy's header writer with a free choice of dict values, then
    ``data_length`` zero bytes."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        npformat._write_array_header(buf, {"descr": descr, "fortran_order": fortran_order, "shape": shape}, version)
    return buf.getvalue() + bytes(data_length)


def preamble(major, header_length):
    """Magic, version (major, 0) and the little-endian HEADER_LEN."""
    fmt = "<H" if major == 1 else "<I"
    return MAGIC + bytes((major, 0)) + struct.pack(fmt, header_length)


# ---------------------------------------------------------------------------
# Hand-built headers: other writers' spellings
# ---------------------------------------------------------------------------

@dataclass
class Style:
    """How ``hand_header`` spells a header."""

    quote: str = "'"          # "'", '"' or "mixed"
    long_suffix: bool = False  # Python 2 "3L" (versions 1.0 and 2.0 only)
    trailing_comma: bool = True
    list_trailing_comma: bool = False
    key_order: tuple = ("descr", "fortran_order", "shape")
    colon: str = ": "
    comma: str = ", "
    raw_unicode: bool = False  # characters numpy escapes written as themselves
    raw_controls: bool = False  # controls numpy reads inside strings written raw (npyz, py_literal)
    tolerated_orders: bool = False  # '<i1', '<b1', '<S4', '>V4'
    align: int = 64  # 64 (numpy), 16 (old numpy, cnpy), 1 (none)


def _is_control(ch):
    """C0, DEL and C1: the characters numpy's repr escapes inside strings."""
    o = ord(ch)
    return o < 0x20 or 0x7F <= o <= 0x9F


def string_literal(text, quote, raw_unicode, latin1, raw_controls=False):
    """A Python string literal for ``text`` in the header subset.

    ``raw_unicode`` writes non-ASCII characters (and printable-or-not
    non-control ones) as themselves where the header encoding allows.
    ``raw_controls`` writes the control characters numpy reads inside a
    string (all but NUL, LF and CR; C1 too) as themselves, as npyz and
    py_literal do; otherwise they are escaped."""
    out = [quote]
    for ch in text:
        o = ord(ch)
        if ch == "\\" or ch == quote:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif raw_controls and _is_control(ch) and ch != "\x00":
            out.append(ch)
        elif ch == "\t":
            out.append("\\t")
        elif _is_control(ch):
            out.append("\\x%02x" % o)
        elif o < 0x80:
            out.append(ch)
        elif raw_unicode and (not latin1 or o < 0x100):
            out.append(ch)
        elif o < 0x100:
            out.append("\\x%02x" % o)
        elif o < 0x10000:
            out.append("\\u%04x" % o)
        else:
            out.append("\\U%08x" % o)
    out.append(quote)
    return "".join(out)


def _tolerated(type_string, rng):
    """Rewrite a type string into an equivalent order SPEC tolerates."""
    order, kind = type_string[0], type_string[1]
    if order == "|" and kind in "biu":
        return rng.choice("<>|") + type_string[1:]
    if order == "|" and kind in "SV":
        return rng.choice("<>|") + type_string[1:]
    return type_string


def spell(value, style, rng, latin1, in_shape=False):
    """Spell a header value (str, bool, int, tuple, list; others by repr)
    in ``style``."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value) + ("L" if style.long_suffix and in_shape else "")
    if isinstance(value, str):
        quote = style.quote if style.quote != "mixed" else rng.choice("'\"")
        return string_literal(value, quote, style.raw_unicode, latin1, style.raw_controls)
    if isinstance(value, tuple):
        items = [spell(v, style, rng, latin1, in_shape) for v in value]
        if len(items) == 1:
            return "(" + items[0] + ",)"
        tail = "," if items and style.list_trailing_comma else ""
        return "(" + style.comma.join(items) + tail + ")"
    if isinstance(value, list):
        items = [spell(v, style, rng, latin1, in_shape) for v in value]
        tail = "," if items and style.list_trailing_comma else ""
        return "[" + style.comma.join(items) + tail + "]"
    return repr(value)  # None, floats and anything else a mutant puts here


def spell_descr(descr, style, rng, latin1):
    """Spell a descr (numpy's dtype_to_descr form), shapes with the L style."""
    if isinstance(descr, str):
        return spell(_tolerated(descr, rng) if style.tolerated_orders else descr, style, rng, latin1)
    fields = []
    for entry in descr:
        parts = [spell(entry[0], style, rng, latin1), spell_descr(entry[1], style, rng, latin1)]
        if len(entry) == 3:
            parts.append(spell(entry[2], style, rng, latin1, in_shape=True))
        fields.append("(" + style.comma.join(parts) + ")")
    tail = "," if fields and style.list_trailing_comma else ""
    return "[" + style.comma.join(fields) + tail + "]"


def hand_header(descr, fortran_order, shape, style, rng, major):
    """Header text (str) of a hand-built file: dict, padding, '\\n'."""
    latin1 = major < 3
    values = {
        "descr": spell_descr(descr, style, rng, latin1),
        "fortran_order": spell(fortran_order, style, rng, latin1),
        "shape": spell(shape, style, rng, latin1, in_shape=True),
    }
    entries = [spell(key, style, rng, latin1) + style.colon + values[key] for key in style.key_order]
    text = "{" + style.comma.join(entries) + ("," if style.trailing_comma else "") + "}"
    pre = 10 if major == 1 else 12
    encoded = len(text.encode("latin-1" if latin1 else "utf-8"))
    pad = (-(pre + encoded + 1)) % style.align
    return text + " " * pad + "\n"


def random_style(rng, major):
    """A random writer style; the L suffix only where numpy filters it."""
    keys = ["descr", "fortran_order", "shape"]
    if rng.random() < 0.5:
        rng.shuffle(keys)
    return Style(
        quote=rng.choice(("'", "'", '"', "mixed")),
        long_suffix=major < 3 and rng.random() < 0.3,
        trailing_comma=rng.random() < 0.5,
        list_trailing_comma=rng.random() < 0.2,
        key_order=tuple(keys),
        colon=rng.choice((": ", ":", " : ", ":\t", ": \n ")),
        comma=rng.choice((", ", ",", " , ", ",\t", ",\n", ",\r\n  ", ", \r")),
        raw_unicode=rng.random() < 0.5,
        raw_controls=rng.random() < 0.3,
        tolerated_orders=rng.random() < 0.3,
        align=rng.choice((64, 16, 16, 1)),
    )


def encode_header(text, major):
    """Header text to bytes in its version's encoding, or None if it does not fit."""
    try:
        raw = text.encode("latin-1" if major < 3 else "utf-8")
    except UnicodeEncodeError:
        return None
    if major == 1 and len(raw) > 0xFFFF:
        return None
    return raw


# ---------------------------------------------------------------------------
# Other writers, spelled exactly as their sources do
# ---------------------------------------------------------------------------

# Julia's NPZ.jl (npzwritearray): version 1.0; the element types it maps,
# with '<' ('>' on a big-endian host) even on one-byte types.
NPZJL_TYPES = ("b1", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16")


def julia_tuple(shape, sep=", "):
    """A shape as Julia prints a tuple of Ints: (), (3,), (2, 3)."""
    if len(shape) == 1:
        return "(%d,)" % shape[0]
    return "(" + sep.join(str(d) for d in shape) + ")"


def npzjl_header(type_string, fortran, shape, sep=", "):
    """NPZ.jl's header text: the dict with keys in the order descr,
    fortran_order, shape and a trailing ", }"; then, when the 10 bytes before
    it plus the dict are not a multiple of 16, pad-1 spaces and a newline
    (pad = 16 - that length mod 16). When they are, no padding at all: the
    text ends with the dict's '}'."""
    text = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        type_string, "True" if fortran else "False", julia_tuple(shape, sep))
    pad = -(10 + len(text)) % 16
    if pad > 0:
        text += " " * (pad - 1) + "\n"
    return text


def npzjl_pad(type_string, fortran, shape, sep=", "):
    """NPZ.jl's pad for this header (0: the text ends with '}')."""
    return -(10 + len(npzjl_header(type_string, fortran, shape, sep).rstrip(" \n"))) % 16


NPZJL_DIMS = (0, 1, 2, 3, 4, 7, 10, 16, 100, 1000, 65536)


def npzjl_shape(rng, type_string, fortran, want_pad, sep=", "):
    """A small shape whose NPZ.jl header gets this pad (or None)."""
    itemsize = np.dtype(type_string).itemsize
    candidates = [()] + [(a,) for a in NPZJL_DIMS] + [(a, b) for a in NPZJL_DIMS for b in NPZJL_DIMS]
    candidates += [(a, b, c) for a in NPZJL_DIMS[:6] for b in NPZJL_DIMS for c in (0, 1, 2, 3, 10, 1000)]
    candidates = [c for c in candidates if math.prod(c) * itemsize <= 1 << 16]
    rng.shuffle(candidates)
    for shape in candidates:
        if npzjl_pad(type_string, fortran, shape, sep) == want_pad:
            return shape
    return None


def npzjl_file(type_string, fortran, shape, sep=", "):
    """A whole NPZ.jl file: header and zero data."""
    raw = npzjl_header(type_string, fortran, shape, sep).encode("ascii")
    return preamble(1, len(raw)) + raw + bytes(math.prod(shape) * np.dtype(type_string).itemsize)


def _raw_name(name):
    """A field name as npyz and npy-rs write it: between single quotes with
    no escaping at all (so only names without a quote, a backslash, NUL, LF
    or CR make a file numpy reads the same)."""
    if any(c in name for c in "'\\\x00\n\r"):
        raise ValueError("npyz cannot write this name")
    return "'%s'" % name


def npyz_descr(descr):
    """npyz's DType::descr(): '<f8'; a record as "[('a', '<f8'), ('b', [...]), ]"
    (every field followed by ", "), a subarray field as "('a', '<f8', (2,3,)), "."""
    if isinstance(descr, str):
        return "'%s'" % descr
    out = "["
    for entry in descr:
        if isinstance(entry[0], tuple):
            raise ValueError("npyz has no titles")
        if len(entry) == 3 and entry[2]:
            dims = "".join("%d," % d for d in entry[2])
            out += "(%s, %s, (%s)), " % (_raw_name(entry[0]), npyz_descr(entry[1]), dims)
        else:
            out += "(%s, %s), " % (_raw_name(entry[0]), npyz_descr(entry[1]))
    return out + "]"


def npyz_dict(descr, fortran, shape):
    """npyz's create_dict: every dimension followed by ", " ('(3, )', '(2, 3, )', '()')."""
    return "{'descr': %s, 'fortran_order': %s, 'shape': (%s), }" % (
        npyz_descr(descr), "True" if fortran else "False", "".join("%d, " % d for d in shape))


def npyz_header(descr, fortran, shape, major=None):
    """(header bytes, major) as npyz writes them: version 3.0 when the UTF-8
    text has a non-ASCII byte, else 1.0; padded with spaces to 64 and '\\n'.
    ``major=1`` forces version 1.0 (npyz before it chose 3.0, like npy-rs):
    the raw UTF-8 bytes are then read as latin-1."""
    raw = npyz_dict(descr, fortran, shape).encode("utf-8")
    if major is None:
        major = 3 if any(b >= 0x80 for b in raw) else 1
    pre = 10 if major == 1 else 12
    raw += b" " * (63 - (len(raw) + pre) % 64) + b"\n"
    return raw, major


def npyrs_descr(descr):
    """npy-rs's DType::descr(): like npyz, but records are flat (nested ones
    are unimplemented there)."""
    if isinstance(descr, list) and any(not isinstance(e[1], str) for e in descr):
        raise ValueError("npy-rs writes no nested records")
    return npyz_descr(descr)


def npyrs_header(descr, length):
    """npy-rs's OutFile: version 1.0 always; the dict ends
    "'shape': (N,), }" followed by the 19-byte filler the length was
    written into (19 - digits spaces), then spaces to a multiple of 16 and
    '\\n'. Field names are raw UTF-8, read by numpy as latin-1."""
    digits = str(length)
    text = ("{'descr': %s, 'fortran_order': False, 'shape': (" % npyrs_descr(descr)
            + digits + ",), }" + " " * (19 - len(digits)))
    raw = text.encode("utf-8")
    raw += b" " * (15 - (len(raw) + 10) % 16) + b"\n"
    return raw


def py_literal_string(text):
    """py_literal's Value::String::write_ascii (ndarray-npy): escapes only
    backslash, CR, LF and the quote; other ASCII, controls included, is raw;
    non-ASCII becomes \\xHH, \\uHHHH or \\UHHHHHHHH."""
    out = ["'"]
    for ch in text:
        o = ord(ch)
        if ch in "\\\r\n'":
            out.append({"\\": "\\\\", "\r": "\\r", "\n": "\\n", "'": "\\'"}[ch])
        elif o < 0x80:
            if o == 0:
                raise ValueError("a raw NUL: numpy refuses it")
            out.append(ch)
        elif o <= 0xFF:
            out.append("\\x%02x" % o)
        elif o <= 0xFFFF:
            out.append("\\u%04x" % o)
        else:
            out.append("\\U%08x" % o)
    out.append("'")
    return "".join(out)


def py_literal(value):
    """py_literal's write_ascii for the values of a header."""
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return py_literal_string(value)
    if isinstance(value, tuple):
        if len(value) == 1:
            return "(" + py_literal(value[0]) + ",)"
        return "(" + ", ".join(py_literal(v) for v in value) + ")"
    return "[" + ", ".join(py_literal(v) for v in value) + "]"


def ndarray_npy_header(descr, fortran, shape):
    """(header bytes, major) as ndarray-npy writes them: the py_literal dict
    without a trailing comma, then 1 to 64 spaces (64 - (prefix + dict +
    newline) mod 64: never none) and '\\n'; version 1.0, 2.0 when too long."""
    text = "{'descr': %s, 'fortran_order': %s, 'shape': %s}" % (py_literal(descr), py_literal(fortran),
                                                                 py_literal(tuple(shape)))
    for major, pre in ((1, 10), (2, 12)):
        unpadded = pre + len(text) + 1
        raw = (text + " " * (64 - unpadded % 64) + "\n").encode("ascii")
        if major == 2 or len(raw) <= 0xFFFF:
            return raw, major
    raise ValueError("unreachable")


def foreign_descr(rng, depth, flat=False):
    """A field list of the kind npyz, npy-rs and ndarray-npy users declare:
    no titles, no padding; names plain, with raw controls, or non-ASCII."""
    n = rng.choice((1, 1, 2, 2, 3, 4))
    names = []
    while len(names) < n:
        r = rng.random()
        pool = NAMES_PLAIN if r < 0.4 else NAMES_RAW_CONTROL if r < 0.8 else NAMES_UTF8_C1 + NAMES_LATIN1
        name = rng.choice(pool) + ("" if rng.random() < 0.6 else str(len(names)))
        if name not in names:
            names.append(name)
    fields = []
    for name in names:
        if not flat and depth > 0 and rng.random() < 0.25:
            sub = foreign_descr(rng, depth - 1)
        else:
            sub = random_leaf(rng)
        if rng.random() < 0.2 and npformat.descr_to_dtype(sub).itemsize:
            fields.append((name, sub, random_subarray_shape(rng)))
        else:
            fields.append((name, sub))
    return fields


FOREIGN_WRITERS = ("npzjl", "npyz", "npyz-1.0", "npy-rs", "ndarray-npy")


def _fit_shape(rng, shape, itemsize):
    """The walk's shape if it suits this itemsize too (numpy could make the
    array; at most 64 KiB of data), else a new one."""
    if (math.prod(x for x in shape if x) * max(itemsize, 1) > INT63
            or math.prod(shape) * itemsize > 1 << 16):
        return random_shape(rng, itemsize)
    return shape


def foreign_file(rng, dtype, shape, fortran):
    """(bytes, description) from one of the other writers. NPZ.jl writes its
    own scalar types; the Rust writers get a field list with awkward names
    half of the time, else the walk's dtype when they can spell it."""
    writer = rng.choice(FOREIGN_WRITERS)
    if writer == "npzjl":
        type_string = (">" if rng.random() < 0.1 else "<") + rng.choice(NPZJL_TYPES)
        sep = ", " if rng.random() < 0.8 else ","
        shape = _fit_shape(rng, shape, np.dtype(type_string).itemsize)
        if rng.random() < 0.4:
            shape = npzjl_shape(rng, type_string, fortran, rng.choice((0, 0, 1)), sep) or shape
        return (npzjl_file(type_string, fortran, shape, sep),
                "NPZ.jl %s fortran=%s pad=%d" % (type_string, fortran, npzjl_pad(type_string, fortran, shape, sep)))
    descr = npformat.dtype_to_descr(dtype)
    if rng.random() < 0.5 or not isinstance(descr, (str, list)):
        descr = foreign_descr(rng, 2, flat=(writer == "npy-rs"))
    itemsize = npformat.descr_to_dtype(descr).itemsize
    shape = _fit_shape(rng, shape, itemsize)
    if writer == "npy-rs":
        length = shape[0] if len(shape) == 1 else rng.choice((0, 1, 2, 3, 10))
        raw = npyrs_header(descr, length)
        return preamble(1, len(raw)) + raw + bytes(length * itemsize), "npy-rs version=1.0"
    if writer == "ndarray-npy":
        raw, major = ndarray_npy_header(descr, fortran, shape)
    else:
        raw, major = npyz_header(descr, fortran, shape, 1 if writer == "npyz-1.0" else None)
    return (preamble(major, len(raw)) + raw + bytes(math.prod(shape) * itemsize),
            "%s version=%d.0 fortran=%s" % (writer, major, fortran))


def npzjl_cases(rng):
    """Every NPZ.jl type with fortran_order True and False, each with the
    pads 0 (the header ends with '}'), 1 (just the newline) and 15 (a
    big-endian host's '>' for the C-order one)."""
    out = []
    for code in NPZJL_TYPES:
        for fortran in (True, False):
            for want in (0, 1, 15):
                type_string = ("<" if want != 15 or fortran else ">") + code
                shape = npzjl_shape(rng, type_string, fortran, want)
                if shape is not None:
                    out.append(Sample("", npzjl_file(type_string, fortran, shape),
                                      "NPZ.jl %s fortran=%s pad=%d" % (type_string, fortran, want)))
    return out


def raw_name_cases():
    """Each raw-control name and each UTF-8 name once per writer that emits
    it raw: npyz (3.0 when non-ASCII), npyz and npy-rs as version 1.0 (the
    UTF-8 bytes read as latin-1), ndarray-npy (ASCII controls raw)."""
    out = []
    for name in NAMES_RAW_CONTROL + NAMES_UTF8_C1:
        descr = [(name, "<i4"), ("b", "|u1")]
        for writer in ("npyz", "npyz-1.0", "npy-rs", "ndarray-npy"):
            if writer == "npy-rs":
                raw, major = npyrs_header(descr, 2), 1
            elif writer == "ndarray-npy":
                raw, major = ndarray_npy_header(descr, False, (2,))
            else:
                raw, major = npyz_header(descr, False, (2,), 1 if writer == "npyz-1.0" else None)
            out.append(Sample("", preamble(major, len(raw)) + raw + bytes(10),
                              "%s version=%d.0 name %r" % (writer, major, name)))
    return out


# ---------------------------------------------------------------------------
# The walk
# ---------------------------------------------------------------------------

def build_file(rng, dtype, shape, how_writer, fortran=False, literal=None):
    """Write (dtype, shape) with one writer; returns (bytes, description).
    ``literal`` is a type string the header writers spell exactly as given
    (np.save would canonicalise '<i1' to '|i1')."""
    descr = literal if literal is not None else npformat.dtype_to_descr(dtype)
    count = math.prod(shape)
    nbytes = count * dtype.itemsize
    if how_writer == "save":
        order = "F" if fortran else "C"
        return write_save(zeros(shape, dtype, order)), "np.save order=%s" % order
    if how_writer == "write_array":
        for version in rng.sample([(1, 0), (2, 0), (3, 0)], 3):
            try:
                return write_array(zeros(shape, dtype), version), "write_array version=%d.0" % version[0]
            except (ValueError, UnicodeEncodeError):
                continue
    if how_writer == "foreign":
        try:
            return foreign_file(rng, dtype, shape, fortran)
        except (ValueError, TypeError, UnicodeEncodeError):
            pass  # a dtype this writer cannot spell: hand-built instead
    if how_writer == "header":
        for version in rng.sample([(1, 0), (2, 0), (3, 0)], 3):
            try:
                return (write_numpy_header(descr, fortran, shape, version, nbytes),
                        "numpy header writer version=%d.0 fortran=%s" % (version[0], fortran))
            except (ValueError, UnicodeEncodeError, OverflowError):
                continue
    # hand-built
    for major in rng.sample([1, 2, 3], 3) if rng.random() < 0.4 else [1, 2, 3]:
        style = random_style(rng, major)
        text = hand_header(descr, fortran, shape, style, rng, major)
        raw = encode_header(text, major)
        if raw is not None:
            return (preamble(major, len(raw)) + raw + bytes(nbytes),
                    "hand-built version=%d.0 %s" % (major, style))
    raise ValueError("no writer could write this")


def systematic_cases(rng):
    """(dtype, shape, writer, literal) cases covering every leaf type string:
    once spelled exactly as listed by numpy's header writer, once by a
    random writer."""
    out = []
    for ts in scalar_type_strings() + flexible_type_strings() + datetime_type_strings(rng):
        dtype = np.dtype(ts)
        out.append((dtype, random_shape(rng, dtype.itemsize), "header", ts))
        out.append((dtype, random_shape(rng, dtype.itemsize), None, None))
    # The largest flexible itemsizes are legal with a zero-length axis.
    for ts in ("|S%d" % INT31, "|V%d" % INT31, "<U%d" % (INT31 // 4), ">U%d" % (INT31 // 4)):
        out.append((np.dtype(ts), (0,), None, None))
    return out


def special_cases(rng):
    """Structs that stress one thing each: deep nesting, subarrays of structs,
    padding, titles, unicode names, empty structs."""
    inner = np.dtype([("x", "<i2"), ("y", "|u1")])
    deep = np.dtype("<f8")
    for level in range(15):
        deep = np.dtype([("l%d" % level, deep), ("pad%d" % level, "|u1")], align=(level % 2 == 0))
    cases = [
        (np.dtype([("s", inner, (2, 3)), ("t", [("u", inner, (2,))], (2,))]), (2,)),
        (np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<i2")], align=True), (3,)),
        (np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f8"], "offsets": [4, 16], "itemsize": 40}), (2,)),
        (np.dtype([(("title é", "name"), "<i4"), (("Ω", "b"), "|S3")]), (1,)),
        (np.dtype([]), (5,)),
        (np.dtype([("e", [])]), (2, 2)),
        (np.dtype([("日本", "<U2"), ("emoji😀", ">c16")]), ()),
        (deep, (1,)),
        (np.dtype([("a", "<i4", (1,) * 32)]), (0,)),
    ]
    return [case + (None, None) for case in cases]


def generate(seed, count):
    """Yield ``count`` Samples (before checking them against numpy)."""
    rng = random.Random(seed)
    cases = systematic_cases(rng) + special_cases(rng)
    # Thousands of fields: headers > 64 KiB, version 2.0 from np.save.
    for _ in range(max(1, count // 2000)):
        cases.append((many_fields_dtype(rng, rng.choice((4000, 5000))), (rng.choice((0, 1)),), "save", None))
        cases.append((many_fields_dtype(rng, 3500), (1,), None, None))
    writers = ("save", "save", "write_array", "header", "hand", "hand", "hand", "foreign")
    index = 0
    while index < count:
        writer, literal = rng.choice(writers), None
        if cases:
            dtype, shape, forced, literal = cases.pop(0)
            writer = forced or writer
        else:
            try:
                dtype = random_dtype(rng, depth=rng.choice((1, 2, 3, 4)), unicode_ok=rng.random() < 0.3)
            except (ValueError, TypeError):
                continue
            shape = random_shape(rng, dtype.itemsize)
        fortran = rng.random() < 0.3
        try:
            data, how = build_file(rng, dtype, shape, writer, fortran, literal)
        except (ValueError, TypeError, MemoryError, OverflowError):
            continue
        expect = None
        if rng.random() < 0.005:
            data += b"PK\x03\x04 trailing" [: rng.randint(1, 14)]
            expect = "data-trailing"
            how += " +trailing bytes"
        yield Sample("v%05d.npy" % index, data, how, expect)
        index += 1
    # NPZ.jl's padding rule, every pad that matters, every type it writes.
    for i, sample in enumerate(npzjl_cases(rng)):
        yield Sample("j%05d.npy" % i, sample.data, sample.how)
    # Names with raw controls and raw UTF-8, by each writer that emits them.
    for i, sample in enumerate(raw_name_cases()):
        yield Sample("k%05d.npy" % i, sample.data, sample.how)
    # Object dtypes: numpy reads the header; npyguard rejects them by default.
    for i, ts in enumerate(("|O", [("a", "<i4"), ("o", "|O")], [("s", [("deep", "|O", (2,))])])):
        arr = zeros((2,), npformat.descr_to_dtype(ts))
        yield Sample("v%05d.npy" % (count + i), write_save(arr), "np.save object dtype", "type-object")
    for i, (deviation, text, major, extra) in enumerate(EXEMPLARS):
        yield Sample("x%03d.npy" % i, exemplar_file(text, major, extra), "exemplar of " + deviation, deviation)


# ---------------------------------------------------------------------------
# At least one file per listed deviation: numpy reads it, npyguard must reject
# it with that deviation's class (so every class is exercised in every run).
# ---------------------------------------------------------------------------

def _d(descr="'<f8'", shape="(3,)", fortran="False"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def _nested(levels, descr="'<f8'"):
    for _ in range(levels):
        descr = "[('n', %s)]" % descr
    return descr


# (deviation ID, header text, version, extra bytes after the data)
EXEMPLARS = (
    ("text-not-terminated", _d() + "   ", 1, b""),
    ("text-leading-space", " " + _d() + "\n", 1, b""),
    ("text-control", _d().replace(", 'shape'", ",\x0c'shape'") + "\n", 1, b""),
    ("text-header-too-large", _d() + " " * (1 << 20) + "\n", 3, b""),
    ("py-comment", _d().replace(" 'shape'", " # c\n 'shape'") + "\n", 1, b""),
    ("py-concat", _d("'<' 'f8'") + "\n", 1, b""),
    ("py-prefix", _d("u'<f8'") + "\n", 1, b""),
    ("py-escape", _d("[('\\a', '<i4')]") + "\n", 1, b""),
    ("py-surrogate", _d("[('\\ud800', '<i4')]") + "\n", 1, b""),
    ("py-plus-paren", _d(shape="(+3,)") + "\n", 1, b""),
    ("py-spaced-l", _d(shape="(3 L,)") + "\n", 1, b""),
    ("py-int-spelling", _d(shape="(0x3,)") + "\n", 2, b""),
    ("py-foreign-literal", _d("[((None, 'a'), '<i4')]") + "\n", 1, b""),
    ("py-duplicate-key", _d(shape="(3,), 'shape': (3,)") + "\n", 1, b""),
    ("val-bool-dim", _d(shape="(True, 3)") + "\n", 1, b""),
    ("val-negative-dim", _d(shape="(0, -1)") + "\n", 1, b""),
    ("val-huge-int", _d(shape="(0, 18446744073709551616)") + "\n", 1, b""),
    ("val-ndim", _d(shape="(%s)" % ("1, " * 65)) + "\n", 1, b""),
    ("val-depth", _d(_nested(20)) + "\n", 1, b""),
    # 199 brackets inside the dict's '{': the deepest header numpy can read.
    ("val-depth", _d(_nested(98, "[('x', '<f8', (2,))]")) + "\n", 1, b""),
    ("val-size", _d(shape="(0, 4611686018427387904, 4611686018427387904)") + "\n", 1, b""),
    ("type-native", _d("'=f8'") + "\n", 1, b""),
    ("type-alias", _d("'float64'") + "\n", 1, b""),
    ("type-size", _d("'<f'") + "\n", 1, b""),
    ("type-object-order", _d("'<O'") + "\n", 1, b"\x80\x04N."),
    ("type-datetime", _d("'<M8[0ms]'") + "\n", 1, b""),
    ("type-datetime", _d("'<M8[+5ms]'") + "\n", 1, b""),
    ("type-itemsize-wrap", _d("'|S2147483648'", "(0,)") + "\n", 1, b""),
    ("field-type-tuple", _d("[('a', ('<i4', (2,)))]") + "\n", 1, b""),
    ("field-not-tuple", _d("[['a', '<i4']]") + "\n", 1, b""),
    ("field-shape-spelling", _d("[('a', '<i4', 3)]") + "\n", 1, b""),
    ("field-title-type", _d("[((1, 'a'), '<i4')]") + "\n", 1, b""),
    ("field-empty-title", _d("[(('', 'a'), '<i4')]") + "\n", 1, b""),
    ("field-unnamed", _d("[('', '<i4')]") + "\n", 1, b""),
    ("field-unnamed-subarray", _d("[('', '<i4', (2,))]") + "\n", 1, b""),
    ("descr-tuple", _d("('<i4', (2,))") + "\n", 1, b""),
    ("data-trailing", _d() + "\n", 1, b"PK\x03\x04"),
)
# Rows only numpy 2 reads (numpy 1.x refuses the header: no exemplar there).
if int(np.__version__.split(".")[0]) >= 2:
    EXEMPLARS += (
        ("field-subarray-ndim", _d("[('a', '<i4', (%s))]" % ("1, " * 33)) + "\n", 1, b""),
    )


def exemplar_file(text, major, extra):
    """A file with this header text and the data numpy's reading asks for."""
    import oracle  # here to keep generate.py importable on its own
    raw = text.encode("latin-1" if major < 3 else "utf-8")
    head = preamble(major, len(raw)) + raw
    need = oracle.implied_data_length(oracle.read_header(head))
    return head + bytes(need or 0) + extra
