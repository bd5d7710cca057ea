"""numpy 1.24 as the oracle: its verdict on a .npy file, from the header alone.

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
import warnings
from dataclasses import dataclass
from typing import Any, Optional

import numpy
from numpy.lib import format as npformat

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


def read_header(buf):
    """Run numpy's header reader on ``buf`` (bytes); never raises.

    Returns a HeaderReading; ``ok`` is False with numpy's exception text when
    numpy refuses the header."""
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
