"""numpy as the oracle (Debian's 1.24 unless the run says ``--numpy``): its
verdict on a .npy file, from the header alone.

numpy's reader is ``numpy.lib.format``: ``read_magic``, then
``read_array_header_1_0`` / ``read_array_header_2_0`` (version 3.0 goes
through the same ``_read_array_header`` with ``version=(3, 0)``, which decodes
UTF-8 and skips the Python 2 ``L`` filter), here with ``max_header_size``
raised so that numpy's 10,000-character safety limit does not hide anything.

On top of the header, the oracle applies the data-size check: the file must
hold ``data_offset + count * itemsize`` bytes. numpy ignores bytes after the
data (``read_array`` reads what it needs), so a longer file is "read" too and
flagged ``trailing``; a shorter one is not read. Object dtypes store a pickle
of unknown length: no size check.
"""

import io
import math
import os
import pickle
import platform
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy
from numpy.lib import format as _public_format

try:  # numpy 2 keeps the reader's private helpers in the implementation module
    from numpy.lib import _format_impl as npformat
except ImportError:  # numpy 1.x
    npformat = _public_format

# generate.py, mutate.py and deviations.py reach them through numpy.lib.format,
# which in numpy 2 re-exports the public names only.
for _name in ("_check_version", "_filter_header", "_read_array_header", "_write_array_header"):
    if not hasattr(_public_format, _name):
        setattr(_public_format, _name, getattr(npformat, _name))

# numpy's header-size guard, raised far above any test input.
HUGE_HEADER = 2 ** 64


@dataclass
class HeaderReading:
    """What numpy's header reader made of the first bytes of a file."""

    ok: bool
    error: str = ""
    version: Optional[tuple] = None
    header_length: int = 0
    data_offset: int = 0
    shape: tuple = ()
    fortran_order: bool = False
    dtype: Any = None
    count: int = 0
    nbytes: int = 0
    descr_repr: str = ""

    @property
    def has_object(self):
        """True when the dtype holds Python objects (the data is a pickle)."""
        return bool(self.ok and self.dtype.hasobject)


def _preamble_length(version):
    """Bytes before the header text: magic, version, HEADER_LEN."""
    return 10 if version == (1, 0) else 12


# numpy 1.24 itself dies on some headers: np.dtype('<M8[ms/4294967296]')
# divides by a denominator that wrapped to 0 and the process gets SIGFPE.
# Headers holding the byte that such datetime metadata needs are read in a
# forked child, so a crash is a refusal ("numpy crashed") and not the end of
# the run. Other headers are read in-process (fork per file would cost
# minutes per run); a crash there stops the run loudly.
CRASH_HAZARD = b"/"


def read_header(buf):
    """Run numpy's header reader on ``buf`` (bytes); never raises.

    Returns a HeaderReading; ``ok`` is False with numpy's exception text when
    numpy refuses the header, or "numpy crashed" when it kills the process."""
    if CRASH_HAZARD not in buf[:_HAZARD_SCAN]:
        return _read_header(buf)
    reading, signal_number = _isolated(_read_header, buf)
    if reading is None:
        return HeaderReading(ok=False, error="numpy crashed: signal %d" % signal_number)
    return reading


# The whole header lies within this many bytes of any file the run makes.
_HAZARD_SCAN = 1 << 20


def _isolated(function, *args):
    """(function(*args), None) computed in a forked child, or (None, signal)
    when the child was killed by a signal."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without cleanup
        status = 1
        try:
            os.close(read_end)
            with os.fdopen(write_end, "wb") as out:
                out.write(pickle.dumps(function(*args)))
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as inp:
        payload = inp.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return None, os.WTERMSIG(status)
    return pickle.loads(payload), None


def _read_header(buf):
    fp = io.BytesIO(buf)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            version = npformat.read_magic(fp)
            npformat._check_version(version)  # what read_array does first
            if version == (1, 0):
                shape, fortran, dtype = npformat.read_array_header_1_0(fp, max_header_size=HUGE_HEADER)
            elif version == (2, 0):
                shape, fortran, dtype = npformat.read_array_header_2_0(fp, max_header_size=HUGE_HEADER)
            else:
                shape, fortran, dtype = npformat._read_array_header(fp, version, max_header_size=HUGE_HEADER)
            descr = repr(npformat.dtype_to_descr(dtype))
    except Exception as exc:  # noqa: BLE001 - every exception is a refusal
        return HeaderReading(ok=False, error=("%s: %s" % (type(exc).__name__, exc))[:300])
    data_offset = fp.tell()
    count = math.prod(int(d) for d in shape)
    return HeaderReading(
        ok=True,
        version=version,
        header_length=data_offset - _preamble_length(version),
        data_offset=data_offset,
        shape=tuple(shape),
        fortran_order=fortran,
        dtype=dtype,
        count=count,
        nbytes=count * dtype.itemsize,
        descr_repr=descr,
    )


def implied_data_length(reading):
    """The number of data bytes numpy's reading asks for, or None when no
    file can satisfy it (numpy refused, negative sizes) or it is a pickle."""
    if not reading.ok or reading.has_object:
        return None
    if reading.count < 0 or reading.nbytes < 0:
        return None
    return reading.nbytes


@dataclass
class Verdict:
    """numpy's verdict on a whole file."""

    reads: bool
    reading: HeaderReading
    file_size: int
    trailing: bool = False  # numpy reads it but ignores bytes after the data
    why: str = ""


def verdict(reading, file_size):
    """numpy's verdict for a file of ``file_size`` bytes with this header."""
    if not reading.ok:
        return Verdict(False, reading, file_size, why=reading.error)
    if reading.has_object:
        return Verdict(True, reading, file_size)
    need = implied_data_length(reading)
    if need is None:
        return Verdict(False, reading, file_size, why="negative count or itemsize")
    end = reading.data_offset + need
    if file_size < end:
        return Verdict(False, reading, file_size, why="truncated data: %d < %d" % (file_size, end))
    return Verdict(True, reading, file_size, trailing=file_size > end)


def judge(buf):
    """numpy's verdict on the complete file ``buf``."""
    return verdict(read_header(buf), len(buf))


def shape_as_json(shape):
    """numpy's shape as npyguard's JSON spells it (a list of integers)."""
    return [int(d) for d in shape]


def numpy_version():
    """The oracle's numpy version string."""
    return numpy.__version__


def numpy_major():
    """The oracle's numpy major version (1 or 2)."""
    return int(numpy.__version__.split(".")[0])


def describe():
    """Which numpy and Python the run asks, for the summary's first line."""
    return "numpy %s (Python %s, %s)" % (numpy.__version__, platform.python_version(), sys.executable)
