#!/usr/bin/python3
"""Test archives for the .npz policy (SPEC-npz.md), with their expected verdicts.

An independent oracle: every expectation below is derived from the policy
documents (/work/shared/SPEC-npz.md, and SPEC.md for the .npy members), never
from the validator's code or output. Usage:

    /usr/bin/python3 tests/npz/make_archives.py --out DIR

writes DIR/*.npz and DIR/manifest.json (format: tests/npz/README.md), asks
numpy 1.24 about every archive in a forked child (RLIMIT_AS 2 GiB, 10 s), and
checks that every archive expected to be valid loads in numpy with the shapes
and dtypes it was built with (SPEC-npz rule 1). Exit status 1 if a self-check
fails.

Archives are built byte by byte with the small zip writer below (struct.pack,
raw deflate, zlib.crc32), so that every field is under control, plus the real
output of numpy (savez / savez_compressed to files, to a non-seekable stream
and to a pipe) and of Python's zipfile. The rebuilt numpy layouts are checked
byte for byte against numpy's own output. Standard library and numpy only;
the output is deterministic.
"""

import argparse
import bz2
import io
import json
import lzma
import os
import random
import resource
import signal
import struct
import sys
import threading
import time
import unicodedata
import zipfile
import zlib

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from numpy.lib import format as npformat  # noqa: E402

U16 = 0xFFFF
U32 = 0xFFFFFFFF
GiB = 1 << 30
MAX_RATIO = 1032  # SPEC-npz section 8 defaults
MAX_TOTAL = 1 << 32
MAX_HEADER = 1 << 20

SIG_LOCAL = b"PK\x03\x04"
SIG_CENTRAL = b"PK\x01\x02"
SIG_EOCD = b"PK\x05\x06"
SIG_Z64_REC = b"PK\x06\x06"
SIG_Z64_LOC = b"PK\x06\x07"
SIG_DD = b"PK\x07\x08"


def dos_time(h, mi, s):
    return (h << 11) | (mi << 5) | (s // 2)


def dos_date(y, mo, d):
    return ((y - 1980) << 9) | (mo << 5) | d


DATE_1980 = dos_date(1980, 1, 1)  # 0x21: numpy, zipfile defaults, libnpy, ndarray-npy
FIXED_TIME = dos_time(12, 34, 56)  # "now" / "file time" writers, made deterministic
FIXED_DATE = dos_date(2024, 3, 1)


def deflate(data, level=6, chunks=None):
    """Raw deflate as zipfile does it (compressobj(level, DEFLATED, -15))."""
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    out = b""
    for piece in (chunks if chunks is not None else [data]):
        out += c.compress(piece)
    return out + c.flush()


def crc(data):
    return zlib.crc32(data) & U32


# --------------------------------------------------------------------------
# .npy members
# --------------------------------------------------------------------------

def npy(arr, version=None):
    """np.save bytes of an array (numpy's own header)."""
    bio = io.BytesIO()
    npformat.write_array(bio, np.asanyarray(arr), version=version, allow_pickle=True)
    return bio.getvalue()


def descr_of(dtype):
    return repr(npformat.dtype_to_descr(np.dtype(dtype)))


def expect_of(arr):
    arr = np.asanyarray(arr)
    fortran = bool(arr.flags.f_contiguous and not arr.flags.c_contiguous)
    return (tuple(arr.shape), descr_of(arr.dtype), fortran)


def npy_hand(header_text, data=b"", version=(1, 0)):
    """A .npy file with the header text exactly as given (no padding added)."""
    h = header_text.encode("latin-1") if isinstance(header_text, str) else header_text
    if version == (1, 0):
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h))
    else:
        pre = b"\x93NUMPY" + bytes(version) + struct.pack("<I", len(h))
    return pre + h + data


def pad_header(text, align=64, preamble=10):
    """numpy-style padding: spaces then a final newline to a multiple of align."""
    total = preamble + len(text) + 1
    text = text + " " * ((-total) % align) + "\n"
    return text


def header_end(payload):
    """data_offset of a well-formed .npy payload."""
    if payload[6] == 1:
        return 10 + struct.unpack_from("<H", payload, 8)[0]
    return 12 + struct.unpack_from("<I", payload, 8)[0]


# --------------------------------------------------------------------------
# The zip writer: one member, every field overridable
# --------------------------------------------------------------------------

LOCAL_FMT = "<4sHHHHHIIIHH"      # 30 bytes
CENTRAL_FMT = "<4sHHHHHHIIIHHHHHII"  # 46 bytes
EOCD_FMT = "<4sHHHHIIH"          # 22 bytes
Z64_REC_FMT = "<4sQHHIIQQQQ"      # 56 bytes
Z64_LOC_FMT = "<4sIQI"            # 20 bytes

# field offsets inside the records (SPEC-npz offsets are archive offsets)
C_NEEDED, C_FLAGS, C_METHOD, C_CRC, C_CSIZE, C_USIZE = 6, 8, 10, 16, 20, 24
C_DISK, C_EXT, C_LHO, C_NAME = 34, 38, 42, 46
L_FLAGS, L_METHOD, L_CRC, L_CSIZE, L_USIZE, L_NAME = 6, 8, 14, 18, 22, 30
E_DISK, E_DISK_CD, E_NDISK, E_NTOTAL, E_CDSIZE, E_CDOFF, E_CLEN = 4, 6, 8, 10, 12, 16, 20
R_DISK, R_DISK_CD, R_NDISK, R_NTOTAL, R_CDSIZE, R_CDOFF = 16, 20, 24, 32, 40, 48


def xrec(tag, payload):
    return struct.pack("<HH", tag, len(payload)) + payload


def z64(*values):
    return xrec(0x0001, b"".join(struct.pack("<Q", v) for v in values))


def unicode_path(raw_name, utf8_name, version=1, name_crc=None):
    c = crc(raw_name) if name_crc is None else name_crc
    return xrec(0x7075, struct.pack("<BI", version, c) + utf8_name)


class M:
    """One member: its local entry (when placed in `parts`) and its central header.

    Fields not given are derived from the payload. Overrides: `key=value`
    sets a field in both headers, `l_key` only locally, `c_key` only
    centrally, `d_key` only in the data descriptor. Keys: needed, flags,
    method, time, date, crc, csize, usize, nlen, xlen, clen, disk, int_attr,
    ext_attr, made_by, lho, sig, name.
    """

    def __init__(self, name, payload=b"", method=0, *, data=None, level=6, flags=0,
                 made_by=0x0314, needed=20, time=0, date=DATE_1980,
                 ext_attr=0o600 << 16, int_attr=0, lx=b"", cx=b"", comment=b"",
                 desc=None, expect=None, **over):
        self.name = name if isinstance(name, bytes) else name.encode("utf-8")
        self.payload = payload
        self.method = method
        self.data = data if data is not None else (
            deflate(payload, level) if method == 8 else payload)
        self.flags = flags
        self.made_by, self.needed = made_by, needed
        self.time, self.date = time, date
        self.ext_attr, self.int_attr = ext_attr, int_attr
        self.lx, self.cx, self.comment = lx, cx, comment
        self.desc = desc
        self.expect = expect
        self.over = over

    # values as the central directory declares them
    def get(self, side, key, default):
        if f"{side}_{key}" in self.over:
            return self.over[f"{side}_{key}"]
        return self.over.get(key, default)

    def base(self, side):
        if getattr(self, "_crc_of", None) is not self.payload:
            self._crc, self._crc_of = crc(self.payload), self.payload
        return dict(
            needed=self.needed, flags=self.flags, method=self.method,
            time=self.time, date=self.date,
            crc=self._crc, csize=len(self.data), usize=len(self.payload))

    def field(self, side, key):
        return self.get(side, key, self.base(side)[key])

    def central_values(self):
        return {k: self.field("c", k) for k in ("crc", "csize", "usize")}

    def local_extra(self):
        return self.lx(self) if callable(self.lx) else self.lx

    def central_extra(self, lho):
        return self.cx(self, lho) if callable(self.cx) else self.cx

    def local_bytes(self):
        name = self.get("l", "name", self.name)
        lx = self.local_extra()
        f = {k: self.field("l", k) for k in
             ("needed", "flags", "method", "time", "date", "crc", "csize", "usize")}
        return struct.pack(
            LOCAL_FMT, self.get("l", "sig", SIG_LOCAL), f["needed"], f["flags"], f["method"],
            f["time"], f["date"], f["crc"], f["csize"], f["usize"],
            self.get("l", "nlen", len(name)), self.get("l", "xlen", len(lx))) + name + lx

    def descriptor(self):
        if self.desc is None:
            return b""
        if isinstance(self.desc, bytes):
            return self.desc
        cv = self.central_values()
        v = {k: self.get("d", k, cv[k]) for k in cv}
        if self.desc == "dd16":
            return struct.pack("<4sIII", SIG_DD, v["crc"], v["csize"], v["usize"])
        if self.desc == "dd24":
            return struct.pack("<4sIQQ", SIG_DD, v["crc"], v["csize"], v["usize"])
        if self.desc == "dd12":
            return struct.pack("<III", v["crc"], v["csize"], v["usize"])
        raise ValueError(self.desc)

    def central_bytes(self, lho):
        name = self.get("c", "name", self.name)
        cx = self.central_extra(lho)  # a callable sees the real offset
        lho = self.get("c", "lho", lho)
        f = {k: self.field("c", k) for k in
             ("needed", "flags", "method", "time", "date", "crc", "csize", "usize")}
        return struct.pack(
            CENTRAL_FMT, self.get("c", "sig", SIG_CENTRAL), self.get("c", "made_by", self.made_by),
            f["needed"], f["flags"], f["method"], f["time"], f["date"],
            f["crc"], f["csize"], f["usize"],
            self.get("c", "nlen", len(name)), self.get("c", "xlen", len(cx)),
            self.get("c", "clen", len(self.comment)), self.get("c", "disk", 0),
            self.get("c", "int_attr", self.int_attr), self.get("c", "ext_attr", self.ext_attr),
            lho) + name + cx + self.comment

    def decoded_name(self):
        name = self.get("c", "name", self.name)
        if self.field("c", "flags") & 0x800:
            return name.decode("utf-8")
        return name.decode("cp437")


class Layout:
    def __init__(self):
        self.lh, self.data, self.desc, self.end, self.ch = {}, {}, {}, {}, []
        self.cd_offset = self.cd_size = self.eocd = self.z64rec = self.z64loc = None
        self.size = 0

    def chm(self, m):
        for mm, off in self.ch:
            if mm is m:
                return off
        raise KeyError(m.name)

    def ch_at(self, i):
        return self.ch[i][1]


def build(parts, central=None, *, cd_junk=b"", z64=None, z64_gap=b"", eocd=None,
          comment=b"", trailing=b"", shift=0):
    """Serialise an archive.

    parts: Members (their local entries) and raw bytes, in file order.
    central: Members in central-directory order (default: the Members of parts).
    z64: None, or a dict of overrides for the Zip64 end record (r_*) and
         locator (loc_*); EOCD fields are then saturated unless `eocd` says otherwise.
    eocd: overrides of EOCD fields (disk, disk_cd, ndisk, ntotal, cd_size, cd_offset, clen, sig).
    shift: subtract from every written offset (self-extracting stub, offsets not adjusted).
    """
    out = bytearray()
    L = Layout()
    for p in parts:
        if isinstance(p, (bytes, bytearray)):
            out += p
            continue
        L.lh[p] = len(out)
        out += p.local_bytes()
        L.data[p] = len(out)
        out += p.data
        L.desc[p] = len(out)
        out += p.descriptor()
        L.end[p] = len(out)
    if central is None:
        central = [p for p in parts if isinstance(p, M)]
    L.cd_offset = len(out)
    for m in central:
        L.ch.append((m, len(out)))
        lho = L.lh[m] - shift if m in L.lh else None
        if lho is None and "c_lho" not in m.over and "lho" not in m.over:
            raise ValueError("central-only member needs c_lho")
        out += m.central_bytes(lho if lho is not None else 0)
    out += cd_junk
    L.cd_size = len(out) - L.cd_offset
    n = len(central)
    e = dict(sig=SIG_EOCD, disk=0, disk_cd=0, ndisk=n, ntotal=n, cd_size=L.cd_size,
             cd_offset=L.cd_offset - shift, clen=len(comment))
    if z64 is not None:
        o = z64
        L.z64rec = len(out)
        out += struct.pack(
            Z64_REC_FMT, o.get("r_sig", SIG_Z64_REC), o.get("r_size", 44),
            o.get("r_made_by", 45), o.get("r_needed", 45), o.get("r_disk", 0),
            o.get("r_disk_cd", 0), o.get("r_ndisk", n), o.get("r_ntotal", n),
            o.get("r_cd_size", L.cd_size), o.get("r_cd_offset", L.cd_offset - shift))
        L.z64loc = len(out)
        out += struct.pack(
            Z64_LOC_FMT, o.get("loc_sig", SIG_Z64_LOC), o.get("loc_disk", 0),
            o.get("loc_offset", L.z64rec - shift), o.get("loc_disks", 1))
        out += z64_gap
        e.update(ndisk=U16, ntotal=U16, cd_size=U32, cd_offset=U32)
    if eocd:
        e.update(eocd)
    L.eocd = len(out)
    out += struct.pack(EOCD_FMT, e["sig"], e["disk"], e["disk_cd"], e["ndisk"], e["ntotal"],
                       e["cd_size"], e["cd_offset"], e["clen"])
    out += comment + trailing
    L.size = len(out)
    return bytes(out), L


# --------------------------------------------------------------------------
# Writer layouts of SPEC-npz section 11
# --------------------------------------------------------------------------

def name_flags(name):
    """zipfile / zip crate rule: bit 11 exactly when the name is not ASCII."""
    try:
        name.encode("ascii")
        return 0
    except UnicodeEncodeError:
        return 0x800


def numpy_member(key, arr, compressed=False, pipe=False):
    """np.savez / savez_compressed 1.24 (force_zip64=True, gh-10776)."""
    payload = npy(arr)
    name = key + ".npy"
    flags = name_flags(name)
    method = 8 if compressed else 0
    kw = {}
    if pipe:
        flags |= 0x08
        kw = dict(l_crc=0, l_csize=0, l_usize=0)
        lx = z64(0, 0)
        desc = "dd24"
    else:
        def lx(m):
            return z64(len(m.payload), len(m.data))
        desc = None
    return M(name, payload, method, flags=flags, made_by=0x0314, needed=20, time=0,
             date=DATE_1980, ext_attr=0o600 << 16, lx=lx, desc=desc,
             expect=expect_of(arr), **kw)


def plain_member(name, payload, method=0, expect=None, **kw):
    """Python zipfile writestr layout (ZipInfo date 1980-01-01): the neutral base."""
    flags = kw.pop("flags", 0) | name_flags(name if isinstance(name, str) else "a")
    return M(name, payload, method, flags=flags, expect=expect, **kw)


def arr_member(name, arr, method=0, **kw):
    return plain_member(name, npy(arr), method, expect=expect_of(arr), **kw)


def cnpy_header(descr, shape):
    """rogersce/cnpy create_npy_header: 16-byte padding, '<' even for 1-byte types."""
    d = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': ("
    d += str(shape[0])
    for s in shape[1:]:
        d += ", " + str(s)
    if len(shape) == 1:
        d += ","
    d += "), }"
    rem = 16 - (10 + len(d)) % 16
    d = d + " " * rem
    d = d[:-1] + "\n"
    return d


def cnpy_member(key, arr, cnpy_descr):
    arr = np.ascontiguousarray(arr)
    payload = npy_hand(cnpy_header(cnpy_descr, arr.shape), arr.tobytes())
    return M(key + ".npy", payload, 0, flags=0, made_by=20, needed=20, time=0, date=0,
             ext_attr=0, expect=expect_of(arr))


def npzjl_header(descr, shape):
    """fhs/NPZ.jl npzwriteheader: fortran_order True, 16-byte padding only when needed."""
    if len(shape) == 0:
        sh = "()"
    elif len(shape) == 1:
        sh = "(%d,)" % shape[0]
    else:
        sh = "(" + ", ".join(str(s) for s in shape) + ")"
    d = "{'descr': '" + descr + "', 'fortran_order': True, 'shape': " + sh + ", }"
    pad = (16 - (10 + len(d)) % 16) % 16
    if pad > 0:
        d += " " * (pad - 1) + "\n"
    return d


def npzjl_member(raw_name, arr, jl_descr):
    arr = np.asarray(arr)
    payload = npy_hand(npzjl_header(jl_descr, arr.shape), arr.tobytes(order="F"))
    # The header's fortran_order, as npyguard reports it (True in every NPZ.jl
    # header; numpy's flags can only confirm it for two or more dimensions).
    exp = (tuple(arr.shape), descr_of(arr.dtype), True)
    return M(raw_name, payload, 0, flags=0, made_by=20, needed=20, time=FIXED_TIME,
             date=FIXED_DATE, ext_attr=0, expect=exp)


def infozip_extras(mtime=1709295296, uid=1000, gid=1000):
    local = xrec(0x5455, struct.pack("<BII", 3, mtime, mtime)) + \
        xrec(0x7875, struct.pack("<BBIBI", 1, 4, uid, 4, gid))
    central = xrec(0x5455, struct.pack("<BI", 3, mtime)) + \
        xrec(0x7875, struct.pack("<BBIBI", 1, 4, uid, 4, gid))
    return local, central


def infozip_member(name, arr, level=6, pipe=False):
    """Info-ZIP zip 3.0: UT + ux extras, made by 0x031E, file mode, file time."""
    payload = npy(arr)
    method = 0 if level == 0 else 8
    flags = {9: 0x2, 8: 0x2, 1: 0x4, 2: 0x4}.get(level, 0)
    needed = 10 if method == 0 else 20
    lx, cx = infozip_extras()
    kw = {}
    desc = None
    if pipe:
        flags |= 0x08
        kw["l_crc"] = 0
        if method == 8:
            kw["l_csize"] = 0
        desc = "dd16"
    return M(name, payload, method, level=max(level, 1), flags=flags, made_by=0x031E,
             needed=needed, time=FIXED_TIME, date=FIXED_DATE, ext_attr=0o100644 << 16,
             lx=lx, cx=cx, desc=desc, expect=expect_of(arr), **kw)


def zipcrate_align_extra(header_end_offset, align):
    """zip crate 0xa11e field: u16 alignment then zeros, so that data starts aligned."""
    pad = (align - (header_end_offset + 6) % align) % align
    return xrec(0xA11E, struct.pack("<H", align) + b"\0" * pad)


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


class Case:
    def __init__(self, file, cls, data, valid, code=None, offset=None, member=None,
                 member_offset=None, verify_only=False, note="", ambiguity=None,
                 offset_by_spec=True, members=None):
        self.file, self.cls, self.data = file, cls, data
        self.valid, self.code, self.offset = valid, code, offset
        self.member, self.member_offset = member, member_offset
        self.verify_only, self.note = verify_only, note
        self.ambiguity, self.offset_by_spec = ambiguity, offset_by_spec
        self.members = members  # [(decoded name, key, shape, descr, fortran)] when valid

    def manifest(self):
        d = {"file": self.file, "class": self.cls, "valid": self.valid, "code": self.code,
             "offset": self.offset, "member": self.member,
             "member_offset": self.member_offset, "verify_only": self.verify_only,
             "note": self.note, "offset_by_spec": self.offset_by_spec,
             "ambiguity": self.ambiguity}
        if self.members is not None:
            d["members"] = [{"name": n, "key": k, "shape": list(s), "descr": de,
                             "fortran_order": f} for (n, k, s, de, f) in self.members]
        return d


def members_of(central):
    out = []
    for m in central:
        name = m.decoded_name()
        if m.expect is None:
            raise ValueError("valid archive member without expectation: %r" % name)
        s, de, f = m.expect
        out.append((name, name[:-4], s, de, f))
    return out


def valid(file, cls, parts, note, central=None, ambiguity=None, **bkw):
    data, L = build(parts, central, **bkw)
    cen = central if central is not None else [p for p in parts if isinstance(p, M)]
    return Case(file, cls, data, True, note=note, ambiguity=ambiguity,
                members=members_of(cen))


def members_from_arrays(named):
    """Expectations for real writer output: [(name, arr)] in archive order."""
    out = []
    for name, arr in named:
        s, de, f = expect_of(arr)
        out.append((name, name[:-4], s, de, f))
    return out


# --------------------------------------------------------------------------
# 1. Legitimate writers (SPEC-npz section 11): all valid
# --------------------------------------------------------------------------

def sample_arrays():
    """Several dtypes and shapes: 0-d, empty, zero axis, fortran, structured."""
    return [
        ("f8_2d", np.arange(12, dtype="<f8").reshape(3, 4)),
        ("i4_0d", np.array(7, dtype="<i4")),
        ("f4_empty", np.zeros((0,), "<f4")),
        ("u1_zero_axis", np.zeros((2, 0, 3), "u1")),
        ("bool", np.array([True, False, True, True, False])),
        ("c16_fortran", np.asfortranarray(np.arange(6, dtype="<c16").reshape(2, 3))),
        ("U5", np.array(["ab", "cdefg", "\u00e9"], dtype="<U5")),
        ("S3", np.array([b"ab", b"xyz"], dtype="S3")),
        ("struct", np.zeros(3, dtype=[("x", "<f4"), ("y", "<i2", (2,))])),
        ("dt64", np.array(["2020-01-01", "2021-06-15"], dtype="datetime64[ns]")),
        ("be_i4", np.arange(3, dtype=">i4")),
        ("f2", np.arange(4, dtype="<f2")),
    ]


POSITIONAL = [np.arange(5, dtype="<i8"), np.ones((2, 2), "<f8")]


def savez_members(kw, positional=()):
    """numpy's member order: keywords first, then arr_0, arr_1, ..."""
    named = [(k + ".npy", a) for k, a in kw]
    named += [("arr_%d.npy" % i, a) for i, a in enumerate(positional)]
    return named


class NonSeekable(io.RawIOBase):
    """A write-only stream without seek/tell, as a socket or a pipe is."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def seekable(self):
        return False

    def write(self, b):
        self.buf += bytes(b)
        return len(b)


def savez_to_pipe(fn, *args, **kw):
    """Run np.savez* against the write end of a real os.pipe()."""
    r, w = os.pipe()
    chunks = []

    def reader():
        with os.fdopen(r, "rb") as f:
            while True:
                b = f.read(65536)
                if not b:
                    break
                chunks.append(b)

    t = threading.Thread(target=reader)
    t.start()
    with os.fdopen(w, "wb") as f:
        fn(f, *args, **kw)
    t.join()
    return b"".join(chunks)


def savez_to_file(tmpdir, fn, *args, **kw):
    path = os.path.join(tmpdir, ".tmp_savez.npz")
    fn(path, *args, **kw)
    with open(path, "rb") as f:
        data = f.read()
    os.unlink(path)
    return data


REBUILD_FAILURES = []


def check_rebuild(label, real, rebuilt):
    """The rebuilt numpy layout must equal numpy's own bytes (writer self-test)."""
    if real != rebuilt:
        i = next((k for k in range(min(len(real), len(rebuilt))) if real[k] != rebuilt[k]),
                 min(len(real), len(rebuilt)))
        REBUILD_FAILURES.append("%s: first difference at byte %d (len %d vs %d)"
                                % (label, i, len(real), len(rebuilt)))


@case
def writers_numpy(ctx):
    out = []
    kw = sample_arrays()
    named = savez_members(kw, POSITIONAL)
    variants = [
        ("numpy_savez_file", np.savez, False, "file"),
        ("numpy_savez_compressed_file", np.savez_compressed, True, "file"),
        ("numpy_savez_nonseekable", np.savez, False, "raw"),
        ("numpy_savez_compressed_nonseekable", np.savez_compressed, True, "raw"),
        ("numpy_savez_pipe", np.savez, False, "pipe"),
        ("numpy_savez_compressed_pipe", np.savez_compressed, True, "pipe"),
    ]
    for label, fn, compressed, target in variants:
        if target == "file":
            real = savez_to_file(ctx["tmp"], fn, *POSITIONAL, **dict(kw))
        elif target == "raw":
            ns = NonSeekable()
            fn(ns, *POSITIONAL, **dict(kw))
            real = bytes(ns.buf)
        else:
            real = savez_to_pipe(fn, *POSITIONAL, **dict(kw))
        pipe = target != "file"
        ms = [numpy_member(n[:-4], a, compressed, pipe) for n, a in named]
        rebuilt, _ = build(ms)
        check_rebuild(label, real, rebuilt)
        cls = "writer:numpy-pipe" if pipe else "writer:numpy-file"
        how = {"file": "to a file", "raw": "to an io.RawIOBase whose seekable() is False",
               "pipe": "to the write end of os.pipe()"}[target]
        out.append(Case("valid_%s.npz" % label, cls, real, True,
                        note="SPEC-npz §11 row numpy %s: real %s output %s (rebuilt byte for "
                             "byte by numpy_member and compared)" % (
                                 "non-seekable stream" if pipe else "file", fn.__name__, how),
                        members=members_from_arrays(named)))

    # names: '/', ':' after the first component, case-only differences,
    # non-ASCII (bit 11), dots in keys (SPEC-npz §6 "Accepted on purpose")
    names_kw = [("layer1/weight", np.arange(4, dtype="<f4")),
                ("dense/kernel:0", np.ones((2, 2), "<f8")),
                ("A", np.array(1, "<i8")), ("a", np.array(2, "<i8")),
                ("\u00e9t\u00e9", np.arange(3, dtype="<i2")),
                ("\u0434\u0430\u043d\u043d\u044b\u0435/x", np.zeros(2, "<f8")),
                ("\u65e5\u672c", np.array([1.5], "<f8")),
                ("a.b", np.arange(2, dtype="u1")), ("x.npy", np.arange(2, dtype="<u2"))]
    for compressed, fn in ((False, np.savez), (True, np.savez_compressed)):
        real = savez_to_file(ctx["tmp"], fn, **dict(names_kw))
        named_n = savez_members(names_kw)
        rebuilt, _ = build([numpy_member(n[:-4], a, compressed) for n, a in named_n])
        check_rebuild("numpy names", real, rebuilt)
        out.append(Case("valid_numpy_names%s.npz" % ("_compressed" if compressed else ""),
                        "writer:numpy-file", real, True,
                        note="SPEC-npz §6 accepted on purpose: '/' inside names, ':' after "
                             "the first component, A/a differing only in case, non-ASCII "
                             "names with bit 11 (§11 numpy row), dots in keys",
                        members=members_from_arrays(named_n)))

    real = savez_to_file(ctx["tmp"], np.savez)
    out.append(Case("valid_numpy_savez_no_arrays.npz", "writer:numpy-file", real, True,
                    note="np.savez() with no arrays writes a bare 22-byte EOCD: §7 allows "
                         "no entries with cd_offset 0", members=[]))

    # a member header above numpy's default max_header_size (10,000 bytes)
    big = np.zeros(2, dtype=[("field_%04d" % i, "<f4") for i in range(600)])
    real = savez_to_file(ctx["tmp"], np.savez, wide=big)
    out.append(Case("valid_numpy_header_over_10000.npz", "writer:numpy-file", real, True,
                    note="SPEC-npz §15 last paragraph: a member header above numpy's "
                         "10,000-byte max_header_size default is accepted (limit 1 MiB); "
                         "numpy with defaults refuses it, with the limit raised it loads",
                    members=members_from_arrays([("wide.npy", big)])))
    return out


@case
def writers_zipfile(ctx):
    """Python's zipfile used directly: real output (SPEC-npz §11 row 3)."""
    out = []
    a, b = np.arange(6, dtype="<i8").reshape(2, 3), np.linspace(0, 1, 7)
    c = np.array([[1, 2], [3, 4]], dtype=">u2")
    dt = (2021, 7, 4, 15, 16, 18)

    def write(zf):
        zf.writestr(zipfile.ZipInfo("a.npy", date_time=dt), npy(a),
                    compress_type=zipfile.ZIP_STORED)
        zf.writestr(zipfile.ZipInfo("sub/b.npy", date_time=dt), npy(b),
                    compress_type=zipfile.ZIP_DEFLATED)
        zf.writestr(zipfile.ZipInfo("\u043a\u043b\u044e\u0447.npy", date_time=dt),
                    npy(c, version=(2, 0)), compress_type=zipfile.ZIP_DEFLATED,
                    compresslevel=9)
    named = [("a.npy", a), ("sub/b.npy", b), ("\u043a\u043b\u044e\u0447.npy", c)]

    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as zf:
        write(zf)
    out.append(Case("valid_zipfile_writestr.npz", "writer:zipfile", bio.getvalue(), True,
                    note="SPEC-npz §11 zipfile row: writestr stored and deflate (level 9), "
                         "fixed date, non-ASCII name with bit 11, a .npy version 2.0 member",
                    members=members_from_arrays(named)))

    ns = NonSeekable()
    with zipfile.ZipFile(ns, "w") as zf:
        write(zf)
    out.append(Case("valid_zipfile_nonseekable.npz", "writer:zipfile", bytes(ns.buf), True,
                    note="SPEC-npz §11 zipfile row, non-seekable output: bit 3, CRC and "
                         "sizes 0 locally, 16-byte signed descriptor (§7 bit 3 rows)",
                    members=members_from_arrays(named)))

    base = savez_to_file(ctx["tmp"], np.savez, x=np.arange(3, dtype="<i4"))
    bio = io.BytesIO(base)
    with zipfile.ZipFile(bio, "a") as zf:
        zf.writestr(zipfile.ZipInfo("y.npy", date_time=dt), npy(np.eye(2)),
                    compress_type=zipfile.ZIP_DEFLATED)
    out.append(Case("valid_zipfile_append.npz", "writer:zipfile", bio.getvalue(), True,
                    note="SPEC-npz §11 zipfile row, mode 'a' appending to a numpy archive "
                         "(the directory is rewritten after the new entry)",
                    members=members_from_arrays([("x.npy", np.arange(3, dtype="<i4")),
                                                 ("y.npy", np.eye(2))])))
    return out


@case
def writers_rebuilt(ctx):
    """The other writers of SPEC-npz §11, rebuilt field by field from the table."""
    out = []
    # cnpy: stored, time 0 date 0, made by 20, needed 20, external 0, '<u1'
    ms = [cnpy_member("x", np.arange(3, dtype="<f8"), "<f8"),
          cnpy_member("grid", np.arange(6, dtype="<i4").reshape(2, 3), "<i4"),
          cnpy_member("bytes", np.arange(5, dtype="u1"), "<u1")]
    out.append(valid("valid_cnpy.npz", "writer:cnpy", ms,
                     "SPEC-npz §11 cnpy row: stored, date 0 (month 0), made by 20, "
                     "needed 20, external 0, 16-byte header padding, '<u1'; three "
                     "npz_save calls (mode 'a' rewrites the directory, same bytes)"))

    # libnpy: 0 / 8, made by 20 (MS-DOS), needed 20, 1980-01-01, 0o600 << 16
    def libnpy(name, arr, method):
        return M(name, npy(arr), method, flags=0, made_by=20, needed=20, time=0,
                 date=DATE_1980, ext_attr=0o600 << 16, expect=expect_of(arr))
    out.append(valid("valid_libnpy_stored.npz", "writer:libnpy",
                     [libnpy("a.npy", np.arange(4, dtype="<f4").reshape(2, 2), 0),
                      libnpy("b.npy", np.arange(3, dtype="<u8"), 0)],
                     "SPEC-npz §11 libnpy row, stored"))
    out.append(valid("valid_libnpy_deflate.npz", "writer:libnpy",
                     [libnpy("a.npy", np.arange(4, dtype="<f4").reshape(2, 2), 8),
                      libnpy("b.npy", np.arange(300, dtype="<u8"), 8)],
                     "SPEC-npz §11 libnpy row, deflate"))

    # npyz (zip crate 0.6): made by 0x032E (version 4.6 > 4.5 is fine: only
    # version needed is checked), needed 20, 0o100644 << 16, "now", bit 11 non-ASCII
    def npyz(name, arr, method=8):
        return M(name, npy(arr), method, flags=name_flags(name), made_by=0x032E, needed=20,
                 time=FIXED_TIME, date=FIXED_DATE, ext_attr=0o100644 << 16,
                 expect=expect_of(arr))
    out.append(valid("valid_npyz.npz", "writer:npyz",
                     [npyz("weights.npy", np.arange(10, dtype="<f8")),
                      npyz("\u00fcber/\u03b2.npy", np.arange(4, dtype="<i2").reshape(2, 2)),
                      npyz("raw.npy", np.arange(3, dtype="<u4"), 0)],
                     "SPEC-npz §11 npyz row: deflate by default and stored, made by 0x032E, "
                     "bit 11 for the non-ASCII name"))

    # ndarray-npy 0.10 (zip crate 6): stored 0x030A/10, deflate 0x0314/20,
    # 0o100644 << 16, 1980-01-01, optional 0xa11e alignment padding (local and central)
    def ndnpy(name, arr, method, align=None, offset=0):
        m = M(name, npy(arr), method, flags=name_flags(name),
              made_by=0x030A if method == 0 else 0x0314, needed=10 if method == 0 else 20,
              time=0, date=DATE_1980, ext_attr=0o100644 << 16, expect=expect_of(arr))
        if align:
            x = zipcrate_align_extra(offset + 30 + len(m.name), align)
            m.lx, m.cx = x, x
        return m

    for label, method, align in (("stored", 0, None), ("compressed", 8, None),
                                 ("stored_align64", 0, 64), ("stored_align4096", 0, 4096)):
        ms, offset = [], 0
        for name, arr in (("a.npy", np.arange(8, dtype="<f8")),
                          ("\u00e4.npy", np.arange(6, dtype="<i4").reshape(3, 2)),
                          ("c.npy", np.array(3.5))):
            m = ndnpy(name, arr, method, align, offset)
            offset += len(m.local_bytes()) + len(m.data)
            ms.append(m)
        data, L = build(ms)
        if align:
            assert all(L.data[m] % align == 0 for m in ms)
        out.append(Case("valid_ndarray_npy_%s.npz" % label, "writer:ndarray-npy", data, True,
                        note="SPEC-npz §11 ndarray-npy row (%s%s); §5: 0xa11e is ignored, "
                             "extra area at most 4,160 bytes" % (
                                 "stored 0x030A/10" if method == 0 else "deflate 0x0314/20",
                                 ", 0xa11e alignment %d in local and central extra" % align
                                 if align else ", no alignment field"),
                        members=members_of(ms)))

    # NPZ.jl (ZipFile.jl): stored, made by 20, external 0, UTF-8 names WITHOUT bit 11,
    # fortran_order True, 0-d members whose header ends in '}' (SPEC-npz §16)
    ms = [npzjl_member(b"x.npy", np.array(2.5), "<f8"),
          npzjl_member(b"flag.npy", np.array(True), "|b1"),
          npzjl_member(b"v.npy", np.arange(3, dtype="<i8"), "<i8"),
          npzjl_member(b"m.npy", np.arange(6, dtype="<f4").reshape(2, 3), "<f4"),
          npzjl_member("\u03b1\u03b2.npy".encode("utf-8"), np.array([1 + 2j]), "<c16")]
    assert header_end(ms[0].payload) == 64 and ms[0].payload[63:64] == b"}"
    out.append(valid("valid_npzjl.npz", "writer:NPZ.jl", ms,
                     "SPEC-npz §11 NPZ.jl row and §16: 0-d '<f8' and '|b1' headers end in "
                     "'}' with no newline (64 bytes, no padding); UTF-8 name without bit 11 "
                     "decodes as CP437 (§6 row 1)"))

    # Info-ZIP zip 3.0 to a file: UT/ux extras, made by 0x031E, file mode
    for label, level in (("deflate", 6), ("deflate_9", 9), ("deflate_1", 1), ("stored", 0)):
        ms = [infozip_member("a.npy", np.arange(20, dtype="<f8"), level),
              infozip_member("b.npy", np.arange(6, dtype="<i4").reshape(2, 3), level)]
        out.append(valid("valid_infozip_file_%s.npz" % label, "writer:infozip-file", ms,
                         "SPEC-npz §11 Info-ZIP file row: UT 0x5455 (9 local, 5 central), ux "
                         "0x7875 (11), made by 0x031E; %s" % {
                             6: "deflate, flags 0", 9: "-9: deflate with flag bit 1",
                             1: "-1: deflate with flag bit 2",
                             0: "-0: stored, version needed 10"}[level]))
    for label, level in (("deflate", 6), ("stored", 0)):
        ms = [infozip_member("a.npy", np.arange(20, dtype="<f8"), level, pipe=True),
              infozip_member("b.npy", np.arange(6, dtype="<i4").reshape(2, 3), level,
                             pipe=True)]
        out.append(valid("valid_infozip_pipe_%s.npz" % label, "writer:infozip-pipe", ms,
                         "SPEC-npz §11 Info-ZIP pipe row and §7: bit 3, CRC 0 locally, "
                         "uncompressed size set, compressed size %s, 16-byte signed "
                         "descriptor" % ("0 (deflate)" if level else "set (stored)")))
    return out


# --------------------------------------------------------------------------
# Shared bits for the rule cases
# --------------------------------------------------------------------------

ARR_A = np.arange(6, dtype="<i8").reshape(2, 3)
ARR_B = np.linspace(0, 1, 5)


def A(method=0, **kw):
    return arr_member("a.npy", ARR_A, method, **kw)


def Bm(method=0, **kw):
    return arr_member("b.npy", ARR_B, method, **kw)


def np_like(key, arr, compressed=False, pipe=False, **over):
    """numpy layout (local Zip64 field) with overrides."""
    m = numpy_member(key, arr, compressed, pipe)
    m.over.update(over)
    return m


def bad(file, cls, data, code, offset, note, member=None, member_offset=None,
        ambiguity=None, offset_by_spec=True):
    return Case(file, cls, data, False, code, offset, member, member_offset, False, note,
                ambiguity, offset_by_spec)


def verify_only(file, data, code, offset, member, note, ambiguity=None, members=None):
    return Case(file, "verification-only", data, True, code, offset, member, None, True,
                note, ambiguity, True, members)


def ent_local_extra(L, m):
    return L.lh[m] + 30 + len(m.get("l", "name", m.name))


def ent_central_extra(L, m):
    return L.chm(m) + 46 + len(m.get("c", "name", m.name))


# --------------------------------------------------------------------------
# Valid by rule (no single writer, but every rule passes)
# --------------------------------------------------------------------------

@case
def rule_accepts(ctx):
    out = []
    cls = "rule-accept"
    out.append(valid("valid_zip64_end_records_saturated.npz", cls, [A(), Bm(8)],
                     "SPEC-npz §3: a consistent Zip64 record and locator right before the "
                     "EOCD, EOCD fields saturated; the record's values are used", z64={}))
    d, L = build([A(), Bm(8)])
    out.append(valid("valid_zip64_end_records_literal.npz", cls, [A(), Bm(8)],
                     "SPEC-npz §3: Zip64 records whose values equal the EOCD's (not "
                     "saturated)", z64={}, eocd=dict(ndisk=2, ntotal=2, cd_size=L.cd_size,
                                                   cd_offset=L.cd_offset)))

    def big_layout(key, arr):  # numpy above 2 GiB - 1, in miniature
        m = np_like(key, arr, False, False, csize=U32, usize=U32, needed=45)
        m.cx = lambda mm, lho: z64(len(mm.payload), len(mm.data))
        return m
    out.append(valid("valid_zip64_sizes_small_member.npz", cls,
                     [big_layout("a", ARR_A), big_layout("b", ARR_B)],
                     "SPEC-npz §5 and §11 numpy row (above 2 GiB - 1): both 32-bit sizes "
                     "0xFFFFFFFF locally and centrally, central Zip64 field holding the "
                     "real sizes, local Zip64 field equal; small data"))

    def off_layout(key, arr):
        m = np_like(key, arr, c_lho=U32)
        m.cx = lambda mm, lho: z64(lho)
        return m
    out.append(valid("valid_zip64_offset_small.npz", cls,
                     [off_layout("a", ARR_A), off_layout("b", ARR_B)],
                     "SPEC-npz §5: local header offset 0xFFFFFFFF, replaced by the central "
                     "Zip64 field holding exactly that value"))

    out.append(valid("valid_local_sizes_saturated_with_zip64.npz", cls,
                     [np_like("a", ARR_A, l_csize=U32, l_usize=U32),
                      np_like("b", ARR_B, True, l_csize=U32)],
                     "SPEC-npz §5 local Zip64 row: without bit 3 each 32-bit local size is "
                     "the central value or 0xFFFFFFFF"))
    out.append(valid("valid_pipe_sizes_saturated_with_zip64.npz", cls,
                     [np_like("a", ARR_A, pipe=True, l_csize=U32, l_usize=U32),
                      np_like("b", ARR_B, True, True)],
                     "SPEC-npz §7 bit 3 row: local sizes 0xFFFFFFFF allowed when a local "
                     "Zip64 field is present"))
    out.append(valid("valid_descriptor_with_local_values.npz", cls,
                     [A(flags=0x8, desc="dd16"), Bm(8, flags=0x8, desc="dd16", l_crc=0)],
                     "SPEC-npz §7 bit 3 row: local CRC and sizes each 0 or the central "
                     "value (here: the central values, and CRC 0 with real sizes)"))

    out.append(valid("valid_unicode_path_agrees.npz", cls,
                     [A(cx=unicode_path(b"a.npy", b"a.npy"), lx=unicode_path(b"a.npy", b"a.npy")),
                      plain_member("\u00e9.npy", npy(ARR_B), 8, expect=expect_of(ARR_B),
                                   cx=unicode_path("\u00e9.npy".encode(), "\u00e9.npy".encode()))],
                     "SPEC-npz §5 0x7075 row: version 1, CRC-32 of the raw name, UTF-8 name "
                     "equal to the decoded name (ASCII without bit 11, non-ASCII with bit 11)"))
    out.append(valid("valid_extra_area_4160.npz", cls,
                     [A(lx=xrec(0xCAFE, b"\0" * 4156), cx=xrec(0xCAFE, b"\0" * 4156))],
                     "SPEC-npz §5 structure row: an extra area of exactly 4,160 bytes, local "
                     "and central (unknown tag: ignored)"))
    out.append(valid("valid_attributes_and_versions.npz", cls,
                     [A(ext_attr=(0o100644 << 16) | 0x21, made_by=0x0A3F),
                      Bm(8, ext_attr=0x01, made_by=20, needed=45),
                      arr_member("c.npy", np.arange(2, dtype="<i2"), needed=0x0314)],
                     "SPEC-npz §4: MS-DOS archive/read-only bits with a regular file type, "
                     "any version made by (host 10, 6.3), version needed 4.5 (the bound), "
                     "version needed whose high byte is 3 (only the low byte is checked)"))
    out.append(valid("valid_bit11_ascii_names.npz", cls,
                     [A(flags=0x800), Bm(8, flags=0x800)],
                     "SPEC-npz §4/§6: bit 11 on ASCII names (strict UTF-8 of ASCII)"))
    out.append(valid("valid_name_e0a0_without_bit11.npz", cls,
                     [plain_member(b"\xe0\xa0\x80.npy", npy(ARR_A), expect=expect_of(ARR_A))],
                     "SPEC-npz §6 row 3: E0 followed by A0 is not an overlong form (only "
                     "E0 80-9F is); CP437 name accepted"))
    out.append(valid("valid_npy_versions.npz", cls,
                     [plain_member("v1.npy", npy(ARR_A, (1, 0)), expect=expect_of(ARR_A)),
                      plain_member("v2.npy", npy(ARR_B, (2, 0)), 8, expect=expect_of(ARR_B)),
                      plain_member("v3.npy", npy(ARR_A, (3, 0)), expect=expect_of(ARR_A))],
                     "SPEC.md §1: .npy versions 1.0, 2.0 and 3.0 inside members"))

    out.append(valid("valid_name_colon_first_component.npz", cls,
                     [plain_member("kernel:0.npy", npy(ARR_A), expect=expect_of(ARR_A)),
                      plain_member("ab:c.npy", npy(ARR_B), expect=expect_of(ARR_B))],
                     "SPEC-npz §6 row 5 refuses only a drive letter and ':' at the start",
                     ambiguity="§6 lists ':' after the first component as accepted on "
                               "purpose but refuses only '<letter>:' at the start; ':' "
                               "inside a first component of 2+ characters (kernel:0, ab:c) "
                               "is taken as accepted"))
    return out


# --------------------------------------------------------------------------
# Phase A: locating the EOCD (SPEC-npz §2)
# --------------------------------------------------------------------------

@case
def phase_a(ctx):
    out = []
    cls = "EOCD fields"
    good, L = build([A(), Bm(8)])
    out.append(bad("eocd_not_zip_empty.npz", cls, b"", "not_zip", None,
                   "SPEC-npz §2 row 1: fewer than 22 bytes (empty file)"))
    out.append(bad("eocd_not_zip_21_bytes.npz", cls, SIG_EOCD + b"\0" * 17, "not_zip", None,
                   "SPEC-npz §2 row 1: 21 bytes, even starting with PK\\x05\\x06"))
    out.append(bad("eocd_not_zip_npy_file.npz", cls, npy(ARR_A), "not_zip", None,
                   "SPEC-npz §2 row 3: no PK\\x05\\x06 at all (a .npy file)"))
    out.append(bad("eocd_not_zip_signature_broken.npz", cls,
                   good[:L.eocd] + b"PK\x05\x07" + good[L.eocd + 4:], "not_zip", None,
                   "SPEC-npz §2 row 3: EOCD signature altered, none found"))
    out.append(bad("eocd_not_zip_beyond_window.npz", "archive comment / trailing bytes",
                   good + b"\0" * 65536, "not_zip", None,
                   "SPEC-npz §2 row 3: 65,536 bytes after the EOCD put its signature 1 byte "
                   "before the last 65,557 bytes"))
    out.append(bad("eocd_trailing_window_edge.npz", "archive comment / trailing bytes",
                   good + b"\0" * 65535, "trailing_data", L.eocd + 22,
                   "SPEC-npz §2 rows 3+5: 65,535 bytes after the EOCD: its signature is the "
                   "first byte of the 65,557-byte window; trailing_data at the first byte "
                   "after it"))
    out.append(bad("eocd_truncated_record.npz", cls, good[:-10], "not_zip", None,
                   "SPEC-npz §2: the file ends 12 bytes into the EOCD",
                   ambiguity="a PK\\x05\\x06 with fewer than 22 bytes after it: §2 does not "
                             "say whether that is 'none found' (not_zip) or a comment length "
                             "running past the end (bad_eocd at EOCD+20, a field that is "
                             "itself past the end); taken as not_zip"))
    d, L2 = build([A(), Bm(8)], comment=b"hello")
    out.append(bad("eocd_archive_comment.npz", "archive comment / trailing bytes", d,
                   "archive_comment", L2.eocd + 22,
                   "SPEC-npz §2 row 4: comment reaching the end exactly, at its first byte"))
    out.append(bad("eocd_trailing_data.npz", "archive comment / trailing bytes",
                   good + b"JUNK!", "trailing_data", L.eocd + 22,
                   "SPEC-npz §2 row 5: bytes after the EOCD (comment length 0)"))
    d, L2 = build([A(), Bm(8)], comment=b"abc", trailing=b"1234")
    out.append(bad("eocd_comment_then_trailing.npz", "archive comment / trailing bytes", d,
                   "trailing_data", L2.eocd + 25,
                   "SPEC-npz §2 row 5: bytes follow the end of a 3-byte comment"))
    d, L2 = build([A(), Bm(8)], comment=b"xy", eocd=dict(clen=40))
    out.append(bad("eocd_comment_length_past_eof.npz", "archive comment / trailing bytes", d,
                   "bad_eocd", L2.eocd + E_CLEN,
                   "SPEC-npz §2 row 6: comment length 40 with 2 bytes left: at the comment "
                   "length field"))

    # a second, self-consistent EOCD: in the first one's comment (with a second directory)
    parts = [A(), Bm(8)]
    d0, L0 = build(parts)
    cd = d0[L0.cd_offset:L0.eocd]
    inner = struct.pack(EOCD_FMT, SIG_EOCD, 0, 0, 2, 2, len(cd), L0.eocd + 22, 0)
    d, L2 = build(parts, comment=cd + inner)
    assert d.endswith(inner)
    out.append(bad("eocd_ambiguous_in_comment.npz", "two EOCDs", d, "ambiguous_eocd", L2.eocd,
                   "SPEC-npz §2 row 7: the last 22 bytes are an EOCD (comment 0) pointing at "
                   "a second directory hidden in the comment of an earlier EOCD whose "
                   "comment length ends exactly at the end: ambiguous_eocd at that earlier "
                   "signature"))

    # ... and one hidden in a stored member's data
    def hidden(clen):
        fake = struct.pack(EOCD_FMT, SIG_EOCD, 0, 0, 2, 2, 0, 0, clen)
        arr = np.frombuffer(b"\0" * 8 + fake + b"\0" * 10, dtype="u1")
        return plain_member("h.npy", npy(arr), expect=expect_of(arr))
    m = hidden(0)
    d, L2 = build([A(), m])
    pos = L2.data[m] + header_end(m.payload) + 8
    m = hidden(L2.size - (pos + 22))
    d, L2 = build([A(), m])
    assert d[pos:pos + 4] == SIG_EOCD
    out.append(bad("eocd_ambiguous_in_data.npz", "two EOCDs", d, "ambiguous_eocd", pos,
                   "SPEC-npz §2 row 7: a PK\\x05\\x06 inside a stored member's array data "
                   "whose comment length would end exactly at the end of the file"))
    return out


# --------------------------------------------------------------------------
# Phase B: Zip64 end records (SPEC-npz §3)
# --------------------------------------------------------------------------

@case
def phase_b(ctx):
    out = []
    cls = "Zip64 end records"

    def z(o, eocd=None, gap=b""):
        return build([A(), Bm(8)], z64=o, eocd=eocd, z64_gap=gap)

    rows = [
        ("z64_locator_disk_1", dict(loc_disk=1), "loc", "row 1: disk with the record 1"),
        ("z64_locator_disks_0", dict(loc_disks=0), "loc", "row 1: total disks 0"),
        ("z64_locator_disks_2", dict(loc_disks=2), "loc", "row 1: total disks 2"),
        ("z64_locator_offset_wrong", dict(loc_offset=0), "loc",
         "row 1: record offset 0, not locator - 56"),
        ("z64_record_signature", dict(r_sig=b"PK\x06\x05"), "loc",
         "row 2: record signature wrong"),
        ("z64_record_size_52", dict(r_size=52), "loc",
         "row 2: size of record 52 (extensible data claimed)"),
        ("z64_record_disk_1", dict(r_disk=1), R_DISK, "row 3: record disk number 1"),
        ("z64_record_disk_cd_1", dict(r_disk_cd=1), R_DISK_CD,
         "row 3: record disk of the central directory 1"),
    ]
    for fname, o, where, what in rows:
        d, L = z(o)
        off = L.z64loc if where == "loc" else L.z64rec + where
        out.append(bad(fname + ".npz", cls, d, "bad_zip64_eocd", off, "SPEC-npz §3 " + what))
    d, L = z(dict(r_ndisk=1))
    out.append(bad("z64_record_entries_disk_ne_total.npz", cls, d, "bad_zip64_eocd",
                   L.z64rec + R_NDISK,
                   "SPEC-npz §3 row 3: record entries on this disk 1, total 2",
                   ambiguity="'at the field' for 'entries on this disk = total entries' "
                             "could be either field; taken as the entries-on-this-disk "
                             "field (record +24)", offset_by_spec=False))
    d, L = z({}, eocd=dict(ntotal=3))
    out.append(bad("z64_eocd_total_disagrees.npz", cls, d, "bad_zip64_eocd",
                   L.z64rec + R_NTOTAL,
                   "SPEC-npz §3 row 4: EOCD total entries 3 (not saturated) vs record 2; EOCD "
                   "entries on this disk saturated; at the record field (+32)"))
    d0, L0 = z({})
    d, L = z({}, eocd=dict(cd_size=L0.cd_size + 1))
    out.append(bad("z64_eocd_cd_size_disagrees.npz", cls, d, "bad_zip64_eocd",
                   L.z64rec + R_CDSIZE,
                   "SPEC-npz §3 row 4: EOCD cd size not saturated and unequal; record +40"))
    d, L = z({}, eocd=dict(cd_offset=5))
    out.append(bad("z64_eocd_cd_offset_disagrees.npz", cls, d, "bad_zip64_eocd",
                   L.z64rec + R_CDOFF,
                   "SPEC-npz §3 row 4: EOCD cd offset 5 vs record; record +48"))
    d, L = z({}, eocd=dict(ndisk=2))
    out.append(bad("z64_eocd_entries_disk_ne_total.npz", cls, d, "bad_eocd", L.eocd + E_NDISK,
                   "SPEC-npz §3 row 5: EOCD entries on this disk 2 (= record), EOCD total "
                   "0xFFFF: neither equal nor 0xFFFF",
                   ambiguity="§3 row 5 gives no offset; taken as the EOCD entries-on-this-"
                             "disk field (+8), as for §2's 'at the field'",
                   offset_by_spec=False))
    d0, L0 = build([A(), Bm(8)])
    d, L = z({}, eocd=dict(ndisk=2, ntotal=2, cd_size=L0.cd_size, cd_offset=L0.cd_offset),
             gap=b"\0\0\0\0")
    out.append(bad("z64_locator_not_adjacent.npz", cls, d, "bad_eocd", L.eocd + E_CDOFF,
                   "SPEC-npz §3: a locator 4 bytes before the 20 bytes preceding the EOCD "
                   "is not looked for; the records are stray bytes, so cd_offset + cd_size "
                   "!= EOCD offset (§2 row 10, at the cd offset field)"))
    d0, L0 = z({})
    d, L = z(dict(r_cd_offset=L0.cd_offset + 1))
    out.append(bad("z64_record_cd_offset_wrong.npz", cls, d, "bad_eocd", L.z64rec + R_CDOFF,
                   "SPEC-npz §2 row 10 with §3 ('then the record's values are used'): EOCD "
                   "saturated, the record's cd offset 1 too high, so cd_offset + cd_size != "
                   "offset of the Zip64 record",
                   ambiguity="'bad_eocd at the cd offset field' when the value comes from the "
                             "Zip64 record: taken as the record's field (+48), as "
                             "too_many_members names 'Zip64 record +32'; the other reading is "
                             "the saturated EOCD field (+16)", offset_by_spec=False))
    d, L = z(dict(r_ndisk=65536, r_ntotal=65536))
    out.append(bad("z64_too_many_members.npz", "entry count", d, "too_many_members",
                   L.z64rec + R_NTOTAL,
                   "SPEC-npz §2 last row / §8: 65,536 entries declared by the Zip64 record "
                   "(EOCD saturated), decided before the directory is read: record +32"))
    return out


# --------------------------------------------------------------------------
# Phase C: EOCD fields (SPEC-npz §2)
# --------------------------------------------------------------------------

@case
def phase_c(ctx):
    out = []
    cls = "EOCD fields"
    parts = lambda: [A(), Bm(8)]  # noqa: E731
    d0, L0 = build(parts())
    for fname, e, field, what in (
            ("eocd_disk_number_1", dict(disk=1), E_DISK, "disk number 1"),
            ("eocd_disk_cd_1", dict(disk_cd=1), E_DISK_CD, "disk of the central directory 1"),
            ("eocd_cd_offset_plus_1", dict(cd_offset=L0.cd_offset + 1), E_CDOFF,
             "cd_offset + 1: cd_offset + cd_size != EOCD offset"),
            ("eocd_cd_offset_saturated", dict(cd_offset=U32), E_CDOFF,
             "cd_offset 0xFFFFFFFF without Zip64 (taken literally)")):
        d, L = build(parts(), eocd=e)
        out.append(bad(fname + ".npz", cls, d, "bad_eocd", L.eocd + field, "SPEC-npz §2: " + what))
    d, L = build(parts(), eocd=dict(cd_size=L0.cd_size - 1))
    out.append(bad("eocd_cd_size_minus_1.npz", cls, d, "bad_eocd", L.eocd + E_CDOFF,
                   "SPEC-npz §2 row 10: cd_size - 1 breaks cd_offset + cd_size = EOCD "
                   "offset; the rule names the cd offset field as the location"))
    d, L = build(parts(), eocd=dict(ndisk=1))
    out.append(bad("eocd_entries_disk_ne_total.npz", "entry count", d, "bad_eocd",
                   L.eocd + E_NDISK,
                   "SPEC-npz §2 row 9: entries on this disk 1, total 2",
                   ambiguity="'at the field': taken as the entries-on-this-disk field "
                             "(EOCD +8), not the total (EOCD +10)", offset_by_spec=False))
    stub = b"MZ" + bytes(range(62))
    d, L = build([stub] + parts(), shift=len(stub))
    out.append(bad("prepended_sfx_unadjusted.npz", "prepended data", d, "bad_eocd",
                   L.eocd + E_CDOFF,
                   "SPEC-npz §2 row 10: a 64-byte stub with offsets not adjusted: "
                   "cd_offset + cd_size != EOCD offset; zipfile's concat correction refused"))
    h = plain_member("h.npy", npy(np.arange(3)))
    hidden = h.local_bytes() + h.data
    d, L = build([hidden] + parts(), shift=len(hidden))
    out.append(bad("prepended_hidden_entry_unadjusted.npz", "prepended data", d, "bad_eocd",
                   L.eocd + E_CDOFF,
                   "SPEC-npz §2 row 10: a hidden local entry before the archive, offsets "
                   "not adjusted (numpy starts with PK\\x03\\x04 and applies concat)"))
    d, L = build(parts(), eocd=dict(ndisk=U16, ntotal=U16))
    out.append(bad("count_ffff_without_zip64.npz", "entry count", d, "entry_count_mismatch",
                   L.cd_offset + L.cd_size,
                   "SPEC-npz §2 last paragraph: 0xFFFF entries without a locator is a real "
                   "count; §4 row 1: the directory ends after 2 headers, at the position "
                   "reached (end of the directory)"))
    return out


# --------------------------------------------------------------------------
# Phase D: central headers (SPEC-npz §4, §5 central, §6)
# --------------------------------------------------------------------------

@case
def phase_d_structure(ctx):
    out = []
    d, L = build([A(), Bm(8)], eocd=dict(ndisk=3, ntotal=3))
    out.append(bad("count_fewer_headers.npz", "entry count", d, "entry_count_mismatch",
                   L.cd_offset + L.cd_size,
                   "SPEC-npz §4 row 1: 3 declared, the directory ends after 2: at the "
                   "position reached"))
    d, L = build([A(), Bm(8)], eocd=dict(ndisk=1, ntotal=1))
    out.append(bad("count_more_headers.npz", "entry count", d, "entry_count_mismatch",
                   L.ch_at(1),
                   "SPEC-npz §4 row 1 / §13 D: 1 declared, bytes left after it (a second "
                   "header): at the position reached"))
    d, L = build([A(), Bm(8)], cd_junk=b"\0" * 8)
    out.append(bad("count_garbage_in_directory.npz", "entry count", d, "entry_count_mismatch",
                   L.cd_offset + L.cd_size - 8,
                   "SPEC-npz §4 row 1: 8 bytes inside cd_size after the last header"))

    cls = "central header structure"
    b = Bm(8, c_sig=b"PK\x01\x03")
    d, L = build([A(), b])
    out.append(bad("central_signature.npz", cls, d, "bad_central_header", L.chm(b),
                   "SPEC-npz §4 row 2: second central header signature PK\\x01\\x03",
                   ambiguity="§4 gives no offset for bad_central_header; taken as the start "
                             "of the header", offset_by_spec=False))
    a, b = A(), Bm(8)
    d0, L0 = build([a, b])
    frag = d0[L0.chm(b):L0.chm(b) + 20]
    d, L = build([a, b], central=[a], cd_junk=frag, eocd=dict(ndisk=2, ntotal=2))
    out.append(bad("central_truncated_fixed_part.npz", cls, d, "bad_central_header",
                   L.cd_offset + L.cd_size - 20,
                   "SPEC-npz §4 row 2: the second header has 20 of its 46 fixed bytes "
                   "inside cd_size",
                   ambiguity="no offset in §4; taken as the start of the truncated header "
                             "(a reader could also call a partial header 'the directory "
                             "ends' = entry_count_mismatch; taken as bad_central_header since "
                             "§4 row 2 names the 46 fixed bytes)", offset_by_spec=False))
    b = Bm(8, c_xlen=30)
    d, L = build([A(), b])
    out.append(bad("central_extra_past_cd_size.npz", cls, d, "bad_central_header", L.chm(b),
                   "SPEC-npz §4 row 2: the last header's extra length 30 runs past cd_size "
                   "(into the EOCD)",
                   ambiguity="no offset in §4; taken as the start of the header",
                   offset_by_spec=False))
    b = Bm(8, c_disk=1)
    d, L = build([A(), b])
    out.append(bad("central_disk_number_1.npz", cls, d, "bad_central_header", L.chm(b) + C_DISK,
                   "SPEC-npz §4: disk number start 1",
                   ambiguity="no offset in §4; taken as the disk number start field (+34)",
                   offset_by_spec=False))
    b = Bm(8, comment=b"hi")
    d, L = build([A(), b])
    out.append(bad("central_entry_comment.npz", "archive comment / trailing bytes", d,
                   "archive_comment", L.chm(b) + 46 + 5,
                   "SPEC-npz §4 file comment row: a 2-byte entry comment, at the comment"))
    return out


@case
def phase_d_extra(ctx):
    out = []
    cls = "extra fields"

    def one(fname, member, code, rel, note, amb=None, by_spec=True, cls_=cls):
        d, L = build([A(), member])
        off = None if rel is None else ent_central_extra(L, member) + rel
        out.append(bad(fname, cls_, d, code, off, note, ambiguity=amb, offset_by_spec=by_spec))

    one("extra_central_truncated_record.npz", Bm(8, cx=b"\xfe\xca\x04\x00\x01"),
        "bad_extra_field", 0, "SPEC-npz §5 structure: a record claiming 4 bytes with 1 left")
    one("extra_central_trailing_bytes.npz", Bm(8, cx=xrec(0xCAFE, b"\1\2") + b"\1\2"),
        "bad_extra_field", 6, "SPEC-npz §5 structure: 2 bytes after the last complete record "
        "(records do not fill the field): at the incomplete record",
        amb="'at the record' for bytes too short to be a record: taken as the start of "
            "those bytes (extra start + 6), not the extra field's start", by_spec=False)
    up = unicode_path(b"b.npy", b"b.npy")
    one("extra_central_unicode_path_twice.npz", Bm(8, cx=up + up), "bad_extra_field", len(up),
        "SPEC-npz §5 structure: tag 0x7075 twice (both agreeing)",
        amb="'at the record' for a duplicated tag: taken as the second occurrence",
        by_spec=False)
    u = len(npy(ARR_B))
    one("extra_central_zip64_twice.npz", Bm(8, c_usize=U32, cx=z64(u) + z64(u)),
        "bad_extra_field", 12,
        "SPEC-npz §5 structure: tag 0x0001 twice (uncompressed size saturated)",
        amb="'at the record' for a duplicated tag: taken as the second occurrence",
        by_spec=False)
    one("extra_central_area_4161.npz", Bm(8, cx=xrec(0xCAFE, b"\0" * 4157)), "bad_extra_field",
        0, "SPEC-npz §5 structure: central extra area of 4,161 bytes (one record)")
    one("extra_central_length_32768.npz", Bm(8, cx=xrec(0xCAFE, b"\0" * 32768)),
        "bad_extra_field", 0, "SPEC-npz §5 structure: a 32,768-byte record (negative in "
        "signed readers, Android bug 9695860)")
    b = Bm(8)
    b.cx = z64(len(b.payload), len(b.data))
    one("extra_central_zip64_unneeded.npz", b, "bad_extra_field", 0,
        "SPEC-npz §5 Zip64 central row: present while no field is 0xFFFFFFFF",
        amb="§5's Zip64 row gives no offset ('at the record' is said only in the "
            "structure row); taken as the Zip64 record", by_spec=False)
    b = Bm(8, c_usize=U32)
    b.cx = z64(len(b.payload), len(b.data))
    one("extra_central_zip64_too_long.npz", b, "bad_extra_field", 0,
        "SPEC-npz §5 Zip64 central row: only the uncompressed size is saturated but the "
        "field holds 16 bytes",
        amb="§5's Zip64 row gives no offset ('at the record' is said only in the "
            "structure row); taken as the Zip64 record", by_spec=False)
    b = Bm(8, c_usize=U32, c_csize=U32)
    b.cx = z64(len(b.payload))
    one("extra_central_zip64_too_short.npz", b, "bad_extra_field", 0,
        "SPEC-npz §5 Zip64 central row: both sizes saturated, field holds 8 bytes",
        amb="§5's Zip64 row gives no offset ('at the record' is said only in the "
            "structure row); taken as the Zip64 record", by_spec=False)
    one("extra_central_zip64_missing_offset.npz", Bm(8, c_lho=U32), "bad_extra_field", 0,
        "SPEC-npz §5 Zip64 central row (0xFFFFFFFF without Zip64): local header offset "
        "0xFFFFFFFF and no Zip64 field",
        amb="no offset for a missing field; taken as the start of the (empty) central "
            "extra area, i.e. header + 46 + name length", by_spec=False,
        cls_="offsets / bounds")
    one("extra_central_zip64_missing_size.npz", Bm(8, c_usize=U32), "bad_extra_field", 0,
        "SPEC-npz §5 Zip64 central row: uncompressed size 0xFFFFFFFF and no Zip64 field",
        amb="no offset for a missing field; taken as the start of the (empty) central "
            "extra area", by_spec=False)

    cls = "encryption"
    one("encryption_aes_extra_on_stored.npz",
        Bm(0, cx=xrec(0x9901, struct.pack("<H2sBH", 2, b"AE", 3, 0))), "encrypted_member", 0,
        "SPEC-npz §5: AES extra field 0x9901 (member otherwise stored and plain)",
        amb="§5 gives no offset; taken as the record", by_spec=False, cls_=cls)
    one("encryption_strong_extra.npz", Bm(8, cx=xrec(0x0017, b"\x02\x00" + b"\0" * 6)),
        "encrypted_member", 0, "SPEC-npz §5: strong-encryption field 0x0017",
        amb="§5 gives no offset; taken as the record", by_spec=False, cls_=cls)
    aes = Bm(99, needed=51,
             cx=xrec(0x9901, struct.pack("<H2sBH", 2, b"AE", 3, 8)))
    one("encryption_aes_method99_with_extra.npz", aes, "encrypted_member", 0,
        "SPEC-npz §4/§5: WinZip AES (method 99 + 0x9901 field, version needed 5.1)",
        amb="two encryption signs: §13 D order puts 'extra field' before 'encryption', so "
            "taken at the 0x9901 record; an implementation checking encryption as one step "
            "may report the method field (+10) or flags", by_spec=False, cls_=cls)
    return out


def central_field_case(fname, cls, member, code, field, note, by_spec=False, amb=None,
                       other=None):
    d, L = build([other if other is not None else A(), member])
    if amb is None and not by_spec:
        amb = "offset not given by the SPEC; taken as the field that carries the fault"
    return bad(fname, cls, d, code, L.chm(member) + field, note, ambiguity=amb,
               offset_by_spec=by_spec)


@case
def phase_d_fields(ctx):
    out = []
    cls = "encryption"
    for bit, what in ((0x0001, "bit 0 (ZipCrypto)"), (0x0040, "bit 6 (strong encryption)"),
                      (0x2000, "bit 13 (encrypted central directory)")):
        out.append(central_field_case(
            "encryption_flag_bit%d.npz" % (bit.bit_length() - 1), cls,
            Bm(8, flags=bit), "encrypted_member", C_FLAGS,
            "SPEC-npz §4 flags row: %s" % what))
    out.append(central_field_case("encryption_method_99.npz", cls, Bm(99),
                                  "encrypted_member", C_METHOD,
                                  "SPEC-npz §4 method row: 99 (AES) without the extra field"))

    cls = "compression methods"
    payload = npy(ARR_B)
    lz_props = lzma._encode_filter_properties({"id": lzma.FILTER_LZMA1})
    lz = lzma.LZMACompressor(lzma.FORMAT_RAW, filters=[
        lzma._decode_filter_properties(lzma.FILTER_LZMA1, lz_props)])
    lz_data = struct.pack("<BBH", 9, 4, len(lz_props)) + lz_props + lz.compress(payload) + lz.flush()
    for fname, method, data, extra, what in (
            ("method_bzip2", 12, bz2.compress(payload), dict(needed=46),
             "12 bzip2 (real bzip2 data, version needed 4.6; zipfile reads it)"),
            ("method_lzma", 14, lz_data, dict(needed=63, flags=0x2),
             "14 LZMA (real data with EOS flag bit 1, version needed 6.3; zipfile reads it)"),
            ("method_deflate64", 9, payload, {}, "9 deflate64"),
            ("method_zstd", 93, payload, {}, "93 zstd"),
            ("method_shrink", 1, payload, {}, "1 shrink"),
            ("method_65535", 65535, payload, {}, "65535")):
        m = plain_member("b.npy", payload, method, data=data, **extra)
        out.append(central_field_case(
            fname + ".npz", cls, m, "unsupported_method", C_METHOD,
            "SPEC-npz §4 method row: %s. §13 D order: method before feature, so a version "
            "needed above 4.5 or option bits do not come first" % what))

    cls = "flags and versions"
    for needed in (46, 51, 63, 64):
        out.append(central_field_case(
            "version_needed_%d.npz" % needed, cls, Bm(8, needed=needed), "unsupported_feature",
            C_NEEDED, "SPEC-npz §4 version needed row: %d.%d > 4.5" % divmod(needed, 10)))
    for bit, method in ((4, 8), (5, 8), (12, 8), (15, 8), (1, 0), (2, 0)):
        out.append(central_field_case(
            "flag_bit%d_%s.npz" % (bit, "stored" if method == 0 else "deflate"), cls,
            Bm(method, flags=1 << bit), "unsupported_feature", C_FLAGS,
            "SPEC-npz §4 flags row: bit %d on a %s member" % (
                bit, "stored" if method == 0 else "deflate")))

    cls = "member type"
    for label, attr, made_by in (
            ("symlink", 0o120777 << 16, 0x0314), ("directory", 0o040755 << 16, 0x0314),
            ("char_device", 0o020644 << 16, 0x0314), ("block_device", 0o060644 << 16, 0x0314),
            ("fifo", 0o010644 << 16, 0x0314), ("socket", 0o140644 << 16, 0x0314),
            ("msdos_directory", 0x10, 20), ("msdos_volume_label", 0x08, 20),
            ("symlink_host_ntfs", 0o120777 << 16, 0x0A14)):
        out.append(central_field_case(
            "type_%s.npz" % label, cls, Bm(8, ext_attr=attr, made_by=made_by),
            "bad_member_type", C_EXT,
            "SPEC-npz §4 external attributes row: %s (host byte %d; the content is a valid "
            ".npy)" % (label.replace("_", " "), made_by >> 8)))
    return out


@case
def phase_d_names(ctx):
    out = []
    cls = "names"
    payload = npy(ARR_B)

    def nm(fname, raw, code, note, bit11=False, amb=None):
        m = plain_member(raw, payload, 8, flags=0x800 if bit11 else 0)
        if isinstance(raw, bytes) and not bit11:
            m.flags = 0
        d, L = build([A(), m])
        out.append(bad(fname, cls, d, code, L.chm(m) + C_NAME,
                       "SPEC-npz §6: " + note + " (offset: the name's first byte)",
                       ambiguity=amb))

    # row 1: strict UTF-8 under bit 11
    for label, raw in (("invalid_byte", b"a\xff.npy"), ("overlong_slash", b"a\xc0\xafb.npy"),
                       ("surrogate", b"a\xed\xa0\x80.npy"), ("above_10ffff", b"a\xf4\x90\x80\x80.npy"),
                       ("truncated_sequence", b"a\xc3.npy"), ("overlong_3byte", b"\xe0\x80\xaf.npy")):
        nm("name_bit11_%s.npz" % label, raw, "bad_member_name",
           "row 1: bit 11 set and not strict UTF-8 (%s)" % label.replace("_", " "), bit11=True)
    # row 2: NUL, controls, backslash, bidi
    for label, raw, b11 in (
            ("nul_after_npy", b"a.npy\x00x", False), ("nul_inside", b"a\x00.npy", False),
            ("c0_01", b"a\x01.npy", False), ("c0_tab", b"a\tb.npy", False),
            ("c0_newline", b"a\nb.npy", False), ("c0_1f", b"a\x1f.npy", False),
            ("del_7f", b"a\x7f.npy", False),
            ("c1_u0085", "a\u0085.npy".encode(), True), ("c1_u009b", "a\u009b.npy".encode(), True),
            ("backslash", b"a\\b.npy", False), ("backslash_traversal", b"..\\a.npy", False),
            ("bidi_u202e", "a\u202eypn.npy".encode(), True),
            ("bidi_u061c", "a\u061c.npy".encode(), True),
            ("bidi_u200f", "a\u200f.npy".encode(), True),
            ("bidi_u2066", "a\u2066.npy".encode(), True)):
        nm("name_%s.npz" % label, raw, "bad_member_name",
           "row 2: %r" % raw.decode("utf-8" if b11 else "cp437"), bit11=b11)
    # row 3: overlong forms in the raw bytes without bit 11
    for label, raw in (("c0", b"a\xc0\xafb.npy"), ("c1", b"a\xc1\x81.npy"),
                       ("e0_80", b"a\xe0\x80\xaf.npy"), ("f0_80", b"\xf0\x80\x80\xaf.npy")):
        nm("name_overlong_no_bit11_%s.npz" % label, raw, "bad_member_name",
           "row 3: bit 11 clear, overlong UTF-8 form (%s) a lenient reader sees as '/'" % label)
    # row 4: .npy suffix
    for label, raw in (("upper_npy", b"a.NPY"), ("txt", b"readme.txt"), ("directory", b"dir/"),
                       ("npz", b"inner.npz"), ("no_extension", b"a"),
                       ("trailing_space", b"a.npy "), ("npy_dot", b"a.npy.")):
        nm("name_not_npy_%s.npz" % label, raw, "not_npy_member",
           "row 4: %r does not end in '.npy' (case-sensitive)" % raw.decode())
    # row 5: key, absolute, drive letters, components
    for label, raw in (("empty_key", b".npy"), ("absolute", b"/a.npy"),
                       ("absolute_etc", b"/etc/x.npy"), ("drive_upper", b"C:a.npy"),
                       ("drive_slash", b"c:/x.npy"), ("dotdot", b"../a.npy"),
                       ("dotdot_inner", b"a/../../b.npy"), ("dot", b"./a.npy"),
                       ("dot_inner", b"a/./b.npy"), ("empty_component", b"a//b.npy"),
                       ("dotdot_only_dir", b"../.npy")):
        nm("name_%s.npz" % label, raw, "bad_member_name", "row 5: %r" % raw.decode())
    # Row 5 is applied to the key as well as to the name (decided by the lead,
    # issue 13): a key such as '..' or 'a/' would escape or name a directory
    # when a consumer turns keys into paths.
    for label, raw in (("key_dot", b"..npy"), ("key_dotdot", b"...npy"), ("key_trailing_slash", b"a/.npy"),
                       ("key_dotdot_inner", b"a/...npy")):
        nm("name_%s.npz" % label, raw, "bad_member_name",
           "row 5 applied to the key %r (the name without .npy)" % raw.decode()[:-4])

    # duplicates (row 6)
    cls_dup = "names"
    a1, a2 = A(), arr_member("a.npy", ARR_B, 8)
    d, L = build([a1, a2])
    out.append(bad("name_duplicate_exact.npz", cls_dup, d, "duplicate_name", L.ch_at(1),
                   "SPEC-npz §6 row 6: two members named a.npy (Android 'Master Key', "
                   "CVE-2013-4787), at the second central header"))
    n1 = plain_member("\u00e9.npy", npy(ARR_A))
    n2 = plain_member(unicodedata.normalize("NFD", "\u00e9") + ".npy", npy(ARR_B), 8)
    assert n1.name != n2.name and n1.flags == n2.flags == 0x800
    d, L = build([n1, n2])
    out.append(bad("name_duplicate_nfc_nfd.npz", cls_dup, d, "duplicate_name", L.ch_at(1),
                   "SPEC-npz §6 row 6: U+00E9 and e + U+0301 (both bit 11) are equal after "
                   "NFC"))
    c1 = cnpy_member("x", np.arange(3, dtype="<f8"), "<f8")
    c2 = cnpy_member("x", np.arange(4, dtype="<f8"), "<f8")
    d, L = build([c1, c2])
    out.append(bad("name_duplicate_cnpy_append.npz", cls_dup, d, "duplicate_name", L.ch_at(1),
                   "SPEC-npz §11 cnpy row: a second npz_save of the same name in mode 'a' "
                   "makes a duplicate; §6 row 6"))
    sh = plain_member("a", b"not an array\n", 0)
    d, L = build([A(), sh])
    out.append(bad("name_shadowed_by_non_npy.npz", cls_dup, d, "not_npy_member",
                   L.chm(sh) + C_NAME,
                   "SPEC-npz §6 row 4 (and §16): a member 'a' beside 'a.npy' (numpy would "
                   "serve key 'a' twice)"))

    # Unicode Path (0x7075) disagreeing, central
    for label, x in (("other_name", unicode_path(b"b.npy", b"c.npy")),
                     ("bad_crc", unicode_path(b"b.npy", b"b.npy", name_crc=0x12345678)),
                     ("version_2", unicode_path(b"b.npy", b"b.npy", version=2)),
                     ("traversal", unicode_path(b"b.npy", b"../b.npy"))):
        m = Bm(8, cx=x)
        d, L = build([A(), m])
        out.append(bad("unicode_path_%s.npz" % label, cls, d, "name_mismatch",
                       ent_central_extra(L, m),
                       "SPEC-npz §5 0x7075 row: %s" % label.replace("_", " "),
                       ambiguity="no offset for the Unicode Path check; taken as the 0x7075 "
                                 "record", offset_by_spec=False))
    return out


@case
def phase_d_bounds_sizes(ctx):
    out = []
    cls = "offsets / bounds"
    for label, lho, what in (("past_eof", 1 << 20, "1 MiB, past the end of the file"),
                             ("huge", 0x7FFFFFFF, "0x7FFFFFFF"),
                             ("at_directory", None, "the central directory's own offset")):
        a = A()
        b = Bm(8)
        if lho is None:
            d0, L0 = build([a, b])
            lho = L0.cd_offset
        b.over["c_lho"] = lho
        d, L = build([a, b])
        out.append(bad("bounds_offset_%s.npz" % label, cls, d, "entry_out_of_bounds",
                       L.chm(b) + C_LHO, "SPEC-npz §4 local header offset row: %s" % what))
    b = Bm(8)
    b.over["csize"] = len(b.data) + 1
    d, L = build([A(), b])
    out.append(bad("bounds_extent_into_directory.npz", "member inside member / overlap", d,
                   "entry_out_of_bounds", L.chm(b) + C_LHO,
                   "SPEC-npz §4: last entry (no local extra) declares 1 more compressed byte "
                   "than it has: 30 + name + compressed size passes cd_offset"))
    b = Bm(8, c_lho=U32)
    b.cx = z64(1 << 40)
    d, L = build([A(), b])
    out.append(bad("bounds_offset_zip64_huge.npz", cls, d, "entry_out_of_bounds",
                   ent_central_extra(L, b) + 4,
                   "SPEC-npz §4/§5: offset 2^40 given by the central Zip64 field",
                   ambiguity="'at the offset field' when the offset comes from the Zip64 "
                             "field: taken as the 8-byte value in the Zip64 field (as "
                             "too_many_members uses the Zip64 record's field), not the "
                             "saturated 32-bit field (+42)", offset_by_spec=False))

    cls = "sizes / deflate"
    b = Bm(0)
    b.over["csize"] = len(b.data) - 1
    d, L = build([A(), b])
    out.append(bad("sizes_stored_csize_lt_usize.npz", cls, d, "size_mismatch", L.chm(b) + C_CSIZE,
                   "SPEC-npz §4 stored sizes row: compressed 1 less than uncompressed (local "
                   "agrees), at the compressed size field"))
    b = Bm(0)
    b.over["usize"] = len(b.payload) + 10
    d, L = build([A(), b])
    out.append(bad("sizes_stored_usize_gt_csize.npz", cls, d, "size_mismatch", L.chm(b) + C_CSIZE,
                   "SPEC-npz §4 stored sizes row: uncompressed 10 more than compressed; the "
                   "rule names the compressed size field"))

    cls = "declared-size bombs"
    small = npy(np.zeros(16, "<f8"))
    for label, usize, what in (
            ("4e9_over_small", 4_000_000_000, "4,000,000,000 bytes declared"),
            ("200k", 200_000, "200,000 bytes declared (ratio above 1032)")):
        b = plain_member("b.npy", small, 8, usize=usize)
        assert usize > MAX_RATIO * len(b.data)
        d, L = build([A(), b])
        out.append(bad("bomb_ratio_%s.npz" % label, cls, d, "ratio_exceeded",
                       L.chm(b) + C_USIZE,
                       "SPEC-npz §4 ratio row: %s over %d compressed bytes (ratio %d)" % (
                           what, len(b.data), usize // len(b.data))))
    b = plain_member("b.npy", small, 8)
    b.over["usize"] = (MAX_RATIO + 1) * len(b.data)
    d, L = build([A(), b])
    out.append(bad("bomb_ratio_1033.npz", cls, d, "ratio_exceeded", L.chm(b) + C_USIZE,
                   "SPEC-npz §4 ratio row: exactly 1033 x compressed size (the bound is "
                   "1032 x, inclusive)"))
    b = np_like("b", np.zeros(16), True, c_usize=U32)
    b.cx = lambda mm, lho: z64(1 << 40)
    b.lx = lambda mm: z64(1 << 40, len(mm.data))
    d, L = build([A(), b])
    out.append(bad("bomb_ratio_1tib_zip64.npz", cls, d, "ratio_exceeded",
                   ent_central_extra(L, b) + 4,
                   "SPEC-npz §4 ratio row: 1 TiB declared through the central Zip64 field "
                   "over %d compressed bytes" % len(b.data),
                   ambiguity="'at the uncompressed size field' when the value comes from "
                             "the Zip64 field: taken as the 8-byte value in the central "
                             "Zip64 field, not the saturated 32-bit field (+24)",
                   offset_by_spec=False))

    # total_size_exceeded by declared sizes: 65 central entries over one local entry
    cls = "total size (declared)"
    body = np.zeros((1 << 26) - 128, "u1")
    payload = npy(body)
    assert len(payload) == 1 << 26
    kernel = plain_member("k00.npy", payload, 8, level=9, expect=expect_of(body))
    assert len(payload) <= MAX_RATIO * len(kernel.data)
    central = [kernel]
    kcrc = crc(payload)
    for i in range(1, 65):
        central.append(plain_member("k%02d.npy" % i, b"", 8, data=kernel.data, c_lho=0,
                                    crc=kcrc, usize=len(payload)))
    d, L = build([kernel], central=central)
    out.append(bad("total_declared_over_4gib.npz", cls, d, "total_size_exceeded",
                   L.ch_at(64) + C_USIZE,
                   "SPEC-npz §4 total row / §8: 65 central entries of 64 MiB each (ratio "
                   "%d, within 1032) over one %d-byte deflate stream; 64 of them make "
                   "exactly 4 GiB (allowed, inclusive), the 65th passes it: at its "
                   "uncompressed size field. D runs before the overlap checks of E" % (
                       len(payload) // len(kernel.data), len(kernel.data))))
    return out


# --------------------------------------------------------------------------
# Phase E: local entries and layout (SPEC-npz §7, §5 local)
# --------------------------------------------------------------------------

@case
def phase_e_layout(ctx):
    out = []
    cls = "prepended data"
    stub = b"MZ" + bytes(range(62))
    d, L = build([stub, A(), Bm(8)])
    out.append(bad("prepended_sfx_adjusted.npz", cls, d, "prepended_data", 0,
                   "SPEC-npz §7 row 1: a 64-byte stub before the first entry, offsets "
                   "adjusted"))
    h = plain_member("h.npy", npy(np.arange(3)))
    d, L = build([h.local_bytes() + h.data, A(), Bm(8)])
    out.append(bad("prepended_hidden_entry_adjusted.npz", cls, d, "prepended_data", 0,
                   "SPEC-npz §7 row 1: a complete local entry absent from the directory "
                   "before the first listed entry"))
    d, L = build([b"junkjunkjunkjunk"], central=[])
    out.append(bad("prepended_no_entries.npz", cls, d, "prepended_data", 0,
                   "SPEC-npz §7 'no entries and cd_offset = 0' row: no entries, 16 bytes "
                   "before the (empty) directory"))

    cls = "gaps / order"
    a, b = A(), Bm(8)
    d, L = build([a, b"\0" * 7, b])
    out.append(bad("gap_between_entries.npz", cls, d, "gap_between_entries", L.end[a],
                   "SPEC-npz §7 row 2: 7 bytes between two entries, at expected"))
    a, b = A(), Bm(8)
    d, L = build([a, h.local_bytes() + h.data, b])
    out.append(bad("gap_hidden_entry_between.npz", cls, d, "gap_between_entries", L.end[a],
                   "SPEC-npz §7 row 2: a complete local entry not in the directory between "
                   "two listed entries"))
    a, b = A(), Bm(8)
    d, L = build([a, b, b"XYZ"])
    out.append(bad("gap_before_directory.npz", cls, d, "gap_between_entries", L.end[b],
                   "SPEC-npz §7 'after the last entry' row: 3 bytes between the last entry "
                   "and the directory"))
    a, b = A(), Bm(8, desc="dd16")
    d, L = build([a, b])
    out.append(bad("descriptor_unflagged.npz", "data descriptors", d, "gap_between_entries",
                   L.desc[b],
                   "SPEC-npz §7: a signed descriptor after an entry without flag bit 3 "
                   "belongs to no entry (the last entry's end is its data end)"))
    a, b = A(), Bm(8)
    d, L = build([a, b], central=[b, a])
    out.append(bad("order_two_swapped.npz", cls, d, "entry_order", L.chm(a),
                   "SPEC-npz §7 last row: directory lists b (second in the file) then a",
                   ambiguity="'the first central header out of order': taken as the first "
                             "header whose offset is below its predecessor's (here the "
                             "second header, a.npy), not the first header not in its sorted "
                             "place (the first, b.npy)", offset_by_spec=False))
    a, b, c = A(), Bm(8), arr_member("c.npy", np.arange(3, dtype="<i2"))
    d, L = build([a, b, c], central=[a, c, b])
    out.append(bad("order_three_rotated.npz", cls, d, "entry_order", L.chm(b),
                   "SPEC-npz §7 last row: directory order a, c, b",
                   ambiguity="as order_two_swapped: taken as the first header whose offset "
                             "decreases (third header, b.npy); the other reading gives the "
                             "second header (c.npy)", offset_by_spec=False))

    # overlaps
    cls = "full overlap"
    k = plain_member("k0.npy", npy(ARR_A), 8)
    cen = [k] + [plain_member("k%d.npy" % i, npy(ARR_A), 8, c_lho=0) for i in (1, 2)]
    d, L = build([k], central=cen)
    out.append(bad("overlap_full_distinct_names.npz", cls, d, "overlapping_entries", 0,
                   "SPEC-npz §7 row 3 (Fifield full overlap): three central headers with "
                   "distinct names, one local entry at 0; the second in offset order "
                   "(stable sort) starts before expected: at its local header, 0"))
    k = plain_member("k0.npy", npy(ARR_A), 8)
    cen = [k] + [plain_member("k0.npy", npy(ARR_A), 8, c_lho=0) for i in (1, 2)]
    d, L = build([k], central=cen)
    out.append(bad("overlap_full_same_names.npz", cls, d, "duplicate_name", L.ch_at(1),
                   "SPEC-npz §6 row 6 (Fifield full overlap with one name): phase D finds "
                   "the duplicate before phase E sees the overlap"))

    cls = "quoted overlap"
    n = 4
    kernel_payload = npy(np.zeros(4096, "u1"))
    ms = [None] * n
    outputs, datas = [None] * n, [None] * n
    outputs[-1], datas[-1] = kernel_payload, deflate(kernel_payload, 9)
    for i in reversed(range(n)):
        if i < n - 1:
            q = ms[i + 1].local_bytes()
            datas[i] = b"\x00" + struct.pack("<HH", len(q), len(q) ^ 0xFFFF) + q + datas[i + 1]
            outputs[i] = q + outputs[i + 1]
        ms[i] = M("q%d.npy" % i, outputs[i], 8, data=datas[i])
    assert zlib.decompress(datas[0], -15) == outputs[0]
    lhos = [0]
    for i in range(1, n):
        lhos.append(lhos[-1] + len(ms[i - 1].local_bytes()) + 5)
    for i, m in enumerate(ms):
        m.over["c_lho"] = lhos[i]
    d, L = build([ms[0].local_bytes() + datas[0]], central=ms)
    assert d[lhos[2]:lhos[2] + 4] == SIG_LOCAL
    out.append(bad("overlap_quoted.npz", cls, d, "overlapping_entries", lhos[1],
                   "SPEC-npz §7 row 3 (Fifield quoted overlap, CPython gh-109858): each "
                   "entry's deflate stream quotes the next local header in a stored block "
                   "and continues into the next entry's data; %d entries, each inflating "
                   "the rest; the second entry starts inside the first" % n))

    cls = "member inside member / overlap"
    inner = Bm(8)
    inner_bytes = inner.local_bytes() + inner.data
    host_arr = np.frombuffer(b"\0" * 8 + inner_bytes + b"\0" * 8, "u1")
    host = plain_member("a.npy", npy(host_arr))
    inner.over["c_lho"] = 0
    d, L = build([host], central=[host, inner])
    pos = L.data[host] + header_end(host.payload) + 8
    inner.over["c_lho"] = pos
    d, L = build([host], central=[host, inner])
    assert d[pos:pos + 4] == SIG_LOCAL
    out.append(bad("overlap_member_inside_member.npz", cls, d, "overlapping_entries", pos,
                   "SPEC-npz §7 row 3: a complete entry (b.npy) hidden inside a.npy's stored "
                   "array data, listed in the directory"))
    a = A(8)
    a.over["csize"] = len(a.data) + 1
    b = Bm(8)
    d, L = build([a, b])
    out.append(bad("overlap_one_byte.npz", cls, d, "overlapping_entries", L.lh[b],
                   "SPEC-npz §7 row 3: a.npy (deflate) declares one compressed byte more "
                   "than its stream, so it ends 1 byte into b.npy's local header"))
    b = np_like("b", ARR_B, True)
    b.over["csize"] = len(b.data) + 1
    b.lx = z64(len(b.payload), len(b.data) + 1)
    d, L = build([A(), b])
    out.append(bad("overlap_data_into_directory.npz", cls, d, "overlapping_entries", L.lh[b],
                   "SPEC-npz §7 data row: the last entry (numpy layout, 20-byte local extra) "
                   "declares 1 more compressed byte; §4's minimum extent (without the local "
                   "extra) passes, but its data ends 1 byte past cd_offset",
                   ambiguity="§7 data row gives no offset; taken as the entry's local header "
                             "(as 'overlapping_entries at its local header'); the data start "
                             "or cd_offset are other readings", offset_by_spec=False))
    b = Bm(0)
    b.over["l_xlen"] = len(b.data) + 1
    d, L = build([A(), b])
    out.append(bad("overlap_local_extra_into_directory.npz", cls, d, "overlapping_entries",
                   L.lh[b],
                   "SPEC-npz §7 local header row: the last local header's extra length "
                   "makes 30 + name + extra end 1 byte past cd_offset",
                   ambiguity="§7 writes 'bad_local_header / overlapping_entries' for this "
                             "row; taken as bad_local_header for the signature and "
                             "overlapping_entries for running into the directory (§13: "
                             "'or running into the central directory'), at the local header",
                   offset_by_spec=False))
    b = Bm(8, l_sig=b"PK\x03\x03")
    d, L = build([A(), b])
    out.append(bad("local_signature.npz", "local vs central", d, "bad_local_header", L.lh[b],
                   "SPEC-npz §7 local header row: second local header signature PK\\x03\\x03",
                   ambiguity="no offset given; taken as the local header start",
                   offset_by_spec=False))
    return out


@case
def phase_e_local(ctx):
    out = []
    cls = "local vs central"
    for label, lname in (("other", b"c.npy"), ("case", b"B.npy"), ("traversal", b"../b.npy"),
                         ("longer", b"bb.npy")):
        b = Bm(8, l_name=lname)
        d, L = build([A(), b])
        out.append(bad("local_name_%s.npz" % label, cls, d, "name_mismatch", L.lh[b] + L_NAME,
                       "SPEC-npz §7 name row: central b.npy, local %r; at the local name" %
                       lname.decode()))

    amb_field = "offset not given by the SPEC; taken as the field that differs"
    for fname, kw, field, what in (
            ("local_flags_bit11", dict(l_flags=0x800), L_FLAGS, "local flags 0x0800, central 0"),
            ("local_flags_bit3", dict(l_flags=0x8), L_FLAGS,
             "local bit 3 set (sizes present), central clear"),
            ("local_method", dict(l_method=0), L_METHOD, "local method 0, central 8")):
        b = Bm(8, **kw)
        d, L = build([A(), b])
        out.append(bad(fname + ".npz", cls, d, "header_mismatch", L.lh[b] + field,
                       "SPEC-npz §7 flags/method row: %s, at the field" % what))
    b = Bm(8)
    b.over["l_crc"] = b.field("c", "crc") ^ 0x5A5A5A5A
    d, L = build([A(), b])
    out.append(bad("local_crc.npz", cls, d, "header_mismatch", L.lh[b] + L_CRC,
                   "SPEC-npz §7 without bit 3 row: local CRC differs, at the CRC field"))
    amb_sizes = ("§7 says 'header_mismatch at the CRC field' for 'local CRC = central CRC; "
                 "local sizes = central sizes'; read literally (the CRC field, +14, start "
                 "of the CRC-and-sizes group) even though a size differs; an implementation "
                 "may report the size field (+18 / +22)")
    for fname, key, delta, what in (("local_csize", "l_csize", -1, "compressed size 1 less"),
                                    ("local_usize", "l_usize", +1, "uncompressed size 1 more"),
                                    ("local_csize_zero", "l_csize", None, "compressed size 0")):
        b = Bm(8)
        base = b.field("c", key[2:])
        b.over[key] = 0 if delta is None else base + delta
        d, L = build([A(), b])
        out.append(bad(fname + ".npz", cls, d, "header_mismatch", L.lh[b] + L_CRC,
                       "SPEC-npz §7 without bit 3 row: local %s than central" % what
                       if delta is not None else
                       "SPEC-npz §7 without bit 3 row: local compressed size 0 without bit 3",
                       ambiguity=amb_sizes, offset_by_spec=False))
    b = np_like("b", ARR_B, True)
    b.lx = lambda mm: z64(len(mm.payload) + 1, len(mm.data))
    d, L = build([A(), b])
    out.append(bad("local_zip64_value.npz", cls, d, "header_mismatch", ent_local_extra(L, b),
                   "SPEC-npz §5 local Zip64 row: numpy layout whose local Zip64 uncompressed "
                   "size is 1 more than the central value",
                   ambiguity="§5 gives no offset for 'header_mismatch for the values'; taken "
                             "as the local Zip64 record", offset_by_spec=False))
    b = np_like("b", ARR_B, True)
    b.over["l_csize"] = len(b.data) + 7
    d, L = build([A(), b])
    out.append(bad("local_zip64_32bit_size.npz", cls, d, "header_mismatch", L.lh[b] + L_CRC,
                   "SPEC-npz §5 local Zip64 row: with a Zip64 field the 32-bit local "
                   "compressed size must be the central value or 0xFFFFFFFF (here +7)",
                   ambiguity=amb_sizes, offset_by_spec=False))
    b = Bm(8, flags=0x8, desc="dd16")
    b.over["l_crc"] = b.field("c", "crc") ^ 1
    d, L = build([A(), b])
    out.append(bad("local_bit3_crc_wrong.npz", cls, d, "header_mismatch", L.lh[b] + L_CRC,
                   "SPEC-npz §7 bit 3 row: local CRC neither 0 nor the central value",
                   ambiguity=amb_field + " (the bit 3 row names no field)", offset_by_spec=False))
    b = Bm(8, flags=0x8, desc="dd16", l_crc=0, l_csize=U32, l_usize=U32)
    d, L = build([A(), b])
    out.append(bad("local_bit3_sizes_saturated_no_zip64.npz", cls, d, "header_mismatch",
                   L.lh[b] + L_CRC,
                   "SPEC-npz §7 bit 3 row: local sizes 0xFFFFFFFF allowed only with a local "
                   "Zip64 field",
                   ambiguity=amb_sizes, offset_by_spec=False))

    cls = "extra fields"
    for fname, lx, rel, what, amb in (
            ("extra_local_truncated_record", b"\xfe\xca\x08\x00\x01\x02", 0,
             "a record claiming 8 bytes with 2 left", None),
            ("extra_local_area_4161", xrec(0xCAFE, b"\0" * 4157), 0,
             "local extra area of 4,161 bytes", None),
            ("extra_local_unicode_path_twice", unicode_path(b"b.npy", b"b.npy") * 2, 14,
             "tag 0x7075 twice", "taken as the second occurrence")):
        b = Bm(8, lx=lx)
        d, L = build([A(), b])
        out.append(bad(fname + ".npz", cls, d, "bad_extra_field", ent_local_extra(L, b) + rel,
                       "SPEC-npz §5 structure row (local): " + what, ambiguity=amb,
                       offset_by_spec=amb is None))
    b = np_like("b", ARR_B, True)
    b.lx = lambda mm: z64(len(mm.payload), len(mm.data)) * 2
    d, L = build([A(), b])
    out.append(bad("extra_local_zip64_twice.npz", cls, d, "bad_extra_field",
                   ent_local_extra(L, b) + 20,
                   "SPEC-npz §5 structure row: numpy layout with its local Zip64 field twice",
                   ambiguity="taken as the second occurrence", offset_by_spec=False))
    b = np_like("b", ARR_B, True)
    b.lx = lambda mm: z64(len(mm.payload))
    d, L = build([A(), b])
    out.append(bad("extra_local_zip64_8_bytes.npz", cls, d, "bad_extra_field",
                   ent_local_extra(L, b),
                   "SPEC-npz §5 local Zip64 row: 8 bytes instead of 16 (bad_extra_field for "
                   "the length)", ambiguity="no offset given; taken as the record",
                   offset_by_spec=False))
    b = Bm(0, lx=xrec(0x9901, struct.pack("<H2sBH", 2, b"AE", 3, 0)))
    d, L = build([A(), b])
    out.append(bad("encryption_aes_extra_local_only.npz", "encryption", d, "encrypted_member",
                   ent_local_extra(L, b),
                   "SPEC-npz §5 0x9901 row ('never', local or central): an AES field in the "
                   "local header only", ambiguity="no offset given; taken as the local record",
                   offset_by_spec=False))
    b = Bm(8, lx=unicode_path(b"b.npy", b"evil.npy"))
    d, L = build([A(), b])
    out.append(bad("unicode_path_local_disagrees.npz", "names", d, "name_mismatch",
                   ent_local_extra(L, b),
                   "SPEC-npz §5 0x7075 row applied to the local extra field (§7 'Local extra "
                   "field: section 5')",
                   ambiguity="no offset given; taken as the local 0x7075 record",
                   offset_by_spec=False))

    cls = "data descriptors"
    pipe_kw = dict(flags=0x8, l_crc=0, l_csize=0, l_usize=0)
    a = A(**pipe_kw)
    d, L = build([a, Bm(8)])
    out.append(bad("descriptor_missing.npz", cls, d, "bad_data_descriptor", L.desc[a],
                   "SPEC-npz §7 descriptor row: bit 3 set, the next local header follows "
                   "the data directly"))
    a = A(desc="dd12", **pipe_kw)
    d, L = build([a, Bm(8)])
    out.append(bad("descriptor_unsigned.npz", cls, d, "bad_data_descriptor", L.desc[a],
                   "SPEC-npz §7 descriptor row: a 12-byte descriptor without PK\\x07\\x08 "
                   "(the signature is required)"))
    a = A(desc="dd16", **pipe_kw)
    a.over["d_crc"] = a.field("c", "crc") ^ 0xFF
    d, L = build([a, Bm(8)])
    out.append(bad("descriptor_crc_wrong.npz", cls, d, "bad_data_descriptor", L.desc[a],
                   "SPEC-npz §7 descriptor row: descriptor CRC differs from the central CRC"))
    a = A(desc="dd16", **pipe_kw)
    a.over["d_usize"] = a.field("c", "usize") + 1
    d, L = build([a, Bm(8)])
    out.append(bad("descriptor_size_wrong.npz", cls, d, "bad_data_descriptor", L.desc[a],
                   "SPEC-npz §7 descriptor row: descriptor uncompressed size + 1"))
    a = np_like("a", ARR_A, pipe=True)
    a.desc = "dd16"
    d, L = build([a, np_like("b", ARR_B, True, True)])
    out.append(bad("descriptor_width_16_with_zip64.npz", cls, d, "bad_data_descriptor",
                   L.desc[a],
                   "SPEC-npz §7 descriptor row: numpy pipe layout (local Zip64 field) with a "
                   "16-byte descriptor (8-byte sizes required)"))
    a = A(desc="dd24", **pipe_kw)
    d, L = build([a, Bm(8)])
    out.append(bad("descriptor_width_24_without_zip64.npz", cls, d, "bad_data_descriptor",
                   L.desc[a],
                   "SPEC-npz §7 descriptor row: no local Zip64 field, 24-byte descriptor "
                   "(4-byte sizes required)"))
    return out


# --------------------------------------------------------------------------
# Phase F: members are .npy files (SPEC-npz §9, SPEC.md)
# --------------------------------------------------------------------------

NPY_OFFSET_AMB = ("SPEC.md does not pin this code's offset; taken as %s")


@case
def phase_f(ctx):
    out = []
    cls = "members not npy / npy errors"

    def member_case(fname, payload, method, code, member_offset, note, amb=None, by_spec=True,
                    usize=None, data=None):
        kw = {}
        if usize is not None:
            kw["usize"] = usize
        m = plain_member("m.npy", payload, method, data=data, **kw)
        d, L = build([A(), m])
        offset = L.data[m] + (member_offset if method == 0 and member_offset is not None else 0)
        out.append(bad(fname, cls, d, code, offset, note, member="m.npy",
                       member_offset=member_offset, ambiguity=amb, offset_by_spec=by_spec))

    member_case("member_text.npz", b"hello, this is not an array\n", 0, "bad_magic", 0,
                "SPEC-npz §9 / SPEC.md §1: a text member named m.npy (numpy serves it as bytes)")
    inner, _ = build([A()])
    member_case("member_nested_zip.npz", inner, 0, "bad_magic", 0,
                "SPEC-npz §9 / SPEC.md §1: a zip archive stored as m.npy")
    member_case("member_nested_zip_deflate.npz", inner, 8, "bad_magic", 0,
                "SPEC-npz §9: deflate member whose inflated bytes are a zip; offset is the "
                "data start for deflate members")
    v4 = bytearray(npy(ARR_B))
    v4[6] = 4
    member_case("member_npy_version_4.npz", bytes(v4), 0, "unsupported_version", 6,
                "SPEC.md §1: version (4,0) inside a stored member")
    member_case("member_empty.npz", b"", 0, "truncated_preamble", 0,
                "SPEC.md §1: an empty stored member (0 bytes: fewer than 10)",
                amb=NPY_OFFSET_AMB % "0 (the input size, which is also 0)", by_spec=False)
    member_case("member_empty_deflate.npz", b"", 8, "truncated_preamble", 0,
                "SPEC.md §1: an empty deflate member (stream 03 00)",
                amb=NPY_OFFSET_AMB % "0", by_spec=False)

    hdr = pad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }")
    p = npy_hand(hdr, b"")
    member_case("member_negative_dimension.npz", p, 0, "negative_dimension",
                p.index(b"-"), "SPEC.md §2: shape (-3,)",
                amb=NPY_OFFSET_AMB % "the '-' sign", by_spec=False)
    member_case("member_negative_dimension_deflate.npz", p, 8, "negative_dimension",
                p.index(b"-"), "SPEC.md §2: shape (-3,) in a deflate member (offset = data "
                "start, member_offset = the '-')",
                amb=NPY_OFFSET_AMB % "the '-' sign", by_spec=False)
    obj = npy(np.array([1, "a", None], dtype=object))
    member_case("member_object_dtype.npz", obj, 0, "object_dtype", obj.index(b"'|O'"),
                "SPEC.md §3: an object array (pickle) written by np.save(allow_pickle=True)",
                amb=NPY_OFFSET_AMB % "the opening quote of the '|O' type string",
                by_spec=False)

    hdr = pad_header("{'descr': '<i8', 'descr': '<i8', 'fortran_order': False, 'shape': (2,), }")
    p = npy_hand(hdr, np.arange(2, dtype="<i8").tobytes())
    member_case("member_duplicate_key.npz", p, 0, "duplicate_key",
                p.index(b"'descr'", p.index(b"'descr'") + 1),
                "SPEC.md §3: 'descr' twice, at the second one (numpy keeps the last)")

    big = npy(np.zeros(1, "<f8"))
    hdr16 = npy_hand(pad_header("{'descr': '<f8', 'fortran_order': False, 'shape': (2147483648,), }"))
    member_case("member_16gib_claim.npz", hdr16, 0, "truncated_data", len(hdr16),
                "SPEC-npz §9 / SPEC.md §5: header claims 16 GiB (2^31 float64), declared "
                "uncompressed size = data_offset (no data at all)",
                amb=NPY_OFFSET_AMB % "the end of the member, which here equals data_offset "
                                     "(both natural choices coincide)", by_spec=False)
    member_case("member_16gib_claim_deflate.npz", hdr16, 8, "truncated_data", len(hdr16),
                "SPEC-npz §9: same in a deflate member",
                amb=NPY_OFFSET_AMB % "the end of the member (= data_offset)", by_spec=False)
    p = npy(ARR_B)
    member_case("member_trailing_data.npz", p + b"XTRA", 0, "trailing_data", len(p),
                "SPEC-npz §9 / SPEC.md §5: 4 bytes after data_offset + nbytes inside the "
                "declared size (numpy never reads them), at the first of them")
    member_case("member_trailing_data_deflate.npz", p + b"XTRA", 8, "trailing_data", len(p),
                "SPEC-npz §9: same in a deflate member (offset = data start)")

    # header_too_large: HEADER_LEN 1 MiB + 1 in a version 2.0 header
    hl = MAX_HEADER + 1
    pre = b"\x93NUMPY\x02\x00" + struct.pack("<I", hl)
    rnd = random.Random(20240301)
    filler = bytes(rnd.randrange(256) for _ in range(1100))
    stream = deflate(pre + filler, 6)
    usize = 12 + hl
    assert usize <= MAX_RATIO * len(stream)
    member_case("member_header_too_large.npz", pre, 8, "header_too_large", 8,
                "SPEC.md §1: HEADER_LEN 1 MiB + 1 (version 2.0); the declared size covers "
                "the header, so truncated_header cannot apply",
                amb=NPY_OFFSET_AMB % "8 (the HEADER_LEN field)", by_spec=False,
                usize=usize, data=stream)
    pre4 = b"\x93NUMPY\x02\x00" + struct.pack("<I", U32)
    member_case("member_header_4gib_small_member.npz", pre4 + b"{", 0, "header_too_large", 8,
                "SPEC.md §1: HEADER_LEN 0xFFFFFFFF in a 13-byte stored member",
                amb="both header_too_large and truncated_header apply; taken as "
                    "header_too_large (SPEC.md lists it first and decides it before any "
                    "header byte is read), at the HEADER_LEN field (8)", by_spec=False)

    # inflater errors and short streams in the first bytes (SPEC-npz §9)
    cls_d = "sizes / deflate"
    p = npy(ARR_B)
    m = plain_member("m.npy", p, 8, data=b"\x07" + b"\0" * 30)
    d, L = build([A(), m])
    out.append(bad("deflate_bad_first_block.npz", cls_d, d, "bad_deflate", L.data[m],
                   "SPEC-npz §9: the first block has type 3 (invalid): the inflater reports "
                   "an error at once; at the data start", member="m.npy"))
    m = plain_member("m.npy", p, 8, data=deflate(p[:10]))
    d, L = build([A(), m])
    out.append(bad("deflate_ends_after_preamble.npz", cls_d, d, "size_mismatch", L.data[m],
                   "SPEC-npz §9: a complete stream (final block) that yields only the 10-byte "
                   "preamble, the header being asked for", member="m.npy"))
    m = plain_member("m.npy", p, 8, data=deflate(p[:header_end(p)]))
    d, L = build([A(), m])
    out.append(bad("deflate_ends_after_header.npz", cls_d, d, "size_mismatch", L.data[m],
                   "SPEC-npz §9: the stream ends right after the header while the array has "
                   "data ('one more byte' is asked for)", member="m.npy"))
    cut_payload = npy(np.arange(400, dtype="<f8"))
    cut = deflate(cut_payload, 6)[:6]
    assert len(zlib.decompressobj(-15).decompress(cut)) < 10
    assert len(cut_payload) <= MAX_RATIO * len(cut)  # not a ratio_exceeded in phase D
    m = plain_member("m.npy", cut_payload, 8, data=cut)
    d, L = build([A(), m])
    out.append(bad("deflate_cut_in_first_block.npz", cls_d, d, "size_mismatch", L.data[m],
                   "SPEC-npz §9: the compressed data stops 6 bytes into the first block "
                   "(no output at all, no inflater error)", member="m.npy",
                   ambiguity="a stream cut short is 'the stream ends before the bytes asked "
                             "for' (size_mismatch); zlib reports Z_BUF_ERROR, not "
                             "Z_DATA_ERROR, so not bad_deflate"))
    return out


# --------------------------------------------------------------------------
# Phase G: verification only (SPEC-npz §10, §14 last paragraph)
# --------------------------------------------------------------------------

@case
def phase_g(ctx):
    out = []
    arr = np.arange(100, dtype="<f8")
    p = npy(arr)
    exp = expect_of(arr)

    def vcase(fname, m, code, note, amb=None, parts=None):
        ms = parts if parts is not None else [A(), m]
        d, L = build(ms)
        m.expect = exp if m.expect is None else m.expect
        out.append(verify_only(fname, d, code, L.data[m], m.decoded_name(), note, amb,
                               members=members_of(ms)))

    for method, label in ((0, "stored"), (8, "deflate")):
        m = plain_member("m.npy", p, method, expect=exp)
        m.over["crc"] = m.field("c", "crc") ^ 0x00010000
        vcase("verify_crc_%s.npz" % label, m, "crc_mismatch",
              "SPEC-npz §10: %s member whose CRC-32 (local and central) is wrong" % label)
    m = np_like("m", arr, True, True)
    m.over["c_crc"] = m.field("c", "crc") ^ 0x00010000
    vcase("verify_crc_descriptor.npz", m, "crc_mismatch",
          "SPEC-npz §10: numpy pipe layout; central CRC and descriptor CRC agree and are "
          "wrong (local CRC 0)",
          parts=[np_like("a", ARR_A, True, True), m])
    m = plain_member("m.npy", p, 8, data=deflate(p[:header_end(p) + 400]), expect=exp)
    vcase("verify_deflate_shorter.npz", m, "size_mismatch",
          "SPEC-npz §10: the stream (complete, final block) yields 400 of 800 data bytes")
    m = plain_member("m.npy", p, 8, data=deflate(p + b"\0" * 1000), expect=exp)
    vcase("verify_deflate_longer.npz", m, "size_mismatch",
          "SPEC-npz §10: the stream yields 1000 bytes more than declared; CRC of the "
          "declared bytes matches (numpy stops at the declared size)")
    m = plain_member("m.npy", p, 8, data=deflate(p) + b"JUNK1", expect=exp)
    vcase("verify_junk_after_final_block.npz", m, "size_mismatch",
          "SPEC-npz §10: 5 bytes after the final block inside the compressed size (the "
          "stream must consume exactly the compressed size)")
    big = np.arange(2048, dtype="<f8")
    pb = npy(big)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    head = c.compress(pb[:header_end(pb) + 8192]) + c.flush(zlib.Z_FULL_FLUSH)
    m = plain_member("m.npy", pb, 8, data=head + b"\x07" + b"\0" * 40, expect=expect_of(big))
    assert zlib.decompressobj(-15).decompress(head)[:len(pb)] == pb[:header_end(pb) + 8192]
    vcase("verify_corrupt_block_after_4k.npz", m, "bad_deflate",
          "SPEC-npz §10: 8 KB of data inflate correctly, then a block of type 3 (invalid); "
          "the first bytes (§9) are fine")
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    head = c.compress(pb) + c.flush(zlib.Z_FULL_FLUSH)
    m = plain_member("m.npy", pb, 8, data=head[:len(head) // 2], expect=expect_of(big))
    assert len(zlib.decompressobj(-15).decompress(m.data)) > header_end(pb) + 1
    vcase("verify_stream_cut_after_8k.npz", m, "size_mismatch",
          "SPEC-npz §10: the compressed data stops in the middle (no final block, no "
          "inflater error): 'reaches its final block' fails")
    small = np.zeros(1, "<f8")
    ps = npy(small)
    assert len(ps) == 136
    m = plain_member("m.npy", ps, 8, data=deflate(ps + b"\0" * (1 << 20), 9),
                     expect=expect_of(small))
    vcase("verify_136_byte_declaration.npz", m, "size_mismatch",
          "SPEC-npz §14 last paragraph, small version: a 136-byte declaration over a stream "
          "of 1 MiB + 136 bytes (the 512 MiB original scaled down)")
    # ratio exactly 1032: accepted by default (§4 bound inclusive), stream short.
    # The header's shape depends on the declared size, which depends on the
    # stream length: iterate to the fixed point.
    usize = 0
    for _ in range(20):
        body = np.zeros(max(usize - 128, 0), "u1")
        hdr = npy(body)[:128]
        stream = deflate(hdr + b"\0" * 64)
        if MAX_RATIO * len(stream) == usize:
            break
        usize = MAX_RATIO * len(stream)
    assert header_end(hdr) == 128 and usize == MAX_RATIO * len(stream) == len(npy(body))
    m = plain_member("m.npy", hdr, 8, data=stream, usize=usize, expect=expect_of(body))
    m.over["crc"] = crc(npy(body))
    vcase("verify_ratio_exactly_1032.npz", m, "size_mismatch",
          "SPEC-npz §4 ratio row (bound inclusive): declared size exactly 1032 x the "
          "compressed size, header consistent with it; the stream itself is short, so only "
          "verification sees it")
    return out


@case
def phase_h_amended(ctx):
    """The rules amended on 2026-11-26 (SPEC-npz sections 6 and 9) where their
    code paths are not reached by the cases above: names whose canonical forms
    are built (a Hangul syllable with a trailing jamo, a supplementary
    character with a decomposition), a name whose compatibility decomposition
    breaks the stream-safe limit, and a header that inflates past what the
    archive's compressed bytes pay for."""
    out = []
    payload = npy(ARR_B)
    for fname, name, note in (
            ("names_hangul_trailing_jamo.npz", "\uac00\u11a8.npy",
             "SPEC-npz \u00a76: U+AC00 then the trailing jamo U+11A8 (NFC composes them); the "
             "name is taken as written"),
            ("names_supplementary_decomposition.npz", "x\U0001d15e.npy",
             "SPEC-npz \u00a76: U+1D15E decomposes to two supplementary characters (a "
             "composition exclusion)")):
        m = plain_member(name, payload, 8, expect=expect_of(ARR_B))
        out.append(valid(fname, "names", [A(), m], note))
    m = plain_member("\uff9e" * 31 + ".npy", payload, 8)
    d, L = build([A(), m])
    out.append(bad("name_nfkc_not_stream_safe.npz", "names", d, "bad_member_name", L.chm(m) + C_NAME,
                   "SPEC-npz \u00a76 (amended 2026-11-26): 31 x U+FF9E, starters as written, "
                   "31 non-starters in a row in the compatibility decomposition (offset: the "
                   "name's first byte)"))
    # 200,000 bytes of header (white space) from about 300 compressed bytes:
    # 196,590 bytes past 1 KiB plus eight times the compressed bytes, more
    # than the 64 KiB plus an eighth of the archive the archive may run over.
    text = "{'descr': '<f8', 'fortran_order': False, 'shape': (5,), }"
    header = (text + " " * (200000 - 12 - len(text) - 1) + "\n").encode()
    body = b"\x93NUMPY\x02\x00" + struct.pack("<I", len(header)) + header + ARR_B.astype("<f8").tobytes()
    m = plain_member("m.npy", body, 8)
    d, L = build([A(), m])
    assert len(m.data) < 400
    out.append(bad("member_header_amplified.npz", "members not npy / npy errors", d, "header_too_large", L.data[m],
                   "SPEC-npz \u00a79 (amended 2026-11-26): a 200,000-byte header inflates from "
                   "fewer than 400 compressed bytes, past the archive's allowance for unpaid "
                   "header bytes (offset: the data start; member offset 8, HEADER_LEN)",
                   member="m.npy", member_offset=8))
    return out


# --------------------------------------------------------------------------
# numpy's verdict (forked child, RLIMIT_AS 2 GiB, 10 s)
# --------------------------------------------------------------------------

def _numpy_child(path, raise_header, timeout):
    def on_alarm(signum, frame):
        raise TimeoutError("numpy took more than %d s" % timeout)
    try:
        resource.setrlimit(resource.RLIMIT_AS, (2 * GiB, 2 * GiB))
        signal.signal(signal.SIGALRM, on_alarm)
        signal.alarm(timeout)
        kw = {"max_header_size": MAX_HEADER} if raise_header else {}
        obj = np.load(path, allow_pickle=False, **kw)
        if not isinstance(obj, np.lib.npyio.NpzFile):
            res = {"verdict": "other: %s" % type(obj).__name__}
        else:
            members = []
            try:
                for key in obj.files:
                    v = obj[key]
                    if isinstance(v, np.ndarray):
                        members.append({
                            "key": key, "type": "ndarray", "shape": list(v.shape),
                            "descr": descr_of(v.dtype),
                            "fortran": bool(v.flags.f_contiguous and not v.flags.c_contiguous)})
                    else:
                        members.append({"key": key, "type": type(v).__name__})
            finally:
                obj.close()
            res = {"verdict": "loads", "members": members}
        signal.alarm(0)
    except BaseException as e:  # noqa: B036 - the child reports everything
        signal.alarm(0)
        res = {"verdict": "error: %s" % type(e).__name__, "message": str(e)[:300]}
    return res


def numpy_verdict(path, raise_header=False, timeout=10):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            res = _numpy_child(path, raise_header, timeout)
            data = json.dumps(res).encode()
        except BaseException as e:  # noqa: B036
            data = json.dumps({"verdict": "error: %s" % type(e).__name__}).encode()
        with os.fdopen(w, "wb") as f:
            f.write(data)
        os._exit(0)
    os.close(w)
    import select
    chunks, deadline = [], time.monotonic() + timeout + 5
    with os.fdopen(r, "rb", buffering=0) as f:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([f], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {"verdict": "error: Timeout"}
            b = f.read(65536)
            if not b:
                break
            chunks.append(b)
    _, status = os.waitpid(pid, 0)
    if not chunks:
        if os.WIFSIGNALED(status):
            return {"verdict": "error: killed by signal %d" % os.WTERMSIG(status)}
        return {"verdict": "error: no report"}
    return json.loads(b"".join(chunks))


def compare_numpy(case, res):
    """SPEC-npz rule 1 for a valid archive: loads, ndarray values, same shapes/dtypes."""
    if res["verdict"] != "loads":
        return "numpy: %s %s" % (res["verdict"], res.get("message", ""))
    got = res["members"]
    want = case.members
    if [g["key"] for g in got] != [w[1] for w in want]:
        return "keys differ: numpy %r, expected %r" % ([g["key"] for g in got],
                                                         [w[1] for w in want])
    for g, (name, key, shape, descr, fortran) in zip(got, want):
        if g["type"] != "ndarray":
            return "%s: numpy returns %s" % (key, g["type"])
        if tuple(g["shape"]) != tuple(shape) or g["descr"] != descr:
            return "%s: numpy %s %s, expected %s %s" % (key, g["shape"], g["descr"],
                                                        list(shape), descr)
        if sum(1 for s in shape if s > 1) >= 2 and g["fortran"] != fortran:
            return "%s: fortran order %s, expected %s" % (key, g["fortran"], fortran)
    return None


# --------------------------------------------------------------------------
# Structural self-checks of the generated set
# --------------------------------------------------------------------------

NEW_CODES = [
    "not_zip", "archive_comment", "ambiguous_eocd", "bad_eocd", "bad_zip64_eocd",
    "too_many_members", "entry_count_mismatch", "bad_central_header", "bad_extra_field",
    "encrypted_member", "unsupported_method", "unsupported_feature", "bad_member_type",
    "bad_member_name", "not_npy_member", "duplicate_name", "name_mismatch",
    "entry_out_of_bounds", "size_mismatch", "ratio_exceeded", "total_size_exceeded",
    "prepended_data", "gap_between_entries", "overlapping_entries", "bad_local_header",
    "header_mismatch", "bad_data_descriptor", "entry_order", "bad_deflate", "crc_mismatch"]
NPY_CODES_REQUIRED = ["negative_dimension", "object_dtype", "truncated_data", "trailing_data",
                      "header_too_large", "bad_magic", "duplicate_key"]
PHASE_A_CODES = {"not_zip", "archive_comment", "trailing_data", "bad_eocd", "ambiguous_eocd"}


def eocd_candidates(data):
    """PK\\x05\\x06 in the last 65,557 bytes whose comment length ends at the end."""
    out = []
    start = max(0, len(data) - 65557)
    i = data.find(SIG_EOCD, start)
    while i != -1:
        if i + 22 <= len(data):
            clen = struct.unpack_from("<H", data, i + 20)[0]
            if i + 22 + clen == len(data):
                out.append(i)
        i = data.find(SIG_EOCD, i + 1)
    return out


def self_check(cases):
    problems = []
    names = [c.file for c in cases]
    if len(set(names)) != len(names):
        problems.append("duplicate file names")
    total = 0
    for c in cases:
        total += len(c.data)
        if len(c.data) >= 1 << 20:
            problems.append("%s: %d bytes (limit 1 MiB)" % (c.file, len(c.data)))
        if c.offset is not None and not 0 <= c.offset < max(len(c.data), 1):
            problems.append("%s: offset %d outside the file" % (c.file, c.offset))
        if c.valid != (c.code is None) and not c.verify_only:
            problems.append("%s: valid/code inconsistent" % c.file)
        is_eocd_case = (c.code in PHASE_A_CODES and c.member is None
                        and not (c.code == "bad_eocd" and "comment" not in c.file))
        if not is_eocd_case:
            cands = eocd_candidates(c.data)
            if len(c.data) >= 22 and cands != [len(c.data) - 22]:
                problems.append("%s: EOCD candidates %r (expected only the last 22 bytes)"
                                % (c.file, cands))
        elif c.code == "ambiguous_eocd" and len(eocd_candidates(c.data)) < 2:
            problems.append("%s: no second self-consistent EOCD" % c.file)
    if total >= 20 << 20:
        problems.append("whole set %d bytes (limit 20 MiB)" % total)
    codes = {c.code for c in cases}
    for code in NEW_CODES + NPY_CODES_REQUIRED + ["trailing_data"]:
        if code not in codes:
            problems.append("no archive for code %s" % code)
    problems.extend("rebuild: " + r for r in REBUILD_FAILURES)
    return problems


# --------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="directory for the archives and manifest.json")
    ap.add_argument("--no-numpy", action="store_true",
                    help="skip numpy's verdicts (and the rule-1 self-check)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    out = args.out
    os.makedirs(out, exist_ok=True)
    old_manifest = os.path.join(out, "manifest.json")
    if os.path.exists(old_manifest):  # remove what a previous run wrote, nothing else
        try:
            with open(old_manifest) as f:
                for e in json.load(f):
                    p = os.path.join(out, os.path.basename(e["file"]))
                    if os.path.exists(p):
                        os.unlink(p)
        except (ValueError, KeyError, TypeError):
            pass

    ctx = {"tmp": out}
    cases = []
    for fn in CASES:
        cases.extend(fn(ctx))

    problems = self_check(cases)
    for c in cases:
        with open(os.path.join(out, c.file), "wb") as f:
            f.write(c.data)

    manifest = []
    for c in cases:
        e = c.manifest()
        if not args.no_numpy:
            path = os.path.join(out, c.file)
            res = numpy_verdict(path)
            e["numpy"] = res["verdict"]
            if res["verdict"] == "loads" and any(m["type"] != "ndarray" for m in res["members"]):
                e["numpy_detail"] = "values: " + ", ".join(
                    "%s=%s" % (m["key"], m["type"]) for m in res["members"])
            elif res.get("message"):
                e["numpy_detail"] = res["message"]
            if c.valid and not c.verify_only:
                check = res
                if res["verdict"] != "loads":
                    check = numpy_verdict(path, raise_header=True)
                    e["numpy_max_header_size_1MiB"] = check["verdict"]
                why = compare_numpy(c, check)
                if why:
                    problems.append("rule 1: %s: %s" % (c.file, why))
        manifest.append(e)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")

    # summary
    by_class = {}
    for e in manifest:
        row = by_class.setdefault(e["class"], [0, 0, 0])
        row[0] += 1
        row[1] += e["valid"] and not e["verify_only"]
        row[2] += e.get("numpy") == "loads"
    w = max(len(k) for k in by_class)
    print("%-*s %5s %5s %12s" % (w, "class", "count", "valid", "numpy loads"))
    for k in sorted(by_class):
        n, v, lo = by_class[k]
        print("%-*s %5d %5d %12s" % (w, k, n, v, lo if not args.no_numpy else "-"))
    n = len(manifest)
    print("%-*s %5d %5d %12s" % (w, "total", n, sum(r[1] for r in by_class.values()),
                                 sum(r[2] for r in by_class.values())
                                 if not args.no_numpy else "-"))
    by_code = {}
    for e in manifest:
        k = e["code"] if e["code"] else "(valid)"
        if e["verify_only"]:
            k = "(verify) " + k
        by_code[k] = by_code.get(k, 0) + 1
    print("\nper expected code:")
    for k in sorted(by_code):
        print("  %-28s %d" % (k, by_code[k]))
    amb = sum(1 for e in manifest if e["ambiguity"])
    print("\n%d archives, %d bytes, %d with an ambiguity note, %.1f s" % (
        n, sum(len(c.data) for c in cases), amb, time.monotonic() - t0))
    if problems:
        print("\nSELF-CHECK FAILED:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    print("self-check: ok (numpy rebuilds byte-identical, EOCD uniqueness, sizes, code "
          "coverage%s)" % ("" if args.no_numpy else ", rule 1 against numpy"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
