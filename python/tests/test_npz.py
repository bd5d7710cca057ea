"""The .npz entry points on every archive of tests/npz/make_archives.py: the
verdict SPEC-npz.md gives it (code, offset, member), and for the valid ones
the arrays np.load gives."""

import io
import zipfile

import numpy as np
import pytest

import npyguard
from test_npy import same_array

# The manifest's verdicts are for the library's default header limit (1 MiB).
BIG_HEADERS = {"max_header_bytes": 1 << 20}


def verdict(call):
    try:
        return call(), None
    except npyguard.NpyguardError as e:
        return None, e


def test_every_archive_gets_its_verdict_from_path_and_bytes(npz_archives):
    directory, manifest = npz_archives
    assert len(manifest) >= 250
    for entry in manifest:
        path = directory / entry["file"]
        for verify in (False, True):
            expected_valid = entry["valid"] and not (verify and entry["verify_only"])
            by_path, error = verdict(lambda: npyguard.check_npz(path, verify=verify, **BIG_HEADERS))
            by_bytes, error_bytes = verdict(lambda: npyguard.check_npz(path.read_bytes(), verify=verify, **BIG_HEADERS))
            assert (by_path is not None) == expected_valid, (entry["file"], verify, error)
            if expected_valid:
                assert list(by_path.items()) == list(by_bytes.items())
                assert by_path.verified == verify
                if entry.get("members") is not None:
                    got = [(m.name, m.key, list(m.shape), m.descr, m.fortran_order) for m in by_path.members]
                    want = [(m["name"], m["key"], list(m["shape"]), m["descr"], m["fortran_order"])
                            for m in entry["members"]]
                    assert got == want, entry["file"]
                continue
            assert (error.code, error.offset) == (entry["code"], entry["offset"]), entry["file"]
            assert (error_bytes.code, error_bytes.offset) == (error.code, error.offset)
            if entry["member"] is not None:
                assert error.member == entry["member"], entry["file"]
            if entry["member_offset"] is not None:
                assert error.member_offset == entry["member_offset"], entry["file"]
            assert error.code_value == npyguard.ERROR_CODES[error.code]


def test_valid_archives_load_as_numpy_loads_them(npz_archives):
    directory, manifest = npz_archives
    loaded = 0
    for entry in manifest:
        if not entry["valid"] or entry["verify_only"]:
            continue
        path = directory / entry["file"]
        with np.load(path, allow_pickle=False, max_header_size=1 << 20) as archive:
            expected = {key: archive[key] for key in archive.files}
        for source in (path, str(path), path.read_bytes(), bytearray(path.read_bytes())):
            arrays = npyguard.load_npz(source, **BIG_HEADERS)
            assert list(arrays) == list(expected), entry["file"]
            for key in expected:
                same_array(arrays[key], expected[key])
                assert not arrays[key].flags.writeable
        loaded += 1
    assert loaded >= 40


def test_load_npz_checks_what_check_npz_does_not_read(npz_archives):
    directory, manifest = npz_archives
    verify_only = [entry for entry in manifest if entry["valid"] and entry["verify_only"]]
    assert verify_only
    for entry in verify_only:
        path = directory / entry["file"]
        npyguard.check_npz(path, **BIG_HEADERS)
        for source in (path, path.read_bytes()):
            with pytest.raises(npyguard.NpyguardError) as refused:
                npyguard.load_npz(source, verify=False, **BIG_HEADERS)
            assert (refused.value.code, refused.value.offset) == (entry["code"], entry["offset"])


def archive_of(arrays, compressed):
    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


def test_stored_members_of_bytes_are_views_where_aligned_and_deflated_ones_are_read():
    # With a 10-letter key the int32 member's data is 16-byte aligned in the archive, the
    # float64 member's is not: a view of the caller's bytes for one, an aligned copy
    # for the other (np.load's arrays are always aligned).
    arrays = {"a" * 10: np.arange(12, dtype="<i4").reshape(3, 4), "b": np.asfortranarray(np.eye(3, dtype=">f8"))}
    stored = archive_of(arrays, compressed=False)
    mutable = bytearray(stored)
    base = np.frombuffer(mutable, np.uint8).ctypes.data  # the export ends with the temporary
    archive = npyguard.check_npz(stored)
    loaded = npyguard.load_npz(mutable)
    in_place = {}
    for key, array in arrays.items():
        got, member = loaded[key], archive[key]
        assert np.array_equal(got, array) and got.dtype == array.dtype and not got.flags.writeable
        assert got.ctypes.data % got.dtype.alignment == 0
        at = base + member.data_start + member.data_offset
        in_place[key] = got.ctypes.data == at
        assert in_place[key] == (at % array.dtype.alignment == 0), key
    assert in_place == {"a" * 10: True, "b": False}
    # The aligned stored member's array is a view of the caller's bytes.
    view = loaded["a" * 10]
    with pytest.raises(BufferError):
        mutable.extend(b"x")
    at = stored.index(np.arange(12, dtype="<i4").tobytes())
    mutable[at:at + 4] = (77).to_bytes(4, "little")
    assert view[0, 0] == 77 and loaded["b"][0, 0] == 1.0
    compressed = npyguard.load_npz(archive_of(arrays, compressed=True))
    assert np.array_equal(compressed["b"], arrays["b"]) and compressed["b"].flags.f_contiguous


def test_archive_model_and_limits():
    data = archive_of({"x": np.zeros(100), "y": np.ones((2, 2), dtype="u1")}, compressed=True)
    archive = npyguard.check_npz(data)
    assert list(archive) == ["x", "y"] and archive.size == len(data) and not archive.zip64
    assert 0 < archive.bytes_read <= len(data) and not archive.verified
    member = archive["x"]
    assert (member.name, member.key, member.compression) == ("x.npy", "x", "deflate")
    assert member.shape == (100,) and member.nbytes == 800 and member.uncompressed_size == 128 + 800
    assert npyguard.check_npz(data, verify=True).verified
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check_npz(data, max_members=1)
    assert refused.value.code == "too_many_members"
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check_npz(data, max_total_bytes=100)
    assert refused.value.code == "total_size_exceeded"
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check_npz(data, max_ratio=1)
    assert refused.value.code == "ratio_exceeded"
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.load_npz(archive_of({"o": np.array([None, 1], dtype=object)}, False), allow_object=True)
    assert (refused.value.code, refused.value.member) == ("object_dtype", "o.npy")


def test_members_have_max_ndim_as_npy_files_do_and_load_npz_caps_at_numpy():
    shape = (1,) * 40
    # numpy 1.x cannot build 40 dimensions: write the member's header by hand.
    header = "{'descr': '|u1', 'fortran_order': False, 'shape': (" + "1, " * 40 + "), }"
    padded = header + " " * (63 - (10 + len(header)) % 64) + "\n"
    member = b"\x93NUMPY\x01\x00" + len(padded).to_bytes(2, "little") + padded.encode() + b"\x00"
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        z.writestr("a.npy", member)
    archive = out.getvalue()
    assert npyguard.check_npz(archive)["a"].shape == shape  # 64 by default, like check()
    dimension_33 = member.index(b"1, " * 32) + 3 * 32
    _, refused = verdict(lambda: npyguard.check_npz(archive, max_ndim=32))
    assert (refused.code, refused.member, refused.member_offset) == ("too_many_dimensions", "a.npy", dimension_33)
    if npyguard._NUMPY_MAX_DIMS < 40:
        _, refused = verdict(lambda: npyguard.load_npz(archive))
        assert (refused.code, refused.member, refused.member_offset) == ("too_many_dimensions", "a.npy", dimension_33)
