"""The .npy entry points against numpy: every golden file, np.save round trips
of every dtype family, and the array properties npyguard promises."""

import io
import os

import numpy as np
import pytest

import npyguard
from conftest import npy_bytes


def same_array(ours, theirs):
    assert ours.dtype == theirs.dtype
    assert ours.shape == theirs.shape
    if ours.ndim > 1:
        assert ours.flags.f_contiguous == theirs.flags.f_contiguous
        assert ours.flags.c_contiguous == theirs.flags.c_contiguous
    # Byte for byte: NaN, NaT and padding compare as what the file holds.
    assert np.ascontiguousarray(ours).tobytes() == np.ascontiguousarray(theirs).tobytes()


def saved(array, **kwargs):
    out = io.BytesIO()
    np.save(out, array, **kwargs)
    return out.getvalue()


def test_every_golden_file_has_the_expected_header(golden):
    assert len(golden) >= 150
    for path, row in golden:
        opts = {"allow_object": True} if row["options"].get("allow_object") else {}
        header = npyguard.check_file(path, max_header_bytes=1 << 20, **opts)
        assert header == npyguard.check(path.read_bytes(), max_header_bytes=1 << 20, **opts)
        assert "%d.%d" % header.version == row["version"], path
        assert list(header.shape) == row["shape"]
        assert header.fortran_order == row["fortran_order"]
        assert header.descr == row["descr"]
        assert header.itemsize == row["itemsize"]
        assert header.data_offset == row["data_offset"]
        assert header.header_length == row["header_length"]
        assert header.nbytes == row.get("nbytes", header.nbytes) and header.data_is_pickle == ("nbytes" not in row)


def test_every_golden_file_loads_as_numpy_loads_it(golden):
    for path, row in golden:
        if row["options"].get("allow_object"):
            continue
        expected = np.load(path, allow_pickle=False, max_header_size=1 << 20)
        data = path.read_bytes()
        same_array(npyguard.load(data, max_header_bytes=1 << 20), expected)
        same_array(npyguard.load_file(path, max_header_bytes=1 << 20), expected)
        same_array(npyguard.load_file(path, mmap=True, max_header_bytes=1 << 20), expected)
        assert npyguard.check(data, max_header_bytes=1 << 20).dtype == expected.dtype


def test_object_arrays_are_described_but_never_loaded(golden):
    objects = [path for path, row in golden if row["options"].get("allow_object")]
    assert objects
    for path in objects:
        with pytest.raises(npyguard.NpyguardError) as refused:
            npyguard.check_file(path)
        assert refused.value.code == "object_dtype"
        header = npyguard.check_file(path, allow_object=True)
        assert header.data_is_pickle and header.dtype.hasobject
        for load in (lambda: npyguard.load(path.read_bytes(), allow_object=True),
                     lambda: npyguard.load_file(path, allow_object=True),
                     lambda: npyguard.load_file(path, mmap=True, allow_object=True)):
            with pytest.raises(npyguard.NpyguardError) as refused:
                load()
            assert refused.value.code == "object_dtype"
            assert refused.value.offset == header.data_offset


DTYPES = [
    "?", "i1", "<i2", ">i4", "<i8", "u1", ">u2", "<u4", ">u8", "<f2", ">f4", "<f8", "<c8", ">c16", "<f16",
    "S1", "S7", "<U3", ">U1", "V5", "<M8[ns]", ">m8[3h]", "M8", "<M8[D]",
    [("a", "<i4"), ("b", ">f8", (2, 3))],
    {"names": ["x", "y"], "formats": ["u1", "<f4"], "offsets": [0, 4], "itemsize": 12},
    [(("title", "t"), "<i2"), ("nested", [("n", "S2"), ("m", ">u4", (2,))])],
]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(), (0,), (5,), (2, 3), (3, 0, 2), (1, 2, 1, 2)], ids=str)
def test_np_save_round_trips(dtype, shape):
    dtype = np.dtype(dtype)
    array = np.frombuffer(bytes(range(256)) * (1 + dtype.itemsize * 12 // 256), np.uint8)
    array = array[: dtype.itemsize * int(np.prod(shape))].copy().view(dtype).reshape(shape)
    for order in ("C", "F"):
        data = saved(np.asarray(array, order=order))
        expected = np.load(io.BytesIO(data))
        same_array(npyguard.load(data), expected)
        header = npyguard.check(data)
        assert header.dtype == expected.dtype
        assert header.shape == expected.shape
        assert header.nbytes == expected.nbytes


def test_the_array_views_the_callers_bytes_read_only():
    data = saved(np.arange(10, dtype="<i8"))
    array = npyguard.load(data)
    assert not array.flags.writeable and not array.flags.owndata
    with pytest.raises(ValueError):
        array[0] = 1
    # A bytearray: still read-only, and it cannot be resized under the view.
    mutable = bytearray(data)
    view = npyguard.load(mutable)
    assert not view.flags.writeable
    with pytest.raises(BufferError):
        mutable.extend(b"x")
    mutable[-8:] = (99).to_bytes(8, "little")
    assert view[-1] == 99  # a view, not a copy
    assert npyguard.load(memoryview(data)).tolist() == list(range(10))


def test_load_file_reads_or_maps_only_the_data(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(6, dtype=">f4").reshape(2, 3, order="F"))
    for mmap in (False, True):
        array = npyguard.load_file(path, mmap=mmap)
        same_array(array, np.load(path))
        assert not array.flags.writeable
        assert len(array.base) == 24
    # Paths as str, os.PathLike and non-UTF-8 bytes names through os.fsencode.
    odd = tmp_path / os.fsdecode(b"caf\xe9.npy")
    odd.write_bytes(path.read_bytes())
    assert npyguard.check_file(str(odd)).shape == (2, 3)
    with pytest.raises(TypeError):
        npyguard.check_file(b"/tmp/a.npy")
    with pytest.raises(ValueError):
        npyguard.check_file("a\0b.npy")


def test_load_file_refuses_what_is_not_a_regular_file(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(npyguard.NpyguardIOError) as refused:
        npyguard.load_file(fifo)
    assert refused.value.code == "io_error" and refused.value.offset is None
    with pytest.raises(OSError):
        npyguard.load_file(tmp_path)


def test_limits_are_numpys_by_default():
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), " + " " * 10_000 + "}"
    data = npy_bytes(header, b"\0" * 4, major=2)
    with pytest.raises(ValueError):
        np.load(io.BytesIO(data))
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(data)
    assert refused.value.code == "header_too_large" and refused.value.offset == 8
    assert npyguard.check(data, max_header_bytes=20_000).shape == (1,)
    assert npyguard.load(data, max_header_bytes=20_000).shape == (1,)


def test_options_are_keyword_only_and_checked():
    data = saved(np.zeros(3))
    with pytest.raises(TypeError):
        npyguard.check(data, 100)
    with pytest.raises(TypeError):
        npyguard.check(data, max_depth=True)
    with pytest.raises(TypeError):
        npyguard.check(data, allow_object=1)
    with pytest.raises(TypeError):
        npyguard.check(data, max_data_bytes=1.5)
    with pytest.raises(ValueError):
        npyguard.check(data, max_ndim=-1)
    with pytest.raises(ValueError):
        npyguard.check(data, max_header_bytes=1 << 32)
    with pytest.raises(TypeError):
        npyguard.check(data, no_such_limit=1)
    # A str is a path now (as for np.load): one that does not exist.
    with pytest.raises(npyguard.NpyguardIOError):
        npyguard.check("not bytes")
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(data, max_data_bytes=23)
    assert refused.value.code == "data_too_large"
    assert npyguard.check(data, max_data_bytes=24).nbytes == 24
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(data + b"x")
    assert refused.value.code == "trailing_data"
    assert npyguard.load(data + b"x", allow_trailing_data=True).tolist() == [0.0, 0.0, 0.0]


def test_canonical_profile():
    data = saved(np.zeros(3))
    assert npyguard.check(data, canonical=True).shape == (3,)
    spaced = data.replace(b"'descr': '<f8'", b"'descr':  '<f8'", 1)
    spaced = spaced.replace(b"), }  ", b"), } ", 1)
    assert npyguard.check(spaced).shape == (3,)
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(spaced, canonical=True)
    assert refused.value.code == "not_canonical"


def test_header_model():
    data = saved(np.zeros((2, 3), dtype=[("a", "<i4"), ("b", "S3")]))
    header = npyguard.check(data)
    assert header.version == (1, 0)
    assert header.descr == "[('a', '<i4'), ('b', '|S3')]"
    assert header.itemsize == 7 and header.count == 6 and header.nbytes == 42
    assert header.data_offset == 128 and header.header_length == 118
    assert header == npyguard.check(data) and hash(header) == hash(npyguard.check(data))
    assert "descr=\"[('a', '<i4'), ('b', '|S3')]\"" in repr(header)
    assert npyguard.check(saved(np.zeros(1, dtype=[("\u00e9\u4e2d", "<f4")]))).version == (3, 0)


def test_load_refuses_more_dimensions_than_numpy_builds():
    shape = "(" + "1, " * 33 + ")"
    data = npy_bytes("{'descr': '<i1', 'fortran_order': False, 'shape': " + shape + ", }", b"a")
    with pytest.raises(ValueError):
        np.load(io.BytesIO(data))
    assert len(npyguard.check(data).shape) == 33  # the format's own limit is 64
    dimension_33 = data.index(b"1, " * 32) + 3 * 32
    for load in (lambda: npyguard.load(data), lambda: npyguard.load(data, max_ndim=64)):
        with pytest.raises(npyguard.NpyguardError) as refused:
            load()
        assert (refused.value.code, refused.value.offset) == ("too_many_dimensions", dimension_33)


def test_one_export_is_checked_and_viewed_and_stays_read_only():
    mutable = bytearray(saved(np.arange(4, dtype="<i2")))
    array = npyguard.load(mutable)
    with pytest.raises(ValueError):
        array.flags.writeable = True
    with pytest.raises(npyguard.NpyguardIOError):
        npyguard.load("/nonexistent/file.npy")
    with pytest.raises(TypeError, match="bytes-like"):
        npyguard.check(12)
    assert npyguard.check(bytes(mutable), max_ndim=np.int64(3)).shape == (4,)
    with pytest.raises(TypeError):
        npyguard.check(bytes(mutable), max_ndim=[3])
