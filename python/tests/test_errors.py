"""Every error code reaches Python with its name, number and offset: the .npy
codes from crafted files below, the .npz and RawArray codes from their test
sets (test_npz.py, test_ra.py pin each file's code and offset; here we check
that together they cover every code), and the few no Python call can produce,
each with the reason."""

import pickle

import pytest

import npyguard
from conftest import SOURCE_DIR, npy_bytes, preamble

GOOD = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"


def at(data, marker, delta=0):
    return data.index(marker.encode("latin-1")) + delta


def npy_cases():
    """(code, data, offset, options) for every .npy code."""
    good = npy_bytes(GOOD, bytes(8))
    cases = [
        ("bad_magic", b"\x93NUMPZ" + good[6:], 5, {}),
        ("unsupported_version", good[:6] + b"\x04" + good[7:], 6, {}),
        ("truncated_preamble", good[:9], 9, {}),
        ("header_too_large", preamble(2, 20_000) + b" " * 20_000, 8, {}),
        ("truncated_header", good[:50], 50, {}),
    ]
    utf8 = npy_bytes("{'descr': [('\u00e9', '<f4')], 'fortran_order': False, 'shape': (2,), }", bytes(8), major=3)
    broken = utf8.replace("\u00e9".encode(), b"\xc3\x28")
    cases.append(("invalid_utf8", broken, at(broken, "[('", 4), {}))  # the byte that breaks the sequence
    nul = npy_bytes("{'descr': '<f4',\0'fortran_order': False, 'shape': (2,), }", bytes(8))
    cases.append(("control_character", nul, nul.index(b"\0", 10), {}))
    text = (GOOD + " ").encode()
    cases.append(("header_not_terminated", preamble(1, len(text)) + text + bytes(8), 10 + len(text) - 1, {}))
    syntax = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }}", bytes(8))
    cases.append(("syntax_error", syntax, at(syntax, "}}", 1), {}))
    huge = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }")
    cases.append(("integer_too_large", huge, at(huge, "999"), {}))
    negative = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }")
    cases.append(("negative_dimension", negative, at(negative, "-1"), {}))
    deep = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': ((((1,),),),), }")
    cases.append(("depth_exceeded", deep, at(deep, "((((") + 2, {"max_depth": 2}))
    missing = npy_bytes("{'descr': '<f4', 'shape': (2,), }", bytes(8))
    cases.append(("missing_key", missing, 10, {}))
    twice = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (2,), }", bytes(8))
    cases.append(("duplicate_key", twice, at(twice, "'shape': (2,), '", 15), {}))
    extra = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1, }", bytes(8))
    cases.append(("unknown_key", extra, at(extra, "'extra'"), {}))
    fortran = npy_bytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,), }", bytes(8))
    cases.append(("bad_fortran_order", fortran, at(fortran, "0, "), {}))
    shape = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': [2], }", bytes(8))
    cases.append(("bad_shape", shape, at(shape, "[2]"), {}))
    dims = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2), }", bytes(8))
    cases.append(("too_many_dimensions", dims, at(dims, "2)"), {"max_ndim": 2}))
    descr = npy_bytes("{'descr': '<x4', 'fortran_order': False, 'shape': (2,), }", bytes(8))
    cases.append(("bad_descr", descr, at(descr, "'<x4'"), {}))
    obj = npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", bytes(8))
    cases.append(("object_dtype", obj, at(obj, "'|O'"), {}))
    names = npy_bytes("{'descr': [('a', '<f4'), ('a', '<f8')], 'fortran_order': False, 'shape': (2,), }")
    cases.append(("duplicate_field_name", names, at(names, "('a', '<f8'", 1), {}))
    empty = npy_bytes("{'descr': [('', '<f4')], 'fortran_order': False, 'shape': (2,), }")
    cases.append(("empty_field_name", empty, at(empty, "''"), {}))
    wide = npy_bytes("{'descr': '|V4294967296', 'fortran_order': False, 'shape': (1,), }")
    cases.append(("itemsize_overflow", wide, at(wide, "'|V"), {}))
    big = npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }")
    cases.append(("size_overflow", big, at(big, "4611"), {}))  # the dimension that overflows
    cases.append(("data_too_large", good, at(good, "(2,)"), {"max_data_bytes": 7}))
    cases.append(("truncated_data", good[:-1], len(good) - 1, {}))
    cases.append(("trailing_data", good + b"x", len(good), {}))
    spaced = npy_bytes("{'descr':  '<f4', 'fortran_order': False, 'shape': (2,), }", bytes(8))
    cases.append(("not_canonical", spaced, at(spaced, " '<f4'"), {"canonical": True}))
    return cases


@pytest.mark.parametrize("code,data,offset,options", npy_cases(), ids=[case[0] for case in npy_cases()])
def test_npy_codes(code, data, offset, options):
    for call in (npyguard.check, npyguard.load):
        with pytest.raises(npyguard.NpyguardError) as refused:
            call(data, **options)
        e = refused.value
        assert (e.code, e.offset) == (code, offset), e
        assert e.code_value == npyguard.ERROR_CODES[code]
        assert e.member is None and e.member_offset is None and e.message
        assert isinstance(e, ValueError) and not isinstance(e, OSError)
        assert str(e).startswith(f"{code} at byte {offset}: ")


def test_io_error_is_an_oserror(tmp_path):
    for call in (npyguard.check_file, npyguard.load_file, npyguard.check_npz, npyguard.load_npz,
                 npyguard.check_ra, npyguard.load_ra):
        with pytest.raises(npyguard.NpyguardIOError) as refused:
            call(tmp_path / "missing")
        e = refused.value
        assert isinstance(e, OSError) and isinstance(e, npyguard.NpyguardError) and isinstance(e, ValueError)
        assert (e.code, e.offset, e.code_value) == ("io_error", None, 1)
        assert "No such file" in e.message


def test_errors_pickle_and_compare():
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(b"\x93NUMPY")
    again = pickle.loads(pickle.dumps(refused.value))
    assert type(again) is npyguard.NpyguardError
    assert (again.code, again.offset, again.message) == (refused.value.code, refused.value.offset,
                                                         refused.value.message)


# Codes no call of the Python package can produce, and why.
UNREACHABLE = {
    "out_of_memory": "an allocation failure; the limits keep allocations to validated sizes",
    "buffer_too_small": "the caller's buffer of read_array and copy_native; the package sizes its own",
    "invalid_argument": "the C API's argument checks; Python arguments are checked as TypeError/ValueError",
}


def test_every_code_is_covered(npz_archives, ra_files):
    covered = {case[0] for case in npy_cases()} | {"io_error", "not_convertible"}
    covered |= {entry["code"] for entry in npz_archives[1] if entry["code"]}
    covered |= {entry["code"] for entry in ra_files[1] if not entry["valid"]}
    missing = set(npyguard.ERROR_CODES) - covered - set(UNREACHABLE)
    assert not missing, f"codes with no Python test: {sorted(missing)}"
    assert not (covered & set(UNREACHABLE))
    # The names and numbers are the C API's (npyguard.h) and the manual's.
    c_api = (SOURCE_DIR / "include" / "npyguard.h").read_text()
    manual = (SOURCE_DIR / "man" / "npyguard.1").read_text()
    for name, value in npyguard.ERROR_CODES.items():
        assert f"NPYGUARD_E_{name.upper()} = {value}," in c_api
        assert f'.BR \\%{name} " ({value})"' in manual, f"man/npyguard.1 does not list {name} ({value})"


def _npz(members, method=0):
    """An .npz of `members` ({name: .npy bytes}), stored (0) or deflated (8)."""
    import io
    import zipfile

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED if method else zipfile.ZIP_STORED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def _ra(eltype=3, elbyte=8, dims=(2, 3), metadata=b""):
    import struct

    size = elbyte
    for d in dims:
        size *= d
    header = b"rawarray" + struct.pack("<5Q", 0, eltype, elbyte, size, len(dims)) + struct.pack(f"<{len(dims)}Q", *dims)
    return header + bytes(size) + metadata


def structured_cases():
    """(call, data, options, code, offset, option, keyword, limit, actual) for each option
    and limit the package's keywords set."""
    good = npy_bytes(GOOD, bytes(8))
    header_len = int.from_bytes(good[8:10], "little")
    deep = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': ((((1,),),),), }")
    dims = npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 2), }", bytes(8))
    obj = npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", bytes(8))
    spaced = npy_bytes("{'descr':  '<f4', 'fortran_order': False, 'shape': (2,), }", bytes(8))
    two = _npz({"a.npy": good, "b.npy": good})
    eocd = len(two) - 22
    return [
        (npyguard.check, good, {"max_header_bytes": 64}, "header_too_large", 8, "max_header_bytes",
         "max_header_bytes", 64, header_len),
        (npyguard.check, deep, {"max_depth": 2}, "depth_exceeded", at(deep, "((((") + 2, "max_depth", "max_depth", 2, 3),
        (npyguard.check, dims, {"max_ndim": 2}, "too_many_dimensions", at(dims, "2)"), "max_ndim", "max_ndim", 2, 3),
        (npyguard.check, good, {"max_data_bytes": 7}, "data_too_large", at(good, "(2,)"), "max_data_bytes",
         "max_data_bytes", 7, 8),
        (npyguard.check, obj, {}, "object_dtype", at(obj, "'|O'"), "allow_object", "allow_object", None, None),
        (npyguard.check, good + b"x", {}, "trailing_data", len(good), "allow_trailing_data", "allow_trailing_data",
         None, None),
        (npyguard.check, spaced, {"canonical": True}, "not_canonical", at(spaced, " '<f4'"), "canonical", "canonical",
         None, None),
        (npyguard.check_npz, two, {"max_members": 1}, "too_many_members", eocd + 10, "max_members", "max_members", 1,
         2),
        (npyguard.check_npz, two, {"max_total_bytes": 2 * len(good) - 1}, "total_size_exceeded", None,
         "max_total_bytes", "max_total_bytes", 2 * len(good) - 1, 2 * len(good)),
        (npyguard.check_ra, _ra(dims=(1, 1, 1)), {"max_ndim": 2}, "too_many_dimensions", 40, "max_ndim", "max_ndim", 2,
         3),
        (npyguard.check_ra, _ra(), {"max_data_bytes": 47}, "data_too_large", 32, "max_data_bytes", "max_data_bytes",
         47, 48),
        (npyguard.check_ra, _ra(eltype=5, elbyte=1), {"allow_type5": False}, "unknown_element_type", 16,
         "ra_allow_type5", "allow_type5", None, None),
        (npyguard.check_ra, _ra(metadata=b"meta"), {"reject_metadata": True}, "trailing_data", 48 + 16 + 48,
         "ra_reject_metadata", "reject_metadata", None, None),
    ]


@pytest.mark.parametrize("case", structured_cases(), ids=[f"{c[3]}-{c[5]}" for c in structured_cases()])
def test_errors_name_the_option_and_numbers(case):
    call, data, options, code, offset, option, keyword, limit, actual = case
    with pytest.raises(npyguard.NpyguardError) as refused:
        call(data, **options)
    e = refused.value
    assert (e.code, e.option, e.limit, e.actual) == (code, option, limit, actual), e
    if offset is not None:
        assert e.offset == offset
    assert e.message.endswith(f" ({keyword}=)")
    assert "limits." not in e.message and "--" not in e.message
    again = pickle.loads(pickle.dumps(e))
    assert (again.option, again.limit, again.actual, again.message) == (e.option, e.limit, e.actual, e.message)


def test_ratio_names_max_ratio():
    data = _npz({"a.npy": npy_bytes(GOOD, bytes(4096))}, method=8)
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check_npz(data, max_ratio=1)
    e = refused.value
    assert (e.code, e.option, e.limit, e.member) == ("ratio_exceeded", "max_ratio", 1, "a.npy")
    assert e.actual > 1 and e.message.endswith(" (max_ratio=)")


def test_errors_no_keyword_lifts_have_no_option():
    with pytest.raises(npyguard.NpyguardError) as refused:
        npyguard.check(b"\x93NUMPZ" + npy_bytes(GOOD, bytes(8))[6:])
    e = refused.value
    assert (e.code, e.option, e.limit, e.actual) == ("bad_magic", None, None, None)
    assert not e.message.endswith("=)")
