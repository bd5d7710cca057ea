"""check(), load() and open_npz(): any input as np.load takes it (bytes, a path,
a binary file object), the format chosen by SPEC.md section 9 unless format=
says it.

Where the bytes come from decides how they are read:

- bytes-like: validated in place (the existing buffer entry points);
- str / os.PathLike: the native path entry points (the input boundary: one
  non-blocking open, timeout=, Ctrl-C);
- a seekable file object (seek/tell: io.BytesIO, an open file, a
  SpooledTemporaryFile): read by offset from its current position through a
  native random_access_source (seek + readinto per read), so check reads the
  header only and load the header and then exactly the data range;
- anything else with read()/readinto() (an upload stream): read once, front
  to back, by the native stream validators in bounded memory (.npy and .ra
  count their data without keeping it; .npz holds at most max_stream_bytes).
"""

import collections.abc
import os
import stat
import threading
import zlib

from . import (ERROR_CODES, _aligned, _data, _flag, _is_path, _load_limit, _npyguard, _npz_arrays, _options, _path,
               _ra_dtype_spec, _timeout_ms, _view)
from . import load_npz as _load_npz
from . import load_file as _load_file
from . import load_ra as _load_ra
from ._errors import NpyguardError, NpyguardIOError
from ._model import Archive, Header, RaHeader

_FORMATS = ("npy", "npz", "ra")
_MODELS = {"npy": Header, "npz": Archive, "ra": RaHeader}


def _format(format):
    if format is not None and format not in _FORMATS:
        raise ValueError(f"format must be 'npy', 'npz', 'ra' or None, not {format!r}")
    return format


# ---------------------------------------------------------------------------
# What kind of input, and its name's claim


def _seekable(obj):
    seekable = getattr(obj, "seekable", None)
    if seekable is not None:
        return bool(seekable())
    if not (hasattr(obj, "seek") and hasattr(obj, "tell")):
        return False
    try:
        obj.tell()
    except (OSError, AttributeError):
        return False
    return True


def _kind(obj):
    """"path", "buffer", "seekable" or "stream"."""
    if _is_path(obj):
        return "path"
    try:
        memoryview(obj).release()
        return "buffer"
    except TypeError:
        pass
    if hasattr(obj, "read") or hasattr(obj, "readinto"):
        return "seekable" if _seekable(obj) else "stream"
    raise TypeError(f"expected a bytes-like object, a path (str, os.PathLike) or a binary file object, "
                    f"not {type(obj).__name__!r}")


def _name(obj):
    """A file object's name (obj.name when it is a str or bytes path: its suffix is a
    claim, SPEC.md section 9), as bytes; b"" when it has none."""
    name = getattr(obj, "name", None)
    if isinstance(name, (str, bytes)):
        return os.fsencode(name)
    return b""


def _read_up_to(obj, size):
    """Up to `size` bytes from a file object's position: fewer only at its end."""
    parts = []
    left = size
    while left > 0:
        part = obj.read(left)
        if part is None:
            raise BlockingIOError("read() returned None: a non-blocking file with no data")
        if isinstance(part, str):
            raise TypeError("a binary file is required; read() returned str")
        if not part:
            break
        parts.append(bytes(part))
        left -= len(part)
    return b"".join(parts)


def _extent(obj):
    """(start, size): the file's current position (np.load reads from there) and the
    bytes from there to its end."""
    start = obj.tell()
    end = obj.seek(0, os.SEEK_END)
    if end is None:  # an object whose seek() answers nothing
        end = obj.tell()
    obj.seek(start)
    return start, max(0, end - start)


def _chosen(format, head, name=b""):
    return format if format is not None else _npyguard.detect_format(head, name)


# ---------------------------------------------------------------------------
# check and load


def check(obj, *, format=None, timeout=None, verify=False, max_header_bytes=10_000, max_depth=32, max_ndim=64,
          max_data_bytes=None, allow_trailing_data=False, allow_object=False, canonical=False, max_members=65535,
          max_total_bytes=1 << 32, max_ratio=1032, max_stream_bytes=None, allow_type5=True, reject_metadata=False):
    """Validate a .npy file, an .npz archive or a RawArray file; return its model:
    Header (.npy), Archive (.npz) or RaHeader (.ra).

    obj     bytes-like (the whole file), a path (str, os.PathLike) or a binary file
            object, as np.load takes. A seekable file (seek/tell) is read by offset from
            its current position: the header only (every .npz local header and member
            prefix; with verify=True every member in full). Any other file object (an
            upload stream with read() only) is read once, front to back, in bounded
            memory: .npy and .ra data is counted, never kept; an .npz archive is held
            in memory, at most max_stream_bytes (None: 4 GiB + 64 MiB, and never more
            than max_total_bytes + 64 MiB). The file's position afterwards is unspecified.
    format  "npy", "npz" or "ra"; None (SPEC.md section 9): the name's claim where there
            is a name (a path's, a file object's str .name ending in .npy, .npz or .ra;
            a claim is checked, never a hint: a zip named x.npy is bad_magic), else the
            first bytes ("\\x93NUMPY" .npy, "PK\\3\\4"/"PK\\5\\6" .npz, "rawarray" .ra),
            else .npy (bad_magic).
    timeout for a path: seconds a FIFO or device may keep the call waiting (None: no
            limit); Ctrl-C interrupts it on the main thread, as for check_file().

    Limits as for check_file() (.npy), check_npz() (.npz: verify, max_members,
    max_total_bytes, max_ratio) and check_ra() (allow_type5, reject_metadata); each
    format uses its own. Raises NpyguardError (a ValueError) with .code and .offset,
    NpyguardIOError when the input cannot be read; an exception the file object raises
    while it is read propagates as it is.
    """
    format = _format(format)
    opts = _options(max_header_bytes, max_depth, max_ndim, max_data_bytes, allow_trailing_data, allow_object,
                    canonical, verify, max_members, max_total_bytes, max_ratio, allow_type5, reject_metadata,
                    max_stream_bytes)
    timeout_ms = _timeout_ms(timeout)
    kind = _kind(obj)
    if kind == "path":
        chosen, model = _npyguard.check_path(_path(obj), opts, timeout_ms, format or "")
        return _MODELS[chosen](model)
    if kind == "buffer":
        data = _data(obj, "check_file")
        chosen = _chosen(format, bytes(data[:8]))
        if chosen == "npz":
            return Archive(_npyguard.npz_check_buffer(data, opts))
        if chosen == "ra":
            return RaHeader(_npyguard.ra_check_buffer(data, opts))
        return Header(_npyguard.npy_check_buffer(data, opts))
    if kind == "seekable":
        start, size = _extent(obj)
        head = _read_up_to(obj, 8) if format is None else b""
        chosen = _chosen(format, head, _name(obj))
        return _MODELS[chosen](_npyguard.check_object(obj, start, size, chosen, opts))
    prefix = _read_up_to(obj, 8) if format is None else b""
    chosen = _chosen(format, prefix, _name(obj))
    return _MODELS[chosen](_npyguard.check_stream(obj, prefix, chosen, opts))


def load(obj, *, format=None, mmap=False, timeout=None, max_header_bytes=10_000, max_depth=32, max_ndim=64,
         max_data_bytes=None, allow_trailing_data=False, allow_object=False, canonical=False, max_members=65535,
         max_total_bytes=1 << 32, max_ratio=1032, max_stream_bytes=None, allow_type5=True, reject_metadata=False):
    """The array of a .npy or RawArray file, or a dict of an .npz archive's arrays keyed
    like np.load(...).files, each equal to np.load's; never unpickles (object dtypes are
    refused even with allow_object=True).

    obj and format as for check(). How the arrays are held:
    - bytes: a read-only view of the caller's bytes (.npy, .ra; .npz as load_npz());
    - a path: as load_file() (mmap=True maps it), load_npz(), load_ra();
    - a seekable file: the header read by offset, then exactly the data range into
      memory of its own (.npz: every member read in full and checked, as load_npz());
    - a stream: read once by the stream validator, the array built from the bytes it
      validated (never a second read); memory is the bytes read (.npz: the archive,
      at most max_stream_bytes, then read as load_npz() reads bytes).
    Arrays are read-only; those from .npz members are aligned for their dtype, as
    np.load's are (a view where the data is aligned, an aligned copy where not), and
    so is every array read from a file object. mmap=True is for paths only (ignored
    for .npz, as np.load ignores mmap_mode there). max_ndim is capped at what the
    installed numpy can build. Limits, timeout and errors as for check() (.npz
    members are always verified: load reads their data anyway).
    """
    format = _format(format)
    _flag("mmap", mmap)
    npy_limits = dict(max_header_bytes=max_header_bytes, max_depth=max_depth, max_ndim=max_ndim,
                      max_data_bytes=max_data_bytes, allow_trailing_data=allow_trailing_data,
                      allow_object=allow_object, canonical=canonical)
    npz_limits = dict(npy_limits, max_members=max_members, max_total_bytes=max_total_bytes, max_ratio=max_ratio)
    ra_limits = dict(max_ndim=max_ndim, max_data_bytes=max_data_bytes, allow_type5=allow_type5,
                     reject_metadata=reject_metadata)
    kind = _kind(obj)
    if kind == "path":
        chosen = format or _npyguard.detect_path(_path(obj))
        if chosen == "npz":
            _timeout_ms(timeout)
            return _load_npz(obj, timeout=timeout, **npz_limits)
        if chosen == "ra":
            return _load_ra(obj, mmap=mmap, timeout=timeout, **ra_limits)
        return _load_file(obj, mmap=mmap, timeout=timeout, **npy_limits)
    if mmap:
        raise ValueError("mmap=True needs a path (np.load maps only named files)")
    _timeout_ms(timeout)
    if kind == "buffer":
        data = _data(obj, "load_file")
        chosen = _chosen(format, bytes(data[:8]))
        if chosen == "npz":
            return _load_npz(data, **npz_limits)
        if chosen == "ra":
            return _load_ra(data, **ra_limits)
        return _load_npy_data(data, npy_limits)
    if kind == "seekable":
        start, size = _extent(obj)
    head = _read_up_to(obj, 8) if format is None else b""
    chosen = _chosen(format, head, _name(obj))
    if chosen == "ra":
        opts = _options(max_ndim=max_ndim, max_data_bytes=max_data_bytes, allow_type5=allow_type5,
                        reject_metadata=reject_metadata)
    else:
        opts = _options(max_header_bytes, max_depth, _load_limit(max_ndim), max_data_bytes, allow_trailing_data,
                        allow_object, canonical, True, max_members, max_total_bytes, max_ratio,
                        max_stream_bytes=max_stream_bytes)
    if kind == "seekable":
        model, holder = _npyguard.load_object(obj, start, size, chosen, opts)
        if chosen == "npz":
            return _npz_arrays(model, holder, None)
        return _array_of(chosen, model, holder, 0)
    model, recorded = _npyguard.load_stream(obj, head, chosen, opts)
    if chosen == "npz":
        return _npz_arrays(*_npyguard.npz_load_buffer(recorded, opts), recorded)
    return _array_of(chosen, model, recorded, model[7] if chosen == "ra" else model[3])


def _load_npy_data(data, limits):
    """load() of .npy bytes: the array views the caller's buffer (today's behaviour)."""
    opts = _options(limits["max_header_bytes"], limits["max_depth"], _load_limit(limits["max_ndim"]),
                    limits["max_data_bytes"], limits["allow_trailing_data"], limits["allow_object"],
                    limits["canonical"])
    model = _npyguard.npy_load_buffer(data, opts)
    return _view(model[10], model[5], model[4], data, model[3], model[7])


def _array_of(format, model, buffer, offset):
    """The aligned, read-only array of a .npy or .ra model over `buffer` from `offset`."""
    if format == "ra":
        return _aligned(_view(_ra_dtype_spec(model), model[5], True, buffer, offset, model[8]))
    return _aligned(_view(model[10], model[5], model[4], buffer, offset, model[7]))


# ---------------------------------------------------------------------------
# open_npz: validated at once, inflated on access


class _BufferReader:
    def __init__(self, data):
        self._data = data

    def read(self, offset, size):
        return self._data[offset:offset + size]

    def close(self):
        self._data = None


class _FileReader:
    """A seekable file object read by offset from `start` (the caller's: never closed here)."""

    def __init__(self, file, start):
        self._file = file
        self._start = start

    def read(self, offset, size):
        self._file.seek(self._start + offset)
        return _read_up_to(self._file, size)

    def close(self):
        self._file = None


class _FdReader:
    """The descriptor open_npz opened and validated, read by offset (pread)."""

    def __init__(self, fd):
        self._fd = fd

    def read(self, offset, size):
        parts = []
        while size > 0:
            part = os.pread(self._fd, min(size, 1 << 30), offset)
            if not part:
                break
            parts.append(part)
            offset += len(part)
            size -= len(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self):
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)


class NpzFile(collections.abc.Mapping):
    """A validated .npz archive whose members are inflated when they are read
    (open_npz()): a read-only Mapping of key -> array, keyed like np.load(...).files,
    and a context manager.

    files    the keys, in the archive's order
    archive  the Archive model the opening validation returned (every member's Header)

    Each access reads the member's compressed bytes from the input, inflates them
    (deflate) and checks their length and CRC-32 against the validated model before any
    array is made; a member that fails is refused with the library's own error for it
    (the archive checked again with verify=True). Arrays are read-only and aligned for
    their dtype, as np.load's are: a view of the bytes read where the data is aligned
    (a stored member of a bytes input: of the caller's bytes), an aligned copy where
    not. Members are not cached: reading one twice reads it twice, as NpzFile does.
    Object members are described but refused on access (object_dtype).
    """

    def __init__(self, archive, reader, recheck):
        self._archive = archive
        self._reader = reader
        self._recheck = recheck
        self._lock = threading.Lock()  # one read at a time: a file object's seek + read

    @property
    def files(self):
        return list(self._archive)

    @property
    def archive(self):
        return self._archive

    def __iter__(self):
        return iter(self._archive)

    def __len__(self):
        return len(self._archive)

    def __contains__(self, key):
        return key in self._archive

    def __getitem__(self, key):
        member = self._archive[key]
        if self._reader is None:
            raise ValueError("I/O operation on a closed NpzFile")
        if member.data_is_pickle:
            stored = member.compression == "stored"
            raise NpyguardError(
                "object_dtype",
                "the member's data is a pickle of Python objects (object dtype), which npyguard never reads",
                member.data_start + (member.data_offset if stored else 0), member.name, member.data_offset,
                code_value=ERROR_CODES["object_dtype"])
        with self._lock:
            raw = self._reader.read(member.data_start, member.compressed_size)
        content = self._inflated(member, raw)
        if content is None:
            self._refuse(member)
        array = _view(member._spec, member.shape, member.fortran_order, content, member.data_offset, member.nbytes)
        return _aligned(array)

    @staticmethod
    def _inflated(member, raw):
        """The member's .npy bytes when their length and CRC-32 are the validated ones, else None."""
        if member.compression == "stored":
            content = raw
        else:
            inflater = zlib.decompressobj(-15)
            try:
                content = inflater.decompress(raw, member.uncompressed_size)
            except zlib.error:
                return None
            if not inflater.eof or inflater.unconsumed_tail:
                return None
        if len(content) != member.uncompressed_size or zlib.crc32(content) != member.crc32:
            return None
        return content

    def _refuse(self, member):
        """The library's verdict on a member whose bytes are not the declared ones."""
        with self._lock:
            self._recheck()
        raise NpyguardIOError("io_error", "the member's bytes changed since the archive was validated", None,
                              member.name, code_value=ERROR_CODES["io_error"])

    def close(self):
        """Close the descriptor open_npz opened for a path (a file object given is the
        caller's and stays open); members can no longer be read."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_reader", None) is not None:
            self.close()

    def __repr__(self):
        state = "closed" if self._reader is None else "open"
        return f"<npyguard.NpzFile ({state}) files={self.files!r}>"


def open_npz(obj, *, verify=False, timeout=None, max_members=65535, max_total_bytes=1 << 32, max_ratio=1032,
             max_stream_bytes=None, max_header_bytes=10_000, max_depth=32, max_ndim=64, max_data_bytes=None,
             allow_trailing_data=False, allow_object=False, canonical=False):
    """An .npz archive validated whole on opening, its members inflated only when read:
    an NpzFile (a read-only Mapping and context manager), like np.load's NpzFile.

    obj: bytes-like, a path (opened once without blocking, timeout= as for
    check_npz(); the descriptor stays open until close() and every member is read
    from it), a seekable binary file object (read by offset; it stays the caller's)
    or a stream (read into memory once, at most max_stream_bytes).

    Opening reads the end records, the central directory, every local header and each
    member's .npy header (verify=True: every member in full, lengths and CRC-32); it
    inflates no member's data. Reading a member inflates it and checks it before the
    array is made. Limits as for check_npz(); max_ndim is capped at what the installed
    numpy can build, as for load_npz().
    """
    limits = (max_header_bytes, max_depth, _load_limit(max_ndim), max_data_bytes, allow_trailing_data,
              allow_object, canonical)
    rest = (max_members, max_total_bytes, max_ratio)
    opts = _options(*limits, _flag("verify", verify), *rest, max_stream_bytes=max_stream_bytes)
    full = _options(*limits, True, *rest, max_stream_bytes=max_stream_bytes)
    timeout_ms = _timeout_ms(timeout)
    kind = _kind(obj)
    if kind == "path":
        return _open_path(_path(obj), opts, full, timeout_ms)
    if kind == "buffer":
        data = _data(obj, "open_npz")
        model = _npyguard.npz_check_buffer(data, opts)
        return NpzFile(Archive(model), _BufferReader(data), lambda: _npyguard.npz_check_buffer(data, full))
    if kind == "seekable":
        start, size = _extent(obj)
        model = _npyguard.check_object(obj, start, size, "npz", opts)
        return NpzFile(Archive(model), _FileReader(obj, start),
                       lambda: _npyguard.check_object(obj, start, size, "npz", full))
    model, recorded = _npyguard.load_stream(obj, b"", "npz", opts)
    data = memoryview(recorded)
    return NpzFile(Archive(model), _BufferReader(data), lambda: _npyguard.npz_check_buffer(data, full))


def _open_path(path, opts, full, timeout_ms):
    if b"\0" in path:
        raise ValueError("embedded null byte in the path")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0))
    except OSError as e:
        raise NpyguardIOError("io_error", f"cannot open: {e.strerror}", code_value=ERROR_CODES["io_error"]) from e
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISREG(mode) or stat.S_ISDIR(mode):  # a directory: the boundary's io_error
            _, model = _npyguard.check_fd(fd, path, opts, timeout_ms, "npz")
            return NpzFile(Archive(model), _FdReader(fd), lambda: _npyguard.check_fd(fd, path, full, 0, "npz"))
        model, recorded = _npyguard.npz_spool_fd(fd, opts, timeout_ms)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    data = memoryview(recorded)
    return NpzFile(Archive(model), _BufferReader(data), lambda: _npyguard.npz_check_buffer(data, full))
