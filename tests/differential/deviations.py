"""The listed deviations as recognisable classes.

Every row of ``docs/deviations.md`` that describes a header numpy reads (1.24;
``field-subarray-ndim``: numpy 2 only) and npyguard rejects has a stable ID in
its first column. This module holds, for each ID, the npyguard error code(s)
the rejection may carry and a predicate over the header text (its Python
tokens from ``header_tokens``, the same on Python 3.11 and 3.12) and numpy's
reading that recognises the class.
A numpy-readable file that npyguard rejects is explained only when some class
matches it *and* npyguard's code is one of that class's codes.

``doc_ids`` parses the markdown so the comparer can check that the table here
and the document name the same IDs.
"""

import ast
import io
import math
import re
import tokenize
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import header_tokens
from header_tokens import string_spans

INT63 = 2 ** 63 - 1
INT31 = 2 ** 31 - 1
MAX_HEADER_BYTES = 1 << 20  # npyguard's default limits.max_header_bytes
MAX_NDIM = 64               # npyguard's default limits.max_ndim
MAX_DEPTH = 32              # npyguard's default limits.max_depth
MAX_FIELD_NDIM = 32         # npyguard's bound on a field's subarray shape (numpy 1.x's NPY_MAXDIMS)
HARD_MAX_DEPTH = 199        # no max_depth setting goes above it: Python refuses a 200th
                            # open bracket counting the dict's own '{'

DATETIME_UNIT = re.compile(r"(?:[1-9][0-9]*)?(?:Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as)")
TYPE_STRING = re.compile(r"([<>|=]?)([A-Za-z])([0-9]*)(\[[^\]]*\])?")
ALLOWED_ESCAPES = "\\'\"nrt"
CANONICAL_INT = re.compile(r"0|[1-9][0-9]*")


# ---------------------------------------------------------------------------
# What a rejected-but-readable file looks like
# ---------------------------------------------------------------------------

class Facts:
    """Everything the predicates look at, computed lazily from the file bytes
    and numpy's HeaderReading (which succeeded)."""

    def __init__(self, buf, verdict, code=None, offset=None):
        self.buf = buf
        self.verdict = verdict
        self.reading = verdict.reading
        self.code = code        # npyguard's error code
        self.error_at = offset  # npyguard's error offset in the file (or None)
        self.preamble = 10 if self.reading.version == (1, 0) else 12
        self.encoding = "latin-1" if self.reading.version < (3, 0) else "utf-8"
        raw = buf[self.preamble:self.preamble + self.reading.header_length]
        self.text = raw.decode(self.encoding)

    def file_offset(self, index):
        """File byte offset of character ``index`` of the header text."""
        return self.preamble + len(self.text[:index].encode(self.encoding))

    @cached_property
    def evaluated(self):
        """The text numpy hands to literal_eval, up to white space: for 1.0
        and 2.0, with numpy's Python 2 filter (L suffixes dropped) run over
        ``header_tokens``. numpy's own ``_filter_header`` raises on Python
        3.12 (TokenError, IndentationError) for headers numpy reads that
        hold raw carriage returns or form feeds."""
        if self.reading.version < (3, 0):
            return header_tokens.without_long_suffixes(self.text)
        return self.text

    @cached_property
    def header(self):
        """The dict numpy evaluated, with its raw values."""
        return ast.literal_eval(self.evaluated)

    @cached_property
    def tokens(self):
        """Python tokens of the raw text (empty if tokenize gives up), the
        same on Python 3.11 and 3.12: ``header_tokens.tokens``."""
        try:
            return header_tokens.tokens(self.text)
        except (tokenize.TokenError, SyntaxError, ValueError):
            return []

    @cached_property
    def line_starts(self):
        """Offset of each tokenize row (rows split at '\\n' only)."""
        starts, at = [0], 0
        for line in io.StringIO(self.text).readlines():
            at += len(line)
            starts.append(at)
        return starts

    def offset(self, position):
        """Text offset of a tokenize (row, col)."""
        row, col = position
        return self.line_starts[row - 1] + col

    @cached_property
    def significant(self):
        """Tokens other than NL/NEWLINE/COMMENT and white space error tokens."""
        return [t for t in self.tokens
                if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT,
                                  tokenize.DEDENT)
                and not (t.type == tokenize.ERRORTOKEN and t.string.isspace())]

    @cached_property
    def outside_strings(self):
        """The text with every string token blanked out."""
        chars = list(self.text)
        for t in self.tokens:
            if t.type == tokenize.STRING:
                for i in range(self.offset(t.start), self.offset(t.end)):
                    chars[i] = " "
        return "".join(chars)

    @cached_property
    def strings(self):
        """STRING tokens."""
        return [t.string for t in self.tokens if t.type == tokenize.STRING]

    @cached_property
    def descr_nodes(self):
        """(kind, payload) nodes of the raw descr, walked as descr_to_dtype does."""
        return list(walk_descr(self.header["descr"], "top"))

    @cached_property
    def type_string_classes(self):
        """Union of the deviation IDs of every type string in the descr."""
        out = set()
        for kind, payload in self.descr_nodes:
            if kind == "type" and isinstance(payload[1], str):
                out |= classify_type_string(payload[1])
        return out

    @cached_property
    def field_shapes(self):
        """Raw shape values of 3-element fields."""
        return [entry[2] for kind, entry in self.descr_nodes if kind == "field" and len(entry) == 3]

    @cached_property
    def integers(self):
        """Every integer in the shape and in field shapes (bools excluded)."""
        out = []
        for value in [self.header["shape"]] + self.field_shapes:
            items = value if isinstance(value, (tuple, list)) else (value,)
            out += [x for x in items if isinstance(x, int) and not isinstance(x, bool)]
        return out


def walk_descr(descr, where):
    """Yield ("type", (where, value)) for every type position and ("field",
    entry) for every field, mirroring numpy's descr_to_dtype."""
    yield "type", (where, descr)
    if isinstance(descr, str):
        return
    if isinstance(descr, tuple):
        yield from walk_descr(descr[0], "tuple")
        return
    for entry in descr:
        yield "field", entry
        yield from walk_descr(entry[1], "field")


def classify_type_string(s):
    """The deviation IDs a type string falls under ({} if SPEC accepts it)."""
    m = TYPE_STRING.fullmatch(s)
    if not m or m.group(2) not in "biufcSUVMmO":
        return {"type-alias"}
    order, kind, size, unit = m.groups()
    ids = set()
    if order in ("", "="):
        ids.add("type-native")
    if order == "|" and kind in "iufcUMm" and not (kind in "iu" and size == "1"):
        ids.add("type-native")
    if kind == "O" and order in ("<", ">"):
        ids.add("type-object-order")
    if (size == "" and kind != "O") or (len(size) > 1 and size[0] == "0"):
        ids.add("type-size")
    if unit is not None:
        if kind not in "Mm":
            ids.add("type-alias")
        else:
            # Anything but SPEC's [N]unit: numpy also reads a multiplier 0 or
            # with leading zeros, a '+' sign or white space before it (strtol:
            # '<M8[+5ms]', '<M8[ 5ms]'), '[generic]', 'μs' and '/N' fractions.
            u = DATETIME_UNIT.fullmatch(unit[1:-1])
            digits = re.match(r"[0-9]*", unit[1:-1]).group(0)
            if not u or (digits and int(digits) > INT31):
                ids.add("type-datetime")
    if size and int(size) * (4 if kind == "U" else 1) > INT31:
        ids.add("type-itemsize-wrap")  # numpy 1.24 takes the size modulo 2^32
    return ids


def wrapped_size_codes(f):
    """A type string whose size numpy wraps modulo 2^32: itemsize_overflow
    for S, U and V; bad_descr for numbers ('<i4294967300' is int32)."""
    codes = set()
    for kind, payload in f.descr_nodes:
        if kind != "type" or not isinstance(payload[1], str):
            continue
        if "type-itemsize-wrap" in classify_type_string(payload[1]):
            codes.add("itemsize_overflow" if TYPE_STRING.fullmatch(payload[1]).group(2) in "SUV" else "bad_descr")
    return codes


# ---------------------------------------------------------------------------
# Syntax features of the text
# ---------------------------------------------------------------------------

def _is_control(ch):
    o = ord(ch)
    return (o < 0x20 and ch not in "\n\r\t ") or 0x7F <= o <= 0x9F


def has_control(f):
    """A raw control character (C0 but tab, \\n and \\r; DEL; C1) outside
    string literals: between tokens, before the dict, after it, in a comment.
    Inside strings npyguard accepts what numpy reads there (NUL, \\n and \\r,
    which numpy refuses inside a string, are the only exceptions)."""
    outside = list(f.text)
    for start, end in string_spans(f.text):
        outside[start:end] = " " * (end - start)
    return any(_is_control(ch) for ch in outside)


def not_terminated(f):
    """The text ends neither with '\\n' nor with the dict's own closing '}'
    (the unpadded form NPZ.jl writes, which npyguard accepts): padding
    without the newline, or a '}' that closes something else (a comment's
    text after the dict). Without tokens, any final '}' counts as the dict's."""
    if f.text.endswith("\n"):
        return False
    if not f.text.endswith("}"):
        return True
    if not f.tokens:
        return False
    last = f.significant[-1] if f.significant else None
    return not (last is not None and last.type == tokenize.OP and last.string == "}"
                and f.offset(last.end) == len(f.text))


def has_comment_or_continuation(f):
    """A '#' comment token, or a backslash (a line continuation) outside strings."""
    if any(t.type == tokenize.COMMENT for t in f.tokens):
        return True
    return bool(f.tokens) and "\\" in f.outside_strings


def has_concatenation(f):
    """Two string tokens in a row."""
    sig = f.significant
    return any(a.type == tokenize.STRING and b.type == tokenize.STRING for a, b in zip(sig, sig[1:]))


def has_prefix_or_triple(f):
    """A string prefix (u b r f) or triple quotes."""
    return any(s[0] not in "'\"" or s[:3] in ("'''", '"""') for s in f.strings)


def _escapes(literal):
    """Yield the escapes of a plain quoted literal as (letter, argument)."""
    body = literal[1:-1]
    i = 0
    while i < len(body):
        if body[i] != "\\":
            i += 1
            continue
        c = body[i + 1] if i + 1 < len(body) else ""
        width = {"x": 2, "u": 4, "U": 8}.get(c, 0)
        yield c, body[i + 2:i + 2 + width]
        i += 2 + width


def _bad_escape(c, arg):
    if c in ALLOWED_ESCAPES:
        return False
    if c in "xuU":
        return not re.fullmatch("[0-9a-fA-F]{%d}" % {"x": 2, "u": 4, "U": 8}[c], arg)
    return True


def _surrogate(c, arg):
    if c in "uU" and re.fullmatch("[0-9a-fA-F]+", arg or "x"):
        return 0xD800 <= int(arg, 16) <= 0xDFFF
    return False


def has_bad_escape(f):
    """An escape outside \\\\ \\' \\" \\n \\r \\t \\xHH \\uHHHH \\UHHHHHHHH."""
    return any(_bad_escape(c, a) for s in f.strings if s[0] in "'\"" for c, a in _escapes(s))


def has_surrogate_escape(f):
    """A \\u or \\U escape naming a surrogate code point."""
    return any(_surrogate(c, a) for s in f.strings if s[0] in "'\"" for c, a in _escapes(s))


def has_plus_or_paren(f):
    """A unary '+', or parentheses around a single value: '(3)'."""
    sig = f.significant
    if any(t.string == "+" and t.type == tokenize.OP for t in sig):
        return True
    for i, t in enumerate(sig):
        if t.string != "(":
            continue
        depth, commas, inner = 0, 0, 0
        for u in sig[i + 1:]:
            if u.string in "([{" and u.type == tokenize.OP:
                depth += 1
            elif u.string in ")]}" and u.type == tokenize.OP:
                if depth == 0:
                    break
                depth -= 1
            elif u.string == "," and depth == 0:
                commas += 1
            inner += 1
        if inner and not commas:
            return True
    return False


def has_spaced_long_suffix(f):
    """An 'L' numpy's Python 2 filter drops that is not the one suffix
    written directly after the digits: '3 L', '3L L' (the filter keeps
    dropping L names until another token comes)."""
    if f.reading.version >= (3, 0):
        return False
    last_was_number, adjacent_at = False, None
    for tok in f.tokens:
        if last_was_number and tok.type == tokenize.NAME and tok.string == "L":
            if tok.start != adjacent_at:
                return True
            adjacent_at = None
            continue
        last_was_number = tok.type == tokenize.NUMBER
        adjacent_at = tok.end if last_was_number else None
    return False


def has_int_spelling(f):
    """An integer literal other than 0 or [1-9][0-9]*: hex, octal, binary,
    underscores, '00'."""
    for t in f.significant:
        if t.type == tokenize.NUMBER and not CANONICAL_INT.fullmatch(t.string):
            try:
                value = ast.literal_eval(t.string)
            except (ValueError, SyntaxError):
                continue
            if isinstance(value, int):
                return True
    return False


def has_leading_space(f):
    """White space before the opening brace (literal_eval strips it)."""
    return bool(f.text) and f.text[0] in " \t\n\r\x0c\x0b"


def dict_entries(f):
    """(key, first char, end char) of each top-level dict entry, from tokens."""
    sig = f.significant
    entries, depth, i = [], 0, 0
    while i < len(sig):
        t = sig[i]
        if t.type == tokenize.OP and t.string in "([{":
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
        elif depth == 1 and t.type == tokenize.STRING and i + 1 < len(sig) and sig[i + 1].string == ":":
            j, inner = i + 2, 0
            while j < len(sig):
                u = sig[j]
                if u.type == tokenize.OP and u.string in "([{":
                    inner += 1
                elif u.type == tokenize.OP and u.string in ")]}":
                    if inner == 0:
                        break
                    inner -= 1
                elif u.type == tokenize.OP and u.string == "," and inner == 0:
                    break
                j += 1
            entries.append((ast.literal_eval(t.string), f.offset(t.start), f.offset(sig[j - 1].end)))
            i = j
            continue
        i += 1
    return entries


def duplicate_key_codes(f):
    """A key written twice (the last one wins in numpy): duplicate_key, or
    npyguard's code when its error lies inside an entry a later one shadows."""
    tree = ast.parse(f.evaluated.lstrip(" \t"), mode="eval").body
    keys = [ast.literal_eval(k) for k in tree.keys]
    if len(keys) == len(set(keys)):
        return set()
    codes = {"duplicate_key"}
    entries = dict_entries(f)
    if [key for key, _, _ in entries] != keys:
        # Keys the tokens cannot pair with the dict's (a key written as
        # '<' 'f8'-style concatenation): the documented code-level fallback.
        return codes | {f.code}
    for n, (key, start, end) in enumerate(entries):
        shadowed = any(other == key for other, _, _ in entries[n + 1:])
        if shadowed and f.error_at is not None and f.file_offset(start) <= f.error_at < f.file_offset(end):
            codes.add(f.code)
    return codes


def nesting_depth(f):
    """Deepest nesting of '(' and '[' tokens."""
    depth = deepest = 0
    for t in f.significant:
        if t.type == tokenize.OP and t.string in "([":
            depth += 1
            deepest = max(deepest, depth)
        elif t.type == tokenize.OP and t.string in ")]":
            depth -= 1
    return deepest


# ---------------------------------------------------------------------------
# Values and descr structure
# ---------------------------------------------------------------------------

def shape_has_bool(f):
    """True or False as a dimension of the array shape."""
    return any(isinstance(x, bool) for x in f.header["shape"])


def negative_codes(f):
    """A '-' before a dimension: negative_dimension, or syntax_error when
    white space separates it from the digits ('- 3', which numpy reads)."""
    codes = set()
    if any(x < 0 for x in f.integers):
        codes.add("negative_dimension")
    sig = f.significant
    for a, b in zip(sig, sig[1:]):
        if a.type == tokenize.OP and a.string == "-" and b.type == tokenize.NUMBER:
            codes.add("negative_dimension" if a.end == b.start else "syntax_error")
    return codes


def has_huge_integer(f):
    """An integer anywhere (a dimension, a title) whose magnitude exceeds 2^63-1."""
    tree = ast.parse(f.evaluated.lstrip(" \t"), mode="eval")
    return any(isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) > INT63
               for node in ast.walk(tree))


def too_many_dims(f):
    """More dimensions than npyguard's max_ndim."""
    return len(f.header["shape"]) > MAX_NDIM


def size_overflows(f):
    """Element count above 2^63-1, or the non-zero dimensions times the
    itemsize above 2^63-1 (numpy: "array is too big")."""
    shape = [int(x) for x in f.header["shape"]]
    if any(x < 0 for x in shape):
        return False
    itemsize = f.reading.dtype.itemsize
    return math.prod(shape) > INT63 or math.prod(x for x in shape if x) * max(itemsize, 1) > INT63


def _fields(f):
    return [entry for kind, entry in f.descr_nodes if kind == "field"]


def _is_spec_padding(entry):
    """SPEC padding: ('', '|Vn') or ('', '|Vn', ()) with a void type string."""
    if entry[0] != "" or not isinstance(entry[1], str):
        return False
    if not re.fullmatch(r"[<>|]V[0-9]+", entry[1]):
        return False
    return len(entry) == 2 or entry[2] == ()


def top_level_tuple(f):
    """descr itself is a (type, shape, ...) tuple."""
    return isinstance(f.header["descr"], tuple)


def field_type_tuple(f):
    """A field's type given as a (type, shape) tuple."""
    for kind, payload in f.descr_nodes:
        if kind == "type" and payload[0] in ("field", "tuple") and isinstance(payload[1], tuple):
            return True
    return False


def field_shape_spelling(f):
    """A field subarray shape that is not a tuple of integers: an integer, a
    list, or a type spec of the same itemsize (numpy's (base, new) form)."""
    return any(not (isinstance(shape, tuple) and all(type(x) is int for x in shape)) for shape in f.field_shapes)


def field_subarray_ndim(f):
    """A field's subarray shape of more than 32 dimensions (numpy 2 reads up
    to 64, numpy 1.x refuses them)."""
    return any(isinstance(shape, (tuple, list)) and len(shape) > MAX_FIELD_NDIM for shape in f.field_shapes)


def field_not_tuple(f):
    """A field given as a list, a 2- or 3-character string or another
    iterable (numpy unpacks any of them)."""
    return any(not isinstance(e, tuple) for e in _fields(f))


def title_not_string(f):
    """A (title, name) whose title is a value of the grammar other than a
    string (an integer, a bool, a tuple, a list)."""
    return any(isinstance(e[0], tuple) and not isinstance(e[0][0], str) and not _outside_grammar(e[0][0])
               for e in _fields(f))


def _outside_grammar(value):
    """True if the value holds something the header grammar has no word for."""
    if isinstance(value, (tuple, list)):
        return any(_outside_grammar(v) for v in value)
    return not isinstance(value, (str, int))


def has_foreign_literal(f):
    """None, a float, a complex number, bytes, a set or a nested dict anywhere
    (numpy takes any value as a title; None means "no title")."""
    tree = ast.parse(f.evaluated.lstrip(" \t"), mode="eval").body
    for node in ast.walk(tree):
        if node is tree:
            continue
        if isinstance(node, (ast.Set, ast.Dict)):
            return True
        if isinstance(node, ast.Constant) and not isinstance(node.value, (str, int)):
            return True
        if isinstance(node, ast.BinOp):  # complex literals such as 1+2j
            return True
    return False


def empty_title(f):
    """A (title, name) with the title ''."""
    return any(isinstance(e[0], tuple) and e[0][0] == "" for e in _fields(f))


def unnamed_field(f):
    """A field named '' that is not SPEC padding and has no subarray shape
    (numpy keeps it as a field called '')."""
    for e in _fields(f):
        name = e[0][1] if isinstance(e[0], tuple) else e[0]
        if name != "" or _is_spec_padding(e):
            continue
        if len(e) == 3 and e[2] not in ((), []) and not isinstance(e[0], tuple):
            continue  # unnamed-subarray's class
        return True
    return False


def unnamed_subarray(f):
    """('', T, shape) with a non-empty shape: numpy drops it as padding for any T."""
    return any(len(e) == 3 and e[0] == "" and e[2] not in ((), []) for e in _fields(f))


# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class DeviationClass:
    """A listed deviation: its ID, npyguard's code(s) and a recogniser.

    The predicate returns True (the class matches; any of ``codes`` explains
    the rejection) or a set of codes (the class matches and exactly these
    codes explain it; empty when it does not match)."""

    id: str
    codes: frozenset
    predicate: Callable


# Stands for "the code of the error npyguard found in a shadowed value".
SHADOWED = "*shadowed*"


def _codes(*names):
    return frozenset(names)


def _type(id_):
    return lambda f: id_ in f.type_string_classes


CLASSES = (
    DeviationClass("text-not-terminated", _codes("header_not_terminated"), not_terminated),
    DeviationClass("text-leading-space", _codes("syntax_error"), has_leading_space),
    DeviationClass("text-control", _codes("control_character"), has_control),
    DeviationClass("text-header-too-large", _codes("header_too_large"),
                   lambda f: f.reading.header_length > MAX_HEADER_BYTES),
    DeviationClass("py-comment", _codes("syntax_error"), has_comment_or_continuation),
    DeviationClass("py-concat", _codes("syntax_error"), has_concatenation),
    DeviationClass("py-prefix", _codes("syntax_error"), has_prefix_or_triple),
    DeviationClass("py-escape", _codes("syntax_error"), has_bad_escape),
    DeviationClass("py-surrogate", _codes("syntax_error"), has_surrogate_escape),
    DeviationClass("py-plus-paren", _codes("syntax_error"), has_plus_or_paren),
    DeviationClass("py-spaced-l", _codes("syntax_error"), has_spaced_long_suffix),
    DeviationClass("py-int-spelling", _codes("syntax_error"), has_int_spelling),
    DeviationClass("py-foreign-literal", _codes("syntax_error"), has_foreign_literal),
    DeviationClass("py-duplicate-key", _codes("duplicate_key", SHADOWED), duplicate_key_codes),
    DeviationClass("val-bool-dim", _codes("bad_shape"), shape_has_bool),
    DeviationClass("val-negative-dim", _codes("negative_dimension", "syntax_error"), negative_codes),
    DeviationClass("val-huge-int", _codes("integer_too_large"), has_huge_integer),
    DeviationClass("val-ndim", _codes("too_many_dimensions"), too_many_dims),
    DeviationClass("val-depth", _codes("depth_exceeded"),
                   lambda f: nesting_depth(f) > min(MAX_DEPTH, HARD_MAX_DEPTH)),
    DeviationClass("val-size", _codes("size_overflow"), size_overflows),
    DeviationClass("type-native", _codes("bad_descr"), _type("type-native")),
    DeviationClass("type-alias", _codes("bad_descr"), _type("type-alias")),
    DeviationClass("type-size", _codes("bad_descr"), _type("type-size")),
    DeviationClass("type-object-order", _codes("bad_descr"), _type("type-object-order")),
    DeviationClass("type-datetime", _codes("bad_descr"), _type("type-datetime")),
    DeviationClass("type-itemsize-wrap", _codes("itemsize_overflow", "bad_descr"), wrapped_size_codes),
    DeviationClass("type-object", _codes("object_dtype"), lambda f: f.reading.has_object),
    DeviationClass("field-type-tuple", _codes("bad_descr"), field_type_tuple),
    DeviationClass("field-not-tuple", _codes("bad_descr"), field_not_tuple),
    DeviationClass("field-shape-spelling", _codes("bad_descr"), field_shape_spelling),
    DeviationClass("field-subarray-ndim", _codes("too_many_dimensions"), field_subarray_ndim),
    DeviationClass("field-title-type", _codes("bad_descr"), title_not_string),
    DeviationClass("field-empty-title", _codes("empty_field_name"), empty_title),
    DeviationClass("field-unnamed", _codes("empty_field_name"), unnamed_field),
    DeviationClass("field-unnamed-subarray", _codes("empty_field_name"), unnamed_subarray),
    DeviationClass("descr-tuple", _codes("bad_descr"), top_level_tuple),
    DeviationClass("data-trailing", _codes("trailing_data"), lambda f: f.verdict.trailing),
)
BY_ID = {c.id: c for c in CLASSES}


def explain(buf, verdict, code, offset=None):
    """Which classes explain npyguard's rejection (``code`` at file
    ``offset``) of a file numpy reads: (IDs that match with this code, IDs
    that match only with other codes, "ID: exception" for predicates that
    raised, which are harness bugs)."""
    return match_classes(CLASSES, Facts(buf, verdict, code, offset), code)


def match_classes(classes, facts, code):
    """(IDs of ``classes`` whose predicate matches ``facts`` with ``code``,
    IDs matching with other codes, "ID: exception" for predicates that raised)."""
    matching, other, errors = [], [], []
    for cls in classes:
        try:
            hit = cls.predicate(facts)
        except Exception as exc:  # noqa: BLE001 - reported, never silently a match
            errors.append("%s: %s: %s" % (cls.id, type(exc).__name__, exc))
            continue
        if hit is True:
            hit = cls.codes
        if hit:
            (matching if code in hit else other).append(cls.id)
    return matching, other, errors


def doc_rows(markdown_text, archives=False):
    """(ID, row text) for every row of a table whose first header is 'id':
    the .npy rows, or with ``archives`` the .npz rows (IDs npz-*)."""
    rows, in_table = [], False
    for line in markdown_text.splitlines():
        if not line.lstrip().startswith("|"):
            in_table = False
            continue
        first = line.strip().strip("|").split("|")[0].strip()
        if first.lower() == "id":
            in_table = True
        elif in_table and not set(first) <= set("-: "):
            rows.append((first.strip("`"), line))
    # The .npz rows (IDs npz-*) concern archives: npz_deviations.py holds
    # their classes and npz_run.py checks them.
    return [(i, line) for i, line in rows if i.startswith("npz-") == archives]


def doc_problems(markdown_text, where="docs/deviations.md", classes=CLASSES, archives=False):
    """Disagreements between ``classes`` (default: the .npy ones) and the
    document's rows of that kind: IDs on one side only, IDs listed twice,
    class codes the row does not name."""
    rows = doc_rows(markdown_text, archives)
    listed = [i for i, _ in rows]
    text_of = dict(rows)
    by_id = {cls.id: cls for cls in classes}
    problems = []
    for cls in classes:
        if cls.id not in text_of:
            problems.append("class %s is not an ID in %s" % (cls.id, where))
            continue
        for code in sorted(cls.codes - {SHADOWED}):
            if "`%s`" % code not in text_of[cls.id]:
                problems.append("%s row %s does not name the code %s" % (where, cls.id, code))
    for i in listed:
        if i not in by_id:
            problems.append("%s lists %s, which has no class in the harness" % (where, i))
    for i in sorted({i for i in listed if listed.count(i) > 1}):
        problems.append("%s lists %s twice" % (where, i))
    return problems
