"""Mutants of valid headers, each with the data length numpy's reading implies.

Two kinds of mutants. *Semantic* mutants edit the parsed header (a type
string, a field, a name, a dimension, a key) and spell it again in a random
writer style, so they mostly stay within Python's syntax and probe the
meaning. *Byte* mutants start from the header text of a valid file (or of a
semantic mutant) and apply one to four operators: byte flips, deletions,
duplications, splices from other headers, insertions and replacements with
tokens of the header language and hostile tokens (huge integers, ``-1``, deep
nesting, NUL, non-UTF-8 bytes, ``\\u`` escapes, surrogates), suffixes after
numbers, escapes and raw control characters inside strings, raw control bytes
anywhere, other endings (no padding at all, NPZ.jl's, padding without the
newline), and a change of format version. HEADER_LEN
is fixed up (usually) and the data length is then what numpy's reading of the
mutant asks for, so that a header numpy accepts also passes the data-size
check; a few mutants get one byte too many or too few on purpose.
"""

import ast
import random
import re
from dataclasses import dataclass, field

import generate
import header_tokens
import oracle

# Tokens of the header language and its neighbourhood.
TOKENS = (
    "'descr'", "'shape'", "'fortran_order'", "'descr': ", "'shape': ", "(", ")", "[", "]", "{", "}", ",", ", ",
    ":", ": ", "L", " L", "l", "'<f8'", "'|V4'", "'|V0'", "'<i4'", "'|u1'", "'<U3'", "'|S5'", "'<M8[ms]'",
    "'<m8'", "'>c16'", "'|b1'", "'|O'", "'=f8'", "'f8'", "'|f8'", "'|b'", "'<f'", "'d'", "'float64'", "'a10'",
    "'<i4,<i4'", "'(2,)<i4'", "'<M8[0ms]'", "'<M8[generic]'", "'|S01'", "'<O'", "True", "False", "None",
    "0", "1", "2", "3", "7", "10", "00", "'", '"', "''", '""', "'''", '"""', "\\", "\\'", '\\"', "\\\\", "\\n",
    "\\x41", "\\xe9", "\\u0041", "\\u00e9", "\\u03a9", "\\U0001F600", "\\U00110000", "\\ud800", "\\udfff",
    "\\N{DIGIT ONE}", "\\0", "\\a", "\\q", "u", "b", "r", "f", "#", "# c\n", "\\\n", " ", "  ", "\t", "\n",
    "\r", "\r\n", "\x0c", "\x0b", "(2,)", "()", "(0,)", "(3, 4)", "[]", "('', '|V4')", "('a', '<i4')",
    "('a', '<i4', (2,))", "(('t', 'a'), '<i4')", "('', '<i4')", "(('', 'a'), '<i4')", "('a', ('<i4', (2,)))",
    "('a', '<i4', 3)", "('a', '<i4', [2])", "'a'", "'b'", "'é'", "'Ω'", "+", "-", "*", ".", "1.5", "1j",
    "0x10", "0o7", "0b1", "1_0", "2**3", "\x01", "\x1b", "\x1f", "\x7f", "'<M8[+5ms]'", "'<M8[ 5ms]'",
)
HOSTILE = (
    "9223372036854775807", "9223372036854775808", "18446744073709551616", "4294967296", "2147483648",
    "2147483647", "536870912", "-1", "-0", "-9223372036854775809", "9" * 40, "1" + "0" * 4000,
    "[" * 40, "(" * 40, ")" * 40, "]" * 40, "[" * 300, "(" * 300, "((((((((((1,),),),),),),),),),)",
    "\x00", "\xff", "\xc3", "\xed\xa0\x80", "\xe9", "\xc2\x85", "\x85", "\xa0", "\xef\xbb\xbf",
    "\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x80\xa8", "\xf0\x9f\x98\x80", "\\ud83d\\ude00", "\\U0010ffff",
    "'|S2147483648'", "'<U536870912'", "'|V2147483647'", "'|S2147483647'", "'<M8[2147483648ms]'",
    "(0, 4611686018427387904, 4611686018427387904)", "(4294967296, 4294967296)", "\x80", "\x9f", "\xc2\x9f",
    "\xc2\x80",
)
# Inserted directly after the digits of a number.
AFTER_NUMBER = (b"L", b" L", b"\tL", b"l", b"LL", b"L L", b"_0", b"0", b".0", b"j", b"e1", b"\\\nL", b"  L")
# Inserted directly after a quote (usually inside a string).
INTO_STRING = (b"\\ud800", b"\\udfff", b"\\U0000d800", b"\\U00110000", b"\\x41", b"\\u00e9", b"\\N{DIGIT ONE}",
               b"\\0", b"\\a", b"\\b", b"\\f", b"\\v", b"\\q", b"\\\n", b"\t", b"\r", b"\x85", b"\x7f",
               b"\x00", b"\xc3\xa9", b"\xe2\x80\xa8", b"\xed\xa0\x80", b"\\'", b'\\"', b"\\\\", b"\xa0",
               b"\x01", b"\x0b", b"\x0c", b"\x1b", b"\x1f", b"\x80", b"\x9f", b"\xc2\x80", b"\xc2\x85", b"\xc2\x9f",
               b"\n", b"\t\x01\x7f", b"\\\x01", b"\\\t")
# Raw control bytes, inserted anywhere (inside strings numpy reads all but
# NUL, LF and CR; outside them only the form feed, as white space).
CONTROLS = (b"\x00", b"\x01", b"\x08", b"\t", b"\n", b"\x0b", b"\x0c", b"\r", b"\x0e", b"\x1b", b"\x1f", b"\x7f",
            b"\x80", b"\x85", b"\x9f", b"\xc2\x80", b"\xc2\x85", b"\xc2\x9f")
# Header bytes after which an insertion most often makes sense.
BOUNDARIES = b"({[,: "


# Tokens are UTF-8 text; hostile tokens are raw bytes (one per character).
TOKEN_BYTES = tuple(t.encode("utf-8") for t in TOKENS)
HOSTILE_BYTES = tuple(t.encode("latin-1") for t in HOSTILE)


@dataclass
class Mutant:
    """A mutated file and how it was made."""

    data: bytes
    parent: str
    ops: list = field(default_factory=list)


def _position(rng, text):
    """An insertion point, usually just after a structural character."""
    if text and rng.random() < 0.6:
        spots = [i + 1 for i, b in enumerate(text) if b in BOUNDARIES]
        if spots:
            return rng.choice(spots)
    return rng.randint(0, len(text))


def _token(rng):
    return rng.choice(TOKEN_BYTES) if rng.random() < 0.8 else rng.choice(HOSTILE_BYTES)


def _span(rng, text, longest=8):
    """A random (start, end) inside text, possibly empty."""
    if not text:
        return 0, 0
    start = rng.randrange(len(text))
    return start, min(len(text), start + rng.randint(1, longest))


def _lexeme(rng, text):
    """The span of a random quoted string or number in the text, if any."""
    starts = [i for i, b in enumerate(text) if b in b"'\"0123456789" and (i == 0 or text[i - 1] not in b"0123456789")]
    if not starts:
        return None
    start = rng.choice(starts)
    if text[start] in b"'\"":
        end = text.find(text[start:start + 1], start + 1)
        return (start, end + 1) if end > 0 else None
    end = start
    while end < len(text) and text[end] in b"0123456789":
        end += 1
    return start, end


def mutate_text(rng, text, donors):
    """Apply one operator to header bytes; returns (new bytes, op name)."""
    op = rng.choice(("flip", "flip", "delete", "delete", "duplicate", "insert", "insert", "insert", "insert",
                     "replace", "replace", "replace", "splice", "ending", "after-number", "into-string",
                     "control"))
    if op == "control":
        at = rng.randint(0, len(text))
        token = rng.choice(CONTROLS)
        return text[:at] + token + text[at:], "control@%d %r" % (at, token)
    if op == "after-number":
        ends = [i + 1 for i in range(len(text)) if text[i] in b"0123456789"
                and (i + 1 == len(text) or text[i + 1] not in b"0123456789")]
        if ends:
            at = rng.choice(ends)
            token = rng.choice(AFTER_NUMBER)
            return text[:at] + token + text[at:], "after-number@%d %r" % (at, token)
    if op == "into-string":
        quotes = [i + 1 for i in range(len(text)) if text[i] in b"'\""]
        if quotes:
            at = rng.choice(quotes)
            token = rng.choice(INTO_STRING)
            return text[:at] + token + text[at:], "into-string@%d %r" % (at, token)
    if op == "flip" and text:
        i = rng.randrange(len(text))
        new = rng.randrange(256) if rng.random() < 0.5 else text[i] ^ (1 << rng.randrange(8))
        return text[:i] + bytes((new,)) + text[i + 1:], "flip@%d" % i
    if op == "delete" and text:
        start, end = _span(rng, text, rng.choice((1, 2, 8, 32)))
        return text[:start] + text[end:], "delete@%d+%d" % (start, end - start)
    if op == "duplicate" and text:
        start, end = _span(rng, text, rng.choice((1, 4, 16, 64)))
        at = end if rng.random() < 0.5 else rng.randint(0, len(text))
        return text[:at] + text[start:end] + text[at:], "duplicate %d+%d@%d" % (start, end - start, at)
    if op == "replace":
        span = _lexeme(rng, text)
        if span:
            token = _token(rng)
            return text[:span[0]] + token + text[span[1]:], "replace@%d %r" % (span[0], token)
    if op == "splice" and donors:
        donor = rng.choice(donors)
        start, end = _span(rng, donor, rng.choice((4, 16, 64)))
        at = _position(rng, text)
        return text[:at] + donor[start:end] + text[at:], "splice %d bytes@%d" % (end - start, at)
    if op == "ending":
        choice = rng.randrange(8)
        if choice == 0:
            return text.rstrip(b"\n"), "drop final newline"
        if choice == 1:
            return text + rng.choice((b" ", b"\n", b"  \n", b"\t\n", b"\x00\n")), "append after newline"
        if choice == 2:
            return text.rstrip(b" \n") + b"\n", "strip padding"
        if choice == 3:
            return b"\n" + text, "prepend newline"
        body = text.rstrip(b" \t\r\n")
        if choice == 4:
            return body, "no padding at all (NPZ.jl's zero pad)"
        if choice == 5:
            pad = -(10 + len(body)) % 16
            return body + (b" " * (pad - 1) + b"\n" if pad else b""), "NPZ.jl padding"
        if choice == 6:
            tail = rng.choice((b"}", b" }", b"\n}", b"#}", b" \x0c", b"\x0c\n", b"\t", b"\x0c"))
            return body + tail, "after the dict %r" % tail
        return body + b" " * rng.randint(1, 20), "padding without the newline"
    token = _token(rng)
    at = _position(rng, text)
    return text[:at] + token + text[at:], "insert@%d %r" % (at, token)


# ---------------------------------------------------------------------------
# Semantic mutations: edit the parsed header, spell it again
# ---------------------------------------------------------------------------

ODD_TYPE_STRINGS = (
    "=f8", "f8", "|f8", "|i4", "|U4", "|M8[ms]", "<i1", ">u1", "=i1", "<b1", "|b", "<f", "<i", "<S", "|S", "<U",
    "d", "?", "a10", "float64", "int32", "<i4,<i4", "(2,3)<i4", "(2,)f8", "<M8[0ms]", "<M8[01ms]",
    "<M8[generic]", "<m8[generic]", "<M8[\u03bcs]", "<M8[μs]", "<M8[ms/2]", "<M8[2147483648ms]", "<M8[2147483647Y]",
    "<M8[7D]", "<M8", ">m8", "<M8[]", "<O", ">O", "|O", "|O4", "|O8", "O", "|S01", "|S2147483648", "<U536870912",
    "|S2147483647", "|V2147483647", "<U536870911", "|V0", "|S0", "<U0", ">V4", "<V4", "=V4", "=S4", "S4", "V4",
    "<f12", "<c24", "<f16", "<c32", "|i1", "<U1", "U1", "b1", "<?", "<e", "<g", "<q", "<Q", "p", "P", "V", "S",
    "<f8 ", " <f8", "<F8", "<m8[as]", "<M8[10000as]", "|u1", "<M8[Y]", "<M8[W]", "<M16", "<i0", "<S-1",
    "<M8[+5ms]", "<M8[ 5ms]", "<m8[+1D]", "<M8[+0ms]", "<M8[-5ms]", "<M8[\t5ms]", "<M8[+01ms]",
)
ODD_NAMES = ("", "a", "b", "x", "é", "Ω", "\x00", "'", '"', "\\", "a" * 300, "\t", "a\x01", "\x7f", "\x85", "\x0c",
             "\x1b[0m", "\r", "\n", "\x9f", "€")
ODD_DIMS = (-1, -0, 0, 1, 2, True, False, 2 ** 31 - 1, 2 ** 31, 2 ** 32, 2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64,
            10 ** 30, "3", None, 1.0)
ODD_SUBSHAPES = ((), (0,), (2,), (1, 1), (-1,), (True,), 3, [2], (2 ** 31,), (65536, 65536), (1,) * 33, "2",
                 (65536, 65536, 0), (2147483647, 2, 0), ("|b", 2), ("|u1", 4), "<i2", [("x", "<i2"), ("y", "<i2")])
ODD_FIELDS = (("", "|V4"), ("", "<V4"), ("", "V4"), ("", "<i4"), ("", "|V4", (2,)), ("", "|V4", ()), ("", []),
              (("t", "a"), "<i4"), (("", "a"), "<i4"), ((1, "a"), "<i4"), (("t", ""), "|V4"), ("a", ("<i4", (2,))),
              ("a", "<i4", 3), ("a", "<i4", [2]), ["a", "<i4"], "ab", ("a",), ("a", "<i4", (2,), 1), ("a", []),
              ("a", "|O"), ("a", [("b", "<f8", (2,))], (2,)), ("a", None))


def _paths(obj, path=()):
    """Every position inside a nested tuple/list structure."""
    yield path, obj
    if isinstance(obj, (tuple, list)):
        for i, item in enumerate(obj):
            yield from _paths(item, path + (i,))


def _replace(obj, path, new):
    """obj with the item at path replaced by new (tuples and lists rebuilt)."""
    if not path:
        return new
    items = list(obj)
    items[path[0]] = _replace(items[path[0]], path[1:], new)
    return tuple(items) if isinstance(obj, tuple) else items


def _looks_like_type(s):
    return bool(re.fullmatch(r"[<>|=]?[A-Za-z][0-9]*(\[.*\])?", s))


def mutate_node(rng, node):
    """A replacement for one node of the descr."""
    if isinstance(node, str):
        if _looks_like_type(node) and rng.random() < 0.85:
            return rng.choice(ODD_TYPE_STRINGS)
        return rng.choice(ODD_NAMES + (("t", node), ("", node), (1, node), (None, node), ("t", node, "u")))
    if isinstance(node, bool) or isinstance(node, int):
        return rng.choice(ODD_DIMS)
    if isinstance(node, tuple) and node and all(isinstance(x, int) for x in node):
        return rng.choice(ODD_SUBSHAPES)
    if isinstance(node, tuple):  # a field
        choice = rng.randrange(5)
        if choice == 0:
            return list(node)
        if choice == 1:
            return node[:2] + (rng.choice(ODD_SUBSHAPES),)
        if choice == 2:
            return (node[0], (node[1], rng.choice(ODD_SUBSHAPES))) + node[2:]
        if choice == 3:
            return node[:2]
        return rng.choice(ODD_FIELDS)
    if isinstance(node, list):  # a struct
        items = list(node)
        choice = rng.randrange(5)
        if choice == 0 or not items:
            items.insert(rng.randint(0, len(items)), rng.choice(ODD_FIELDS))
        elif choice == 1:
            items.append(rng.choice(items))
        elif choice == 2:
            del items[rng.randrange(len(items))]
        elif choice == 3:
            return (items, rng.choice(ODD_SUBSHAPES))
        else:
            return rng.choice(ODD_TYPE_STRINGS + (None,))
        return items
    return rng.choice(ODD_TYPE_STRINGS)


def mutate_header(rng, header):
    """A list of (key, value) entries: the parsed header with one edit."""
    entries = sorted(header.items())
    r = rng.random()
    if r < 0.55:
        spots = list(_paths(header["descr"]))
        path, node = rng.choice(spots)
        new = _replace(header["descr"], path, mutate_node(rng, node))
        return [(k, new if k == "descr" else v) for k, v in entries], "descr at %s" % (path,)
    if r < 0.6:
        levels = rng.choice((14, 15, 16, 17, 20, 40, 90, 98, 99, 100))
        descr = header["descr"]
        for _ in range(levels):
            descr = [("n", descr)]
        return [(k, descr if k == "descr" else v) for k, v in entries], "descr nested %d levels" % levels
    if r < 0.8:
        shape = header["shape"]
        choice = rng.randrange(5)
        if choice == 0 and shape:
            i = rng.randrange(len(shape))
            shape = shape[:i] + (rng.choice(ODD_DIMS),) + shape[i + 1:]
        elif choice == 1:
            shape = rng.choice((list(shape), (), (1,) * rng.choice((32, 33, 64, 65)), 3, None, (2, 3, 0)))
        elif choice == 2:
            shape = shape + (rng.choice(ODD_DIMS),)
        elif choice == 3:
            shape = (0, 2 ** 62, 2 ** 62) if rng.random() < 0.5 else (2 ** 32, 2 ** 32)
        else:
            shape = tuple(rng.choice((0, 1, 2, 2 ** 31, 2 ** 40)) for _ in range(rng.randint(0, 4)))
        return [(k, shape if k == "shape" else v) for k, v in entries], "shape %r" % (shape,)
    choice = rng.randrange(4)
    if choice == 0:
        value = rng.choice((0, 1, "False", None, (), "True", True, False))
        return [(k, value if k == "fortran_order" else v) for k, v in entries], "fortran_order %r" % (value,)
    if choice == 1:
        dup = rng.choice(entries)
        return entries + [dup], "key %s twice" % dup[0]
    if choice == 2:
        return [e for e in entries if e != rng.choice(entries)], "key missing"
    return entries + [(rng.choice(("extra", "Descr", "descr ", "")), 1)], "extra key"


def spell_entries(rng, entries, major):
    """Header text for (key, value) entries in a random writer style."""
    style = generate.random_style(rng, major)
    latin1 = major < 3
    if rng.random() < 0.5:
        rng.shuffle(entries)
    parts = [generate.spell(k, style, rng, latin1) + style.colon
             + generate.spell(v, style, rng, latin1, in_shape=(k == "shape")) for k, v in entries]
    text = "{" + style.comma.join(parts) + ("," if style.trailing_comma else "") + "}"
    if rng.random() < 0.05:
        return text  # no padding at all: the text ends with the dict's '}'
    pad = (-(12 + len(text) + 1)) % style.align
    return text + " " * pad + "\n"


def semantic_text(rng, text, major):
    """(new header bytes, major, op) from a valid header's bytes."""
    decoded = text.decode("latin-1" if major < 3 else "utf-8")
    # numpy's L filter, through the tokens that read the same on Python 3.11 and 3.12
    header = ast.literal_eval(header_tokens.without_long_suffixes(decoded) if major < 3 else decoded)
    entries, op = mutate_header(rng, header)
    wanted = major if rng.random() < 0.8 else rng.choice((1, 2, 3))
    spelled = spell_entries(rng, entries, wanted)
    for version in (wanted, 2, 3):  # the first version whose encoding and length fit
        raw = generate.encode_header(spelled, version)
        if raw is not None:
            return raw, version, op
    return spelled.encode("utf-8", "surrogatepass"), 3, op


def split_file(buf):
    """(major, header text bytes, data bytes) of a valid generated file."""
    major = buf[6]
    pre = 10 if major == 1 else 12
    length = int.from_bytes(buf[8:pre], "little")
    return major, buf[pre:pre + length], buf[pre + length:]


def make_mutant(rng, parent_name, parent_bytes, donors):
    """One mutant of a valid file (see the module docstring)."""
    major, text, data = split_file(parent_bytes)
    ops = []
    if rng.random() < 0.45:
        text, major, op = semantic_text(rng, text, major)
        ops.append("semantic: " + op)
    for _ in range(rng.choice((0, 0, 0, 1, 1, 2)) if ops else rng.choice((1, 1, 1, 2, 2, 3, 4))):
        text, op = mutate_text(rng, text, donors)
        ops.append(op)
    if rng.random() < 0.08:
        new_major = rng.choice((1, 2, 3, 1, 2, 3, 0, 4))
        ops.append("version %d.0" % new_major)
        major = new_major
    if major == 1 and len(text) > 0xFFFF:
        major = 2
        ops.append("version 2.0 (too long for 1.0)")
    length = len(text)
    if rng.random() < 0.05:
        limit = 0xFFFF if major == 1 else 2 ** 32 - 1
        length = max(0, min(length + rng.choice((-3, -1, 1, 2, 40)), limit))
        ops.append("HEADER_LEN left at %d for %d bytes" % (length, len(text)))
        return Mutant(_preamble(major, length) + text + data, parent_name, ops)
    head = _preamble(major, length) + text
    reading = oracle.read_header(head)
    need = oracle.implied_data_length(reading)
    if reading.ok and reading.has_object:
        data = b"\x80\x04N."  # any pickle: its length is never checked
    elif need is not None and need <= (1 << 20):
        data = bytes(need)
    r = rng.random()
    if r < 0.01:
        data += b"x"
        ops.append("one trailing byte")
    elif r < 0.02 and data:
        data = data[:-1]
        ops.append("one byte short")
    return Mutant(head + data, parent_name, ops)


def _preamble(major, length):
    """Magic, version (major, 0) and HEADER_LEN for any major byte (0 and 4
    included: numpy refuses them); 2 length bytes for 1.0, else 4."""
    return b"\x93NUMPY" + bytes((major, 0)) + length.to_bytes(2 if major == 1 else 4, "little")


def mutants(seed, samples, count):
    """Yield ``count`` Mutants of ``samples`` (list of generate.Sample),
    parents chosen mostly among short headers so that numpy's reader stays fast."""
    rng = random.Random(seed * 7919 + 17)
    parents = [s for s in samples if s.expect is None]
    sizes = [len(split_file(s.data)[1]) for s in parents]
    small = [s for s, n in zip(parents, sizes) if n <= 2048]
    large = [s for s, n in zip(parents, sizes) if 2048 < n <= 16384]
    donors = [split_file(s.data)[1] for s in small[:200]]
    for _ in range(count):
        pool = large if large and rng.random() < 0.02 else small
        parent = rng.choice(pool)
        yield make_mutant(rng, parent.name, parent.data, donors)
