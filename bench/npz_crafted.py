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
  latin_compat    random precomposed Latin letters (NFC and NFKC quick check
                  Yes) with one U+1E9B (a compatibility decomposition: the
                  name is not its own NFKC form) at a random place / random
                  Greek
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
  max_tree        one member whose data are dynamic blocks with maximal code
                  trees (every code length written out), each buying its
                  output with two matches of 258 (within the allowance) /
                  one member of incompressible data, deflated
  dense_tree      as max_tree, the code trees written with repeat codes (about
                  27 header bytes a block) and five matches a block (a block's
                  first four units are decoded without tables): the most
                  table work per compressed byte found so far / as max_tree
  dense_short     dense_tree's blocks with one match of 45 bytes each: no
                  table is built, and the output is about 1.2 bytes a
                  compressed byte, as low as the allowance lets a header
                  family go (every benign archive of that size and output is
                  ordinary data) / as max_tree
  tiny_tree       one member whose data are the smallest dynamic blocks that
                  buy their output (two literal/length codes of one bit, no
                  distance code, about 13 header bytes; 16 literals a block,
                  about 1.1 output bytes a compressed byte): what a block
                  costs whatever its size / as max_tree
  literal_run     one member of one block of tiny_tree's codes, all of its
                  data literals of one bit (8 output bytes a compressed
                  byte): a lookup a literal would cost 8 a compressed byte /
                  as max_tree
  literal_pairs   one block of literals of 1 and 6 bits in turn, which do
                  not fit in the decoder's packed table together: a lookup
                  a literal, 3.5 bits a lookup / as max_tree
  literal_3bit_run  one block of one literal of 3 bits over and over, the
                  code's only literal that short (as 0x3F in random
                  float64) / as max_tree
  match_run       one block of 3-bit matches of 3 bytes at distance 1 (8
                  output bytes a compressed byte): two lookups and a copy
                  for every 3 bits / as max_tree
  match_run_10_2  as match_run, matches of 10 bytes at distance 2 (about 27
                  output bytes a compressed byte) / as max_tree
  match_run_2bit  one block of 2-bit matches of 3 bytes at distance 1 (12
                  output bytes a compressed byte) / as max_tree
  match_run_8     as match_run_2bit at distance 8, 3 bits a match / as
                  max_tree
  match_run_alt   as match_run_2bit at distances 1 and 2 in turn / as
                  max_tree
  match_blocks    blocks of 20 2-bit matches, each with the smallest header
                  for them: where the decoder packs a block's short matches
                  (after 4 units and 16 matches; 518 matches before 512 came
                  down to 16) / as max_tree
  short_lengths   as dense_tree, every code length written on its own with
                  1-4 bit codes (about 56 header bytes a block) / as max_tree
  short_distance  as short_lengths with one distance code of one bit (HDIST 1;
                  8: 1 bit, 9 and 1: 2 bits; about 44 header bytes a block)
                  / as max_tree
  mixed_tree      as dense_tree, single lengths and repeats mixed at random
                  (64 different blocks in turn) / as max_tree

The deflate families (empty_blocks, one_symbol, flush_64, max_tree,
dense_tree, short_lengths, mixed_tree) are also timed against "ordinary" data
of the same archive size: one member of random float64, deflated by zlib at
level 6 as np.savez_compressed does (coded blocks, which cost more to inflate
per byte than the stored blocks the incompressible benign archive holds).

Ordinary data inflate to about 1.06 bytes a compressed byte; max_tree's
member inflates to about 3 and dense_tree's to about 32. With verification
the whole check writes and CRC-32s every output byte, so against ordinary data
of the same archive size a high-ratio hostile archive also pays for up to 30x
more output, and "hostile / ordinary" mixes the cost of the crafted stream
with the cost of its output. The deflate families are therefore also timed
against "same output" data ("same-output ms", "hostile / same-output"): an
archive written as np.savez_compressed would (one real .npy member, deflated
by zlib at level 6) of the same archive size (within 1%) AND the same
uncompressed member size (within 2%) as the hostile archive. Its member is
random float64 upsampled: each value repeated in runs of floor(r) and
ceil(r), evenly spread, for a mean run length r (np.repeat(random, runs)),
with r found by bisection on a sample and corrected at full size. Where the
hostile member inflates to less than random float64 does (empty_blocks,
one_symbol, flush_64: 0.0001, 0.43 and 0.94 bytes a compressed byte at 1 MiB,
against 1.06; zlib's own output never falls much below 1, its stored blocks),
r is 1 and the archive is the ordinary one, byte for byte: same archive size,
more output than the hostile member, and "hostile / same-output" the same
ratio as "hostile / ordinary" (timed separately). The notes under the table
give each pair's archive and output sizes.

Upsampled float64 is not the cheapest benign archive of a given size and
output: its runs cost a literal for each value and a match for each run. The
deflate families are also timed against "sparse" data ("sparse ms",
"hostile / sparse"): one real .npy member of float64 zeros but for chunks of
16 random values, the fraction of random chunks found by bisection for the
same archive size (within 0.05%) at the same uncompressed size. Its
compressed bytes are almost all literals, as ordinary data's are, and the
rest of its output is runs of zeros, which cost the least to write and
check. Where the hostile member inflates to less than ordinary data, it is
the ordinary archive, as above.

Sparse data is not the cheapest benign archive of a given size and output
either: "split" data ("split ms", "hostile / split") is two members as
np.savez_compressed writes them, random bytes (which zlib stores: stored
blocks, copied as they are) and zeros (runs), the random count found by
bisection for the same archive size at exactly the same output. It costs
about what writing and checking the output costs and next to nothing per
compressed byte, so no inflater that parses a crafted stream's code trees is
within 2x of it: it bounds the reading "within 2x of every benign archive of
the same size and output" from below, and shows that reading cannot be met.
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
import unicodedata
import zipfile
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
# Letters of U+00C0-U+024F with a canonical decomposition that are their own NFKC form: 252, two bytes each.
LATIN = [chr(c) for c in range(0xC0, 0x250)
         if unicodedata.category(chr(c)).startswith("L") and unicodedata.decomposition(chr(c))
         and not unicodedata.decomposition(chr(c)).startswith("<") and unicodedata.is_normalized("NFKC", chr(c))]


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


def family_latin_compat(size):
    rng = random.Random(3)

    def name(i):
        letters = random_text(rng, LATIN, 984)  # two bytes a letter; 984 + 3 + 13 = 1,000 bytes
        at = rng.randrange(len(letters) + 1)
        return letters[:at] + "\u1e9b" + letters[at:] + "-%08d.npy" % i

    return names_pair(size, 1000, name, GREEK)


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


class Bits:
    """Deflate's bit order: fields least significant bit first, Huffman codes most significant first."""

    def __init__(self):
        self.parts = []

    def put(self, value, length):
        self.parts.append(format(value, "0%db" % length)[::-1] if length else "")

    def huff(self, code, length):
        self.parts.append(format(code, "0%db" % length))

    def text(self):
        return "".join(self.parts)


def bits_to_bytes(bit_text):
    bit_text += "0" * (-len(bit_text) % 8)
    return int(bit_text[::-1], 2).to_bytes(len(bit_text) // 8, "little") if bit_text else b""


def canonical_codes(lengths):
    count = [0] * 16
    for length in lengths:
        count[length] += 1
    count[0] = 0
    code, first = 0, [0] * 16
    for length in range(1, 16):
        code = (code + count[length - 1]) << 1
        first[length] = code
    codes = []
    for length in lengths:
        codes.append(first[length] if length else 0)
        if length:
            first[length] += 1
    return codes


TREE_LENGTHS = [8] * 226 + [9] * 60 + [4] * 2 + [5] * 28  # literal/length, then distance: both complete


def length_code(length):
    """The literal/length symbol of a match of `length` (3-258), its extra bits and their value (RFC 1951
    3.2.5)."""
    if length == 258:
        return 285, 0, 0
    base, symbol = 3, 257
    for extra in (0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5):
        if length < base + (1 << extra):
            return symbol, extra, length - base
        base += 1 << extra
        symbol += 1
    raise ValueError(length)


def tree_block(code_length_lengths, write_lengths, matches, tree=TREE_LENGTHS, precode_count=19, match_length=258):
    """A non-final dynamic block (HLIT 286, HDIST len(tree) - 286, HCLEN precode_count) of `tree`'s code
    lengths (TREE_LENGTHS by default), written by write_lengths(bits, codes of the code length code), then
    `matches` copies of `match_length` bytes at distance 1."""
    b = Bits()
    b.put(0, 1)
    b.put(2, 2)
    b.put(286 - 257, 5)
    b.put(len(tree) - 286 - 1, 5)
    b.put(precode_count - 4, 4)
    for symbol in [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15][:precode_count]:
        b.put(code_length_lengths[symbol], 3)
    write_lengths(b, canonical_codes(code_length_lengths))
    literal = canonical_codes(tree[:286])
    distance = canonical_codes(tree[286:])
    symbol, extra, value = length_code(match_length)
    for _ in range(matches):
        b.huff(literal[symbol], tree[symbol])
        b.put(value, extra)
        b.huff(distance[0], tree[286])
    b.huff(literal[256], tree[256])
    return b.text()


def max_tree_block(matches):
    """The largest header: every code length written one by one."""
    code_length_lengths = [4 if i < 13 else 5 for i in range(19)]

    def write(b, codes):
        for length in TREE_LENGTHS:
            b.huff(codes[length], code_length_lengths[length])

    return tree_block(code_length_lengths, write, matches)


def family_max_tree(size):
    return tree_blocks(size, max_tree_block(2), 2)


def chosen_tree_block(code_length_lengths, matches, take, match_length=258):
    """max_tree_block's code trees with the code length code `code_length_lengths`, each run of equal
    code lengths written as the length, then single lengths and repeats of the previous length (code
    length symbol 16) as take(left) chooses: the next unit's count (1 for a single length, 3-6 for a
    repeat), asked while at least 3 of the run are left; the last 1 or 2 are single lengths."""

    def write(b, codes):
        at = 0
        while at < len(TREE_LENGTHS):
            length = TREE_LENGTHS[at]
            run = 1
            while at + run < len(TREE_LENGTHS) and TREE_LENGTHS[at + run] == length:
                run += 1
            at += run
            b.huff(codes[length], code_length_lengths[length])
            left = run - 1
            while left:
                count = 1 if left < 3 else take(left)
                if count == 1:
                    b.huff(codes[length], code_length_lengths[length])
                else:
                    b.huff(codes[16], code_length_lengths[16])
                    b.put(count - 3, 2)
                left -= count

    return tree_block(code_length_lengths, write, matches, match_length=match_length)


def dense_tree_block(matches, match_length=258):
    """max_tree_block's code trees written as densely as RFC 1951 allows: each run of equal code
    lengths as the length, then repeats of 3-6 (code length symbol 16, a 1-bit code): about 27
    header bytes a block instead of 175."""
    code_length_lengths = [0] * 19
    code_length_lengths[16] = 1
    for symbol in (8, 9, 4, 5):
        code_length_lengths[symbol] = 3
    # 6 at a time, but 7 and 8 as 4 + 3 and 5 + 3: no tail of 1 or 2
    return chosen_tree_block(code_length_lengths, matches,
                             lambda left: min(6, left) if left <= 6 or left >= 9 else left - 3, match_length)


def short_lengths_block(matches):
    """max_tree_block's code trees, every code length written on its own with the shortest codes the
    code length code allows (8: 1 bit, 9: 2 bits, 5: 3 bits, 4: 4 bits; 0 the last 4-bit code, unused):
    about 56 header bytes a block, the most code lengths a compressed byte buys without repeats."""
    code_length_lengths = [0] * 19
    for symbol, length in ((8, 1), (9, 2), (5, 3), (4, 4), (0, 4)):
        code_length_lengths[symbol] = length

    def write(b, codes):
        for length in TREE_LENGTHS:
            b.huff(codes[length], code_length_lengths[length])

    return tree_block(code_length_lengths, write, matches)


def short_distance_block(matches):
    """short_lengths_block's literal/length code, and one distance code of one bit (HDIST 1, as zlib
    allows): 8: 1 bit, 9 and 1: 2 bits, HCLEN 18. 287 code lengths in about 44 header bytes, the most
    single lengths per header byte found: 6.6 a byte against short_lengths' 5.8."""
    tree = TREE_LENGTHS[:286] + [1]
    code_length_lengths = [0] * 19
    for symbol, length in ((8, 1), (9, 2), (1, 2)):
        code_length_lengths[symbol] = length

    def write(b, codes):
        for length in tree:
            b.huff(codes[length], code_length_lengths[length])

    return tree_block(code_length_lengths, write, matches, tree, 18)


def mixed_tree_block(matches, rng):
    """max_tree_block's code trees, each run of equal code lengths written as single lengths and
    repeats of 3-6 chosen at random (16: 1 bit, 8: 2 bits, 9: 3 bits, 4 and 5: 4 bits), so that no
    branch on a unit's kind or a repeat's count can be predicted."""
    code_length_lengths = [0] * 19
    for symbol, length in ((16, 1), (8, 2), (9, 3), (4, 4), (5, 4)):
        code_length_lengths[symbol] = length
    return chosen_tree_block(code_length_lengths, matches,
                             lambda left: 1 if rng.random() < 0.5 else rng.randint(3, min(left, 6)))


def block_member(size, block, per_block, fill=b"\x00", lead=b"\x00"):
    """One member of `block` (a block's bits, or a list of blocks taken in turn, making `per_block` bytes
    of `fill` in all) repeated to about `size` bytes after a stored block of the .npy header and `lead`
    (a byte for matches to copy)."""
    block = "".join(block) if isinstance(block, list) else block
    blocks = (size - 300) * 8 // len(block)
    count = blocks * per_block
    text = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % (count + len(lead))
    text += " " * ((64 - (10 + len(text) + 1) % 64) % 64) + "\n"
    first = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text.encode() + lead
    head = Bits()
    head.put(0, 1)
    head.put(0, 2)  # a stored block: the header and the lead
    prefix = bits_to_bytes(head.text()) + struct.pack("<HH", len(first), 0xFFFF ^ len(first)) + first
    stream = prefix + bits_to_bytes(block * blocks + "100") + b"\x00\x00\xff\xff"
    hostile = zip_archive([("a.npy", first + (fill * (count // len(fill) + 1))[:count], 8, stream)])
    benign_member = one_member(len(hostile))
    return hostile, zip_archive([("a.npy", benign_member, 8, raw_deflate(benign_member))])


def tree_blocks(size, block, matches, match_length=258):
    """block_member of zeros: `block` makes `matches` matches of `match_length` bytes in all."""
    return block_member(size, block, matches * match_length)


def family_dense_tree(size):
    return tree_blocks(size, dense_tree_block(5), 5)


def family_dense_short(size):
    return tree_blocks(size, dense_tree_block(1, 45), 1, 45)


def small_header(hlit, lengths, units):
    """A dynamic block's header (not final) with HLIT `hlit` + 257, HDIST 1 and HCLEN 18, the code length
    code `lengths` (symbol: length), then `units`: a number over 2 is a run of that many zeros (symbol 18),
    else a single length. Returns its bits."""
    code_length_lengths = [0] * 19
    for symbol, length in lengths:
        code_length_lengths[symbol] = length
    codes = canonical_codes(code_length_lengths)
    b = Bits()
    b.put(0, 1)
    b.put(2, 2)
    b.put(hlit, 5)
    b.put(0, 5)
    b.put(18 - 4, 4)
    for symbol in [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15][:18]:
        b.put(code_length_lengths[symbol], 3)
    for unit in units:
        if unit <= 2:
            b.huff(codes[unit], code_length_lengths[unit])
        else:
            b.huff(codes[18], code_length_lengths[18])
            b.put(unit - 11, 7)
    return b.text()


def tiny_tree_block(literals):
    """The smallest dynamic headers that buy their output: HLIT 257, HDIST 1, HCLEN 18, two literal/length
    codes of one bit ('a' and the end of block), no distance code, the code lengths as runs of zeros
    (code length symbol 18) and two single lengths, about 13 header bytes; then `literals` literals of
    one bit."""
    # 'a' and the end of block one bit each, the distance code's one length 0
    text = small_header(0, ((18, 1), (0, 2), (1, 2)), (ord("a"), 1, 138, 256 - ord("a") - 1 - 138, 1, 0))
    return text + "0" * literals + "1"  # code 0 ("a") as often, then the end of block


def family_tiny_tree(size):
    """Blocks of tiny_tree_block(16), the member's data all 'a': about 1.1 output bytes a compressed byte."""
    return block_member(size, tiny_tree_block(16), 16, fill=b"a", lead=b"")


def match_block(matches):
    """The smallest dynamic header for 2-bit matches of 3 bytes at distance 1 (HLIT 258, HDIST 1: the length
    of 3 1 bit, 'a' and the end of block 2 bits, one distance code of 1 bit; the code lengths as runs of zeros
    and single lengths), then `matches` of them."""
    # 'a' 2, the end of block 2, the length 1, the distance 1
    text = small_header(1, ((18, 1), (1, 2), (2, 3), (0, 3)), (ord("a"), 2, 138, 256 - ord("a") - 1 - 138, 2, 1, 1))
    return text + "00" * matches + "11"  # the length ("0") and the distance ("0"), then the end of block ("11")


def family_match_blocks(size):
    """Blocks of match_block(20): the decoder packs a block's short matches after its first 4 units and 16
    matches, so that each block pays for the packing and has no match after it (inflate_bench's trigger_N:
    N = 20 is the worst; with the trigger at 512 it was 518, which this family was then)."""
    return block_member(size, match_block(20), 3 * 20, fill=b"a", lead=b"a")


def family_literal_run(size):
    """One block of tiny_tree_block's codes, its data all 'a' of one bit each: about 8 output bytes a
    compressed byte, the most literals a compressed byte can hold."""
    literals = (size - 300) * 8 - len(tiny_tree_block(0))
    return block_member(size, tiny_tree_block(literals), literals, fill=b"a", lead=b"")


def short_code_block(litlen, distance, unit, size):
    """One dynamic block of the codes `litlen` and `distance` (lengths by symbol; each length written
    with a 4-bit code), then `unit` (a function of the literal/length and distance codes giving a unit's
    bits) repeated to about `size` bytes, then the end of block. Returns (bits, units)."""
    precode = [4] * 16 + [0, 0, 0]
    precode_codes = canonical_codes(precode)
    b = Bits()
    b.put(0, 1)
    b.put(2, 2)
    b.put(len(litlen) - 257, 5)
    b.put(len(distance) - 1, 5)
    b.put(19 - 4, 4)
    for symbol in [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]:
        b.put(precode[symbol], 3)
    for length in litlen + distance:
        b.huff(precode_codes[length], 4)
    litlen_codes = canonical_codes(litlen)
    one = unit(litlen_codes, canonical_codes(distance))
    units = ((size - 300) * 8 - len(b.text()) - 16) // len(one)  # room for the end of block
    b.parts.append(one * units)
    b.huff(litlen_codes[256], litlen[256])
    return b.text(), units


def literal_pairs_block(size):
    """short_code_block of literals of 1 and 6 bits in turn ('a' and 'f'; 'b' to 'e' 2 to 5 bits, the end
    of block and 'g' 7): the two do not fit in the decoder's packed table (6 bits) together."""
    litlen = [0] * 257
    for i in range(6):
        litlen[ord("a") + i] = i + 1
    litlen[256] = litlen[ord("g")] = 7
    return short_code_block(litlen, [0], lambda c, d: format(c[ord("a")], "01b") + format(c[ord("f")], "06b"), size)


def family_literal_pairs(size):
    """One block of literal_pairs_block: every lookup gives one literal."""
    block, units = literal_pairs_block(size)
    return block_member(size, block, 2 * units, fill=b"af", lead=b"")


def family_literal_3bit_run(size):
    """One block of 'a' of 3 bits over and over, the code's one literal of at most 3 bits (the end of block 1
    bit, a length of 3 2 bits, 'b' to 'e' 4 to 6 bits): as 0x3F in random float64, an eighth of the code
    space."""
    litlen = [0] * 258
    for symbol, length in ((256, 1), (257, 2), (ord("a"), 3), (ord("b"), 4), (ord("c"), 5), (ord("d"), 6),
                           (ord("e"), 6)):
        litlen[symbol] = length
    block, units = short_code_block(litlen, [1], lambda c, d: format(c[ord("a")], "03b"), size)
    return block_member(size, block, units, fill=b"a", lead=b"")


def match_run_block(size, length, distance):
    """short_code_block of matches of `length` (3-10) at `distance` (1 or 2), each 3 bits: a length code of 2
    bits ('a', 'b' and the end of block 2 bits too), one distance code of 1 bit."""
    litlen = [0] * (257 + length - 2)
    for symbol in (ord("a"), ord("b"), 256, 257 + length - 3):
        litlen[symbol] = 2
    distances = [0] * distance
    distances[distance - 1] = 1
    return short_code_block(litlen, distances, lambda c, d: format(c[257 + length - 3], "02b") + "0", size)


def match_run_member(size, length, distance, lead):
    block, units = match_run_block(size, length, distance)
    return block_member(size, block, length * units, fill=lead, lead=lead)


def family_match_run(size):
    """One block of matches of 3 bytes at distance 1, each 3 bits (a length code of 2 bits, one distance code
    of 1 bit): 8 output bytes a compressed byte, two lookups and a copy for every 3 bytes."""
    return match_run_member(size, 3, 1, b"a")


def family_match_run_10_2(size):
    """As match_run, matches of 10 bytes at distance 2 (the pattern "ab"): about 27 output bytes a compressed
    byte."""
    return match_run_member(size, 10, 2, b"ab")


def short_match_block(size, distance_symbols, extras):
    """short_code_block of matches of 3 bytes, each a length code of 1 bit ('a' and the end of block 2 bits)
    and a distance code of 1 bit with its extra bits, the distance codes `distance_symbols` (one or two) in
    turn, each with its extra bits (`extras`, bit strings)."""
    litlen = [0] * 258
    for symbol, length in ((257, 1), (ord("a"), 2), (256, 2)):
        litlen[symbol] = length
    distances = [0] * (max(distance_symbols) + 1)
    for symbol in distance_symbols:
        distances[symbol] = 1
    return short_code_block(litlen, distances, lambda c, d: "".join(
        format(c[257], "01b") + format(d[symbol], "01b") + extra for symbol, extra in zip(distance_symbols, extras)),
        size)


def short_match_member(size, distance_symbol, extra, lead):
    """One block of short_match_block at the distance of the lead (the pattern the matches repeat)."""
    block, units = short_match_block(size, [distance_symbol], [extra])
    return block_member(size, block, 3 * units, fill=lead, lead=lead)


def family_match_run_2bit(size):
    """One block of matches of 3 bytes at distance 1, each 2 bits (a length code and one distance code of 1
    bit): 12 output bytes a compressed byte, the most matches a compressed byte can hold."""
    return short_match_member(size, 0, "", b"a")


def family_match_run_8(size):
    """As match_run_2bit at distance 8 (distance code 5, its extra bit 1), 3 bits a match: each copy reads
    bytes that up to three copies before wrote."""
    return short_match_member(size, 5, "1", b"abcdefgh")


def family_match_run_alt(size):
    """Matches of 3 bytes at distances 1 and 2 in turn, each 2 bits (a length code of 1 bit, two distance
    codes of 1 bit): no two matches in a row at one distance, after "aa"."""
    block, units = short_match_block(size, [0, 1], ["", ""])
    return block_member(size, block, 6 * units, fill=b"a", lead=b"aa")


def family_short_lengths(size):
    return tree_blocks(size, short_lengths_block(5), 5)


def family_short_distance(size):
    return tree_blocks(size, short_distance_block(5), 5)


def family_mixed_tree(size):
    rng = random.Random(12)
    return tree_blocks(size, [mixed_tree_block(5, rng) for _ in range(64)], 5 * 64)


DEFLATE_FAMILIES = ("empty_blocks", "one_symbol", "flush_64", "max_tree", "dense_tree", "dense_short", "short_lengths",
                    "short_distance", "mixed_tree", "tiny_tree", "literal_run", "literal_pairs", "literal_3bit_run",
                    "match_run", "match_run_10_2", "match_run_2bit", "match_run_8",
                    "match_run_alt", "match_blocks")


def ordinary(size):
    """One member of random float64 deflated at level 6 (np.savez_compressed's way), about `size` bytes."""
    count = size // 8
    for _ in range(4):
        member = npy_bytes(np.random.default_rng(8).random(count))
        archive = zip_archive([("a.npy", member, 8, raw_deflate(member))])
        count = max(1, int(count * size / len(archive)))
    return archive


def output_size(archive):
    """The total uncompressed size of an archive's members, as its central directory gives it."""
    return sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(archive)).infolist())


def upsampled(count, repeat):
    """A .npy of `count` random float64 values (ordinary's), each repeated in runs of floor(repeat) and
    ceil(repeat), evenly spread (mean run length `repeat`): an upsampled signal. repeat 1 is ordinary's member."""
    runs = np.diff(np.floor(np.arange(count + 1) * repeat).astype(np.int64))
    return npy_bytes(np.repeat(np.random.default_rng(8).random(count), runs))


def upsampled_archive(size, repeat):
    """upsampled(count, repeat) deflated at level 6 in one member, count chosen for about `size` bytes."""
    member = upsampled(16384, repeat)
    count = max(1, int(16384 * size / len(raw_deflate(member))))
    for _ in range(6):
        member = upsampled(count, repeat)
        archive = zip_archive([("a.npy", member, 8, raw_deflate(member))])
        if abs(len(archive) - size) < size / 2000:
            break
        count = max(1, int(count * size / len(archive)))
    return archive


def same_output(size, output):
    """A benign archive of about `size` bytes, np.savez_compressed's way, whose member inflates to about
    `output` bytes: upsampled random float64, the mean run length found by bisection on a sample of 16,384
    values, then corrected at full size. Returns (archive, run length); where even run length 1 (ordinary
    data) makes more output than asked, (ordinary(size), 1.0)."""
    target = output / size

    def sample_ratio(repeat):
        member = upsampled(16384, repeat)
        return len(member) / len(raw_deflate(member))

    if sample_ratio(1.0) >= target:
        return ordinary(size), 1.0
    low, high = 1.0, 2.0
    while sample_ratio(high) < target:
        low, high = high, high * 2
    for _ in range(24):
        middle = (low + high) / 2
        low, high = (middle, high) if sample_ratio(middle) < target else (low, middle)
    repeat = (low + high) / 2
    for attempt in range(4):  # the ratio is about proportional to the run length
        archive = upsampled_archive(size, repeat)
        ratio = output_size(archive) / len(archive)
        if abs(ratio / target - 1) < 0.005 or attempt == 3:
            return archive, repeat
        repeat = max(1.0, repeat * target / ratio)


def sparse_member(count, fraction, chunk=16):
    """A .npy of `count` float64 values, zero but for chunks of `chunk` random values, each chunk random
    with probability `fraction`: a sparse array (a mask, a mostly empty grid) as numpy saves it."""
    rng = np.random.default_rng(9)
    chunks = count // chunk
    values = np.zeros(count)
    picked = rng.random(chunks) < fraction
    values[:chunks * chunk].reshape(chunks, chunk)[picked] = rng.random((int(picked.sum()), chunk))
    return npy_bytes(values)


def sparse(size, output):
    """A benign archive of about `size` bytes, np.savez_compressed's way, whose member inflates to about
    `output` bytes: sparse_member, its fraction of random chunks found by bisection at full size. Its
    compressed bytes are almost all literals (random float64) and its other output long runs of zeros,
    the cheapest output there is: the cheapest benign archive of that size and output found. Returns
    (archive, fraction); where the member would be all random and still make more output than asked,
    (ordinary(size), 1.0)."""
    count = max(1, (output - 128) // 8)
    if output <= output_size(ordinary(size)):
        return ordinary(size), 1.0
    low, high = 0.0, 1.0
    archive = None
    for _ in range(16):
        middle = (low + high) / 2
        member = sparse_member(count, middle)
        archive = zip_archive([("a.npy", member, 8, raw_deflate(member))])
        if abs(len(archive) - size) < size / 2000:
            return archive, middle
        low, high = (middle, high) if len(archive) < size else (low, middle)
    return archive, (low + high) / 2


def split_archive(count, zeros):
    """Two members as np.savez_compressed writes them: `count` random bytes (zlib stores them: stored blocks)
    and `zeros` zero bytes (a few hundred compressed bytes a megabyte)."""
    rng = np.random.default_rng(10)
    data = npy_bytes(rng.integers(0, 256, size=count, dtype=np.uint8))
    empty = npy_bytes(np.zeros(zeros, dtype=np.uint8))
    return zip_archive([("a.npy", data, 8, raw_deflate(data)), ("b.npy", empty, 8, raw_deflate(empty))])


def split(size, output):
    """A benign archive of about `size` bytes and exactly `output` bytes of output, cheaper still than
    sparse: random bytes (stored blocks, copied as they are) and zeros (runs), in two members, the random
    count found by bisection. Its cost is about the output's (writing and checking it) and nothing per
    compressed byte: no inflater parses a crafted stream's code trees within 2x of it. Returns (archive,
    random count); where random data alone make more output than asked, (ordinary(size), 0)."""
    if output <= output_size(ordinary(size)):
        return ordinary(size), 0
    header = len(npy_bytes(np.zeros(1, dtype=np.uint8))) - 1  # each member's .npy header
    low, high = 0, size
    archive = None
    for _ in range(40):
        middle = (low + high) // 2
        archive = split_archive(middle, output - 2 * header - middle)
        if abs(len(archive) - size) < size / 2000 or high - low <= 1:
            return archive, middle
        low, high = (middle, high) if len(archive) < size else (low, middle)
    return archive, (low + high) // 2


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
    p.add_argument("--repetitions", type=int, default=1,
                   help="run each benchmark this many times and keep the fastest (for a machine not quite idle)")
    p.add_argument("--keep", help="write the archives here and keep them")
    p.add_argument("--reuse", help="time the archives an earlier --keep wrote here (no generation)")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    families = args.families.split(",")
    directory = args.reuse or args.keep or tempfile.mkdtemp(prefix="npz-crafted-")
    os.makedirs(directory, exist_ok=True)
    actual, output = {}, {}
    for family in families:
        for mib in sizes:
            if args.reuse:
                for kind in ("hostile", "benign", "ordinary", "same_output", "sparse", "split"):
                    name = "%s-%dMiB-%s" % (family, mib, kind)
                    path = os.path.join(directory, name + ".npz")
                    if os.path.exists(path):
                        actual[name] = os.path.getsize(path)
                        if family in DEFLATE_FAMILIES and kind in ("hostile", "same_output", "sparse", "split"):
                            with open(path, "rb") as f:
                                output[name] = output_size(f.read())
                continue
            hostile, benign = FAMILIES[family](mib * MIB)
            kinds = [("hostile", hostile), ("benign", benign)]
            if family in DEFLATE_FAMILIES:
                kinds.append(("ordinary", ordinary(len(hostile))))
                same, repeat = same_output(len(hostile), output_size(hostile))
                kinds.append(("same_output", same))
                thin, fraction = sparse(len(hostile), output_size(hostile))
                kinds.append(("sparse", thin))
                halves, _ = split(len(hostile), output_size(hostile))
                kinds.append(("split", halves))
                output["%s-%dMiB-hostile" % (family, mib)] = output_size(hostile)
                output["%s-%dMiB-same_output" % (family, mib)] = output_size(same)
                output["%s-%dMiB-sparse" % (family, mib)] = output_size(thin)
                output["%s-%dMiB-split" % (family, mib)] = output_size(halves)
                print("%s %d MiB: same_output run length %.4f, sparse fraction %.4f" % (family, mib, repeat, fraction),
                      file=sys.stderr)
            for kind, data in kinds:
                name = "%s-%dMiB-%s" % (family, mib, kind)
                with open(os.path.join(directory, name + ".npz"), "wb") as f:
                    f.write(data)
                actual[name] = len(data)
    env = dict(os.environ, NPYGUARD_BENCH_CRAFTED=directory)
    run = subprocess.run([args.bench, "--benchmark_format=json", "--benchmark_min_time=" + args.min_time,
                          "--benchmark_repetitions=%d" % args.repetitions],
                         env=env, check=True, capture_output=True, text=True)
    rows = {}
    for b in json.loads(run.stdout)["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        _, stem, mode = b["run_name"].split("/") if "run_name" in b else b["name"].split("/")
        if (stem, mode) not in rows or b["real_time"] < rows[(stem, mode)][0]:
            rows[(stem, mode)] = (b["real_time"], b.get("label", ""))
    print("| family | size | mode | benign ms | hostile ms | hostile verdict | ratio | hostile growth %s "
          "| ordinary ms | hostile / ordinary | same-output ms | hostile / same-output | sparse ms | hostile / sparse "
          "| split ms | hostile / split |"
          % ("%d->%d MiB" % (sizes[0], sizes[-1]) if len(sizes) > 1 else ""))
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
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
                o = rows.get(("%s-%dMiB-ordinary" % (family, mib), mode))
                versus = "%.3f | %.2f" % (o[0], h[0] / o[0]) if o else " | "
                so = rows.get(("%s-%dMiB-same_output" % (family, mib), mode))
                versus += " | %.3f | %.2f" % (so[0], h[0] / so[0]) if so else " |  | "
                sp = rows.get(("%s-%dMiB-sparse" % (family, mib), mode))
                versus += " | %.3f | %.2f" % (sp[0], h[0] / sp[0]) if sp else " |  | "
                sl = rows.get(("%s-%dMiB-split" % (family, mib), mode))
                versus += " | %.3f | %.2f" % (sl[0], h[0] / sl[0]) if sl else " |  | "
                print("| %s | %s | %s | %.3f | %.3f | %s | %.2f | %s | %s |" % (family, sizes_note, mode, b[0], h[0],
                                                                               h[1], h[0] / b[0], growth, versus))
    nlogn = sizes[-1] / sizes[0] * math.log(sizes[-1] * MIB) / math.log(sizes[0] * MIB)
    print("\n(n log n growth from %d to %d MiB: %.1fx)" % (sizes[0], sizes[-1], nlogn))
    for family in families:
        for mib in sizes:
            h, so, sp, sl = ("%s-%dMiB-%s" % (family, mib, kind) for kind in ("hostile", "same_output", "sparse", "split"))
            if h in output and so in output:
                print("(%s %d MiB, hostile / same-output: archive %d / %d bytes, output %d / %d bytes)"
                      % (family, mib, actual[h], actual[so], output[h], output[so]))
            if h in output and sp in output:
                print("(%s %d MiB, hostile / sparse: archive %d / %d bytes, output %d / %d bytes)"
                      % (family, mib, actual[h], actual[sp], output[h], output[sp]))
            if h in output and sl in output:
                print("(%s %d MiB, hostile / split: archive %d / %d bytes, output %d / %d bytes)"
                      % (family, mib, actual[h], actual[sl], output[h], output[sl]))


if __name__ == "__main__":
    sys.exit(main())
