"""check(), load() and open_npz() on every kind of input np.load takes: bytes, a
path, a seekable file object and a non-seekable stream, for .npy, .npz and .ra;
the format chosen by SPEC.md section 9 (the name's claim, else the first
bytes) or by format=; how much a file object is read; open_npz's laziness; and
.npz arrays aligned for their dtype as np.load's are."""

import collections.abc
import io
import os
import tempfile
import zipfile
import zlib

import numpy as np
import pytest

import npyguard
from conftest import npy_bytes
from test_npy import same_array

ARRAY = np.asfortranarray(np.arange(12, dtype=">f8").reshape(3, 4))


def npy_of(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def npz_of(compressed=False, **arrays):
    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


def ra_of(array):
    """A little-endian RawArray file of a float32 array (dims in Fortran order)."""
    array = np.asarray(array, dtype="<f4")
    data = array.tobytes(order="F")
    fields = (0, 3, 4, len(data), array.ndim, *array.shape)
    return b"rawarray" + b"".join(v.to_bytes(8, "little") for v in fields) + data


NPY = npy_of(ARRAY)
NPZ = npz_of(a=np.arange(10, dtype="<i8"), b=ARRAY)
RA = ra_of(np.arange(6).reshape(2, 3))
FILES = {"npy": NPY, "npz": NPZ, "ra": RA}
MODELS = {"npy": npyguard.Header, "npz": npyguard.Archive, "ra": npyguard.RaHeader}


def expected(fmt):
    if fmt == "ra":
        return np.asfortranarray(np.arange(6, dtype="<f4").reshape(2, 3))
    if fmt == "npy":
        return np.load(io.BytesIO(NPY))
    with np.load(io.BytesIO(NPZ)) as loaded:
        return {key: loaded[key] for key in loaded.files}


class Stream:
    """An upload stream: read() only (no seek, tell, readinto), at most `chunk` bytes a
    call; counts what it hands out and refuses to go past `cap`."""

    def __init__(self, data, name=None, chunk=1 << 16, cap=None):
        self._data = io.BytesIO(data) if isinstance(data, bytes) else data
        self.chunk, self.cap, self.handed, self.largest = chunk, cap, 0, 0
        if name is not None:
            self.name = name

    def read(self, size=-1):
        size = self.chunk if size is None or size < 0 else min(size, self.chunk)
        self.largest = max(self.largest, size)
        part = self._data.read(size)
        self.handed += len(part)
        if self.cap is not None and self.handed > self.cap:
            raise AssertionError(f"read {self.handed} bytes, more than {self.cap}")
        return part


class Endless(io.RawIOBase):
    """`head`, then zeros forever: a sender that never stops."""

    def __init__(self, head):
        self._head = head
        self.handed = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        view = memoryview(buffer).cast("B")
        n = len(view)
        if self.handed < len(self._head):
            part = self._head[self.handed:self.handed + n]
            view[:len(part)] = part
            n = len(part)
        else:
            view[:] = bytes(n)
        self.handed += n
        return n


class Counted(io.BytesIO):
    """A seekable file that counts the bytes read from it."""

    def __init__(self, data):
        super().__init__(data)
        self.handed = 0

    def readinto(self, buffer):
        n = super().readinto(buffer)
        self.handed += n
        return n

    def read(self, size=-1):
        part = super().read(size)
        self.handed += len(part)
        return part


def sources(tmp_path, fmt):
    """(description, a fresh input) for every kind of input, for the format's bytes."""
    data = FILES[fmt]
    path = tmp_path / f"in.{fmt}"
    path.write_bytes(data)
    spooled = tempfile.SpooledTemporaryFile()
    spooled.write(data)
    spooled.seek(0)
    return [
        ("bytes", lambda: data),
        ("bytearray", lambda: bytearray(data)),
        ("memoryview", lambda: memoryview(data)),
        ("pathlib", lambda: path),
        ("str path", lambda: str(path)),
        ("BytesIO", lambda: io.BytesIO(data)),
        ("open file", lambda: open(path, "rb")),
        ("unbuffered file", lambda: open(path, "rb", buffering=0)),
        ("SpooledTemporaryFile", lambda: (spooled.seek(0), spooled)[1]),
        ("stream", lambda: Stream(data, chunk=7)),
    ]


def same(fmt, got, want):
    if fmt == "npz":
        assert isinstance(got, dict) and list(got) == list(want)
        for key in want:
            same_array(got[key], want[key])
            assert not got[key].flags.writeable
    else:
        same_array(got, want)
        assert not got.flags.writeable


@pytest.mark.parametrize("fmt", ["npy", "npz", "ra"])
def test_load_and_check_take_every_kind_of_input(tmp_path, fmt):
    want = expected(fmt)
    (tmp_path / "reference").write_bytes(FILES[fmt])
    reference = {"npy": npyguard.check_file, "npz": npyguard.check_npz, "ra": npyguard.check_ra}[fmt](
        tmp_path / "reference")
    for description, make in sources(tmp_path, fmt):
        for given in (None, fmt):
            model = npyguard.check(make(), format=given)
            assert type(model) is MODELS[fmt], (description, given)
            if fmt != "ra" or description != "stream":  # a stream's RaHeader has no metadata offset
                assert model == reference, (description, given)
            assert model.shape == reference.shape if fmt != "npz" else list(model) == ["a", "b"]
            same(fmt, npyguard.load(make(), format=given), want)


def test_a_file_object_is_read_from_its_position(tmp_path):
    prefixed = io.BytesIO(b"junk" + NPY)
    prefixed.seek(4)
    same_array(npyguard.load(prefixed), ARRAY)
    prefixed.seek(4)
    assert npyguard.check(prefixed).data_offset == 128
    stream = Stream(b"junk" + NPY)
    assert stream.read(4) == b"junk"
    same_array(npyguard.load(stream), ARRAY)


def test_a_seekable_file_is_read_by_offset_and_no_more():
    big = npy_of(np.zeros((512, 512)))  # 2 MiB of data
    counted = Counted(big)
    assert npyguard.check(counted).nbytes == 512 * 512 * 8
    assert counted.handed <= 4096 + 8  # the header's read (and the 8 bytes the format is chosen by)
    counted = Counted(big)
    array = npyguard.load(counted)
    assert array.shape == (512, 512) and counted.handed <= 4096 + 8 + array.nbytes
    assert array.ctypes.data % array.dtype.alignment == 0
    archive = npz_of(compressed=True, big=np.arange(1 << 18), small=np.arange(3))
    counted = Counted(archive)
    checked = npyguard.check(counted)
    assert checked.bytes_read < checked["big"].compressed_size < len(archive)
    assert counted.handed < checked["big"].compressed_size  # member prefixes only
    counted = Counted(archive)
    assert npyguard.check(counted, verify=True).verified and counted.handed >= len(archive) - 100


def test_a_stream_is_judged_from_its_first_bytes_in_bounded_memory():
    # A header claiming 8 TB, then zeros forever: refused after the header, whatever follows.
    stream = Endless(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }"))
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(stream, max_data_bytes=1 << 20)
    assert (refused.value.code, refused.value.option) == ("data_too_large", "max_data_bytes")
    assert stream.handed < 1 << 16
    # Counting the data never keeps it: 64 MiB through a stream, read in bounded pieces.
    stream = Stream(npy_of(np.zeros(8 << 20)), chunk=1 << 30)
    assert npyguard.check(stream).nbytes == 64 << 20
    assert stream.largest <= 1 << 20
    # An archive is held whole, within max_stream_bytes.
    with pytest.raises(npyguard.NpyguardIOError) as refused:
        npyguard.check(Stream(NPZ), max_stream_bytes=len(NPZ) - 1)
    assert (refused.value.code, refused.value.option) == ("io_error", "max_stream_bytes")
    assert list(npyguard.check(Stream(NPZ), max_stream_bytes=len(NPZ))) == ["a", "b"]
    with pytest.raises(npyguard.NpyguardIOError):
        npyguard.load(Stream(NPZ), max_stream_bytes=len(NPZ) - 1)


def test_format_none_follows_the_name_then_the_first_bytes(tmp_path):
    zipped_as_npy = tmp_path / "x.npy"
    zipped_as_npy.write_bytes(NPZ)
    unnamed = tmp_path / "upload.bin"
    unnamed.write_bytes(NPZ)
    for call in (npyguard.check, npyguard.load):
        # A name is a claim, checked by its format alone.
        named = Counted(NPZ)
        named.name = "x.npy"
        for source in (zipped_as_npy, str(zipped_as_npy), open(zipped_as_npy, "rb"), Stream(NPZ, name="x.npy"),
                       named):
            with pytest.raises(npyguard.NpyguardError) as refused:
                call(source)
            assert (refused.value.code, refused.value.offset) == ("bad_magic", 0)
        # No name (or one that claims nothing): the first bytes.
        for source in (unnamed, NPZ, io.BytesIO(NPZ), Stream(NPZ), Stream(NPZ, name="upload"),
                       open(unnamed, "rb")):
            got = call(source)
            assert list(got) == ["a", "b"] and isinstance(got, npyguard.Archive if call is npyguard.check else dict)
        for data, kind in ((RA, np.ndarray), (NPY, np.ndarray)):
            assert isinstance(npyguard.load(io.BytesIO(data)), kind)
        assert isinstance(npyguard.check(Stream(RA)), npyguard.RaHeader)
        assert isinstance(npyguard.check(RA), npyguard.RaHeader)
        # Neither: judged as .npy.
        with pytest.raises(npyguard.NpyguardError) as refused:
            call(io.BytesIO(b"GIF89a" + bytes(100)))
        assert (refused.value.code, refused.value.offset) == ("bad_magic", 0)
    # A name's claim of another format: that format's verdict.
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(Stream(NPY, name="upload.npz"))
    assert refused.value.code == "not_zip"


def test_an_explicit_format_judges_the_input_by_that_format_alone(tmp_path):
    path = tmp_path / "a.npz"
    path.write_bytes(NPZ)
    for make in (lambda: NPZ, lambda: path, lambda: io.BytesIO(NPZ), lambda: Stream(NPZ)):
        for call in (npyguard.check, npyguard.load):
            with pytest.raises(npyguard.NpyguardError) as refused:
                call(make(), format="npy")
            assert (refused.value.code, refused.value.offset) == ("bad_magic", 0)
            with pytest.raises(npyguard.NpyguardError) as refused:
                call(make(), format="ra")
            assert (refused.value.code, refused.value.offset) == ("bad_magic", 0)
    for make in (lambda: NPY, lambda: io.BytesIO(NPY), lambda: Stream(NPY)):
        with pytest.raises(npyguard.NpyguardError) as refused:
            npyguard.check(make(), format="npz")
        assert refused.value.code == "not_zip"
    for bad in ("zip", ".npy", "NPY"):
        with pytest.raises(ValueError, match="format"):
            npyguard.check(NPY, format=bad)


def test_the_file_objects_own_errors_propagate():
    class Broken(io.BytesIO):
        def readinto(self, buffer):
            raise ConnectionResetError("the client went away")

    class BrokenStream:
        def read(self, size=-1):
            raise ConnectionResetError("the client went away")

    for source in (Broken(NPY), BrokenStream()):
        for call in (npyguard.check, npyguard.load):
            with pytest.raises(ConnectionResetError):
                call(source, format="npy")
    with pytest.raises(TypeError, match="binary"):
        npyguard.check(io.StringIO("\x93NUMPY"))
    with pytest.raises(TypeError, match="bytes-like"):
        npyguard.load(object())
    with pytest.raises(ValueError, match="mmap"):
        npyguard.load(io.BytesIO(NPY), mmap=True)


def test_paths_keep_the_boundary_and_mmap(tmp_path):
    path = tmp_path / "a.npy"
    path.write_bytes(NPY)
    same_array(npyguard.load(path, mmap=True, timeout=5), ARRAY)
    assert npyguard.check(path, timeout=0.001) == npyguard.check(NPY)
    with pytest.raises(npyguard.NpyguardIOError):
        npyguard.check(tmp_path / "missing.npy")
    with pytest.raises(ValueError):
        npyguard.check(path, timeout=-1)


# ---------------------------------------------------------------------------
# open_npz


def corrupt_archive(method):
    """(archive, expected arrays): member "good" intact, member "bad" (large, stored or
    deflated) with one byte of its data changed far after its header: only its CRC-32
    (stored) or its inflation (deflated) can tell."""
    good, bad = np.arange(5), np.arange(1 << 16, dtype="<i8")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("good.npy", npy_of(good), compress_type=zipfile.ZIP_STORED)
        z.writestr("bad.npy", npy_of(bad), compress_type=method)
    data = bytearray(out.getvalue())
    member = npyguard.check_npz(bytes(data))["bad"]
    at = member.data_start + member.compressed_size - 20
    data[at] ^= 0x55
    return bytes(data), {"good": good, "bad": bad}


def test_open_npz_inflates_nothing_until_a_member_is_read(tmp_path, monkeypatch):
    archive = npz_of(compressed=True, big=np.arange(1 << 18), small=np.arange(3))
    inflaters = []
    real = zlib.decompressobj

    def counting(*args):
        inflaters.append(args)
        return real(*args)

    monkeypatch.setattr(npyguard._uploads.zlib, "decompressobj", counting)
    counted = Counted(archive)
    with npyguard.open_npz(counted) as opened:
        assert isinstance(opened, collections.abc.Mapping)
        assert inflaters == [] and counted.handed < opened.archive["big"].compressed_size
        assert opened.files == ["big", "small"] == list(opened) and len(opened) == 2 and "big" in opened
        same_array(opened["small"], np.arange(3))
        assert len(inflaters) == 1 and counted.handed < opened.archive["big"].compressed_size
        same_array(opened["big"], np.arange(1 << 18))
        assert len(inflaters) == 2
        with pytest.raises(KeyError):
            opened["nothing"]
    with pytest.raises(ValueError, match="closed"):
        opened["small"]


@pytest.mark.parametrize("method", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_open_npz_refuses_a_corrupt_member_only_when_it_is_read(tmp_path, method):
    data, arrays = corrupt_archive(method)
    with pytest.raises(npyguard.NpyguardError) as at_once:
        npyguard.check_npz(data, verify=True)
    path = tmp_path / "c.npz"
    path.write_bytes(data)
    for make in (lambda: data, lambda: path, lambda: io.BytesIO(data), lambda: Stream(data)):
        with npyguard.open_npz(make()) as opened:
            same_array(opened["good"], arrays["good"])
            with pytest.raises(npyguard.NpyguardError) as refused:
                opened["bad"]
            assert (refused.value.code, refused.value.offset, refused.value.member) == (
                at_once.value.code, at_once.value.offset, "bad.npy")
        with pytest.raises(npyguard.NpyguardError) as refused:
            npyguard.open_npz(make(), verify=True)
        assert refused.value.code == at_once.value.code


def test_open_npz_of_every_input_equals_np_load(tmp_path):
    path = tmp_path / "a.npz"
    path.write_bytes(NPZ)
    want = expected("npz")
    for make in (lambda: NPZ, lambda: path, lambda: str(path), lambda: io.BytesIO(NPZ), lambda: Stream(NPZ),
                 lambda: open(path, "rb")):
        with npyguard.open_npz(make()) as opened:
            assert opened.files == list(want)
            for key in want:
                same_array(opened[key], want[key])
                assert not opened[key].flags.writeable
    with pytest.raises(npyguard.NpyguardIOError):
        npyguard.open_npz(tmp_path / "missing.npz")
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.open_npz(NPY)
    assert refused.value.code == "not_zip"
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.open_npz(npz_of(o=np.array([None], dtype=object)))
    assert refused.value.code == "object_dtype"
    with npyguard.open_npz(npz_of(o=np.array([None], dtype=object)), allow_object=True) as opened:
        with pytest.raises(npyguard.NpyguardError) as refused:
            opened["o"]
        assert (refused.value.code, refused.value.member) == ("object_dtype", "o.npy")


def test_open_npz_keeps_one_descriptor_for_a_path_and_closes_it(tmp_path):
    path = tmp_path / "a.npz"
    path.write_bytes(NPZ)
    opened = npyguard.open_npz(path)
    fd = opened._reader._fd
    os.fstat(fd)
    path.unlink()  # the members come from the descriptor that was validated
    same_array(opened["b"], ARRAY)
    opened.close()
    with pytest.raises(OSError):
        os.fstat(fd)


# ---------------------------------------------------------------------------
# Alignment


def unaligned_archive():
    """A stored archive whose float64 member "x" has its data at an offset that is not
    a multiple of 8 (np.savez puts stored members' data wherever the names leave it)."""
    x = np.arange(24, dtype="<f8").reshape(4, 6)
    for width in range(1, 9):
        data = npz_of(**{"k" * width: np.arange(3, dtype="u1"), "x": x})
        member = npyguard.check_npz(data)["x"]
        if (member.data_start + member.data_offset) % 8:
            return data, x
    raise AssertionError("no name length left the data unaligned")


def test_npz_arrays_are_aligned_as_np_loads_are(tmp_path):
    data, x = unaligned_archive()
    path = tmp_path / "u.npz"
    path.write_bytes(data)
    buffer = bytearray(data)  # 16-byte aligned memory: the member's data is not 8-byte aligned in it
    assert np.frombuffer(buffer, np.uint8).ctypes.data % 16 == 0
    with np.load(io.BytesIO(data)) as loaded:
        assert loaded["x"].ctypes.data % 8 == 0
    got = [npyguard.load_npz(buffer)["x"], npyguard.load(buffer)["x"], npyguard.load(io.BytesIO(data))["x"],
           npyguard.load(Stream(data))["x"], npyguard.load(path)["x"]]
    for make in (lambda: buffer, lambda: path, lambda: io.BytesIO(data), lambda: Stream(data)):
        with npyguard.open_npz(make()) as opened:
            got.append(opened["x"])
    for array in got:
        same_array(array, x)
        assert array.ctypes.data % array.dtype.alignment == 0 and array.flags.aligned
        assert not array.flags.writeable
