#!/usr/bin/python3
"""Regenerate the seed corpus of npyguard's libFuzzer targets.

Run with the system interpreter (Debian's numpy 1.24):

    /usr/bin/python3 corpus/generate.py [--clean] [--verify build/release/npyguard]

The script writes each seed into corpus/<target>/ under the lowercase hex
SHA-1 of its content (no extension, as libFuzzer names corpus units), so a
re-run only adds files and never duplicates one.  --clean first deletes the
files of the target directories below (corpus/regressions/ is never
touched).  --verify strips the option prefixes again, runs `npyguard check
--json` over every .npy seed whose verdict is known, and compares the verdict
with the one the seed was built for.  The output is deterministic.

Input formats
-------------
fuzz_npy_file/, fuzz_npy_stream/, fuzz_round_trip/ (the same seeds): 4 option
bytes, then the whole .npy file.
    byte 0  bit 0 allow_object, bit 1 allow_trailing_data,
            bits 2-4 max_header_bytes selector (0 = default, 1 MiB),
            bits 5-7 max_depth selector (0 = default, 32)
    byte 1  bits 0-2 max_ndim selector (0 = default, 64),
            bits 3-5 max_data_bytes selector (0 = unlimited), bit 6 canonical
            profile, bit 7 unused
    byte 2  chunk-size pattern of the streaming reader
    byte 3  bit 0: also validate through a real file descriptor,
            bit 1: the streaming source fails with EIO part way
fuzz_header_text/: 1 byte format major version (1, 2 or 3), 2 option bytes
    encoded as bytes 0-1 above, then the header text alone (the HEADER_LEN
    bytes after the length field: the dict, its padding and the final '\\n').
fuzz_size_math/: 1 byte ndim (0..64), itemsize as a little-endian uint64,
    then ndim dimensions, each a little-endian uint64.
fuzz_ra_header/: 2 option bytes (byte 0: bit 0 type 5 refused, bit 1 metadata
    refused, bits 2-4 max_ndim, bits 5-7 max_data_bytes selectors; byte 1 bits
    0-2 the stream's chunk size), then the file: the writer and hostile files
    of tests/ra/make_files.py.
fuzz_capi/: 4 configuration bytes (fuzz/fuzz_capi.cpp: the format, the C
    entry point, an older options struct, the stream's chunk size; the .npy
    option bytes as above; .npz verify and the RawArray switches), then every
    .npy seed, .npz archive and RawArray file below.
fuzz_inflate/: 8 plan bytes (bytes 0-3 the input handed before each call,
    bytes 4-7 the output asked for, as indices into fuzz/fuzz_inflate.cpp's
    tables), then a raw deflate stream: numpy-written .npy files deflated
    by zlib at levels 0, 1, 6 and 9, with fixed codes only and flushed every
    64 bytes; bench/npz_crafted.py's max_tree and one-literal blocks; and
    hand-built streams for zlib's data errors.  Each stream under three
    plans: all at once, a byte at a time, and mixed.
fuzz_npz/: 4 option bytes (bytes 0-1 as above; byte 2: bit 0 verify, bits
    1-2 max_members, bits 3-4 max_total_bytes, bits 5-6 max_ratio selectors;
    byte 3 unused), then the archive.  The archives are those of
    tests/npz/make_archives.py (every writer of SPEC-npz.md section 11 and
    every rule of its tables), each with the prefix 00 00 00 00 and, for the
    valid and verification-only ones, 00 00 01 00 (verify) too.

The .npy seeds are numpy-written files (np.save and write_array in every
format version), hand-built headers in other writers' spellings (checked
with numpy's own reader before they are written), and near-misses: small
files wrong in exactly one way, several for every error code from bad_magic
to trailing_data.  Most seeds use the prefix 00 00 00 00; object-dtype,
trailing-data and oversized seeds also get the prefix that accepts them or
limits them, and every tenth seed gets one more variant from EXTRA_OPTIONS.
"""

import argparse
import dataclasses
import hashlib
import io
import json
import math
import pathlib
import struct
import subprocess
import sys
import tempfile
import warnings

import numpy as np
from numpy.lib import format as npformat

HERE = pathlib.Path(__file__).resolve().parent
NPY_TARGETS = ("fuzz_npy_file", "fuzz_npy_stream", "fuzz_round_trip")
HEADER_TARGET = "fuzz_header_text"
SIZE_TARGET = "fuzz_size_math"

MAGIC = b"\x93NUMPY"
INT63_MAX = 2 ** 63 - 1
OK = "ok"


# ---------------------------------------------------------------------------
# Option prefixes
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Options:
    """The configuration the fuzz targets read from an input's first bytes."""

    allow_object: bool = False
    allow_trailing_data: bool = False
    header_selector: int = 0  # max_header_bytes, 0..7
    depth_selector: int = 0   # max_depth, 0..7
    ndim_selector: int = 0    # max_ndim, 0..7
    data_selector: int = 0    # max_data_bytes, 0..7
    canonical: bool = False   # the canonical profile (SPEC.md section 6)
    unused_bit: bool = False  # byte 1 bit 7
    chunk_pattern: int = 0    # 0..255
    use_fd: bool = False
    read_error: bool = False  # fuzz_npy_stream: the source fails part way

    def npy_prefix(self):
        return bytes([
            self.allow_object | self.allow_trailing_data << 1
            | self.header_selector << 2 | self.depth_selector << 5,
            self.ndim_selector | self.data_selector << 3
            | self.canonical << 6 | self.unused_bit << 7,
            self.chunk_pattern,
            int(self.use_fd) | int(self.read_error) << 1,
        ])

    def header_prefix(self, major):
        return bytes([major]) + self.npy_prefix()[:2]

    def keeps_verdict(self):
        """Chunking and file descriptors never change a verdict; limits may."""
        return not (self.header_selector or self.depth_selector
                    or self.ndim_selector or self.data_selector or self.canonical)


DEFAULT = Options()
ALLOW_OBJECT = Options(allow_object=True)
ALLOW_TRAILING = Options(allow_trailing_data=True)
CANONICAL = Options(canonical=True)
# Seeds that claim at least this many bytes of data are data_too_large under
# max_data_bytes selectors 1 to 6 (limits 0 to 2**31 in fuzz/fuzz_common.hpp;
# 7 is 2**63-1).
HUGE_CLAIM = 2 ** 40
DATA_LIMITED = (Options(data_selector=1), Options(data_selector=6, chunk_pattern=5))
# validate_file reads this much with its first pread.
LONG_FILE = 4096
THROUGH_FD = Options(use_fd=True)
# One of these is added to every tenth .npy seed, in turn.
EXTRA_OPTIONS = (
    Options(chunk_pattern=1, use_fd=True),                # 00 00 01 01
    Options(chunk_pattern=7),                             # 00 00 07 00
    Options(header_selector=7, data_selector=4, canonical=True,
            unused_bit=True),  # 1c e0 00 00
    Options(ndim_selector=7, data_selector=7),            # 00 3f 00 00
    Options(chunk_pattern=0xFF, use_fd=True),             # 00 00 ff 01
    Options(header_selector=1, ndim_selector=1),          # 04 01 00 00
    Options(depth_selector=1, chunk_pattern=3),           # 20 00 03 00
    Options(data_selector=2, chunk_pattern=0x80),         # 00 10 80 00
    Options(header_selector=7, depth_selector=7),         # fc 00 00 00
    Options(chunk_pattern=2, read_error=True),            # 00 00 02 02
    Options(chunk_pattern=0x41, use_fd=True, read_error=True),  # 00 00 41 03
)


# ---------------------------------------------------------------------------
# Seeds
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class NpySeed:
    """A whole .npy file, its verdict under default options (OK or an error
    code name), and (options, verdict) variants; a verdict of None is not
    checked by --verify."""

    data: bytes
    verdict: str
    variants: list = dataclasses.field(default_factory=list)


def pattern(length, salt=0):
    """`length` deterministic bytes."""
    return bytes((i * 37 + salt * 11 + 5) % 251 for i in range(length))


def splice(data, offset, replacement):
    return data[:offset] + replacement + data[offset + len(replacement):]


def encode(text, major):
    """Header text as bytes: latin-1 in versions 1 and 2, UTF-8 in 3.  Bytes
    pass through, for deliberately broken text."""
    if isinstance(text, bytes):
        return text
    return text.encode("utf-8" if major == 3 else "latin-1")


def preamble(major, header_length):
    length_format = "<H" if major == 1 else "<I"
    return MAGIC + bytes([major, 0]) + struct.pack(length_format, header_length)


def preamble_size(major):
    return 10 if major == 1 else 12


def header(dict_text, major=1, align=64):
    """The dict, spaces up to a data offset that is a multiple of `align`
    (1: no padding), and '\\n', as numpy lays it out."""
    body = encode(dict_text, major)
    used = preamble_size(major) + len(body) + 1
    return body + b" " * (-used % align) + b"\n"


def raw_file(header_text, major=1, data_length=0):
    """Preamble, the header text exactly as given, and data."""
    body = encode(header_text, major)
    return preamble(major, len(body)) + body + pattern(data_length)


def npy(dict_text, major=1, data_length=24, align=64):
    return raw_file(header(dict_text, major, align), major, data_length)


def dict_text(descr="'<f8'", shape="(3,)", fortran_order="False"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr, fortran_order, shape)


GOOD = dict_text()  # 3 float64s: 24 bytes of data


def numpy_reading(data):
    """numpy's reading of a file's header: (shape, fortran_order, dtype,
    data_offset); raises if numpy refuses it."""
    stream = io.BytesIO(data)
    version = npformat.read_magic(stream)
    shape, fortran_order, dtype = npformat._read_array_header(
        stream, version, max_header_size=2 ** 32)
    return shape, fortran_order, dtype, stream.tell()


def numpy_nbytes(shape, dtype):
    return math.prod(shape) * dtype.itemsize


def numpy_dtype_of_whole_file(data):
    """The dtype of a file numpy loads whole (header, and exactly the data)."""
    shape, _, dtype, data_offset = numpy_reading(data)
    if not dtype.hasobject:
        assert len(data) == data_offset + numpy_nbytes(shape, dtype), data[:80]
    np.load(io.BytesIO(data), allow_pickle=dtype.hasobject,
            max_header_size=2 ** 32)
    return dtype


def accepted(data):
    """A seed numpy reads and npyguard must accept (object dtypes: once
    allow_object is set)."""
    if numpy_dtype_of_whole_file(data).hasobject:
        return NpySeed(data, "object_dtype", [(ALLOW_OBJECT, OK)])
    return NpySeed(data, OK, [(CANONICAL, canonical_verdict(data))])


def canonical_verdict(data):
    """The canonical profile's verdict: OK exactly when the file's header is
    the one np.save writes for the array numpy reads from it.  (Only the
    header: saving to a BytesIO, numpy copies structs field by field and
    zeroes their padding bytes; saving to a real file it writes them.)"""
    array = np.load(io.BytesIO(data), max_header_size=2 ** 32)
    out = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Stored array in format 3.0"
        np.save(out, array)
    saved = out.getvalue()
    start = preamble_size(saved[6])
    data_offset = start + int.from_bytes(saved[8:start], "little")
    return OK if saved[:data_offset] == data[:data_offset] else "not_canonical"


# ---------------------------------------------------------------------------
# Files written by numpy
# ---------------------------------------------------------------------------

SCALAR_TYPES = ["|b1", "|i1", "|u1"] + [
    order + code for order in "<>"
    for code in ("i2", "i4", "i8", "u2", "u4", "u8", "f2", "f4", "f8", "f16",
                 "c8", "c16", "c32")]
TEXT_TYPES = ["|S1", "|S5", "<U1", ">U1", "<U7", ">U7", "|V0", "|V1", "|V8"]
TIME_UNITS = ("", "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps",
              "fs", "as")
TIME_TYPES = [order + kind + ("[%s]" % unit if unit else "")
              for kind in ("M8", "m8") for order in "<>" for unit in TIME_UNITS]
TIME_TYPES += ["<M8[5s]", "<m8[25us]", ">M8[10ms]", ">m8[3D]", "<M8[7W]",
               "<m8[2h]", "<M8[100as]"]

SHAPES = [(), (0,), (5,), (2, 3), (0, 3), (3, 0), (2, 3, 4), (2, 0, 3),
          (1, 2, 1, 3), (2, 1, 2, 1, 2), (1, 2, 1, 2, 1, 2), (2, 2, 0, 2, 1, 2),
          (0, 2 ** 40), (2 ** 40, 0, 2 ** 20)]
FORTRAN_SHAPES = [(2, 3), (3, 4, 2), (2, 1, 3, 2, 1, 2)]

STRUCTS = [
    [("a", "<i4"), ("b", "<f8")],
    [("outer", [("mid", [("x", "<i2"), ("y", ">f4")]), ("z", "|u1")]),
     ("w", "<i8")],
    [("l1", [("l2", [("l3", [("l4", "<i2"), ("m4", "|u1")]), ("m3", ">u2")]),
             ("m2", "<f4")]), ("m1", "|b1")],
    {"names": ["a", "b"], "formats": ["<i4", "<f8"],
     "titles": ["Title A", "Title B"]},
    {"names": ["a", "s"], "formats": ["|u1", [("x", "<i2"), ("y", "<i2")]],
     "titles": ["first", None]},
    {"names": ["a", "b"], "formats": ["<i4", "<f8"], "offsets": [0, 8],
     "itemsize": 24},
    {"names": ["a", "b"], "formats": ["<i2", "<i8"], "offsets": [2, 8],
     "itemsize": 24},
    np.dtype([("a", "|u1"), ("b", "<f8"), ("c", "<i2")], align=True),
    np.dtype([("a", "|u1"),
              ("s", np.dtype([("p", "|u1"), ("q", "<i4")], align=True)),
              ("c", "<i2")], align=True),
    [("x", "<f4", (3,)), ("m", "<i2", (2, 3)), ("k", "|u1")],
    [("s", [("p", "<i4"), ("q", "|u1")], (2,)), ("t", "<f2")],
    [("s", [("v", "<i2", (2,)), ("w", [("z", "|u1")], (3,))], (2, 2))],
    [("a", ">i4"), ("b", ">f8"), ("c", ">u2"), ("d", "<i2")],
    [("flag", "|b1"), ("name", "|S5"), ("u", "<U3"), ("when", "<M8[s]"),
     ("dt", ">m8[ms]"), ("z", "<c8"), ("raw", "|V3"), ("ld", "<f16")],
    [("zs", "|S0"), ("zu", "<U0"), ("zv", "|V0"), ("e", [])],
    [],
    [("it's", "<i4"), ("b", "|u1")],
    [('say "hi"', "<i4"), ("b", "|u1")],
    [("both'\"", "<i4"), ("back\\slash", "|u1")],
    [("tab\there", "<i4"), ("new\nline", "|u1"), ("c1\x85", "|u1")],
    [("\u00e9t\u00e9", "<i4"), ("\u00ff", "|u1")],  # latin-1: version 1.0
    [("\u03c0", "<f4"), ("b", "|u1")],               # not latin-1: version 3.0
    [("\u6f22\u5b57", "<f4"), ("\U0001F600", "|u1")],
    {"names": ["a"], "formats": ["<i4"], "titles": ["\u03c4\u03af\u03c4\u03bb\u03bf\u03c2"]},
]
MANY_FIELDS = 2100  # 34 header bytes each: a header above 65535 bytes, version 2.0


def pattern_array(dtype, shape=(3,), order="C"):
    """An array whose bytes are a deterministic pattern, padding included."""
    dtype = np.dtype(dtype)
    count = math.prod(shape)
    if dtype.itemsize == 0 or count == 0:
        array = np.zeros(shape, dtype)
    else:
        raw = pattern(count * dtype.itemsize, salt=len(shape))
        array = np.frombuffer(raw, dtype).reshape(shape)
    return np.asfortranarray(array) if order == "F" else array


def object_array():
    return np.array([1, "a"], dtype=object)


def object_struct():
    array = np.zeros(2, dtype=[("a", "<i4"), ("o", "O")])
    array["o"] = ["x", (1, 2)]
    return array


def numpy_arrays():
    """Every array numpy writes a seed for."""
    for dtype in SCALAR_TYPES + TEXT_TYPES + TIME_TYPES:
        yield pattern_array(dtype)
    for index, shape in enumerate(SHAPES):
        yield pattern_array(("<i2", "|u1", "<f8", ">c8")[index % 4], shape)
    for shape in FORTRAN_SHAPES:
        yield pattern_array("<i2", shape, order="F")
    yield pattern_array(STRUCTS[0], (2, 3), order="F")
    for dtype in STRUCTS:
        yield pattern_array(dtype, (2,))
    yield pattern_array([("many_fields_name_%04d" % i, "|u1")
                         for i in range(MANY_FIELDS)], (1,))
    yield object_array()
    yield object_struct()
    yield np.asfortranarray(np.array([[1, "a"], [2.5, None]], dtype=object))


def numpy_files(array, version):
    """np.save's file, and write_array's at `version` if numpy can write it
    and it differs."""
    files = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "Stored array in format 3.0"
        for write in (lambda out: np.save(out, array, allow_pickle=True),
                      lambda out: npformat.write_array(out, array, version,
                                                       allow_pickle=True)):
            out = io.BytesIO()
            try:
                write(out)
            except ValueError:  # names not latin-1, or a header too long for 1.0
                continue
            files.append(out.getvalue())
    return list(dict.fromkeys(files))  # np.save's file is often write_array's


def numpy_written_seeds():
    versions = ((1, 0), (2, 0), (3, 0))
    return [accepted(data)
            for index, array in enumerate(numpy_arrays())
            for data in numpy_files(array, versions[index % 3])]


# ---------------------------------------------------------------------------
# Valid headers in other writers' spellings
# ---------------------------------------------------------------------------

# (dict text, version, alignment of the data offset; 1 = no padding)
OTHER_WRITERS = [
    ("{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 4L), }", 1, 16),
    ("{'descr': '<i8', 'fortran_order': False, 'shape': (3L, 4L), }", 2, 64),
    ("{'descr': '<u2', 'fortran_order': False, 'shape': (5L,), }", 1, 16),
    ("{'descr': [('a', '<i4', (2L,))], 'fortran_order': False, 'shape': (1L,), }", 1, 16),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", 1, 16),
    ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 1, 16),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)}", 1, 64),
    ("{'shape': (4,), 'fortran_order': False, 'descr': '<u2'}", 1, 64),
    ("{'fortran_order': False, 'descr': '>i4', 'shape': (2, 2), }", 2, 64),
    ('{"descr": "<i4", "fortran_order": False, "shape": (2, 2), }', 1, 16),
    ("{ 'descr' :\t'<f8' ,\t\t'fortran_order':False ,  'shape' : ( 3 , ) ,\t}", 1, 64),
    ("{\"shape\":(2,3),\t'descr' : \"<i2\",'fortran_order' :  True}", 1, 64),
    ("{'descr': '<f4',\r\n 'fortran_order': False,\n 'shape': (2,)}\r", 1, 64),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 1, 64),
    ("{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", 1, 1),
    ("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", 1, 64),
    ("{'descr': '>f4', 'fortran_order': True, 'shape': (2, 1, 3), }", 2, 64),
    ("{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3,), }", 1, 64),
    ("{'descr': [('a', '<i4'), ('', '|V4'), ('b', '>f8')], "
     "'fortran_order': False, 'shape': (2,), }", 1, 64),
    ("{'descr': [], 'fortran_order': False, 'shape': (4,), }", 1, 64),
    ("{'descr': '<M8[us]', 'fortran_order': False, 'shape': (2,), }", 3, 64),
    ("{'descr': [('\u6e29\u5ea6', '<f4')], 'fortran_order': False, 'shape': (3,), }", 3, 64),
    ("{'descr': [(\"it's\", '<i4'), ('say \\'hi\\'', '|u1')], "
     "'fortran_order': False, 'shape': (1,), }", 1, 64),
    ("{'descr': [('\\xe9t\\xe9', '<i4'), ('\\u03c0', '|u1'), ('\\U0001f600', '|u1')], "
     "'fortran_order': False, 'shape': (1,), }", 3, 64),
    ("{'descr': [('tab\\there', '<i4'), ('cr\\r\\n', '|u1'), ('back\\\\', '|u1')], "
     "'fortran_order': False, 'shape': (1,), }", 2, 64),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }\n \n", 1, 1),
    # names numpy's repr must escape: non-printable code points below 0x100,
    # in the BMP and above it, upper-case hex digits, a non-latin-1 escape in
    # a latin-1 header
    ("{'descr': [('\\x85', '<i4'), ('\\u2028', '|u1'), ('\\U000E0001', '|u1'), ('\\xE9\\x01', '|u1')], "
     "'fortran_order': False, 'shape': (1,), }", 3, 64),
    ("{'descr': [('\\u4e2d', '<i4'), (('\\u2029', 't'), '|u1')], "
     "'fortran_order': False, 'shape': (1,), }", 1, 64),
]


# Whole header texts as other writers lay them out byte for byte (str:
# latin-1 or, in 3.0, UTF-8; bytes: as they are), with the version.
OTHER_WRITER_TEXTS = [
    # NPZ.jl pads to 16 with " "^(pad-1) * "\n" only when pad > 0: with no
    # padding needed the text ends at '}' (Julia arrays: fortran_order True)
    ("{'descr': '<f8', 'fortran_order': True, 'shape': (), }", 1),
    ("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2, 2, 2, 2, 2), }", 1),
    ("{'descr': '<f8', 'fortran_order': True, 'shape': (3,), }" + " " * 13 + "\n", 1),
    # npyz and ndarray-npy's py_literal write controls in names raw
    ("{'descr': [('a\tb', '<i4'), ('c\x01', '|u1'), ('d\x7f', '|u1'), ('e\x85', '|u1')], "
     "'fortran_order': False, 'shape': (1,), }\n", 1),
    ("{'descr': [('\x1b[31mred', '<i4'), ('\x85', '|u1'), ('\u202e', '|u1')], "
     "'fortran_order': False, 'shape': (1,), }\n", 3),
    ("{'descr': [(('\x0b\x0c', 'n'), '<i4')], 'fortran_order': False, 'shape': (1,), }\n", 2),
    # early npyz and npy-rs: raw UTF-8 in a 1.0 header, read as latin-1
    ("{'descr': [('\u00e9t\u00e9', '<f8'), ('\u0085', '|u1')], 'fortran_order': False, "
     "'shape': (2,), }\n".encode("utf-8"), 1),
]


def other_writer_seeds():
    seeds = []
    for text, major, align in OTHER_WRITERS:
        head = npy(text, major, data_length=0, align=align)
        shape, _, dtype, _ = numpy_reading(head)
        seeds.append(accepted(head + pattern(numpy_nbytes(shape, dtype))))
    for text, major in OTHER_WRITER_TEXTS:
        head = raw_file(text, major, 0)
        shape, _, dtype, _ = numpy_reading(head)
        seeds.append(accepted(head + pattern(numpy_nbytes(shape, dtype))))
    return seeds


# ---------------------------------------------------------------------------
# Near-misses: small files wrong in exactly one way
# ---------------------------------------------------------------------------

NEAR_MISSES = []  # (builder, verdict under default options, variants)


def near_miss(code, verdict=None, variants=()):
    """Register a function returning files that each show `code`.  Under the
    default options they get `verdict` (default: `code`)."""
    def register(build):
        NEAR_MISSES.append((build, verdict or code, list(variants)))
        return build
    return register


def good(major=1):
    return npy(GOOD, major)


@near_miss("bad_magic")
def bad_magic():
    return [b"\x94" + good()[1:], splice(good(), 5, b"X"), splice(good(2), 1, b"n"),
            splice(good(3), 0, b"\x89PNG"), b"PK\x03\x04" + bytes(26),
            b"\x93NUMpy\x01\x00"]


@near_miss("unsupported_version")
def unsupported_version():
    versions = (b"\x04\x00", b"\x01\x01", b"\x00\x00", b"\x03\x01", b"\x02\x01", b"\xff\xff")
    return [splice(good(), 6, version) for version in versions] + [
        splice(good(3), 6, b"\x04\x00")]


@near_miss("truncated_preamble")
def truncated_preamble():
    return [b"", good()[:1], good()[:5], good()[:6], good()[:8], good()[:9], good(2)[:11],
            good(3)[:10]]


@near_miss("header_too_large")
def header_too_large():
    return [preamble(2, 2 ** 20 + 1), preamble(3, 2 ** 32 - 1),
            preamble(2, 2 ** 20 + 1) + b"{'descr': '<f8', ",
            preamble(3, 2 ** 31) + header(GOOD, 3)]


@near_miss("truncated_header")
def truncated_header():
    whole = good(3)
    return [good()[:50], good()[:10], preamble(2, 1000), whole[:len(whole) - 25],
            preamble(1, 65535) + header(GOOD), preamble(2, 2 ** 20) + b"{'descr'"]


@near_miss("invalid_utf8")
def invalid_utf8():
    # Field names as raw bytes (latin-1 maps each character to one byte).
    names = ("a\xc3(b", "a\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80",
             "\xf4\x90\x80\x80", "\xf5\x80\x80\x80", "\xff", "ab\xf0\x9f\x98")
    files = [npy(dict_text("[('%s', '<i4')]" % name).encode("latin-1"), 3, 12)
             for name in names]
    files.append(npy(GOOD.replace(", 'shape'", ",\xff'shape'").encode("latin-1"), 3))
    return files


@near_miss("control_character")
def control_character():
    # NUL anywhere; other raw controls outside strings (inside strings they
    # are other writers' names: OTHER_WRITER_TEXTS).
    with_nul_in_padding = header(GOOD)[:-2] + b"\x00\n"
    return [
        npy(GOOD.replace("'fortran", "\x00'fortran")),
        npy(dict_text("[('a\x00', '<i4')]"), 3, 12),
        npy(GOOD.replace(", 'shape'", ",\x85'shape'")),
        npy(GOOD.replace(", 'shape'", ",\x85'shape'"), 3),
        npy(GOOD.replace(" '<f8'", " '<f8'\x7f")),
        npy(dict_text(shape="(-\x013,)"), 2),
        npy(dict_text(shape="(\x1b3,)"), 3),
        npy(GOOD.replace(" '<f8'", "\x0b'<f8'")),
        npy(GOOD.replace(" 'fortran", "\x0c'fortran")),
        raw_file(with_nul_in_padding, 1, 24),
    ]


@near_miss("header_not_terminated")
def header_not_terminated():
    return [raw_file(GOOD + "   ", 1, 24), raw_file("", 1, 0), raw_file(GOOD + " ", 2, 24),
            raw_file(GOOD + "\n ", 3, 24), raw_file(GOOD + "\r", 1, 24), raw_file(GOOD + "\t", 2, 24)]


SYNTAX_ERRORS = [  # (dict text, version)
    (" " + GOOD, 1), ("\n" + GOOD, 1), ("\t" + GOOD, 3),
    ("{'descr' '<f8', 'fortran_order': False, 'shape': (3,), }", 1),
    ("{'descr': '<f8' 'fortran_order': False, 'shape': (3,), }", 1),
    ("{'descr': '<' 'f8', 'fortran_order': False, 'shape': (3,), }", 1),
    (dict_text(shape="(3)"), 1), (dict_text(shape="(3, 4"), 1),
    (dict_text("None"), 1), (dict_text(shape="(1.5,)"), 1),
    (dict_text(shape="(03,)"), 1), (dict_text(shape="(0x3,)"), 2),
    (dict_text(shape="(1_0,)"), 1), (dict_text(shape="(+3,)"), 1),
    (dict_text(shape="(-,)"), 1), (dict_text(shape="(3l,)"), 1),
    (dict_text(shape="((3),)"), 1), (dict_text(shape="(3 L,)"), 1),
    (dict_text(shape="(3L,)"), 3), (dict_text(shape="(3LL,)"), 1),
    (dict_text("'<\\q8'"), 1), (dict_text("'<\\x4'"), 1), (dict_text("'\\u003'"), 2),
    (dict_text("[('\\ud800', '<i4')]"), 3), (dict_text("[('\\U00110000', '<i4')]"), 3),
    (dict_text("[('\\N{BULLET}', '<i4')]"), 1), (dict_text("'<f8\\'"), 1),
    ("{'descr': '<f8, 'fortran_order': False, 'shape': (3,), }", 1),
    (dict_text("'<f8\n'"), 1), (dict_text("[('a\rb', '<i4')]"), 1),
    (dict_text("[('a\\\x01', '<i4')]"), 1), (GOOD + " }", 1),
    (dict_text("u'<f8'"), 1), (dict_text("b'<f8'"), 3), (dict_text("'''<f8'''"), 1),
    (dict_text("{}"), 1), (dict_text(shape="{3}"), 1),
    ("{'descr': '<f8', # c\n 'fortran_order': False, 'shape': (3,), }", 1),
    (GOOD + " x", 1), (GOOD + "{}", 2),
    ("{1: '<f8', 'fortran_order': False, 'shape': (3,), }", 1),
    (dict_text("[('a', '<i4')"), 1),
    ("{'descr': '<f8', 'fortran_order': False, 'shape': (3,)", 1),
    ("{'descr': , 'fortran_order': False, 'shape': (3,), }", 1),
    ("{'descr': '<f8', 'fortran_order': false, 'shape': (3,), }", 1),
    ("{'descr': '<f8',\xa0'fortran_order': False, 'shape': (3,), }", 1),
    (dict_text(shape="(3,,)"), 1), ("{'descr': '<f8',, 'fortran_order': False, 'shape': (3,)}", 2),
    ("{'descr': '<f8', \\\n'fortran_order': False, 'shape': (3,), }", 1),
    ("{,}", 1), ("{", 3), ("}", 1), ("{'descr': '<f8': 'x'}", 1),
]


@near_miss("syntax_error")
def syntax_error():
    return [npy(text, major) for text, major in SYNTAX_ERRORS]


@near_miss("integer_too_large")
def integer_too_large():
    shapes = ("(9223372036854775808,)", "(%s,)" % ("9" * 5000), "(%s,)" % ("9" * 30),
              "(-%s,)" % ("9" * 30), "(2, 18446744073709551616)")
    return [npy(dict_text("'|u1'", shape)) for shape in shapes] + [
        npy(dict_text("[('a', '<i4', (99999999999999999999,))]")),
        npy(dict_text("'|u1'", "(9223372036854775808L,)"), 2),
        npy(dict_text("'|u1'", "(123456789012345678901234567890,)"), 3)]


@near_miss("negative_dimension")
def negative_dimension():
    return [npy(dict_text(shape="(2, -1)")), npy(dict_text(shape="(-0,)")),
            npy(dict_text("[('a', '<i4', (2, -3))]")), npy(dict_text(shape="(-5,)"), 3),
            npy(dict_text(shape="(-1L,)"), 1)]


def nested(opening, closing, depth, inner=""):
    return opening * depth + inner + closing * depth


@near_miss("depth_exceeded")
def depth_exceeded():
    return [
        npy(dict_text(nested("[", "]", 33))),
        npy(dict_text(nested("[", "]", 40))),
        npy(dict_text(shape=nested("(", ")", 40, "1,"))),
        npy(dict_text(nested("[", "]", 1000)), 2),
        npy(dict_text("[('a', '<i4', %s)]" % nested("(", ")", 35, "2,"))),
        npy(dict_text(fortran_order=nested("[", "]", 50))),
        npy(dict_text("[" * 50), 3),
        npy(dict_text(nested("[('a', ", ")]", 20, "'<i4'"))),
        # Python refuses a 200th bracket counting the dict's: at every setting
        npy(dict_text(nested("[", "]", 200))),
    ]


@near_miss("missing_key")
def missing_key():
    return [npy("{'descr': '<f8', 'fortran_order': False, }"),
            npy("{'fortran_order': False, 'shape': (3,), }"),
            npy("{'descr': '<f8', 'shape': (3,)}", 3), npy("{}"),
            npy("{'descr': '<f8'}", 2)]


@near_miss("duplicate_key")
def duplicate_key():
    return [npy(GOOD[:-1] + "'shape': (3,), }"),
            npy(GOOD[:-1] + "'descr': '<f8', }", 2),
            npy(GOOD[:-1] + '"fortran_order": False}', 3)]


@near_miss("unknown_key")
def unknown_key():
    return [npy(GOOD[:-1] + "'extra': 1, }"), npy(GOOD.replace("'descr'", "'Descr'")),
            npy(GOOD[:-1] + "'': 1, }", 2), npy(GOOD[:-1] + "'\u03c0': '', }", 3),
            npy(GOOD.replace("'descr'", "'descr\\x00'")),
            npy(GOOD.replace("'shape'", "'shape '"), 2),
            # keys longer than an error message quotes, cut at a character
            npy(GOOD[:-1] + "'" + "k" * 300 + "': 1, }"),
            npy(GOOD[:-1] + "'x" + "\u00e9" * 150 + "': 1, }", 3)]


@near_miss("bad_fortran_order")
def bad_fortran_order():
    values = ("0", "1", "'False'", "()", "[]", "1L")
    return [npy(dict_text(fortran_order=value)) for value in values]


@near_miss("bad_shape")
def bad_shape():
    shapes = ("[3]", "3", "(True,)", "(2, '3')", "((2,),)", "[]", "'(3,)'", "(3, [4])")
    return [npy(dict_text(shape=shape)) for shape in shapes]


def ones(count):
    return "(" + "1, " * count + ")"


@near_miss("too_many_dimensions")
def too_many_dimensions():
    return [npy(dict_text(shape=ones(65))), npy(dict_text(shape=ones(70)), 2),
            npy(dict_text(shape="(0, " + "1, " * 64 + ")")),
            npy(dict_text("[('a', '<i4', %s)]" % ones(33)))]


BAD_DESCRS = [
    "'<f12'", "'<c24'", "'float64'", "'d'", "'?'", "'a10'", "'=f8'", "'f8'", "'|f8'",
    "'|i4'", "'|U4'", "'<i16'", "'<i3'", "'<b2'", "'<i4,<i4'", "'(2,3)<i4'", "'<M4'",
    "'|M8[ms]'", "'<M8[0ms]'", "'<M8[01ms]'", "'<M8[2147483648ms]'", "'<M8[]'",
    "'<M8[B]'", "'<M8[us'", "'<M8ms'", "'<O'", "'|O16'", "'|S01'", "'|S'", "'<f8 '",
    "''", "'<'", "'<q8'", "'<m8[generic]'", "'<f'", "'|b'",
    "('<i4', (2,))", "[['a', '<i4']]", "[('a',)]", "[('a', '<i4', (2,), 1)]",
    "['<i4']", "[(1, '<i4')]", "[(('t', 1), '<i4')]", "[(('t', 'a', 'b'), '<i4')]",
    "[((1, 'a'), '<i4')]", "[('a', ('<i4', (2,)))]", "[('a', 5)]", "[('a', '<i4', 3)]",
    "[('a', '<i4', [3])]", "[('a', '|S0', (2,))]", "1", "True",
    "[('a', [('b', '<q8')])]",
]


@near_miss("bad_descr")
def bad_descr():
    return [npy(dict_text(descr), index % 3 + 1) for index, descr in enumerate(BAD_DESCRS)]


@near_miss("object_dtype", variants=[(ALLOW_OBJECT, OK)])
def object_dtype():
    return [npy(dict_text("'|O'")), npy(dict_text("'|O'")) + b"any pickle bytes",
            npy(dict_text("[('a', '<i4'), ('b', [('c', '|O8')])]"), 1, 36),
            npy(dict_text("[('a', '|O', (2,))]"), 2, 48),
            npy(dict_text("'|O4'", "(2, 2)"), 3, 0)]


@near_miss("duplicate_field_name")
def duplicate_field_name():
    descrs = ("[('a', '<i4'), ('b', '<i4'), ('a', '<f8')]", "[(('a', 'a'), '<i4')]",
              "[(('t', 'a'), '<i4'), (('t', 'b'), '<i4')]",
              "[('b', '<i4'), (('b', 'a'), '<i4')]",
              "[('s', [('x', '<i4'), ('x', '<i4')])]",
              "[('a', '<i4'), ('', '|V4'), ('a', '<i4')]")
    return [npy(dict_text(descr)) for descr in descrs]


@near_miss("empty_field_name")
def empty_field_name():
    descrs = ("[('', '<i4')]", "[(('t', ''), '|V4')]", "[(('', 'a'), '<i4')]",
              "[('', '|V4', (2,))]", "[('', [])]")
    return [npy(dict_text(descr)) for descr in descrs]


@near_miss("itemsize_overflow")
def itemsize_overflow():
    descrs = ("'|S2147483648'", "'|V2147483648'", "'<U536870912'",
              "'|S99999999999999999999999'", "[('a', '|S2147483647'), ('b', '|u1')]",
              "[('a', '|S2147483647'), ('', '|V1')]", "[('a', '<i4', (536870912,))]",
              "[('a', '<i4', (0, 2147483648))]", "[('a', [], (65536, 65536))]")
    return [npy(dict_text(descr)) for descr in descrs]


@near_miss("size_overflow")
def size_overflow():
    cases = (("'<f8'", "(4294967296, 4294967296)"),
             ("'|u1'", "(0, 4611686018427387904, 4611686018427387904)"),
             ("'<f8'", "(1152921504606846976,)"), ("'|V0'", "(4294967296, 4294967296)"),
             ("'|u1'", "(9223372036854775800,)"), ("'<f8'", "(1099511627776, 1099511627776)"))
    return [npy(dict_text(descr, shape)) for descr, shape in cases]


@near_miss("data_too_large", verdict="truncated_data",
           variants=[(options, "data_too_large") for options in DATA_LIMITED])
def data_too_large():
    """Claims of HUGE_CLAIM bytes or more, without the data."""
    return [npy(dict_text("'|u1'", "(1099511627776,)"), 1, 0),
            npy(dict_text("'<f8'", "(65536, 65536, 65536)"), 2, 64),
            npy(dict_text("[('a', '<i4'), ('b', '|S60')]", "(17179869184,)"), 3, 0)]


@near_miss("truncated_data")
def truncated_data():
    whole = good()
    data_offset = len(whole) - 24
    return [whole[:-1], whole[:data_offset], whole[:data_offset + 1], good(3)[:-8],
            npy(dict_text("[('a', '<i4'), ('b', '<f8')]", "(2, 2)"), 2, 47),
            npy(dict_text(shape="()"), 1, 7)]


@near_miss("trailing_data", variants=[(ALLOW_TRAILING, OK)])
def trailing_data():
    return [good() + b"x", good() + b"PK\x03\x04 a zip glued on", good() + good(),
            good() + b"\n", good(3) + bytes(64),
            npy(dict_text(shape="(0,)"), 2, 1), npy(dict_text(shape="()"), 1, 9)]


def near_miss_seeds():
    return [NpySeed(data, verdict, list(variants))
            for build, verdict, variants in NEAR_MISSES for data in build()]


# ---------------------------------------------------------------------------
# Size math: (itemsize, dims)
# ---------------------------------------------------------------------------

U64_MAX = 2 ** 64 - 1
INT63_FACTORS = [7, 7, 73, 127, 337, 92737, 649657]    # product 2**63-1
U64_FACTORS = [3, 5, 17, 257, 641, 65537, 6700417]      # product 2**64-1
BIG_ITEMSIZE = 2 ** 31 - 1                               # numpy's largest itemsize

SIZE_CASES = [  # fuzz_size_math reduces the itemsize modulo 2**31
    (8, []), (0, []), (U64_MAX, []), (8, [0]), (1, [1]), (8, [3, 4]), (1, [0, 0]),
    (0, [0]), (0, [5, 7]), (1, INT63_FACTORS), (2, INT63_FACTORS),
    (1, INT63_FACTORS[::-1]), (1, [1, 1] + INT63_FACTORS + [1]),
    (1, INT63_FACTORS[1:]), (1, INT63_FACTORS + [0]), (1, [INT63_MAX]), (0, [INT63_MAX]),
    (2, [INT63_MAX]), (1, [INT63_MAX, 1]), (1, [INT63_MAX, 2]), (1, [2 ** 63]),
    (1, [2 ** 62, 2]), (1, [2 ** 32, 2 ** 31]), (2 ** 30, [2 ** 33]),
    (2 ** 30, [2 ** 33 - 1]), (8, [2 ** 60]), (8, [2 ** 60 - 1]), (4, [2 ** 61 - 1]),
    (4, [2 ** 61]), (3, [INT63_MAX // 3]), (3, [INT63_MAX // 3 + 1]),
    (1, [3, 2 ** 61]), (1, [2 ** 32, 2 ** 32]), (1, U64_FACTORS), (1, [U64_MAX]),
    (1, [U64_MAX, U64_MAX]), (2 ** 63, [1]), (U64_MAX, [2]),
    (1, [0, 2 ** 62, 2 ** 62]), (1, [2 ** 40, 0]), (1, [0, INT63_MAX]),
    (2, [0, INT63_MAX]), (1, [U64_MAX, 0]), (1, [2 ** 40, 2 ** 40, 0]),
    (1, [2 ** 32, 2 ** 32, 0]), (0, [2 ** 32, 2 ** 32]), (0, [2 ** 31, 2 ** 31]),
    (0, [2 ** 32, 2 ** 31 - 1]), (BIG_ITEMSIZE, [1]), (2 ** 31, [1]),
    (BIG_ITEMSIZE, [INT63_MAX // BIG_ITEMSIZE]),
    (BIG_ITEMSIZE, [INT63_MAX // BIG_ITEMSIZE + 1]),
    (BIG_ITEMSIZE, [2 ** 32, 2 ** 31]), (BIG_ITEMSIZE, [2 ** 16, 2 ** 16, 2 ** 16]),
    (1, [2] * 64), (1, [2] * 63), (1, [2] * 62), (2, [2] * 62), (0, [2] * 63),
    (1, [1] * 64), (1, [1] * 57 + INT63_FACTORS), (1, [INT63_MAX] * 64),
    (8, [1024] * 6), (8, [1024] * 7), (1, [0] * 64),
]


def size_math_input(itemsize, dims):
    return bytes([len(dims)]) + struct.pack("<%dQ" % (1 + len(dims)), itemsize, *dims)


# ---------------------------------------------------------------------------
# From seeds to corpus units
# ---------------------------------------------------------------------------

def with_extra_variants(seeds):
    """Every tenth seed gets one more option variant from EXTRA_OPTIONS; it
    keeps its verdict when those options cannot change it."""
    for index, seed in enumerate(seeds[9::10]):
        options = EXTRA_OPTIONS[index % len(EXTRA_OPTIONS)]
        seed.variants.append((options, seed.verdict if options.keeps_verdict() else None))
    # Headers beyond validate_file's first 4 KiB read take its second pread.
    for seed in seeds:
        if len(seed.data) > LONG_FILE:
            seed.variants.append((THROUGH_FD, seed.verdict))
    return seeds


def option_runs(seed):
    """(options, verdict) for every prefix the seed is written with."""
    return [(DEFAULT, seed.verdict)] + seed.variants


def header_text(data):
    """(major, header text), or None when the framing does not hold one."""
    if len(data) < 10 or data[:6] != MAGIC or data[6] not in (1, 2, 3) or data[7]:
        return None
    major = data[6]
    start = preamble_size(major)
    length = int.from_bytes(data[8:start], "little")
    if start + length > len(data):  # also when the length field is cut short
        return None
    return major, data[start:start + length]


def npy_units(seeds):
    return [options.npy_prefix() + seed.data
            for seed in seeds for options, _ in option_runs(seed)]


def header_units(seeds):
    units = []
    for seed in seeds:
        found = header_text(seed.data)
        if found:
            major, text = found
            units += [options.header_prefix(major) + text for options, _ in option_runs(seed)]
    return units


def corpus_units(seeds):
    units = {target: npy_units(seeds) for target in NPY_TARGETS}
    units[HEADER_TARGET] = header_units(seeds)
    units[SIZE_TARGET] = [size_math_input(itemsize, dims) for itemsize, dims in SIZE_CASES]
    return units


def clean(directory):
    for path in directory.iterdir():
        if path.is_file():
            path.unlink()


def write_units(directory, units):
    """Write each unit under its SHA-1; returns (distinct units, new files)."""
    directory.mkdir(parents=True, exist_ok=True)
    names = {hashlib.sha1(unit).hexdigest(): unit for unit in units}
    new = 0
    for name, unit in sorted(names.items()):
        path = directory / name
        if not path.exists():
            path.write_bytes(unit)
            new += 1
    return len(names), new


# ---------------------------------------------------------------------------
# --verify: npyguard's verdicts against the intended ones
# ---------------------------------------------------------------------------

def cli_flags(options):
    flags = []
    if options.allow_object:
        flags.append("--allow-object")
    if options.allow_trailing_data:
        flags.append("--allow-trailing-data")
    if options.data_selector:
        flags += ["--max-data-bytes", str(HUGE_CLAIM - 1)]
    if options.canonical:
        flags.append("--canonical")
    return tuple(flags)


def tool_verdicts(tool, files, flags, directory):
    """npyguard's verdict (OK or an error code name) for each file."""
    paths = []
    for data in files:
        path = directory / hashlib.sha1(data).hexdigest()
        path.write_bytes(data)
        paths.append(str(path))
    run = subprocess.run([tool, "check", "--json", *flags, *paths],
                         capture_output=True, text=True, check=False)
    by_path = {}
    for line in run.stdout.splitlines():
        report = json.loads(line)
        by_path[report["file"]] = OK if report["valid"] else report["error"]["code"]
    return [by_path[path] for path in paths]


def verify(tool, seeds):
    """Print per-verdict counts under the default options; return the number
    of disagreements."""
    runs = {}  # cli flags -> {file: expected verdict}
    for seed in seeds:
        for options, verdict in option_runs(seed):
            if verdict is not None:
                runs.setdefault(cli_flags(options), {})[seed.data] = verdict
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for flags, expected in sorted(runs.items()):
            got = tool_verdicts(tool, list(expected), flags, pathlib.Path(scratch))
            counts = {}
            for (data, want), verdict in zip(expected.items(), got):
                counts[verdict] = counts.get(verdict, 0) + 1
                if verdict != want:
                    failures += 1
                    print("MISMATCH %s: expected %s, got %s: %r"
                          % (" ".join(flags) or "default", want, verdict, data[:200]))
            print("verify %s: %s" % (" ".join(flags) or "default options",
                                     ", ".join("%s %d" % item for item in sorted(counts.items()))))
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clean", action="store_true",
                        help="delete the files in the target directories first")
    parser.add_argument("--verify", metavar="NPYGUARD",
                        help="check every .npy seed's verdict with this npyguard binary")
    args = parser.parse_args()

    seeds = with_extra_variants(
        numpy_written_seeds() + other_writer_seeds() + near_miss_seeds())
    for target, units in corpus_units(seeds).items():
        directory = HERE / target
        if args.clean and directory.is_dir():
            clean(directory)
        distinct, new = write_units(directory, units)
        print("%-17s %4d seeds (%d new)" % (target, distinct, new))
    inflate_directory = HERE / "fuzz_inflate"
    if args.clean and inflate_directory.is_dir():
        clean(inflate_directory)
    distinct, new = write_units(inflate_directory, inflate_units())
    print("%-17s %4d seeds (%d new)" % ("fuzz_inflate", distinct, new))
    npz_directory = HERE / "fuzz_npz"
    if args.clean and npz_directory.is_dir():
        clean(npz_directory)
    distinct, new = write_units(npz_directory, npz_units())
    print("%-17s %4d seeds (%d new)" % ("fuzz_npz", distinct, new))
    ra_directory = HERE / "fuzz_ra_header"
    if args.clean and ra_directory.is_dir():
        clean(ra_directory)
    distinct, new = write_units(ra_directory, ra_units())
    print("%-17s %4d seeds (%d new)" % ("fuzz_ra_header", distinct, new))
    capi_directory = HERE / "fuzz_capi"
    if args.clean and capi_directory.is_dir():
        clean(capi_directory)
    distinct, new = write_units(capi_directory, capi_units(seeds))
    print("%-17s %4d seeds (%d new)" % ("fuzz_capi", distinct, new))
    if args.verify:
        return 1 if verify(args.verify, seeds) else 0
    return 0


# fuzz_capi's first byte: format (bits 0-1) and entry point (bits 2-3), see
# fuzz/fuzz_capi.cpp. Every file goes through DETECT on a buffer; a third of
# them also through the reader and the stream with their format named.
CAPI_FORMATS = {"npy": 1, "npz": 2, "ra": 3}


def capi_units(seeds):
    """The .npy seeds, the .npz archives and the RawArray files, each with
    the C API's configuration prefix."""
    files = [("npy", seed.data) for seed in seeds]
    files += [("npz", unit[4:]) for unit in npz_units() if unit[2] == 0]
    files += [("ra", unit[2:]) for unit in ra_units() if unit[:2] == b"\0\x06"]
    units = []
    for index, (kind, data) in enumerate(sorted(set(files))):
        units.append(b"\0\0\0\0" + data)
        if index % 3 == 0:
            units.append(bytes([CAPI_FORMATS[kind] | 1 << 2, 0, 0, 0]) + data)  # the reader
            units.append(bytes([CAPI_FORMATS[kind] | 2 << 2 | 3 << 5, 0, 0, 0]) + data)  # a stream, 7-byte reads
    return units


# fuzz_inflate's plans: all at once (the largest steps and output), a byte
# at a time, and a mix of small and large pieces with 0-byte calls.
INFLATE_PLANS = (bytes([15] * 8), bytes([1] * 8), bytes([3, 0, 12, 7, 6, 8, 0, 2]))


def inflate_streams():
    """Raw deflate streams: numpy's files deflated as np.savez_compressed does
    (and at other levels), the crafted block structures, and zlib's errors."""
    import zlib
    sys.path.insert(0, str(HERE.parent / "bench"))
    import npz_crafted  # Bits, max_tree_block, tiny_tree_block, dense_tree_block and one_symbol_blocks
    rng = np.random.default_rng(11)
    arrays = [rng.random(300), rng.integers(0, 100, size=500, dtype=np.int64),
              np.array(["header %d" % i for i in range(60)]), np.arange(1000, dtype=np.int32),
              np.zeros((), dtype=np.float64)]
    streams = []

    def deflate(data, level, strategy=zlib.Z_DEFAULT_STRATEGY, flush_every=0):
        c = zlib.compressobj(level, zlib.DEFLATED, -15, 8, strategy)
        if not flush_every:
            return c.compress(data) + c.flush()
        return b"".join(c.compress(data[i:i + flush_every]) + c.flush(zlib.Z_FULL_FLUSH)
                        for i in range(0, len(data), flush_every)) + c.flush()

    for array in arrays:
        out = io.BytesIO()
        np.save(out, array)
        data = out.getvalue()
        for level in (0, 1, 6, 9):
            streams.append(deflate(data, level))
        streams.append(deflate(data, 6, zlib.Z_FIXED))
        streams.append(deflate(data, 9, flush_every=64))
    bits = npz_crafted.Bits()
    bits.put(0, 1)
    bits.put(1, 2)
    bits.huff(0x30 + ord("z"), 8)
    bits.huff(0, 7)
    streams.append(npz_crafted.bits_to_bytes(bits.text() + npz_crafted.max_tree_block(2) * 3 + "110" + "0" * 7))
    # the headers that cost what a block costs whatever its size: the
    # smallest that buy their output, and dense ones with one short match
    streams.append(npz_crafted.bits_to_bytes(bits.text() + npz_crafted.tiny_tree_block(16) * 3 + "110" + "0" * 7))
    streams.append(npz_crafted.bits_to_bytes(bits.text() + npz_crafted.dense_tree_block(1, 45) * 2 + "110" + "0" * 7))
    streams.append(npz_crafted.one_symbol_blocks(bytes(range(40))))
    # short codes: a run of one-bit literals, literals of 1 and 6 bits in
    # turn, 3-bit matches at distance 1 (after the fixed block's 'z')
    streams.append(npz_crafted.bits_to_bytes(bits.text() + npz_crafted.tiny_tree_block(3000) + "110" + "0" * 7))
    streams.append(npz_crafted.bits_to_bytes(bits.text() + npz_crafted.literal_pairs_block(700)[0] + "110" + "0" * 7))
    streams.append(npz_crafted.bits_to_bytes(bits.text() + npz_crafted.match_run_block(700, 3, 1)[0] + "110" + "0" * 7))
    # and short matches several a packed lookup: 2-bit matches at distance
    # 1, at distances 1 and 2 in turn (after "zz"), and at distance 8 (after
    # 8 literals), each past the matches that build the runs
    zz = npz_crafted.Bits()
    zz.put(0, 1)
    zz.put(1, 2)
    for literal in b"zyxwvuts":
        zz.huff(0x30 + literal, 8)
    zz.huff(0, 7)
    for distances, extras in (([0], [""]), ([0, 1], ["", ""]), ([5], ["1"])):
        block = npz_crafted.short_match_block(700, distances, extras)[0]
        streams.append(npz_crafted.bits_to_bytes(zz.text() + block + "110" + "0" * 7))
    # since the runs are built after 16 matches, by vectors: blocks either
    # side of that, and matches at distances 3 and 2 in turn (no two
    # entries' runs alike)
    blocks = "".join(npz_crafted.match_block(matches) for matches in (19, 20, 21, 40))
    streams.append(npz_crafted.bits_to_bytes(bits.text() + blocks + "110" + "0" * 7))
    block = npz_crafted.short_match_block(700, [2, 1], ["", ""])[0]
    streams.append(npz_crafted.bits_to_bytes(zz.text() + block + "110" + "0" * 7))
    def built(*fields):  # ("put", value, width) fields and ("huff", code, width) codes
        b = npz_crafted.Bits()
        for kind, value, width in fields:
            getattr(b, kind)(value, width)
        return npz_crafted.bits_to_bytes(b.text())

    dynamic = [("put", 1, 1), ("put", 2, 2)]
    fixed = [("put", 1, 1), ("put", 1, 2), ("huff", 0x30 + ord("a"), 8)]
    streams += [
        built(("put", 1, 1), ("put", 3, 2)),                                  # block type 3
        b"\x01\x05\x00\xfa\xfe",                                             # NLEN not LEN's complement
        b"\x00\x00\x00\xff\xff\x01\x00\x00\xff\xff",                         # empty stored blocks
        built(*dynamic, ("put", 30, 5), ("put", 0, 5), ("put", 15, 4)),        # HLIT 287
        built(*dynamic, ("put", 0, 5), ("put", 0, 5), ("put", 15, 4), *[("put", 0, 3)] * 19,
              *[("put", 0, 1)] * 258),                                        # empty code length code
        built(*fixed, ("huff", 1, 7), ("huff", 1, 5), ("huff", 0, 7)),         # a match one byte too far
        built(*fixed, ("huff", 1, 7), ("huff", 0, 5), ("huff", 0, 7)),         # the same, at the window's edge
        built(*fixed, ("huff", 1, 7), ("huff", 30, 5)),                        # distance code 30
        built(*fixed, ("huff", 0xC6, 8)),                                      # length symbol 286
    ]
    return streams


def inflate_units():
    return [plan + stream for stream in inflate_streams() for plan in INFLATE_PLANS]


def npz_units():
    """The archives of tests/npz/make_archives.py with their option prefixes."""
    units = []
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, str(HERE.parent / "tests" / "npz" / "make_archives.py"),
                        "--out", scratch, "--no-numpy"], check=True, stdout=subprocess.DEVNULL)
        manifest = json.loads((pathlib.Path(scratch) / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest:
            archive = (pathlib.Path(scratch) / entry["file"]).read_bytes()
            units.append(b"\0\0\0\0" + archive)
            if entry["valid"]:
                units.append(b"\0\0\x01\0" + archive)
    return units


# fuzz_ra_header's first byte for the command-line options of a row of
# tests/ra/make_files.py (fuzz/fuzz_ra_header.cpp decodes it).
RA_OPTION_BITS = {"--no-ra-type5": 0x01, "--ra-reject-metadata": 0x02, "--max-ndim": 6 << 2}


def ra_units():
    """The files of tests/ra/make_files.py: each with its row's options read
    in 1-byte chunks, and with the defaults read in 4 KiB chunks."""
    units = []
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, str(HERE.parent / "tests" / "ra" / "make_files.py"), "--out", scratch],
                       check=True, stdout=subprocess.DEVNULL)
        manifest = json.loads((pathlib.Path(scratch) / "manifest.json").read_text(encoding="utf-8"))
        for entry in manifest:
            data = (pathlib.Path(scratch) / entry["file"]).read_bytes()
            first = 0
            for option in entry["options"]:
                first |= RA_OPTION_BITS.get(option, 0)
            units.append(bytes([first, 0]) + data)
            units.append(b"\0\x06" + data)
    return units


if __name__ == "__main__":
    sys.exit(main())
