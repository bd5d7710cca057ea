"""The RawArray entry points on every file of tests/ra/make_files.py: the
model or error the manifest gives, and load_ra against the data read as the
format describes it (dims[0] fastest)."""

import numpy as np
import pytest

import npyguard

OPTIONS = {
    "--no-ra-type5": {"allow_type5": False},
    "--ra-reject-metadata": {"reject_metadata": True},
}


def options_of(entry):
    flags = list(entry["options"])
    out = {}
    while flags:
        flag = flags.pop(0)
        if flag == "--max-ndim":
            out["max_ndim"] = int(flags.pop(0))
        else:
            out.update(OPTIONS[flag])
    return out


def test_every_file_gets_its_verdict(ra_files):
    directory, manifest = ra_files
    assert len(manifest) >= 100
    for entry in manifest:
        path = directory / entry["file"]
        opts = options_of(entry)
        for source in (path, path.read_bytes()):
            if not entry["valid"]:
                with pytest.raises(npyguard.NpyguardError) as refused:
                    npyguard.check_ra(source, **opts)
                assert (refused.value.code, refused.value.offset) == (entry["code"], entry["offset"]), entry["file"]
                continue
            header = npyguard.check_ra(source, **opts)
            model = entry["model"]
            for key in ("flags", "big_endian", "eltype", "elbyte", "type_name", "count", "data_offset",
                        "metadata_offset", "metadata_length"):
                assert getattr(header, key) == model[key], (entry["file"], key)
            assert list(header.dims) == model["dims"] and header.nbytes == model["data_length"]


def reference_array(path, header):
    raw = path.read_bytes()[header.data_offset:header.data_offset + header.nbytes]
    return np.frombuffer(raw, header.dtype).reshape(header.dims, order="F")


def test_load_ra_is_the_data_in_fortran_order(ra_files):
    directory, manifest = ra_files
    loaded = refused = 0
    for entry in manifest:
        if not entry["valid"]:
            continue
        path = directory / entry["file"]
        opts = options_of(entry)
        header = npyguard.check_ra(path, **opts)
        if header.dtype is None:
            for source in (path, path.read_bytes()):
                with pytest.raises(npyguard.NpyguardError) as no_dtype:
                    npyguard.load_ra(source, **opts)
                assert no_dtype.value.code == "not_convertible" and no_dtype.value.offset in (16, 24, 40)
            refused += 1
            continue
        expected = reference_array(path, header)
        for array in (npyguard.load_ra(path, **opts), npyguard.load_ra(path, mmap=True, **opts),
                      npyguard.load_ra(path.read_bytes(), **opts)):
            assert array.dtype == expected.dtype and array.shape == expected.shape
            assert array.tobytes(order="A") == expected.tobytes(order="A")
            assert not array.flags.writeable
        loaded += 1
    assert loaded >= 50 and refused >= 1


def test_ra_dtypes_follow_convert():
    def ra(eltype, elbyte, flags=0, dims=(2,)):
        count = int(np.prod(dims))
        header = b"rawarray" + b"".join(
            v.to_bytes(8, "little") for v in (flags, eltype, elbyte, count * elbyte, len(dims), *dims))
        return header + bytes(count * elbyte)

    assert npyguard.check_ra(ra(3, 4)).dtype == np.dtype("<f4")
    assert npyguard.check_ra(ra(1, 2, flags=1)).dtype == np.dtype(">i2")
    assert npyguard.check_ra(ra(5, 1)).dtype == np.dtype("?")
    assert npyguard.check_ra(ra(4, 16)).dtype == np.dtype("<c16")
    assert npyguard.load_ra(ra(2, 1, dims=(2, 3))).shape == (2, 3)
    for eltype, elbyte, offset in ((0, 3, 16), (5, 2, 16), (1, 16, 24), (4, 4, 24)):
        assert npyguard.check_ra(ra(eltype, elbyte)).dtype is None
        with pytest.raises(npyguard.NpyguardError) as refused:
            npyguard.load_ra(ra(eltype, elbyte))
        assert (refused.value.code, refused.value.offset) == ("not_convertible", offset)
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.load_ra(ra(1, 1, dims=(1,) * 33))
    assert (refused.value.code, refused.value.offset) == ("not_convertible", 40)
