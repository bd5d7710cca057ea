"""npyguard: strict validation of NumPy .npy files, .npz archives and RawArray
(.ra) files before their data is touched, and arrays from the validated bytes.

    import npyguard
    try:
        array = npyguard.load(upload_bytes)          # or load_file(path, mmap=True)
    except npyguard.NpyguardError as e:              # a ValueError: e.code, e.offset
        reject(f"{e.code} at {e.offset}: {e.message}")

An error that a keyword decided (a limit, allow_object, ...) names it:
e.option is the library's name ("max_header_bytes"), e.limit and e.actual the
numbers where there are some, and e.message ends with the keyword.

check* functions read the header (and the size) only and return the model;
load* functions return numpy arrays equal to np.load's, viewing the validated
bytes in place where they can (always read-only), and never unpickle anything.
Limits are keyword-only, with numpy's defaults where numpy has one (a header
of at most 10,000 bytes). The GIL is released while the library validates.

check(obj) and load(obj) take any input np.load takes: bytes (any contiguous
buffer), a path (str, os.PathLike) or a binary file object (a seekable one read
by offset; an upload stream with read() only, once, in bounded memory), and
pick the format by SPEC.md section 9 (the name's claim, else the first bytes)
unless format="npy"/"npz"/"ra" says it; check returns Header, Archive or
RaHeader, load an array (.npy, .ra) or a dict of arrays (.npz). open_npz(obj)
validates an archive whole and inflates a member only when it is read.
The format's own functions (check_file, check_npz, load_ra, ...) take bytes
or a path. Arrays from .npz members, and arrays read from file objects, are
aligned for their dtype, as np.load's are.

Many files: scan(paths, globs or fsspec URLs, client=None) returns a pandas
DataFrame with `npyguard check -r`'s verdict for each file and the bytes read
to reach it (`python -m npyguard scan --help`); check_source(obj) checks any
object with size() and read_at(offset, length), FsspecSource an fsspec file.
"""

import functools
import math
import operator
import os

import numpy as np

from . import _npyguard
from ._errors import NpyguardError, NpyguardIOError
from ._model import Archive, Header, Member, RaHeader, dtype_from_spec
from ._scan import FileReport, FsspecSource, check_source, scan

__all__ = [
    "check", "check_file", "load", "load_file",
    "check_npz", "load_npz", "check_ra", "load_ra", "open_npz", "NpzFile",
    "Header", "Member", "Archive", "RaHeader",
    "NpyguardError", "NpyguardIOError", "ERROR_CODES", "__version__",
    "scan", "check_source", "FsspecSource", "FileReport",
]

__version__ = _npyguard.version()

#: Every error code's name and its stable number ("bad_descr": 21, ...).
ERROR_CODES = _npyguard.error_codes()

_U32 = (1 << 32) - 1
_U64 = (1 << 64) - 1


def _count(name, value, maximum, none_means=None):
    if value is None and none_means is not None:
        return none_means
    try:
        if isinstance(value, bool):
            raise TypeError
        value = operator.index(value)  # int, numpy integers
    except TypeError:
        raise TypeError(f"{name} must be an int{' or None' if none_means is not None else ''}, "
                        f"not {type(value).__name__}") from None
    if not 0 <= value <= maximum:
        raise ValueError(f"{name} must be between 0 and {maximum}, not {value}")
    return value


def _flag(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return value


def _numpy_max_dims():
    """The most dimensions an array of the installed numpy may have (32 before numpy 2)."""
    try:
        np.empty((1,) * 64, dtype=np.uint8)
        return 64
    except ValueError:
        return 32


#: load* never accept more dimensions than numpy can build an array of: the
#: shape is then too_many_dimensions at the dimension past it (check* describe
#: the file with max_ndim's default of 64, for .npy files and .npz members alike).
_NUMPY_MAX_DIMS = _numpy_max_dims()


def _options(*args, **kwargs):
    try:
        return _cached_options(*args, **kwargs)
    except TypeError as e:
        if "unhashable" not in str(e):
            raise
    return _cached_options.__wrapped__(*args, **kwargs)  # an unhashable value: checked, and refused, uncached


@functools.lru_cache(maxsize=64, typed=True)
def _cached_options(max_header_bytes=10_000, max_depth=32, max_ndim=64, max_data_bytes=None, allow_trailing_data=False,
             allow_object=False, canonical=False, verify=False, max_members=65535, max_total_bytes=1 << 32,
             max_ratio=1032, allow_type5=True, reject_metadata=False, max_stream_bytes=None):
    """The native options for these limits, checked once per combination."""
    return _npyguard.Options(
        _count("max_header_bytes", max_header_bytes, _U32), _count("max_depth", max_depth, _U32),
        _count("max_ndim", max_ndim, _U32), _count("max_data_bytes", max_data_bytes, _U64, none_means=_U64),
        _flag("allow_trailing_data", allow_trailing_data), _flag("allow_object", allow_object),
        _flag("canonical", canonical), _flag("verify", verify), _count("max_members", max_members, _U64),
        _count("max_total_bytes", max_total_bytes, _U64), _count("max_ratio", max_ratio, _U64),
        _flag("allow_type5", allow_type5), _flag("reject_metadata", reject_metadata),
        None if max_stream_bytes is None else _count("max_stream_bytes", max_stream_bytes, _U64))


def _timeout_ms(timeout):
    """timeout= (seconds, int or float; None: no limit) in whole milliseconds for
    the native half: how long a FIFO, pipe or device may keep a call waiting."""
    if timeout is None:
        return 0
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or None, not {type(timeout).__name__!r}")
    if not timeout > 0 or timeout > _U32 // 1000:
        raise ValueError(f"timeout must be above 0 and at most {_U32 // 1000} seconds (or None), not {timeout!r}")
    return max(1, math.ceil(timeout * 1000))


def _path(path):
    """A path for the native module: os.fsencode of str or os.PathLike."""
    if isinstance(path, (bytes, bytearray, memoryview)):
        raise TypeError("a path must be str or os.PathLike; bytes are data (use the bytes entry point)")
    return os.fsencode(os.fspath(path))


def _is_path(source):
    return isinstance(source, (str, os.PathLike))


def _data(data, path_call):
    """One read-only export of the caller's buffer, used for the check and for the
    arrays: the checked bytes are the viewed ones, a bytearray cannot be resized
    (freed) from another thread meanwhile, and no array can be made writable."""
    if _is_path(data):
        raise TypeError(f"expected the file's bytes (any contiguous buffer), not a path; use {path_call}() for paths")
    try:
        return memoryview(data).toreadonly()
    except TypeError:
        raise TypeError(f"a bytes-like object is required, not {type(data).__name__!r}") from None


def _load_limit(max_ndim):
    return min(_count("max_ndim", max_ndim, _U32), _NUMPY_MAX_DIMS)


def _view(spec, shape, fortran_order, buffer, offset, nbytes):
    """A read-only array over the `nbytes` bytes of `buffer` from `offset`: no copy.

    np.frombuffer holds the buffer export for as long as the array lives, so a
    bytearray cannot be resized (freed) under it; np.ndarray(buffer=...) alone
    does not hold it.
    """
    raw = np.frombuffer(buffer, np.uint8, count=nbytes, offset=offset)
    array = np.ndarray(shape, dtype_from_spec(spec), buffer=raw, order="F" if fortran_order else "C")
    if array.flags.writeable:
        array.flags.writeable = False
    return array


def _aligned(array):
    """`array` where its data is aligned for its dtype (np.load's arrays always are),
    else an aligned copy of it (numpy's own allocation), read-only either way."""
    if array.flags.aligned:
        return array
    copy = np.empty_like(array, order="K")
    np.copyto(copy, array)
    copy.flags.writeable = False
    return copy


# ---------------------------------------------------------------------------
# .npy


def check_file(path, *, max_header_bytes=10_000, max_depth=32, max_ndim=64, max_data_bytes=None,
               allow_trailing_data=False, allow_object=False, canonical=False, timeout=None):
    """check() for a path: a regular file is read by offset (header only), a FIFO as a stream.

    The path is opened once without blocking. timeout (seconds, None: no limit)
    bounds the wait for a FIFO's or device's bytes; past it NpyguardIOError.
    On the main thread Ctrl-C interrupts the call within about 100 ms
    (KeyboardInterrupt). An unreadable path raises NpyguardIOError (also an OSError)."""
    opts = _options(max_header_bytes, max_depth, max_ndim, max_data_bytes, allow_trailing_data, allow_object,
                    canonical)
    return Header(_npyguard.npy_check_file(_path(path), opts, _timeout_ms(timeout)))


def load_file(path, *, mmap=False, max_header_bytes=10_000, max_depth=32, max_ndim=64, max_data_bytes=None,
              allow_trailing_data=False, allow_object=False, canonical=False, timeout=None):
    """The array of a .npy file, equal to np.load's; the file is opened once.

    mmap=False reads exactly the validated data range into memory of its own;
    mmap=True maps it (if another process truncates the file while it is mapped,
    touching the lost pages raises SIGBUS, as with np.load(mmap_mode="r")).
    Either way the array is read-only. Regular files only; object dtypes are
    refused. Limits as for load(); timeout as for check_file().
    """
    opts = _options(max_header_bytes, max_depth, _load_limit(max_ndim), max_data_bytes, allow_trailing_data,
                    allow_object, canonical)
    model, holder = _npyguard.npy_load_file(_path(path), opts, _flag("mmap", mmap), _timeout_ms(timeout))
    return _view(model[10], model[5], model[4], holder, 0, model[7])


# ---------------------------------------------------------------------------
# .npz


def check_npz(source, *, verify=False, max_members=65535, max_total_bytes=1 << 32, max_ratio=1032,
              max_header_bytes=10_000, max_depth=32, max_ndim=64, max_data_bytes=None, allow_trailing_data=False,
              allow_object=False, canonical=False, timeout=None):
    """Validate an .npz archive (a path, or its bytes); return an Archive, a dict of
    Member models keyed like np.load(...).files.

    Reads the end records, the central directory, every local header and each
    member's first bytes (inflated that far only); verify=True reads every member
    in full (exact lengths, CRC-32) with fixed buffers.

    max_members      entries the archive may declare
    max_total_bytes  sum of the members' declared uncompressed sizes
    max_ratio        declared uncompressed / compressed size of each deflated member
    The .npy limits apply to every member, max_ndim (64) as for a .npy file.
    For a path, timeout and Ctrl-C as for check_file().
    """
    opts = _options(max_header_bytes, max_depth, max_ndim, max_data_bytes, allow_trailing_data, allow_object,
                    canonical, verify, max_members, max_total_bytes, max_ratio)
    if _is_path(source):
        return Archive(_npyguard.npz_check_file(_path(source), opts, _timeout_ms(timeout)))
    return Archive(_npyguard.npz_check_buffer(_data(source, "check_npz"), opts))


def load_npz(source, *, verify=False, max_members=65535, max_total_bytes=1 << 32, max_ratio=1032,
             max_header_bytes=10_000, max_depth=32, max_ndim=64, max_data_bytes=None, allow_trailing_data=False,
             allow_object=False, canonical=False, timeout=None):
    """Every member's array of an .npz archive (a path, or its bytes), as a dict keyed
    like np.load(...).files, each equal to np.load's.

    The archive is validated and every member is read in full and checked (lengths,
    CRC-32) in one pass: loading reads the data anyway, so it is always verified,
    and verify=False (accepted for symmetry with check_npz) cannot turn that off.
    No array is handed out from bytes that were not checked. Memory is at most the members' validated sizes
    (max_total_bytes). Every array is read-only and aligned for its dtype, as np.load's
    are: stored members of a bytes input are views of it where their data is aligned and
    aligned copies where not; the others are arrays of their own. Object members are
    refused. open_npz() reads members lazily instead.
    max_ndim is capped at the dimensions the installed numpy can build, as for load().
    For a path, timeout (seconds) bounds the wait for a FIFO's bytes, as for check_file().
    """
    opts = _options(max_header_bytes, max_depth, _load_limit(max_ndim), max_data_bytes, allow_trailing_data,
                    allow_object, canonical, True, max_members, max_total_bytes, max_ratio)
    if _is_path(source):
        model, holders = _npyguard.npz_load_file(_path(source), opts, _timeout_ms(timeout))
    else:
        source = _data(source, "load_npz")
        model, holders = _npyguard.npz_load_buffer(source, opts)
    return _npz_arrays(model, holders, source)


def _npz_arrays(model, holders, source):
    """{key: array} of an .npz load: holders[i] holds member i's data, or is None for a
    stored member of `source` viewed in place (where aligned, else copied)."""
    arrays = {}
    for member, holder in zip(model[4], holders):
        key, data_start, npy = member[1], member[5], member[6]
        if holder is None:
            array = _view(npy[10], npy[5], npy[4], source, data_start + npy[3], npy[7])
        else:
            array = _view(npy[10], npy[5], npy[4], holder, 0, npy[7])
        arrays[key] = _aligned(array)
    return arrays


# ---------------------------------------------------------------------------
# RawArray


def check_ra(source, *, max_ndim=64, max_data_bytes=None, allow_type5=True, reject_metadata=False, timeout=None):
    """Validate a RawArray file (a path, or its bytes); return its RaHeader.

    Reads the 48 + 8 * ndims header bytes only.

    max_ndim         dimensions (values above 2**20 count as 2**20)
    max_data_bytes   the data length above this is data_too_large (None: no limit)
    allow_type5      accept element type 5 (Julia's Bool, Rust's bfloat16)
    reject_metadata  refuse bytes after the data (trailing_data)
    timeout          for a path: seconds a FIFO may keep the call waiting (None: no limit);
                     Ctrl-C interrupts it, as for check_file()
    """
    opts = _options(max_ndim=max_ndim, max_data_bytes=max_data_bytes, allow_type5=allow_type5,
                    reject_metadata=reject_metadata)
    if _is_path(source):
        return RaHeader(_npyguard.ra_check_file(_path(source), opts, _timeout_ms(timeout)))
    return RaHeader(_npyguard.ra_check_buffer(_data(source, "check_ra"), opts))


def _ra_dtype_spec(model):
    spec, refusal = model[11], model[12]
    if refusal is not None:
        offset, message = refusal
        raise NpyguardError("not_convertible", message, offset, code_value=ERROR_CODES["not_convertible"])
    return spec


def load_ra(source, *, mmap=False, max_ndim=64, max_data_bytes=None, allow_type5=True, reject_metadata=False,
            timeout=None):
    """The array of a RawArray file (a path, or its bytes): shape = dims in Fortran order,
    the dtype `npyguard convert` gives it (RaHeader.dtype), equal to np.load of the
    converted file. Types numpy has no dtype for are refused (not_convertible at the
    field that says why). A read-only view of the bytes, or of the file read (or, with
    mmap=True, mapped) once; the metadata is never part of it. Limits as for check_ra().
    """
    opts = _options(max_ndim=max_ndim, max_data_bytes=max_data_bytes, allow_type5=allow_type5,
                    reject_metadata=reject_metadata)
    if _is_path(source):
        model, holder = _npyguard.ra_load_file(_path(source), opts, _flag("mmap", mmap), _timeout_ms(timeout))
        return _view(_ra_dtype_spec(model), model[5], True, holder, 0, model[8])
    source = _data(source, "load_ra")
    model = _npyguard.ra_check_buffer(source, opts)
    return _view(_ra_dtype_spec(model), model[5], True, source, model[7], model[8])


# check, load (any input, any format) and open_npz: _uploads.py, over the helpers above.
from ._uploads import NpzFile, check, load, open_npz  # noqa: E402
