#!/usr/bin/python3
"""Regenerate the golden .npy corpus for npyguard.

Run with the system interpreter (Debian numpy 1.24):

    /usr/bin/python3 tests/golden/generate.py

Writes every file into tests/golden/files/ (removing stale *.npy files there
first) and writes tests/golden/expected.jsonl, one JSON object per file,
sorted by file name.  All expectations are computed by reading the files
back with numpy's own header reader (numpy.lib.format), never from the
values passed to np.save.

The output is deterministic: running the script twice produces identical
bytes (the script checks this for the in-memory contents of every file by
building each file twice).
"""

import io
import json
import math
import os
import struct
import sys
import warnings

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))
FILES_DIR = os.path.join(HERE, "files")
EXPECTED_PATH = os.path.join(HERE, "expected.jsonl")

MAGIC = b"\x93NUMPY"


# ---------------------------------------------------------------------------
# Deterministic data helpers
# ---------------------------------------------------------------------------

def pattern_bytes(n, seed=0):
    """n deterministic bytes."""
    return bytes(((i * 37 + seed * 11 + 5) % 251) for i in range(n))


def filled(dtype, shape):
    """Array of `dtype`/`shape` whose raw bytes are a deterministic pattern.

    Used for structured and void dtypes (including padding bytes)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    if dtype.itemsize == 0 or count == 0:
        return np.zeros(shape, dtype=dtype)
    raw = bytearray(pattern_bytes(count * dtype.itemsize))
    arr = np.frombuffer(bytes(raw), dtype=dtype, count=count).copy()
    return arr.reshape(shape)


def _to_byteorder(native, dtype):
    """Reinterpret a native-order array as `dtype` by swapping bytes.

    Avoids astype(): casting to a non-native or generic-unit dtype may change
    the dtype (e.g. '>M8' generic comes back as '<M8') or leave garbage in
    padding bytes."""
    if native.dtype.isnative and not dtype.isnative:
        return native.byteswap().view(dtype)
    return native.view(dtype)


def _zero_long_double_padding(native):
    """x87 long double uses 10 of its 16 bytes; zero the other 6 so output is
    deterministic (numpy leaves them uninitialised after a cast)."""
    if native.dtype.kind in "fc" and native.dtype.itemsize in (16, 32):
        assert np.finfo(np.longdouble).nmant == 63, "expected x87 long double"
        u8 = native.reshape(-1).view(np.uint8).reshape(-1, 16)
        u8[:, 10:] = 0


def numeric(dtype, shape):
    """Deterministic numeric array (values 0, 1, 2, ... cast to dtype)."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    values = np.arange(count, dtype=np.int64)
    if dtype.kind == "b":
        values = values % 2
    elif dtype.kind in "iu":
        values = values % 100
    native = np.zeros(count, dtype=dtype.newbyteorder("="))
    native[...] = values.astype(native.dtype)
    _zero_long_double_padding(native)
    out = _to_byteorder(native, dtype).reshape(shape)
    assert out.dtype.str == dtype.str, (out.dtype, dtype)
    return out


def timelike(dtype, shape):
    """datetime64/timedelta64 array; raw int64 values NaT, 10, 17, ...

    Generic-unit arrays ('M8' / 'm8' without a unit) are all NaT: numpy can
    store other values there but cannot even print them."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    ints = np.arange(count, dtype=np.int64) * 7 + 3
    if count:
        ints[0] = np.iinfo(np.int64).min  # NaT
    if np.datetime_data(dtype)[0] == "generic":
        ints[:] = np.iinfo(np.int64).min
    native = ints.view(dtype.newbyteorder("="))
    out = _to_byteorder(native, dtype).reshape(shape)
    assert out.dtype.str == dtype.str, (out.dtype, dtype)
    return out


# ---------------------------------------------------------------------------
# Case registry
# ---------------------------------------------------------------------------

# name -> (category, builder returning bytes, options)
CASES = {}
SKIPPED = []  # (what, why)


def add(category, name, options=None):
    def deco(fn):
        assert name not in CASES, name
        CASES[name] = (category, fn, options or {})
        return fn
    return deco


def saved_bytes(arr, allow_pickle=False):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        # numpy warns "Stored array in format 3.0 ..." for non-latin-1 names.
        warnings.simplefilter("ignore", UserWarning)
        np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def add_saved(category, name, make, options=None, allow_pickle=False):
    add(category, name, options)(lambda: saved_bytes(make(), allow_pickle))


def try_add_saved(category, name, make, what, options=None, allow_pickle=False):
    """Register a np.save case only if numpy can build + save + reload it."""
    try:
        data = saved_bytes(make(), allow_pickle)
        np.load(io.BytesIO(data), allow_pickle=allow_pickle)
    except Exception as exc:  # noqa: BLE001
        SKIPPED.append((what, "%s: %s" % (type(exc).__name__, exc)))
        return
    add_saved(category, name, make, options, allow_pickle)


# --- 1. scalar dtypes -------------------------------------------------------

BO_NAME = {"<": "lt", ">": "be"}

add_saved("scalar", "scalar_b1.npy", lambda: numeric("|b1", (4,)))
add_saved("scalar", "scalar_i1.npy", lambda: numeric("|i1", (4,)))
add_saved("scalar", "scalar_u1.npy", lambda: numeric("|u1", (4,)))
for _bo in "<>":
    for _code in ("i2", "i4", "i8", "u2", "u4", "u8",
                  "f2", "f4", "f8", "f16", "c8", "c16", "c32"):
        _dt = _bo + _code
        try_add_saved("scalar", "scalar_%s_%s.npy" % (BO_NAME[_bo], _code),
                      lambda _dt=_dt: numeric(_dt, (3,)), _dt)

# Byte strings.  'S0' cannot be an array dtype: numpy silently turns
# np.zeros(3, 'S0') into |S1, so an "S0" file would just duplicate S1.
if np.zeros(1, "S0").dtype.itemsize != 0:
    SKIPPED.append(("|S0", "np.zeros(n, 'S0') gives dtype %r; numpy never writes "
                    "'|S0'" % np.zeros(1, "S0").dtype.str))
add_saved("string", "str_S1.npy",
          lambda: np.array([b"a", b"", b"z"], dtype="|S1"))
add_saved("string", "str_S7.npy",
          lambda: np.array([b"abc", b"", b"1234567", b"x\x00y"], dtype="|S7"))
if np.zeros(1, "U0").dtype.itemsize != 0:
    SKIPPED.append(("<U0", "np.zeros(n, 'U0') gives dtype %r; numpy never writes "
                    "'<U0'" % np.zeros(1, "U0").dtype.str))
for _bo in "<>":
    add_saved("string", "unicode_%s_U1.npy" % BO_NAME[_bo],
              lambda _bo=_bo: np.array(["a", "\u00e9", "\u6e29"], dtype=_bo + "U1"))
    add_saved("string", "unicode_%s_U5.npy" % BO_NAME[_bo],
              lambda _bo=_bo: np.array(["hello", "", "\U0001F600x", "ab"],
                                       dtype=_bo + "U5"))

# Void.  Unlike S0/U0, a |V0 array is possible and numpy writes '|V0'.
try_add_saved("void", "void_V0.npy", lambda: np.zeros(3, "|V0"), "|V0")
add_saved("void", "void_V1.npy", lambda: filled("|V1", (3,)))
add_saved("void", "void_V16.npy", lambda: filled("|V16", (2,)))

# Datetimes / timedeltas.  Unit letters M and m differ only by case, so the
# file names spell units out to stay unique on case-insensitive file systems.
UNIT_NAMES = [
    ("", "generic"), ("Y", "Y"), ("M", "Mo"), ("W", "W"), ("D", "D"),
    ("h", "h"), ("m", "min"), ("s", "s"), ("ms", "ms"), ("us", "us"),
    ("ns", "ns"), ("ps", "ps"), ("fs", "fs"), ("as", "as"),
    ("10ms", "10ms"), ("25us", "25us"), ("3D", "3D"),
]
for _kind, _kname in (("M8", "datetime"), ("m8", "timedelta")):
    for _bo in "<>":
        for _unit, _uname in UNIT_NAMES:
            _dt = _bo + _kind + ("[%s]" % _unit if _unit else "")
            try_add_saved(
                "datetime",
                "%s_%s_%s_%s.npy" % (_kname, BO_NAME[_bo], _kind, _uname),
                lambda _dt=_dt: timelike(_dt, (3,)), _dt)


# --- 2. shapes -------------------------------------------------------------

add_saved("shape", "shape_rank0_f8.npy", lambda: np.array(5.0))
add_saved("shape", "shape_rank0_struct.npy",
          lambda: filled([("a", "<i4"), ("b", "<f8")], ()))
RANK_SHAPES = {
    1: (5,), 2: (2, 3), 3: (2, 3, 4), 4: (2, 1, 3, 2), 5: (1, 2, 1, 2, 3),
    6: (2,) * 6, 7: (2,) * 7, 8: (2,) * 8,
}
for _rank, _shape in RANK_SHAPES.items():
    add_saved("shape", "shape_rank%d_i4.npy" % _rank,
              lambda _shape=_shape: numeric("<i4", _shape))
add_saved("shape", "shape_zero_1d.npy", lambda: np.zeros((0,), "<f8"))
add_saved("shape", "shape_zero_3x0x2.npy", lambda: np.zeros((3, 0, 2), "<i2"))
add_saved("shape", "shape_zero_0x0.npy", lambda: np.zeros((0, 0), "<f4"))
# Real (empty) arrays whose other dimensions are huge: numpy accepts these
# because the element count is 0; the product of the non-zero dims alone
# would be 2**40 or 2**60.
add_saved("shape", "shape_zero_huge_dim.npy", lambda: np.zeros((0, 2 ** 40), "|u1"))
add_saved("shape", "shape_zero_huge_dims_3d.npy",
          lambda: np.zeros((2 ** 40, 0, 2 ** 20), "|u1"))
add_saved("shape", "fortran_2x3_f8.npy",
          lambda: np.asfortranarray(numeric("<f8", (2, 3))))
add_saved("shape", "fortran_3x4x2_i2.npy",
          lambda: np.asfortranarray(numeric("<i2", (3, 4, 2))))
add_saved("shape", "fortran_2x3_struct.npy",
          lambda: np.asfortranarray(filled([("a", "<i4"), ("b", "u1")], (2, 3))))
# A 1-D Fortran array is also C-contiguous; numpy writes fortran_order False.
add_saved("shape", "fortran_1d_written_as_c.npy",
          lambda: np.asfortranarray(numeric("<i4", (4,))))
# A top-level subarray dtype is absorbed into the shape by numpy.
add_saved("shape", "subarray_dtype_toplevel.npy",
          lambda: np.zeros((2,), dtype=np.dtype(("<f4", (3,)))))


# --- 3. structured ---------------------------------------------------------

STRUCTS = {
    "struct_simple.npy": [("a", "<i4"), ("b", "<f8")],
    "struct_nested3.npy": [
        ("outer", [("mid", [("x", "<i2"), ("y", ">f4")]), ("z", "u1")]),
        ("w", "<i8"),
    ],
    "struct_titles.npy": np.dtype({"names": ["a", "b"], "formats": ["<i4", "<f8"],
                                   "titles": ["Title A", "Title B"]}),
    "struct_padding_offsets.npy": np.dtype({"names": ["a", "b"],
                                            "formats": ["<i4", "<f8"],
                                            "offsets": [0, 8], "itemsize": 24}),
    "struct_padding_leading.npy": np.dtype({"names": ["a"], "formats": ["<i2"],
                                            "offsets": [4], "itemsize": 8}),
    "struct_aligned.npy": np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<i2")],
                                   align=True),
    "struct_aligned_nested.npy": np.dtype(
        [("a", "u1"), ("s", np.dtype([("p", "u1"), ("q", "<i4")], align=True)),
         ("c", "<i2")], align=True),
    "struct_subarray_fields.npy": [("x", "<f4", (3,)), ("m", "<i2", (2, 3)),
                                   ("k", "u1")],
    "struct_subarray_of_struct.npy": [("s", [("p", "<i4"), ("q", "u1")], (2,)),
                                      ("t", "<f2")],
    "struct_big_endian.npy": [("a", ">i4"), ("b", ">f8"), ("c", ">u2"),
                              ("d", "<i2")],
    "struct_mixed_kinds.npy": [("flag", "?"), ("name", "S5"), ("u", "<U3"),
                               ("when", "<M8[s]"), ("dt", ">m8[ms]"),
                               ("z", "<c8"), ("raw", "V3")],
    "struct_name_single_quote.npy": [("it's", "<i4"), ("b", "u1")],
    "struct_name_double_quote.npy": [('say "hi"', "<i4"), ("b", "u1")],
    "struct_name_both_quotes.npy": [("both'\"", "<i4"), ("b", "u1")],
    "struct_name_backslash.npy": [("back\\slash", "<i4"), ("b", "u1")],
    "struct_name_tab.npy": [("tab\there", "<i4"), ("b", "u1")],
    "struct_name_newline.npy": [("new\nline", "<i4"), ("b", "u1")],
    "struct_name_latin1.npy": [("\u00e9", "<i4"), ("\u00ff", "u1")],
    "struct_name_cjk_v3.npy": [("\u6e29\u5ea6", "<f4"), ("b", "u1")],
    "struct_name_emoji_v3.npy": [("\U0001F600", "<i4"), ("b", "u1")],
}
for _name, _dt in STRUCTS.items():
    add_saved("struct", _name, lambda _dt=_dt: filled(np.dtype(_dt), (2,)))

try_add_saved("struct", "struct_empty.npy", lambda: np.zeros((3,), np.dtype([])),
              "np.dtype([]) (zero fields)")


# --- 4. version 2.0 via np.save --------------------------------------------

V2_FIELDS = 4000  # ~18 header chars per field -> header > 65535 bytes
add_saved("v2", "v2_many_fields.npy",
          lambda: filled(np.dtype([("f%04d" % i, "|i1") for i in range(V2_FIELDS)]),
                         (1,)))


# --- 5. object arrays --------------------------------------------------------

add_saved("object", "object_mixed.npy",
          lambda: np.array([1, "a", None], dtype=object),
          options={"allow_object": True}, allow_pickle=True)


def _object_struct():
    arr = np.zeros(2, dtype=[("a", "<i4"), ("o", "O")])
    arr["a"] = [1, 2]
    arr["o"][0] = "x"
    arr["o"][1] = (1, 2)
    return arr


add_saved("object", "object_in_struct.npy", _object_struct,
          options={"allow_object": True}, allow_pickle=True)


# --- 6. hand-built headers ---------------------------------------------------

def hand_built(version, header_text, data, align=None, pad=True, encoding=None):
    """Assemble magic + HEADER_LEN + header + data.

    header_text is the dict literal (must start with '{').  If pad is true,
    spaces are inserted so that the data offset is a multiple of `align`;
    a single '\\n' always terminates the header."""
    assert header_text.startswith("{")
    major, minor = version
    if encoding is None:
        encoding = "utf8" if version >= (3, 0) else "latin1"
    lenfmt = "<H" if version == (1, 0) else "<I"
    preamble_len = len(MAGIC) + 2 + struct.calcsize(lenfmt)
    body = header_text.encode(encoding)
    if pad:
        total = preamble_len + len(body) + 1
        body += b" " * ((-total) % align)
    body += b"\n"
    out = MAGIC + bytes([major, minor]) + struct.pack(lenfmt, len(body)) + body
    if pad:
        assert len(out) % align == 0
    return out + data


def hand(name, version, header_text, dtype, count, align=16, pad=True):
    nbytes = np.dtype(dtype).itemsize * count
    add("handbuilt", name)(lambda: hand_built(version, header_text,
                                              pattern_bytes(nbytes, seed=3),
                                              align=align, pad=pad))


hand("legacy_py2_long_suffix.npy", (1, 0),
     "{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 3L), }", "<i8", 6)
hand("legacy_align16.npy", (1, 0),
     "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3), }", "<i8", 6)
hand("legacy_no_trailing_comma.npy", (1, 0),
     "{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", "<f4", 3)
hand("legacy_keys_reordered.npy", (1, 0),
     "{'shape': (4,), 'fortran_order': False, 'descr': '<u2', }", "<u2", 4)
hand("legacy_double_quotes.npy", (1, 0),
     '{"descr": "<i4", "fortran_order": False, "shape": (2, 2), }', "<i4", 4)
hand("legacy_whitespace_tabs.npy", (1, 0),
     "{ 'descr' :\t'<f8' ,\t\t'fortran_order':False ,  'shape' : ( 3 , ) ,\t}",
     "<f8", 3)
hand("legacy_mixed_styles.npy", (1, 0),
     "{\"shape\":(2,3),\t'descr' : \"<i2\",'fortran_order' :  True}", "<i2", 6)
hand("legacy_no_padding.npy", (1, 0),
     "{'descr': '<i4', 'fortran_order': False, 'shape': (5,), }", "<i4", 5,
     pad=False)
hand("legacy_cnpy.npy", (1, 0),
     "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", "<f8", 4)
hand("legacy_rank0.npy", (1, 0),
     "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", "<f8", 1)
hand("legacy_struct_descr.npy", (1, 0),
     "{'descr': [('a', '<i4'), ('b', '>f8')], 'fortran_order': False, "
     "'shape': (2,), }", [("a", "<i4"), ("b", ">f8")], 2)
hand("legacy_v2_small_header.npy", (2, 0),
     "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", "<f8", 3,
     align=64)
hand("legacy_v3_small_header.npy", (3, 0),
     "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 2), }", "<i2", 4,
     align=64)
hand("legacy_v3_utf8_name.npy", (3, 0),
     "{'descr': [('\u6e29\u5ea6', '<f4')], 'fortran_order': False, "
     "'shape': (3,), }", [("\u6e29\u5ea6", "<f4")], 3, align=64)


# ---------------------------------------------------------------------------
# Expectations (numpy's own reading of each file)
# ---------------------------------------------------------------------------

def expectation(name, data, options):
    fp = io.BytesIO(data)
    major, minor = npformat.read_magic(fp)
    lenfmt = "<H" if (major, minor) == (1, 0) else "<I"
    header_length = struct.unpack(lenfmt, data[8:8 + struct.calcsize(lenfmt)])[0]
    if (major, minor) == (1, 0):
        shape, fortran_order, dtype = npformat.read_array_header_1_0(
            fp, max_header_size=10 ** 9)
    else:
        # read_array_header_2_0 is only for 2.0; use the generic reader for 3.0.
        shape, fortran_order, dtype = npformat._read_array_header(
            fp, (major, minor), max_header_size=10 ** 9)
    data_offset = fp.tell()
    exp = {
        "file": name,
        "options": options,
        "valid": True,
        "version": "%d.%d" % (major, minor),
        "shape": [int(d) for d in shape],
        "fortran_order": bool(fortran_order),
        "descr": repr(npformat.dtype_to_descr(dtype)),
        "itemsize": int(dtype.itemsize),
        "data_offset": data_offset,
        "header_length": header_length,
    }
    assert data_offset == 8 + struct.calcsize(lenfmt) + header_length
    assert data[data_offset - 1:data_offset] == b"\n", name
    assert data[data_offset - header_length:data_offset - header_length + 1] == b"{"
    if not dtype.hasobject:
        nbytes = math.prod(int(d) for d in shape) * dtype.itemsize
        exp["nbytes"] = nbytes
        assert len(data) == data_offset + nbytes, (name, len(data), data_offset, nbytes)
    return exp


def main():
    os.makedirs(FILES_DIR, exist_ok=True)
    for old in os.listdir(FILES_DIR):
        if old.endswith(".npy"):
            os.remove(os.path.join(FILES_DIR, old))

    lines = []
    total = 0
    for name in sorted(CASES):
        category, build, options = CASES[name]
        data = build()
        assert data == build(), "non-deterministic output for %s" % name
        with open(os.path.join(FILES_DIR, name), "wb") as fh:
            fh.write(data)
        total += len(data)
        exp = expectation(name, data, options)
        lines.append(json.dumps(exp, ensure_ascii=True, sort_keys=True))

    with open(EXPECTED_PATH, "w", encoding="ascii", newline="\n") as fh:
        fh.write("\n".join(lines) + "\n")

    # Verify numpy.load reads every file and agrees with the expectations.
    loaded = 0
    for line in lines:
        exp = json.loads(line)
        path = os.path.join(FILES_DIR, exp["file"])
        allow = bool(exp["options"].get("allow_object"))
        arr = np.load(path, allow_pickle=allow, max_header_size=10 ** 9)
        assert list(arr.shape) == exp["shape"], exp["file"]
        assert repr(npformat.dtype_to_descr(arr.dtype)) == exp["descr"], exp["file"]
        if exp["fortran_order"]:
            assert arr.flags.f_contiguous, exp["file"]
        loaded += 1

    counts = {}
    for name, (category, _, _) in CASES.items():
        counts[category] = counts.get(category, 0) + 1
    print("wrote %d files (%d bytes) to %s" % (len(lines), total, FILES_DIR))
    for category in sorted(counts):
        print("  %-10s %d" % (category, counts[category]))
    print("numpy.load read %d/%d files" % (loaded, len(lines)))
    for what, why in SKIPPED:
        print("skipped %s: %s" % (what, why))
    return 0 if loaded == len(lines) else 1


if __name__ == "__main__":
    sys.exit(main())
