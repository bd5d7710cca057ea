#!/usr/bin/python3
"""RawArray files as each reference writer of SPEC-ra.md section 1 lays them
out, and the hostile files of its section 11, with the verdict npyguard must
give each one.

    /usr/bin/python3 tests/ra/make_files.py --out DIR

writes DIR/<name>.ra and DIR/manifest.json: a list of {file, writer, valid,
model | (code, offset), options, note}. `model` holds the keys of
`npyguard check --json` for RawArray (flags, big_endian, eltype, elbyte,
type_name, ndims, dims, count, data_offset, data_length, metadata_offset,
metadata_length); `options` are command-line options for that row (an empty
list: the defaults).

The writers are re-implemented here from the byte layouts the spec and the
sources it cites describe (the facts, not their code):

- every writer: six little-endian u64 words (magic 0x7961727261776172,
  flags, eltype, elbyte, size, ndims), ndims u64 dims, the data, nothing
  after it;
- Python `ra.write`: flags bit 0 for a '>' dtype.str, eltype by dtype.kind
  (i 1, u 2, f 3, c 4, anything else 0), elbyte = itemsize, dims = shape,
  data = a.transpose().tobytes() (column-major);
- C `ra_create` + `ra_write`: the type string's letter (s user, i, u, f, c)
  and number (elbyte), size = elbyte * prod(dims), any flags the caller
  passes, any number of dims;
- RawArray.jl `rawrite`: Int8-Int128 1, UInt8-UInt128 2, Float16-64 3,
  ComplexF16-F64 4 (elbyte 4, 8, 16), Bool 5 (elbyte 1), Julia's column-major
  memory as is; `compress=true` on integers sets flag bit 1 (LEB128); a
  BitArray sets bits 1 and 2, eltype 5, elbyte 8, size = 8 * chunks;
- rawarray-rust `write`: one dimension (From<Vec<T>> and From<ArrayD<T>>
  both flatten), i8-i128, u8-u128, f16 (3, 2), f32, f64, bf16 (5, 2),
  Complex<f32/f64> (4, 8/16); `RawArray::new()` writes ndims 0 with size 0;
- Matlab/Octave `rawrite(data, name, ntrailing)`: at least two dims plus
  `ntrailing` ones, integer classes 1/2, single/double 3, complex 4 with the
  parts interleaved (elbyte 8 or 16), column-major;
- BART `write_ra`: complex64 (4, 8), its DIMS = 16 dims (ones past the
  array's), column-major data.
"""

import argparse
import json
import pathlib
import struct
import sys

import numpy as np

MAGIC = 0x7961727261776172
MAX_SIGNED = (1 << 63) - 1


def words(*values):
    return b"".join(struct.pack("<Q", v) for v in values)


def header(flags, eltype, elbyte, size, dims):
    return words(MAGIC, flags, eltype, elbyte, size, len(dims), *dims)


def pattern(length, salt=0):
    return bytes((i * 131 + salt * 17 + 7) & 0xFF for i in range(length))


def product(dims):
    p = 1
    for d in dims:
        p *= d
    return p


def type_name(eltype, elbyte):
    if eltype == 0:
        return "user%d" % elbyte
    if eltype == 5:
        return {1: "bool", 2: "bfloat16"}[elbyte]
    return "%s%d" % (("int", "uint", "float", "complex")[eltype - 1], 8 * elbyte)


def model(flags, eltype, elbyte, dims, metadata=0):
    data_offset = 48 + 8 * len(dims)
    data_length = elbyte * product(dims)
    return {"flags": flags, "big_endian": bool(flags & 1), "eltype": eltype, "elbyte": elbyte,
            "type_name": type_name(eltype, elbyte), "ndims": len(dims), "dims": list(dims),
            "count": product(dims), "data_offset": data_offset, "data_length": data_length,
            "metadata_offset": data_offset + data_length, "metadata_length": metadata}


class Rows:
    def __init__(self):
        self.rows = []
        self.names = set()

    def add(self, name, writer, data, expected, options=(), note=""):
        assert name not in self.names, name
        self.names.add(name)
        row = {"file": name + ".ra", "writer": writer, "data": data, "options": list(options), "note": note}
        if isinstance(expected, dict):
            row.update(valid=True, model=expected)
        else:
            row.update(valid=False, code=expected[0], offset=expected[1])
        self.rows.append(row)


# ---------------------------------------------------------------------------
# The writers.

PYTHON_KINDS = {"i": 1, "u": 2, "f": 3, "c": 4}


def python_ra_write(array):
    """Python ra.write: (bytes, flags, eltype, elbyte, dims)."""
    flags = 1 if array.dtype.str[0] == ">" else 0
    eltype = PYTHON_KINDS.get(array.dtype.kind, 0)
    elbyte = array.dtype.itemsize
    dims = tuple(int(d) for d in array.shape)
    body = header(flags, eltype, elbyte, array.size * elbyte, dims) + array.transpose().tobytes()
    return body, flags, eltype, elbyte, dims


def c_ra_create(typestr, dims, flags=0, salt=0):
    """C ra_create(type, ndims, dims, flags) then ra_write."""
    eltype = "siufc".index(typestr[0])
    elbyte = int(typestr[1:])
    size = elbyte * product(dims)
    return header(flags, eltype, elbyte, size, dims) + pattern(size, salt), eltype, elbyte


JULIA_TYPES = {  # name: (eltype, elbyte)
    "Int8": (1, 1), "Int16": (1, 2), "Int32": (1, 4), "Int64": (1, 8), "Int128": (1, 16),
    "UInt8": (2, 1), "UInt16": (2, 2), "UInt32": (2, 4), "UInt64": (2, 8), "UInt128": (2, 16),
    "Float16": (3, 2), "Float32": (3, 4), "Float64": (3, 8),
    "ComplexF16": (4, 4), "ComplexF32": (4, 8), "ComplexF64": (4, 16), "Bool": (5, 1),
}


def julia_rawrite(type_name_, dims, salt=0):
    eltype, elbyte = JULIA_TYPES[type_name_]
    count = product(dims)
    data = bytes(i % 2 for i in range(count)) if type_name_ == "Bool" else pattern(count * elbyte, salt)
    return header(0, eltype, elbyte, count * elbyte, dims) + data, eltype, elbyte


RUST_TYPES = {
    "i8": (1, 1), "i16": (1, 2), "i32": (1, 4), "i64": (1, 8), "i128": (1, 16),
    "u8": (2, 1), "u16": (2, 2), "u32": (2, 4), "u64": (2, 8), "u128": (2, 16),
    "f16": (3, 2), "f32": (3, 4), "f64": (3, 8), "bf16": (5, 2),
    "Complex<f32>": (4, 8), "Complex<f64>": (4, 16),
}


def rust_write(type_name_, length, salt=0):
    eltype, elbyte = RUST_TYPES[type_name_]
    return header(0, eltype, elbyte, length * elbyte, (length,)) + pattern(length * elbyte, salt), eltype, elbyte


MATLAB_CLASSES = {
    "int8": (1, 1), "int16": (1, 2), "int32": (1, 4), "int64": (1, 8),
    "uint8": (2, 1), "uint16": (2, 2), "uint32": (2, 4), "uint64": (2, 8),
    "single": (3, 4), "double": (3, 8), "complex single": (4, 8), "complex double": (4, 16),
}


def matlab_rawrite(class_name, shape, ntrailing=0, salt=0):
    eltype, elbyte = MATLAB_CLASSES[class_name]
    dims = tuple(shape) + (1,) * ntrailing
    assert len(shape) >= 2
    size = elbyte * product(dims)
    return header(0, eltype, elbyte, size, dims) + pattern(size, salt), eltype, elbyte, dims


def bart_write_ra(shape, salt=0):
    dims = tuple(shape) + (1,) * (16 - len(shape))
    size = 8 * product(dims)
    return header(0, 4, 8, size, dims) + pattern(size, salt), dims


# ---------------------------------------------------------------------------
# The rows.

def python_rows(rows):
    arrays = []
    for code in ("<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<c8", "<c16",
                 ">i2", ">u4", ">f4", ">f8", ">c8", ">c16", "|u1", "|i1"):
        arrays.append((code.replace("<", "le_").replace(">", "be_").replace("|", "na_"),
                       (np.arange(6) * 3 - 5).astype(code).reshape(2, 3)))
    arrays.append(("longdouble", np.arange(4, dtype=np.longdouble).reshape(2, 2)))  # f16: x87 in 16 bytes
    arrays.append(("clongdouble", np.arange(3, dtype=np.clongdouble)))                # c32
    arrays.append(("bool", np.array([[True, False, True]])))                          # user type 0, elbyte 1
    arrays.append(("bytes", np.array([b"ab", b"cde"], dtype="S5")))
    arrays.append(("unicode", np.array(["x", "yz"], dtype="<U3")))
    arrays.append(("datetime", np.array(["2020-01-01", "2021-02-03"], dtype="<M8[D]")))
    arrays.append(("timedelta", np.arange(3, dtype="<m8[s]")))
    arrays.append(("void", np.zeros(2, dtype="V4")))
    arrays.append(("struct", np.zeros(3, dtype=[("a", "<i4"), ("b", "<f8")])))
    arrays.append(("scalar", np.array(2.5, dtype="<f8")))
    arrays.append(("scalar_int", np.array(7, dtype="<i2")))
    arrays.append(("vector", np.arange(5, dtype="<f4")))
    arrays.append(("cube", np.arange(24, dtype="<i4").reshape(2, 3, 4)))
    arrays.append(("fortran", np.asfortranarray(np.arange(12, dtype="<f8").reshape(3, 4))))
    arrays.append(("zero_rows", np.zeros((0, 3), dtype="<f8")))
    arrays.append(("zero_middle", np.zeros((3, 0, 2), dtype="<u2")))
    arrays.append(("empty_vector", np.zeros(0, dtype="<c8")))
    dims32 = [1] * 32
    dims32[5] = 2
    dims32[31] = 3
    arrays.append(("ndim32", np.arange(6, dtype="<i8").reshape(dims32)))  # numpy 1.24's most
    for name, array in arrays:
        body, flags, eltype, elbyte, dims = python_ra_write(array)
        rows.add("python_" + name, "python ra.write", body, model(flags, eltype, elbyte, dims))
    # An itemsize-0 dtype: Python writes elbyte 0 (SPEC-ra.md section 10).
    body, *_ = python_ra_write(np.zeros(3, dtype=[]))
    rows.add("python_itemsize0", "python ra.write", body, ("bad_element_size", 24),
             note="np.zeros(3, dtype=[]): eltype 0, elbyte 0, size 0")
    # Metadata after the data: a YAML block, and a second RA file.
    body, flags, eltype, elbyte, dims = python_ra_write(np.arange(6, dtype="<f4").reshape(2, 3))
    yaml = b"---\nunits: mV\nsensor: 7\n...\n"
    rows.add("python_yaml", "python ra.write + metadata", body + yaml,
             model(flags, eltype, elbyte, dims, len(yaml)))
    rows.add("python_yaml_refused", "python ra.write + metadata", body + yaml,
             ("trailing_data", 48 + 16 + 24), options=["--ra-reject-metadata"])
    rows.add("python_second_ra", "python ra.write + metadata", body + body,
             model(flags, eltype, elbyte, dims, len(body)), note="a second RA file as metadata")


def c_rows(rows):
    cases = [("f4", (4, 3)), ("f8", (2, 2, 2)), ("i1", (7,)), ("u8", (3, 1)), ("c8", (2, 5)), ("c16", (3,)),
             ("i16", (2,)), ("f2", (4,)), ("s24", (3, 2)), ("s1", (5,)), ("u2", ()), ("f4", (0, 4))]
    for i, (typestr, dims) in enumerate(cases):
        body, eltype, elbyte = c_ra_create(typestr, dims, salt=i)
        rows.add("c_%s_%s" % (typestr, "x".join(map(str, dims)) or "0d"), "C ra_create", body,
                 model(0, eltype, elbyte, dims))
    # The big-endian flag passed to ra_create (data assumed big-endian).
    body, eltype, elbyte = c_ra_create("i4", (3,), flags=1)
    rows.add("c_i4_big", "C ra_create", body, model(1, eltype, elbyte, (3,)))
    dims64 = (1,) * 63 + (2,)
    body, eltype, elbyte = c_ra_create("u1", dims64)
    rows.add("c_u1_64d", "C ra_create", body, model(0, eltype, elbyte, dims64))
    dims65 = (1,) * 65
    body, *_ = c_ra_create("u1", dims65)
    rows.add("c_u1_65d", "C ra_create", body, ("too_many_dimensions", 40), note="C writes any number of dims")
    rows.add("c_u1_65d_raised", "C ra_create", body, model(0, 2, 1, dims65), options=["--max-ndim", "65"])
    # ra_compress: flag bit 1, size the LZ4 length (data/*_z.ra).
    raw, *_ = c_ra_create("f4", (16,))
    compressed = header(2, 3, 4, 23, (16,)) + pattern(23)
    rows.add("c_compressed", "C ra_compress", compressed, ("unsupported_flags", 8))
    del raw


def julia_rows(rows):
    for i, name in enumerate(JULIA_TYPES):
        dims = (3, 2)
        body, eltype, elbyte = julia_rawrite(name, dims, salt=i)
        rows.add("julia_" + name, "RawArray.jl rawrite", body, model(0, eltype, elbyte, dims),
                 options=[] if name != "Bool" else [])
    body, eltype, elbyte = julia_rawrite("Bool", (4,))
    rows.add("julia_Bool_refused", "RawArray.jl rawrite", body, ("unknown_element_type", 16),
             options=["--no-ra-type5"])
    body, eltype, elbyte = julia_rawrite("Float64", ())
    rows.add("julia_Array0", "RawArray.jl rawrite", body, model(0, eltype, elbyte, ()))
    body, eltype, elbyte = julia_rawrite("Int32", (2, 0, 3))
    rows.add("julia_empty", "RawArray.jl rawrite", body, model(0, eltype, elbyte, (2, 0, 3)))
    # compress=true on integers: LEB128 varints, flag bit 1, size the raw length.
    rows.add("julia_encoded", "RawArray.jl rawrite(compress=true)", header(2, 1, 8, 40, (5,)) + bytes([1, 2, 3, 4, 5]),
             ("unsupported_flags", 8))
    # A BitArray of 100 bits: two UInt64 chunks, flags bits 1 and 2.
    rows.add("julia_bitarray", "RawArray.jl rawrite(::BitArray)", header(6, 5, 8, 16, (100,)) + pattern(16),
             ("unsupported_flags", 8))


def rust_rows(rows):
    for i, name in enumerate(RUST_TYPES):
        body, eltype, elbyte = rust_write(name, 5, salt=i)
        safe = name.replace("<", "_").replace(">", "")
        rows.add("rust_" + safe, "rawarray-rust write", body, model(0, eltype, elbyte, (5,)))
    body, *_ = rust_write("bf16", 3)
    rows.add("rust_bf16_refused", "rawarray-rust write", body, ("unknown_element_type", 16),
             options=["--no-ra-type5"])
    body, eltype, elbyte = rust_write("f32", 0)
    rows.add("rust_empty_vec", "rawarray-rust write", body, model(0, eltype, elbyte, (0,)))
    rows.add("rust_new", "rawarray-rust RawArray::new().write", header(0, 3, 4, 0, ()), ("data_length_mismatch", 32),
             note="ndims 0 with size 0; Rust's own reader refuses it too")


def matlab_rows(rows):
    for i, name in enumerate(MATLAB_CLASSES):
        body, eltype, elbyte, dims = matlab_rawrite(name, (3, 2), salt=i)
        rows.add("matlab_" + name.replace(" ", "_"), "Matlab rawrite", body, model(0, eltype, elbyte, dims))
    body, eltype, elbyte, dims = matlab_rawrite("double", (4, 1))  # a column vector
    rows.add("matlab_column", "Matlab rawrite", body, model(0, eltype, elbyte, dims))
    body, eltype, elbyte, dims = matlab_rawrite("single", (2, 3, 2), ntrailing=2)
    rows.add("matlab_ntrailing", "Matlab rawrite(ntrailing=2)", body, model(0, eltype, elbyte, dims))


def bart_rows(rows):
    body, dims = bart_write_ra((4, 3))
    rows.add("bart_16dims", "BART write_ra", body, model(0, 4, 8, dims))
    body, dims = bart_write_ra((2, 2, 1, 3))
    stuff = b"random stuff at the end"
    rows.add("bart_stuff", "BART write_ra + metadata", body + stuff, model(0, 4, 8, dims, len(stuff)),
             note="BART: 'ra allows random stuff at the end'")


def hostile_rows(rows):
    """The failures of the reference readers (SPEC-ra.md section 11), each refused or handled."""
    good, *_ = c_ra_create("f4", (2, 3))
    for n in (0, 5, 8, 20, 47):
        rows.add("short_%d" % n, "hostile", good[:n], ("truncated_header", n),
                 note="C ra_read memcpys 48 bytes out of a buffer the size of the file")
    rows.add("short_dims", "hostile", good[:60], ("truncated_header", 60))
    rows.add("ndims_huge", "hostile", words(MAGIC, 0, 3, 4, 0, 1 << 40), ("too_many_dimensions", 40),
             note="Python f.read(8*ndims), Julia and Rust allocate ndims words first")
    rows.add("terabyte_claim", "hostile", header(0, 3, 8, 8 << 37, (1 << 37,)) + pattern(44), ("truncated_data", 100),
             note="Julia and Rust allocate prod(dims) elements from the header")
    rows.add("wrapping_product", "hostile", header(0, 3, 8, 0, (1 << 32, 1 << 32)), ("size_overflow", 56),
             note="Rust's product of dims wraps in release builds: 8 * 2^64 is 0")
    rows.add("empty_overflow", "hostile", header(0, 3, 8, 0, (0, 1 << 62, 1 << 62)), ("size_overflow", 56))
    rows.add("data_end_overflow", "hostile", header(0, 0, MAX_SIGNED, MAX_SIGNED, ()), ("size_overflow", 32))
    rows.add("elbyte_overflow", "hostile", header(0, 0, 1 << 63, 0, ()), ("size_overflow", 24))
    bad = bytearray(good)
    bad[0:8] = b"yarrawar"
    rows.add("big_endian_header", "hostile", bytes(bad), ("bad_magic", 0),
             note="a big-endian host's C or Julia header; no reader in the sources reads it")
    bad = bytearray(good)
    bad[5] = ord("X")
    rows.add("bad_magic", "hostile", bytes(bad), ("bad_magic", 5), note="Python, Julia, Matlab and ra_read never compare it")
    rows.add("size_lies_small", "hostile", header(0, 3, 4, 4, (2, 3)) + pattern(24), ("data_length_mismatch", 32),
             note="readers that trust size and readers that trust dims read different bytes")
    rows.add("size_lies_large", "hostile", header(0, 3, 4, 48, (2, 3)) + pattern(48), ("data_length_mismatch", 32))
    rows.add("bart_compressed", "hostile", header(2, 4, 8, 48, (2, 3)) + pattern(48), ("unsupported_flags", 8),
             note="BART reads a complex64 file flagged compressed as raw data")
    rows.add("unknown_flag", "hostile", header(1 << 40, 3, 4, 24, (2, 3)) + pattern(24), ("unsupported_flags", 8),
             note="Rust's inverted flags test passes unknown bits")
    rows.add("eltype_9", "hostile", header(0, 9, 4, 24, (2, 3)) + pattern(24), ("unknown_element_type", 16),
             note="ra head indexes RA_TYPE_CODES[eltype] unchecked")
    rows.add("int24", "hostile", header(0, 1, 3, 18, (2, 3)) + pattern(18), ("bad_element_size", 24),
             note="Python builds 'int24', Julia evaluates Int24: both fail")
    rows.add("float12", "hostile", header(0, 3, 12, 72, (2, 3)) + pattern(72), ("bad_element_size", 24))
    rows.add("truncated_data", "hostile", good[:-1], ("truncated_data", len(good) - 1))
    rows.add("zero_d_c8", "hostile", header(0, 4, 8, 8, ()) + pattern(8), model(0, 4, 8, ()),
             note="valid: ra head underflows ndims - 1 on it, BART declares a zero-length VLA")


def build():
    rows = Rows()
    python_rows(rows)
    c_rows(rows)
    julia_rows(rows)
    rust_rows(rows)
    matlab_rows(rows)
    bart_rows(rows)
    hostile_rows(rows)
    return rows.rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", required=True, type=pathlib.Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    manifest = []
    for row in build():
        (args.out / row["file"]).write_bytes(row.pop("data"))
        manifest.append(row)
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print("wrote %d files and manifest.json to %s" % (len(manifest), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
