"""Archives for the .npz differential test: valid ones from several writers,
and mutants of them.

An archive is a *plan*: a list of zip members (``make_archives.M``, whose
fields can be overridden one by one in the local header, the central header
or the data descriptor) and the keyword arguments of ``make_archives.build``
(archive comment, trailing and prepended bytes, Zip64 end records, EOCD
overrides, gaps). Valid plans come from the layouts of SPEC-npz section 11
(numpy to a file and to a pipe, zipfile's writestr, Info-ZIP to a file and to
a pipe, stored and deflated); their members are .npy files of the .npy
differential generator (``generate.py``), so every dtype, shape and header
style it covers also travels inside archives. Real ``np.savez`` /
``np.savez_compressed`` and ``zipfile`` output is added as bytes.

Mutants edit a plan (``STRUCTURAL`` operators: one header field on one side,
names, extra fields, descriptors, member bytes, the order and number of
entries, the end records) and re-serialise it, so most mutants get past the
end record and the directory and test the later rules; some mutants also get
byte operators on the result (flips, overwrites with signatures, cuts). The
same seed gives the same archives.
"""

import io
import os
import random
import struct
import sys
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "npz"))

import make_archives as mk  # noqa: E402
import mutate  # noqa: E402
import numpy as np  # noqa: E402
import oracle  # noqa: E402

# Keys of valid archives: ASCII, nested paths, non-ASCII (NFC), numpy's arr_N.
KEYS = ("a", "b", "x", "weights", "bias", "arr_0", "arr_1", "layer/w", "layer/b", "model/enc/0",
        "data.v2", "x-y", "A", "CamelCase", "_private", "k 1", "é", "数据", "Ωmega", "naïve",
        "emoji😀", "a+b", "n=1", "tab_", "0", "9lives", "long_" + "k" * 60)

# Names a mutant may give a member (hostile ones among them).
MUTANT_NAMES = (
    "../evil.npy", "/abs.npy", "a\\b.npy", "C:x.npy", "a\x00b.npy", "ctl\x01.npy", "c1\x85.npy",
    "bidi\u202e.npy", "\u2028.npy", ".npy", "a/.npy", "./a.npy", "a//b.npy", "a/../b.npy", "...npy",
    "a.NPY", "a.npy.npy", "a", "a.txt", "a.npy/", "dir/", "e\u0301.npy", "\u00e9.npy",
    "x" + "\u0301" * 31 + ".npy", "A.npy", " a.npy", "a.npy ", "a:b.npy", "\ufeffa.npy",
    "\udcff.npy", "\U0001F600.npy", "a\tb.npy", "con.npy", "~a.npy")


@dataclass
class Archive:
    """One generated archive."""

    name: str
    data: bytes
    how: str
    origin: str  # "valid" or "mutant"
    parent: Optional[str] = None
    member_payloads: List[bytes] = field(default_factory=list)


# ---------------------------------------------------------------------------
# Members: .npy files of the .npy generator
# ---------------------------------------------------------------------------

def member_pool(samples):
    """The .npy samples numpy reads in full, with no trailing bytes and no
    objects, small enough to make archives of."""
    pool = []
    for s in samples:
        if s.expect is not None or len(s.data) > (1 << 17):
            continue
        v = oracle.judge(s.data)
        if v.reads and not v.trailing and not v.reading.has_object:
            pool.append(s)
    return pool


def pick_keys(rng, n):
    keys = rng.sample(KEYS, n)
    return [unicodedata.normalize("NFC", k) for k in keys]


# ---------------------------------------------------------------------------
# Writers (SPEC-npz section 11), each a member factory
# ---------------------------------------------------------------------------

def numpy_file_member(name, payload, method):
    """np.savez to a seekable file: Zip64 extra with both sizes in the local header."""
    def lx(m):
        return mk.z64(len(m.payload), len(m.data))
    return mk.M(name, payload, method, flags=mk.name_flags(name), made_by=0x0314, needed=20,
                time=0, date=mk.DATE_1980, ext_attr=0o600 << 16, lx=lx)


def numpy_pipe_member(name, payload, method):
    """np.savez to a non-seekable stream: bit 3, Zip64 zeros, 24-byte descriptor."""
    return mk.M(name, payload, method, flags=mk.name_flags(name) | 0x08, made_by=0x0314,
                needed=20, time=0, date=mk.DATE_1980, ext_attr=0o600 << 16, lx=mk.z64(0, 0),
                desc="dd24", l_crc=0, l_csize=0, l_usize=0)


def writestr_member(name, payload, method):
    return mk.plain_member(name, payload, method)


def infozip_member(name, payload, method, pipe):
    level = 0 if method == 0 else 6
    lx, cx = mk.infozip_extras()
    flags = (0x08 if pipe else 0) | mk.name_flags(name)
    kw = {}
    desc = None
    if pipe:
        kw["l_crc"] = 0
        if method == 8:
            kw["l_csize"] = 0
        desc = "dd16"
    return mk.M(name, payload, method, level=max(level, 1), flags=flags, made_by=0x031E,
                needed=10 if method == 0 else 20, time=mk.FIXED_TIME, date=mk.FIXED_DATE,
                ext_attr=0o100644 << 16, lx=lx, cx=cx, desc=desc, **kw)


WRITERS = ("numpy-file", "numpy-pipe", "writestr", "infozip-file", "infozip-pipe")


def plan_member(writer, name, payload, method):
    if writer == "numpy-file":
        return numpy_file_member(name, payload, method)
    if writer == "numpy-pipe":
        return numpy_pipe_member(name, payload, method)
    if writer == "writestr":
        return writestr_member(name, payload, method)
    return infozip_member(name, payload, method, pipe=writer == "infozip-pipe")


@dataclass
class Plan:
    members: list
    kw: dict
    central: Optional[list] = None
    parts: Optional[list] = None

    def serialise(self):
        parts = self.parts if self.parts is not None else list(self.members)
        return mk.build(parts, self.central, **self.kw)[0]


def valid_plan(rng, pool):
    n = rng.choice((1, 1, 2, 2, 3, 4, 6))
    keys = pick_keys(rng, n)
    writer = rng.choice(WRITERS)
    method = rng.choice((0, 8))
    members = []
    for key in keys:
        payload = rng.choice(pool).data
        members.append(plan_member(writer, key + ".npy", payload, method))
    kw = {}
    if writer == "numpy-file" and rng.random() < 0.2:
        kw["z64"] = {}  # a consistent Zip64 end record (SPEC-npz rule-accept)
    return Plan(members, kw), "%s %s, %d members" % (writer, "deflate" if method else "stored", n)


def real_numpy_archive(rng, pool):
    """np.savez / np.savez_compressed of arrays read back from pool files."""
    n = rng.choice((1, 2, 3))
    arrays = {}
    for key in pick_keys(rng, n):
        arr = np.load(io.BytesIO(rng.choice(pool).data), allow_pickle=False)
        arrays[key] = arr
    out = io.BytesIO()
    compressed = rng.random() < 0.5
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue(), "np.%s, %d members" % ("savez_compressed" if compressed else "savez", n)


def real_zipfile_archive(rng, pool):
    n = rng.choice((1, 2, 3))
    out = io.BytesIO()
    comp = rng.choice((zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED))
    with zipfile.ZipFile(out, "w", comp) as zf:
        for key in pick_keys(rng, n):
            zf.writestr(key + ".npy", rng.choice(pool).data)
    return out.getvalue(), "zipfile writestr %s, %d members" % ("deflate" if comp else "stored", n)


# ---------------------------------------------------------------------------
# Structural operators: each edits the plan and says what it did
# ---------------------------------------------------------------------------

FLAG_BITS = (0, 1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15)


def _member(rng, plan):
    return rng.choice(plan.members)


def op_field(rng, plan):
    m = _member(rng, plan)
    side = rng.choice(("", "l_", "c_", "l_", "c_", "d_"))
    key = rng.choice(("flags", "method", "crc", "csize", "usize", "nlen", "xlen", "needed",
                      "time", "date"))
    if side == "d_":
        key = rng.choice(("crc", "csize", "usize"))
        if m.desc is None:
            m.desc = rng.choice(("dd16", "dd24", "dd12"))
    base = m.base("c").get(key, 0)
    if key == "flags":
        value = base ^ (1 << rng.choice(FLAG_BITS))
    elif key == "method":
        value = rng.choice((0, 8, 1, 9, 12, 14, 93, 99, 0xFFFF))
    elif key in ("nlen", "xlen"):
        cur = len(m.name) if key == "nlen" else 0
        value = max(0, cur + rng.choice((-1, 1, 2, 4, 100)))
    elif key == "needed":
        value = rng.choice((0, 10, 20, 45, 46, 51, 63, 64, 0x0314, 0xFFFF))
    elif key in ("time", "date"):
        value = rng.randrange(1 << 16)
    else:
        value = rng.choice((0, 1, base + 1, max(0, base - 1), base ^ 0x80, 0xFFFFFFFF,
                            0xFFFFFFFE, rng.randrange(1 << 32)))
        value &= 0xFFFFFFFF
    m.over[side + key] = value
    return "field %s%s=%d on %r" % (side, key, value, m.name)


def op_central_only(rng, plan):
    m = _member(rng, plan)
    key = rng.choice(("made_by", "disk", "int_attr", "ext_attr", "ext_attr", "lho", "clen"))
    if key == "ext_attr":
        value = rng.choice((0o120777 << 16, (0o40755 << 16) | 0x10, 0x10, 0o20644 << 16,
                            0o60644 << 16, 0o140644 << 16, 0o10644 << 16, 0xFFFFFFFF, 0, 1))
    elif key == "made_by":
        value = rng.choice((0, 0x0014, 0x0314, 0x0B14, 0x0A14, 0x0E3F, 0x1314, 0xFF3F))
    elif key == "lho":
        value = rng.choice((0, 1, 30, 0xFFFFFFFF, rng.randrange(1 << 16)))
    else:
        value = rng.choice((1, 2, 0xFFFF))
    m.over["c_" + key] = value
    return "central %s=%d on %r" % (key, value, m.name)


def op_name(rng, plan):
    m = _member(rng, plan)
    others = [x.name for x in plan.members if x is not m]
    choice = rng.random()
    if choice < 0.15 and others:
        new = rng.choice(others)
    elif choice < 0.25:
        new = unicodedata.normalize("NFD", m.name.decode("utf-8", "replace")).encode("utf-8")
    elif choice < 0.35:
        new = m.name + b".npy"
    else:
        text = rng.choice(MUTANT_NAMES)
        new = text.encode("utf-8", "surrogatepass")
    side = rng.choice(("", "", "l_", "c_"))
    if side:
        m.over[side + "name"] = new
    else:
        m.name = new
    if rng.random() < 0.5:
        m.flags ^= 0x800
    return "name %s%r on %r" % (side, new, m.name)


def _extra(rng, m):
    kind = rng.choice(("z64", "z64-bad", "upath", "upath-bad", "junk", "short", "align", "ut",
                       "many", "dup-z64"))
    if kind == "z64":
        return kind, mk.z64(len(m.payload), len(m.data))
    if kind == "z64-bad":
        return kind, mk.z64(len(m.payload) + 1, len(m.data))
    if kind == "upath":
        return kind, mk.unicode_path(m.name, m.name)
    if kind == "upath-bad":
        return kind, mk.unicode_path(m.name, b"other.npy")
    if kind == "junk":
        return kind, mk.xrec(rng.randrange(1 << 16), bytes(rng.randrange(8)))
    if kind == "short":
        return kind, bytes(rng.randrange(1, 4))
    if kind == "align":
        return kind, mk.xrec(0xA11E, struct.pack("<H", 64) + bytes(rng.randrange(8)))
    if kind == "ut":
        return kind, mk.infozip_extras()[0]
    if kind == "many":
        return kind, b"".join(mk.xrec(0xCAFE, b"") for _ in range(rng.choice((10, 700, 1100))))
    return kind, mk.z64(len(m.payload), len(m.data)) * 2


def op_extra(rng, plan):
    m = _member(rng, plan)
    kind, blob = _extra(rng, m)
    side = rng.choice(("l", "c", "both"))
    if side in ("l", "both"):
        old = m.lx
        m.lx = (lambda mm, old=old: (old(mm) if callable(old) else old) + blob)
    if side in ("c", "both"):
        old = m.cx
        m.cx = (lambda mm, lho, old=old: (old(mm, lho) if callable(old) else old) + blob)
    return "extra %s on %s of %r" % (kind, side, m.name)


def op_descriptor(rng, plan):
    m = _member(rng, plan)
    choice = rng.choice(("dd16", "dd24", "dd12", None, "junk", "bit3"))
    if choice == "junk":
        m.desc = b"PK\x07\x08" + bytes(rng.randrange(20))
    elif choice == "bit3":
        m.flags ^= 0x08
    else:
        m.desc = choice
    return "descriptor %s on %r" % (choice, m.name)


def op_payload(rng, plan, donors):
    m = _member(rng, plan)
    choice = rng.random()
    if choice < 0.55 and oracle.judge(m.payload).reads:  # a parent the .npy mutator can take
        mutant = mutate.make_mutant(rng, "member", m.payload, donors)
        new, how = mutant.data, "npy mutant (" + "; ".join(mutant.ops) + ")"
    elif choice < 0.65:
        new, how = m.payload[:rng.randrange(len(m.payload) + 1)], "cut"
    elif choice < 0.75:
        new, how = m.payload + bytes(rng.randrange(1, 40)), "trailing bytes"
    elif choice < 0.85:
        new, how = b"not an npy file", "not npy"
    else:
        new, how = b"\x80\x04N.", "pickle"
    m.payload = new
    m.data = mk.deflate(new) if m.method == 8 else new
    return "payload %s of %r" % (how, m.name)


def op_data(rng, plan):
    """Corrupt the stored bytes (CRC or deflate stream), leaving every header."""
    m = _member(rng, plan)
    if not m.data:
        return "data of %r: empty, unchanged" % m.name
    declared = m.base("c")["csize"]
    i = rng.randrange(len(m.data))
    b = bytearray(m.data)
    choice = rng.random()
    if choice < 0.6:
        b[i] ^= 1 << rng.randrange(8)
        how = "flip at %d" % i
    else:
        del b[i:]
        how = "cut at %d" % i
    m.data = bytes(b)
    # Keep the declared sizes and CRC of the original payload.
    if rng.random() < 0.5:
        m.over.setdefault("csize", declared)
    return "data %s of %r" % (how, m.name)


def op_method_swap(rng, plan):
    """Store what is declared deflated, or the reverse, bytes and all; or
    compress with bzip2 or LZMA, which zipfile reads and numpy never writes."""
    m = _member(rng, plan)
    if rng.random() < 0.3:
        m.method = rng.choice((zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA))
        compressor = zipfile._get_compressor(m.method)  # zipfile's own framing (LZMA properties)
        m.data = compressor.compress(m.payload) + compressor.flush()
        if m.method == zipfile.ZIP_LZMA:
            m.flags |= 0x02  # zipfile writes the end-of-stream marker and says so
        return "method %d (zipfile's compressor) on %r" % (m.method, m.name)
    m.method = 8 - m.method if m.method in (0, 8) else 0
    if rng.random() < 0.5:
        m.data = mk.deflate(m.payload) if m.method == 8 else m.payload
    return "method %d on %r" % (m.method, m.name)


def op_entry_comment(rng, plan):
    m = _member(rng, plan)
    m.comment = rng.choice((b"x", b"comment", b"PK\x05\x06", bytes(100)))
    return "entry comment on %r" % m.name


def op_archive(rng, plan):
    choice = rng.choice(("comment", "trailing", "prepended", "shifted", "gap", "cd_junk",
                         "z64", "z64-bad", "eocd"))
    if choice == "comment":
        plan.kw["comment"] = rng.choice((b"c", b"PK\x05\x06" + bytes(18), bytes(300)))
    elif choice == "trailing":
        plan.kw["trailing"] = rng.choice((b"\0", b"junk", b"PK\x03\x04", bytes(5000)))
    elif choice in ("prepended", "shifted"):
        stub = rng.choice((b"#!/bin/sh\n", bytes(100), b"\x93NUMPY"))
        plan.parts = [stub] + (plan.parts if plan.parts is not None else list(plan.members))
        if choice == "shifted":
            plan.kw["shift"] = len(stub)
    elif choice == "gap":
        parts = plan.parts if plan.parts is not None else list(plan.members)
        i = rng.randrange(len(parts) + 1)
        plan.parts = parts[:i] + [rng.choice((b"\0", b"hidden", b"PK\x03\x04"))] + parts[i:]
    elif choice == "cd_junk":
        plan.kw["cd_junk"] = rng.choice((b"\0", bytes(46), b"PK\x01\x02"))
    elif choice == "z64":
        plan.kw["z64"] = {}
    elif choice == "z64-bad":
        key = rng.choice(("r_sig", "r_size", "r_disk", "r_ndisk", "r_ntotal", "r_cd_size",
                          "r_cd_offset", "loc_sig", "loc_disk", "loc_offset", "loc_disks",
                          "r_needed"))
        plan.kw["z64"] = {key: rng.choice((0, 1, 2, 45, 0xFFFFFFFF)) if key != "r_sig" and key != "loc_sig"
                          else b"PK\x06\x07"}
        choice += " " + key
    else:
        key = rng.choice(("disk", "disk_cd", "ndisk", "ntotal", "cd_size", "cd_offset", "clen"))
        plan.kw.setdefault("eocd", {})[key] = rng.choice((0, 1, 2, 0xFFFF, 0xFFFFFFFF & 0xFFFF, 7))
        choice += " " + key
    return "archive " + choice


def op_order(rng, plan):
    central = plan.central if plan.central is not None else list(plan.members)
    choice = rng.choice(("swap-central", "dup-central", "drop-central", "dup-local", "drop-local",
                         "swap-local"))
    parts = plan.parts if plan.parts is not None else list(plan.members)
    if choice == "swap-central" and len(central) > 1:
        i, j = rng.sample(range(len(central)), 2)
        central[i], central[j] = central[j], central[i]
    elif choice == "dup-central":
        central.insert(rng.randrange(len(central) + 1), rng.choice(central))
    elif choice == "drop-central" and len(central) > 1:
        central.pop(rng.randrange(len(central)))
    elif choice == "dup-local":
        m = rng.choice(plan.members)
        parts.insert(rng.randrange(len(parts) + 1), m.local_bytes() + m.data)
    elif choice == "drop-local" and len(plan.members) > 1:
        m = rng.choice(plan.members)
        parts = [p for p in parts if p is not m]
        m.over.setdefault("c_lho", 0)
    elif choice == "swap-local":
        ms = [i for i, p in enumerate(parts) if isinstance(p, mk.M)]
        if len(ms) > 1:
            i, j = rng.sample(ms, 2)
            parts[i], parts[j] = parts[j], parts[i]
    plan.central = central
    plan.parts = parts
    return "order " + choice


STRUCTURAL = (op_field, op_field, op_field, op_central_only, op_name, op_name, op_extra,
              op_extra, op_descriptor, op_payload, op_payload, op_payload, op_data, op_method_swap,
              op_entry_comment, op_archive, op_archive, op_order)

SIGNATURES = (b"PK\x03\x04", b"PK\x01\x02", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07",
              b"PK\x07\x08", b"\xff\xff\xff\xff", b"\0\0\0\0", b"\x93NUMPY")


def byte_op(rng, data):
    b = bytearray(data)
    if not b:
        return bytes(b), "empty"
    i = rng.randrange(len(b))
    choice = rng.random()
    if choice < 0.4:
        b[i] ^= 1 << rng.randrange(8)
        return bytes(b), "flip at %d" % i
    if choice < 0.6:
        sig = rng.choice(SIGNATURES)
        b[i:i + len(sig)] = sig
        return bytes(b), "overwrite %r at %d" % (sig, i)
    if choice < 0.75:
        del b[i:i + rng.choice((1, 2, 4, 30))]
        return bytes(b), "delete at %d" % i
    if choice < 0.9:
        b[i:i] = bytes(rng.choice((1, 2, 4)))
        return bytes(b), "insert at %d" % i
    return bytes(b[:i]), "cut at %d" % i


def mutant(rng, plan, donors):
    """Apply one to three structural operators, serialise, maybe byte operators."""
    ops = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        op = rng.choice(STRUCTURAL)
        ops.append(op(rng, plan, donors) if op is op_payload else op(rng, plan))
    try:
        data = plan.serialise()
    except (struct.error, ValueError, KeyError, OverflowError) as exc:
        return None, ops + ["unserialisable: %s" % exc]
    if rng.random() < 0.2:
        for _ in range(rng.choice((1, 1, 2))):
            data, op = byte_op(rng, data)
            ops.append("bytes " + op)
    return data, ops


# ---------------------------------------------------------------------------
# The generator
# ---------------------------------------------------------------------------

def generate(seed, count, mutants, samples):
    """Yield ``count`` valid Archives, then ``mutants`` mutants of plans like theirs."""
    rng = random.Random(seed * 104729 + 3)
    pool = member_pool(samples)
    small = [s for s in pool if len(s.data) <= 4096]
    donors = [mutate.split_file(s.data)[1] for s in small[:200]]
    for i in range(count):
        r = rng.random()
        if r < 0.12:
            data, how = real_numpy_archive(rng, small)
        elif r < 0.2:
            data, how = real_zipfile_archive(rng, small)
        else:
            plan, how = valid_plan(rng, small if rng.random() < 0.9 else pool)
            data = plan.serialise()
        yield Archive("v%05d.npz" % i, data, how, "valid")
    made = 0
    while made < mutants:
        plan, how = valid_plan(rng, small)
        data, ops = mutant(rng, plan, donors)
        if data is None:
            continue
        yield Archive("m%06d.npz" % made, data, "; ".join(ops), "mutant", parent=how)
        made += 1
