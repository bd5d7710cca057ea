"""Hypothesis: any array numpy saves, npyguard loads back equal, in .npy and
.npz (stored and deflated), and check() describes it as numpy's header does."""

import io
import unicodedata

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import npyguard
from test_npy import same_array

# No example database: runs leave no files behind (a failure prints its reproduction).
SETTINGS = settings(max_examples=300, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

dtypes = st.one_of(
    hnp.scalar_dtypes(),
    hnp.byte_string_dtypes(max_len=8),
    hnp.unicode_string_dtypes(max_len=8),
    hnp.nested_dtypes(max_itemsize=64),
).map(lambda dtype: dtype.newbyteorder(">") if dtype.byteorder == "=" and dtype.itemsize > 1 else dtype)

arrays = dtypes.flatmap(
    lambda dtype: hnp.arrays(dtype, hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)))


def _names(dtype):
    dtype = dtype.base  # a subarray's element type holds its fields
    for name in dtype.names or ():
        field = dtype.fields[name]
        yield name
        if len(field) > 2 and field[2]:
            yield field[2]
        yield from _names(field[0])


def newer_than_this_python(dtype):
    """A field name with a character this Python's Unicode does not assign:
    npyguard spells names as Python 3.12 does (Unicode 15.0), so np.save on
    an older Python writes another header than the canonical one
    (docs/deviations.md, "Reported values")."""
    return any(unicodedata.category(c) == "Cn"
               for name in _names(dtype) for c in name)


@SETTINGS
@given(arrays, st.booleans())
def test_np_save_then_load(array, fortran):
    assume(not newer_than_this_python(array.dtype))
    if fortran:
        array = np.asfortranarray(array)
    out = io.BytesIO()
    np.save(out, array)
    data = out.getvalue()
    expected = np.load(io.BytesIO(data))
    same_array(npyguard.load(data), expected)
    header = npyguard.check(data, canonical=True)
    assert header.shape == expected.shape and header.dtype == expected.dtype
    assert header.fortran_order == (expected.ndim > 1 and expected.flags.f_contiguous
                                    and not expected.flags.c_contiguous)


@SETTINGS
@given(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True), arrays, max_size=4), st.booleans())
def test_np_savez_then_load_npz(members, compressed):
    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **members)
    data = out.getvalue()
    with np.load(io.BytesIO(data)) as archive:
        expected = {key: archive[key] for key in archive.files}
    loaded = npyguard.load_npz(data)
    assert list(loaded) == list(expected)
    for key in expected:
        same_array(loaded[key], expected[key])
    assert list(npyguard.check_npz(data, verify=True)) == list(expected)
