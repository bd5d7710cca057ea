"""The listed .npz deviations (docs/deviations.md, IDs npz-*) as classes.

An archive numpy loads and npyguard rejects is explained when a class
matches it *and* npyguard's code is one of the class's codes. Predicates
look at the archive as Python's ``zipfile`` reads it (the reader numpy
uses: it succeeded, since numpy loaded the archive) and at the raw bytes
under each of its entries, and restate the rule of SPEC-npz.md that the
class describes. Rejections inside a member (errors with ``member_offset``)
are explained by the .npy classes of ``deviations.py`` on the member's
bytes, by ``npz_run.py``.
"""

import io
import re
import string
import struct
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import deviations

EOCD = b"PK\x05\x06"
Z64_LOCATOR = b"PK\x06\x07"
MAX_MEMBERS = 65535
MAX_TOTAL = 1 << 32
MAX_RATIO = 1032
MAX_EXTRA = 4160
BIDI = {0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E,
        0x2066, 0x2067, 0x2068, 0x2069}


class Facts:
    """The archive as zipfile reads it, and the raw records under it."""

    def __init__(self, data, code, offset):
        self.data = data
        self.code = code
        self.offset = offset
        self.zf = zipfile.ZipFile(io.BytesIO(data))
        self.infos = self.zf.infolist()

    @cached_property
    def eocd(self):
        """(offset, disk, disk_cd, ndisk, ntotal, cd_size, cd_offset, clen) of
        the end record zipfile uses (the last signature in the last 64 KiB)."""
        start = max(0, len(self.data) - 65557)
        at = self.data.rfind(EOCD, start)
        return (at,) + struct.unpack("<HHHHIIH", self.data[at + 4:at + 22])

    @cached_property
    def concat(self):
        """Bytes before the archive that zipfile corrected for (offsets not adjusted)."""
        at, _, _, _, _, cd_size, cd_offset, _ = self.eocd
        if self.zip64:
            return 0
        return at - cd_size - cd_offset

    @cached_property
    def zip64(self):
        at = self.eocd[0]
        return at >= 20 and self.data[at - 20:at - 16] == Z64_LOCATOR

    @cached_property
    def central(self):
        """The raw central headers zipfile walked, in order: a dict of the
        fields as written (before zipfile's Zip64 substitution), with the
        offset just after each header."""
        out, pos = [], self.zf.start_dir
        for _ in self.infos:
            head = self.data[pos:pos + 46]
            if len(head) < 46:
                break
            f = struct.unpack("<4sHHHHHHIIIHHHHHII", head)
            nlen, xlen, clen = f[10], f[11], f[12]
            extra = self.data[pos + 46 + nlen:pos + 46 + nlen + xlen]
            out.append({"csize": f[8], "usize": f[9], "disk": f[13], "lho": f[16],
                        "extra": extra, "start": pos, "end": pos + 46 + nlen + xlen + clen})
            pos += 46 + nlen + xlen + clen
        return out

    def local(self, info):
        """(flags, method, crc, csize, usize, name bytes, extra bytes, data start)."""
        at = info.header_offset
        head = self.data[at:at + 30]
        if len(head) < 30:
            return None
        _, _, flags, method, _, _, crc, csize, usize, nlen, xlen = struct.unpack("<4sHHHHHIIIHH", head)
        name = self.data[at + 30:at + 30 + nlen]
        extra = self.data[at + 30 + nlen:at + 30 + nlen + xlen]
        return flags, method, crc, csize, usize, name, extra, at + 30 + nlen + xlen

    @cached_property
    def extents(self):
        """(start, end) of every entry in central order, descriptors included."""
        out = []
        for info in self.infos:
            loc = self.local(info)
            if loc is None:
                out.append((info.header_offset, len(self.data)))
                continue
            flags, _, _, _, _, _, extra, start = loc
            end = start + info.compress_size
            if flags & 0x08:
                if self.data[end:end + 4] == b"PK\x07\x08":
                    end += 24 if any(t == 1 for t, _ in records(extra)) else 16
                else:
                    end += 12
            out.append((info.header_offset, end))
        return out


def records(extra):
    """(tag, payload) of an extra field, as far as it parses."""
    out, i = [], 0
    while i + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[i:i + 4])
        out.append((tag, extra[i + 4:i + 4 + length]))
        i += 4 + length
    return out


def raw_name(info):
    return info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437", "surrogatepass")


SEPARATORS = re.compile(r"[/\\]")


def _run_exceeds(name, form):
    """More than 30 non-starters in a row in the name's NFD (or NFKD)."""
    run = 0
    for c in name:
        for d in unicodedata.normalize(form, c):
            run = run + 1 if unicodedata.combining(d) else 0
            if run > 30:
                return True
    return False


def _path_problem(name):
    """The path rules on a name ending in .npy and on its key; '\\' separates."""
    key = name[:-4]
    if not key or name[0] in "/\\" or (len(name) > 1 and name[1] == ":" and name[0] in string.ascii_letters):
        return True
    parts = SEPARATORS.split(name) + SEPARATORS.split(key)
    return any(p in ("", ".", "..") or p[-1] in " ." for p in parts)


def hostile_text(name):
    """SPEC-npz section 6, the character and path rules, on a decoded name."""
    if any(c == "\0" or c == "\\" or 0x01 <= ord(c) <= 0x1F or 0x7F <= ord(c) <= 0x9F
           or ord(c) in BIDI or unicodedata.category(c) in ("Cf", "Zl", "Zp") for c in name):
        return True
    if _run_exceeds(name, "NFD"):
        return True
    if not name.endswith(".npy"):
        return False  # not_npy_member: another class
    if _path_problem(name):
        return True
    if name.isascii():
        return False
    if _run_exceeds(name, "NFKD"):
        return True
    folded = unicodedata.normalize("NFKC", name)
    return (not folded.endswith(".npy") or _path_problem(folded)
            or len(SEPARATORS.split(folded)) != name.count("/") + 1)


def directory_clash(nfc_names):
    """A name that is another's directory ('a.npy' beside 'a.npy/b.npy')."""
    names = set(nfc_names)
    return any("/".join(parts[:k]) in names
               for parts in (n.split("/") for n in nfc_names) for k in range(1, len(parts)))


def overlong_cp437(info):
    if info.flag_bits & 0x800:
        return False
    raw = raw_name(info)
    for i, b in enumerate(raw):
        nxt = raw[i + 1] if i + 1 < len(raw) else 0
        if b in (0xC0, 0xC1) or (b == 0xE0 and 0x80 <= nxt <= 0x9F) or (b == 0xF0 and 0x80 <= nxt <= 0x8F):
            return True
    return False


def shadowed_error(f, nfc, offset):
    """The error lies in an entry (central header or local entry) that a
    later entry of the same name hides from numpy, which reads the last."""
    if offset is None:
        return False
    for i, name in enumerate(nfc):
        if name not in nfc[i + 1:]:
            continue
        ranges = [f.extents[i]]
        if i < len(f.central):
            ranges.append((f.central[i]["start"], f.central[i]["end"]))
        if any(start <= offset < end for start, end in ranges):
            return True
    return False


def hostile_name(f):
    names = [i.orig_filename for i in f.infos]
    if any(hostile_text(n) or overlong_cp437(i) for n, i in zip(names, f.infos)):
        return True
    nfc = [unicodedata.normalize("NFC", n) for n in names]
    if len(set(nfc)) != len(nfc):
        # Whatever is wrong with a shadowed entry, numpy never reads it.
        return True if not shadowed_error(f, nfc, f.offset) else {f.code}
    return any(n[:-4] in set(nfc) for n in nfc if n.endswith(".npy")) or directory_clash(nfc)


def not_npy(f):
    return any(not i.orig_filename.endswith(".npy") for i in f.infos)


def other_method(f):
    return any(i.compress_type not in (0, 8) for i in f.infos)


def comment_trailing_prepended(f):
    at, clen = f.eocd[0], f.eocd[7]
    starts = [s for s, _ in f.extents]
    return {
        "archive_comment": bool(f.zf.comment) or any(i.comment for i in f.infos),
        "trailing_data": at + 22 + clen < len(f.data),
        "prepended_data": f.concat > 0 or (bool(starts) and min(starts) > 0),
        "bad_eocd": f.concat != 0,
        # Over 65,535 bytes after the record: out of npyguard's search window
        # (zipfile's window is one byte longer).
        "not_zip": len(f.data) - (at + 22 + clen) > 65535,
    }


def local_central(f):
    for info in f.infos:
        loc = f.local(info)
        if loc is None:
            continue
        flags, method, crc, csize, usize, name, extra, _ = loc
        central_extra_tags = {t for t, _ in records(info.extra)}
        if (flags & 0x08 or flags != info.flag_bits or method != info.compress_type
                or crc != info.CRC or (csize, usize) != (info.compress_size, info.file_size)
                or name != raw_name(info) or extra != b"" and any(t in (1, 0x7075) for t, _ in records(extra))
                or 0x7075 in central_extra_tags):
            return True
    return False


def counts(f):
    at, disk, disk_cd, ndisk, ntotal, _, _, clen = f.eocd
    n = len(f.infos)
    return (f.zip64 or disk != 0 or disk_cd != 0 or ndisk != n or ntotal != n or f.concat != 0
            or at + 22 + clen > len(f.data))


def ambiguous_end(f):
    """Another end record in the last 64 KiB whose comment length reaches the end."""
    start = max(0, len(f.data) - 65557)
    at = f.data.find(EOCD, start)
    while at >= 0:
        if at != f.eocd[0] and at + 22 <= len(f.data):
            clen = struct.unpack("<H", f.data[at + 20:at + 22])[0]
            if at + 22 + clen == len(f.data):
                return True
        at = f.data.find(EOCD, at + 1)
    return False


def extra_field_problem(extra, central, raw):
    """SPEC-npz section 5 on one extra field (True: a rule is broken)."""
    if len(extra) > MAX_EXTRA:
        return True
    i, tags = 0, []
    while i + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[i:i + 4])
        tags.append((tag, length))
        i += 4 + length
    if i != len(extra):
        return True
    if [t for t, _ in tags].count(1) > 1 or [t for t, _ in tags].count(0x7075) > 1:
        return True
    z64 = [length for t, length in tags if t == 1]
    if not central:
        return bool(z64) and z64[0] != 16
    saturated = sum(1 for k in ("usize", "csize", "lho") if raw[k] == 0xFFFFFFFF)
    # Present exactly when a value is saturated, holding exactly those values.
    return (bool(z64) != (saturated > 0) or bool(z64) and z64[0] != 8 * saturated
            or any(t == 0x7075 and length < 5 for t, length in tags))


def extra_fields(f):
    for info, raw in zip(f.infos, f.central):
        if extra_field_problem(raw["extra"], True, raw):
            return True
        loc = f.local(info)
        if loc is not None and extra_field_problem(loc[6], False, raw):
            return True
    return False


def central_header(f):
    cd_size = f.eocd[5]
    if f.zip64:  # zipfile reads the Zip64 end record right before the locator
        rec = f.eocd[0] - 20 - 56
        cd_size = struct.unpack("<Q", f.data[rec + 40:rec + 48])[0]
    cd_end = f.zf.start_dir + cd_size
    return any(raw["disk"] != 0 or raw["end"] > cd_end for raw in f.central)


def declared_size(f):
    """A member whose declared uncompressed size is not what its data holds:
    zipfile never compares a stored member's two sizes, nor a deflate
    stream's length with the declared one, and numpy reads only the bytes
    the member's header asks for."""
    for info in f.infos:
        if info.compress_type == 0 and info.compress_size != info.file_size:
            return True
        loc = f.local(info)
        if info.compress_type != 8 or loc is None:
            continue
        d = zlib.decompressobj(-15)
        try:
            out = d.decompress(f.data[loc[7]:loc[7] + info.compress_size], info.file_size + 1)
        except zlib.error:
            continue
        if len(out) != info.file_size:
            return True
    return False


def deflate_end(f):
    """A deflate member whose stream, inflated to its declared size, has not
    ended, or ended before its compressed bytes did."""
    for info in f.infos:
        loc = f.local(info)
        if info.compress_type != 8 or loc is None:
            continue
        body = f.data[loc[7]:loc[7] + info.compress_size]
        d = zlib.decompressobj(-15)
        try:
            d.decompress(body, info.file_size + 1)
        except zlib.error:
            continue
        if not d.eof or d.unused_data or d.unconsumed_tail:
            return True
    return False


def _deflate_bodies(f):
    for info in f.infos:
        loc = f.local(info)
        if info.compress_type == 8 and loc is not None:
            yield info, f.data[loc[7]:loc[7] + info.compress_size]


def unbought_deflate(f):
    """A deflate stream that, at some byte k, has consumed more than
    512 + P + P // 16 compressed bytes for its P bytes of output."""
    for info, body in _deflate_bodies(f):
        d = zlib.decompressobj(-15)
        produced = 0
        try:
            for k in range(1, len(body) + 1):
                produced += len(d.decompress(body[k - 1:k], info.file_size + 1 - produced))
                if k > 512 + produced + produced // 16:
                    return True
                if d.eof or produced > info.file_size:
                    break
        except zlib.error:
            continue
    return False


def header_amplification(f, limit=1 << 20):
    """The deflate members' headers, in directory order, run more than
    min(`limit`, 64 KiB + an eighth of the archive's size) bytes past 1 KiB
    plus eight times the compressed bytes they inflate from: checked with
    the member's compressed size before its header, then with the bytes
    consumed so far after each 64 KiB of header text and at its end."""
    allowance = min(limit, 65536 + len(f.data) // 8)

    def excess(header, compressed):
        return max(0, header - 1024 - 8 * compressed)

    unpaid = 0
    for info, body in _deflate_bodies(f):
        try:
            head = zlib.decompressobj(-15).decompress(body, 12)
        except zlib.error:
            continue
        if len(head) < 10 or not head.startswith(b"\x93NUMPY"):
            continue
        offset, length = (10, int.from_bytes(head[8:10], "little")) if head[6] == 1 else \
            (12, int.from_bytes(head[8:12], "little"))
        end = min(offset + length, info.file_size)
        header = max(0, end - offset)
        if unpaid + excess(header, info.compress_size) > allowance:
            return True
        d = zlib.decompressobj(-15)
        out = 0
        pending = body
        while True:
            so_far = out - offset if out > offset else 0
            target = min(end, offset + 65536 * (so_far // 65536 + 1))
            try:
                got = d.decompress(pending, max(0, target - out))
            except zlib.error:
                break
            pending = d.unconsumed_tail
            out += len(got)
            consumed = len(body) - len(pending) - len(d.unused_data)
            now = max(0, min(out, end) - offset)
            if unpaid + excess(now, consumed) > allowance:
                return True
            if out >= end or not got:
                unpaid += excess(now, consumed)
                break
    return False


def layout(f):
    ext = f.extents
    if [s for s, _ in ext] != sorted(s for s, _ in ext):
        return True
    expected = 0
    for start, end in sorted(ext):
        if start != expected:
            return True
        expected = end
    return expected != f.zf.start_dir


def flags(f):
    for i in f.infos:
        bits = i.flag_bits & ~0x0808
        if i.compress_type == 8:
            bits &= ~0x6
        if bits or (i.extract_version & 0xFF) > 45 or i.compress_type == 99:
            return True
        if any(t in (0x9901, 0x0017) for t, _ in records(i.extra)):
            return True
    return False


def member_type(f):
    return any((i.external_attr >> 16) & 0o170000 not in (0, 0o100000) or i.external_attr & 0x18
               for i in f.infos)


def limits(f):
    total = sum(i.file_size for i in f.infos)
    return {
        "too_many_members": len(f.infos) > MAX_MEMBERS or f.eocd[4] > MAX_MEMBERS,
        "total_size_exceeded": total > MAX_TOTAL,
        "ratio_exceeded": any(i.compress_type == 8 and i.file_size > MAX_RATIO * i.compress_size
                              for i in f.infos),
    }


def _when(table):
    """A predicate from a {code: bool} table: the codes whose condition holds."""
    return lambda f: frozenset(code for code, hit in table(f).items() if hit)


@dataclass(frozen=True)
class ArchiveClass:
    id: str
    codes: frozenset
    predicate: Callable


def _codes(*names):
    return frozenset(names)


CLASSES = (
    ArchiveClass("npz-hostile-name", _codes("bad_member_name", "duplicate_name"), hostile_name),
    ArchiveClass("npz-not-npy", _codes("not_npy_member"), not_npy),
    # numpy refuses object arrays without allow_pickle, so this class only
    # explains runs with it; members' object dtypes are .npy class type-object.
    ArchiveClass("npz-object", _codes("object_dtype"), lambda f: False),
    ArchiveClass("npz-method", _codes("unsupported_method"), other_method),
    ArchiveClass("npz-comment-trailing-prepended",
                 _codes("archive_comment", "trailing_data", "prepended_data", "bad_eocd",
                        "ambiguous_eocd", "not_zip"),
                 _when(lambda f: dict(comment_trailing_prepended(f), ambiguous_eocd=ambiguous_end(f)))),
    ArchiveClass("npz-local-central", _codes("header_mismatch", "name_mismatch", "bad_data_descriptor"),
                 local_central),
    ArchiveClass("npz-counts", _codes("entry_count_mismatch", "bad_eocd", "bad_zip64_eocd"), counts),
    ArchiveClass("npz-layout", _codes("gap_between_entries", "entry_order", "overlapping_entries"), layout),
    ArchiveClass("npz-extra-field", _codes("bad_extra_field"), extra_fields),
    ArchiveClass("npz-central-header", _codes("bad_central_header"), central_header),
    ArchiveClass("npz-declared-size", _codes("size_mismatch", "trailing_data"), declared_size),
    ArchiveClass("npz-deflate-end", _codes("size_mismatch"), deflate_end),
    ArchiveClass("npz-deflate-cost", _codes("bad_deflate"), unbought_deflate),
    ArchiveClass("npz-header-amplification", _codes("header_too_large"), header_amplification),
    ArchiveClass("npz-flags", _codes("unsupported_feature", "encrypted_member"), flags),
    ArchiveClass("npz-type", _codes("bad_member_type"), member_type),
    ArchiveClass("npz-limits", _codes("too_many_members", "total_size_exceeded", "ratio_exceeded"),
                 _when(limits)),
)


def explain(data, code, offset=None):
    """(IDs matching with this code at this archive offset, IDs matching
    with other codes, errors)."""
    try:
        facts = Facts(data, code, offset)
    except Exception as exc:  # noqa: BLE001 - numpy read it, so zipfile must
        return [], [], ["zipfile: %s: %s" % (type(exc).__name__, exc)]
    return deviations.match_classes(CLASSES, facts, code)


def doc_problems(markdown_text, where="docs/deviations.md"):
    """Disagreements between CLASSES and the document's npz-* rows."""
    return deviations.doc_problems(markdown_text, where, CLASSES, archives=True)
