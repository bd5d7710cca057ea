#!/usr/bin/python3
"""Crafted .npz input against benign input of the same byte size (issue 35).

Builds, for each attack family and each size (1 MiB and 8 MiB by default), a
hostile archive and a benign one of the same byte size and the same shape
(member count, name length), runs npyguard_npz_crafted_bench on them (from
memory, by default and with verification, whatever the verdict) and prints a
Markdown table: time of each, hostile / benign, and how the hostile row grows
from the smaller size to the larger (n log n would be at most
(8 * log(8 MiB) / log(1 MiB)) = 9.2x for 1 -> 8 MiB).

  /usr/bin/python3 bench/npz_crafted.py --bench build/release/bench/npyguard_npz_crafted_bench

The families (hostile / benign):
  shared_prefix   names of 1,000 bytes that share 990 of them, 495 components
                  "p/p/..." / random ASCII names of the same length
  long_names      65,000-byte names of 32,000 components / random 65,000-byte names
  combining_30    runs of 30 combining acute accents (the stream-safe limit)
                  / random Greek names of the same byte length
  u0f73           runs of 15 U+0F73 (30 non-starters once decomposed)
                  / random CJK names of the same byte length
  u0344           runs of 15 U+0344 / random Greek
  hangul          random Hangul syllables (decomposed and recomposed by NFC)
                  / random CJK
  tiny_members    tens of thousands of 0-d members, names of 8 bytes / the
                  same written by numpy's savez (the legitimate layout)
  cd_shuffled     the tiny-members archive with its central directory in
                  random order / in file order
  empty_blocks    one member whose header follows empty stored blocks filling
                  the archive / one member of incompressible data, deflated
  one_symbol      one member deflated as fixed blocks of one literal each /
                  the same member deflated by zlib
  flush_64        one member deflated with a full flush every 64 bytes (a
                  dynamic or fixed block each) / the same deflated normally
  ws_headers      members whose 1 MiB headers deflate from white space /
                  as many members of the same compressed size, numpy's
"""
import argparse
import io
import json
import math
import os
import random
import struct
import subprocess
import sys
import tempfile
import zlib

import numpy as np

MIB = 1 << 20


def npy_bytes(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def raw_deflate(data, level=6):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def zip_archive(members, shuffle_central=False):
    """members: (name str, uncompressed bytes, method, stored stream or None)."""
    out = bytearray()
    central = []
    for name, data, method, stream in members:
        raw = name.encode("utf-8")
        flags = 0x800 if any(ord(ch) > 127 for ch in name) else 0
        body = data if method == 0 else stream
        crc = zlib.crc32(data)
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, method, 0, 0x21, crc, len(body), len(data),
                           len(raw), 0)
        out += raw + body
        central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 0x0314, 20, flags, method, 0, 0x21, crc,
                                   len(body), len(data), len(raw), 0, 0, 0, 0, 0o600 << 16, offset) + raw)
    if shuffle_central:
        random.Random(7).shuffle(central)
    cd_offset = len(out)
    for header in central:
        out += header
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(out) - cd_offset, cd_offset, 0)
    return bytes(out)


def scalar():
    return npy_bytes(np.uint8(0))


def per_member(name_bytes, data):
    return 30 + 46 + 2 * name_bytes + len(data)


def random_text(rng, alphabet, byte_length):
    out, size = [], 0
    while size < byte_length:
        ch = rng.choice(alphabet)
        out.append(ch)
        size += len(ch.encode())
    return "".join(out)


def names_pair(size, length, hostile_name, benign_alphabet):
    data = scalar()
    count = max(1, size // per_member(length, data))
    rng = random.Random(1)
    hostile = [(hostile_name(i), data, 0, None) for i in range(count)]
    benign = [(random_text(rng, benign_alphabet, length - 12) + "%08d.npy" % i, data, 0, None) for i in range(count)]
    return zip_archive(hostile), zip_archive(benign)


ASCII = [chr(c) for c in range(ord("a"), ord("z") + 1)]
GREEK = [chr(c) for c in range(0x3B1, 0x3CA)]
CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 2000)]
HANGUL = [chr(c) for c in range(0xAC00, 0xAC00 + 11172)]


def fill(unit, byte_length):
    text = unit * (byte_length // len(unit.encode()) + 1)
    while len(text.encode()) > byte_length:
        text = text[:-1]
    return text


def family_shared_prefix(size):
    return names_pair(size, 1000, lambda i: fill("p/", 988) + "%08d.npy" % i, ASCII)


def family_long_names(size):
    return names_pair(size, 65000, lambda i: fill("a/", 64988) + "%08d.npy" % i, ASCII)


def family_combining_30(size):
    return names_pair(size, 1000, lambda i: fill("a" + "\u0301" * 30, 988) + "%08d.npy" % i, GREEK)


def family_u0f73(size):
    return names_pair(size, 1000, lambda i: fill("x" + "\u0f73" * 15, 988) + "%08d.npy" % i, CJK)


def family_u0344(size):
    return names_pair(size, 1000, lambda i: fill("x" + "\u0344" * 15, 988) + "%08d.npy" % i, GREEK)


def family_hangul(size):
    rng = random.Random(2)
    return names_pair(size, 1000, lambda i: random_text(rng, HANGUL, 988) + "%08d.npy" % i, CJK)


def tiny(size):
    data = scalar()
    count = size // per_member(12, data)
    return [("t%07d.npy" % i, data, 0, None) for i in range(count)]


def family_tiny_members(size):
    members = tiny(size)
    out = io.BytesIO()
    np.savez(out, **{name[:-4]: np.uint8(0) for name, _, _, _ in members})
    return zip_archive(members), out.getvalue()


def family_cd_shuffled(size):
    members = tiny(size)
    return zip_archive(members, shuffle_central=True), zip_archive(members)


def one_member(size):
    """A member whose incompressible data deflates to about `size` bytes."""
    data = np.random.default_rng(3).integers(0, 256, size=size - 200, dtype=np.uint8)
    return npy_bytes(data)


def family_empty_blocks(size):
    member = npy_bytes(np.zeros(16, dtype=np.uint8))
    tail = raw_deflate(member)
    blocks = b"\x00\x00\x00\xff\xff" * ((size - len(tail) - 200) // 5)
    hostile = zip_archive([("a.npy", member, 8, blocks + tail)])
    benign_member = one_member(size)
    benign = zip_archive([("a.npy", benign_member, 8, raw_deflate(benign_member))])
    return hostile, benign


def one_symbol_blocks(data):
    """Fixed-Huffman blocks of one literal each, then a final empty block."""
    bits, count = 0, 0
    out = bytearray()

    def put(value, width):
        nonlocal bits, count
        bits |= value << count
        count += width
        while count >= 8:
            out.append(bits & 0xFF)
            bits >>= 8
            count -= 8

    def put_code(code, width):  # Huffman codes go most significant bit first
        put(int(format(code, "0%db" % width)[::-1], 2), width)

    for byte in data:
        put(0, 1)
        put(1, 2)  # fixed
        if byte < 144:
            put_code(0x30 + byte, 8)
        else:
            put_code(0x190 + byte - 144, 9)
        put_code(0, 7)  # end of block
    put(1, 1)
    put(1, 2)
    put_code(0, 7)
    if count:
        out.append(bits & 0xFF)
    return bytes(out)


def family_one_symbol(size):
    member = npy_bytes(np.random.default_rng(4).integers(0, 256, size=int(size / 2.3), dtype=np.uint8))
    hostile = zip_archive([("a.npy", member, 8, one_symbol_blocks(member))])
    benign_member = one_member(size)
    return hostile, zip_archive([("a.npy", benign_member, 8, raw_deflate(benign_member))])


def family_flush_64(size):
    rng = np.random.default_rng(5)
    data = rng.integers(0, 40, size=size, dtype=np.uint8)  # compressible: coded blocks, not stored
    member = npy_bytes(data)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stream = b"".join(c.compress(member[i:i + 64]) + c.flush(zlib.Z_FULL_FLUSH) for i in range(0, len(member), 64))
    stream += c.flush()
    hostile = zip_archive([("a.npy", member, 8, stream)])
    benign_member = one_member(len(hostile))
    return hostile, zip_archive([("a.npy", benign_member, 8, raw_deflate(benign_member))])


def ws_member():
    dict_text = "{'descr': '|u1', 'fortran_order': False, 'shape': (), }"
    header_len = MIB - 76  # 12 + header_len is a multiple of 64, within the default 1 MiB limit
    text = dict_text + " " * (header_len - len(dict_text) - 1) + "\n"
    return b"\x93NUMPY\x02\x00" + struct.pack("<I", header_len) + text.encode() + b"\x00"


def family_ws_headers(size):
    member = ws_member()
    stream = raw_deflate(member, 9)
    count = max(1, size // (len(stream) + 100))
    hostile = zip_archive([("w%05d.npy" % i, member, 8, stream) for i in range(count)])
    rng = np.random.default_rng(6)
    benign_member = npy_bytes(rng.integers(0, 256, size=len(stream) - 120, dtype=np.uint8))
    benign = zip_archive([("w%05d.npy" % i, benign_member, 8, raw_deflate(benign_member))
                          for i in range(count)])
    return hostile, benign


FAMILIES = {name[len("family_"):]: f for name, f in sorted(globals().items()) if name.startswith("family_")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", required=True, help="npyguard_npz_crafted_bench")
    p.add_argument("--sizes", default="1,8", help="sizes in MiB (default 1,8)")
    p.add_argument("--families", default=",".join(FAMILIES))
    p.add_argument("--min-time", default="0.2")
    p.add_argument("--keep", help="write the archives here and keep them")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    families = args.families.split(",")
    directory = args.keep or tempfile.mkdtemp(prefix="npz-crafted-")
    os.makedirs(directory, exist_ok=True)
    actual = {}
    for family in families:
        for mib in sizes:
            hostile, benign = FAMILIES[family](mib * MIB)
            for kind, data in (("hostile", hostile), ("benign", benign)):
                name = "%s-%dMiB-%s" % (family, mib, kind)
                with open(os.path.join(directory, name + ".npz"), "wb") as f:
                    f.write(data)
                actual[name] = len(data)
    env = dict(os.environ, NPYGUARD_BENCH_CRAFTED=directory)
    run = subprocess.run([args.bench, "--benchmark_format=json", "--benchmark_min_time=" + args.min_time],
                         env=env, check=True, capture_output=True, text=True)
    rows = {}
    for b in json.loads(run.stdout)["benchmarks"]:
        _, stem, mode = b["name"].split("/")
        rows[(stem, mode)] = (b["real_time"], b.get("label", ""))
    print("| family | size | mode | benign ms | hostile ms | hostile verdict | ratio | hostile growth %s |" %
          ("%d->%d MiB" % (sizes[0], sizes[-1]) if len(sizes) > 1 else ""))
    print("|---|---|---|---|---|---|---|---|")
    for family in families:
        for mode in ("default", "verify"):
            for mib in sizes:
                h = rows[("%s-%dMiB-hostile" % (family, mib), mode)]
                b = rows[("%s-%dMiB-benign" % (family, mib), mode)]
                growth = ""
                if mib == sizes[-1] and len(sizes) > 1:
                    first = rows[("%s-%dMiB-hostile" % (family, sizes[0]), mode)][0]
                    growth = "%.1fx" % (h[0] / first)
                sizes_note = "%.2f/%.2f MiB" % (actual["%s-%dMiB-hostile" % (family, mib)] / MIB,
                                                actual["%s-%dMiB-benign" % (family, mib)] / MIB)
                print("| %s | %s | %s | %.3f | %.3f | %s | %.2f | %s |" % (family, sizes_note, mode, b[0], h[0],
                                                                          h[1], h[0] / b[0], growth))
    nlogn = sizes[-1] / sizes[0] * math.log(sizes[-1] * MIB) / math.log(sizes[0] * MIB)
    print("\n(n log n growth from %d to %d MiB: %.1fx)" % (sizes[0], sizes[-1], nlogn))


if __name__ == "__main__":
    sys.exit(main())
