#!/usr/bin/python3
"""numpy's own header parsing, timed on the same headers as npyguard_bench.

Times numpy.lib.format.read_magic + read_array_header_1_0 / _2_0 (the calls
numpy.load makes before touching the data) on:

  typical      {'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }
  struct/2000  a 2000-field structured descr, shape (10,)

The header bytes are built exactly as bench/bench_validate.cpp builds them
(padding with spaces to a multiple of 64, '\\n' last; version 2.0 only when
HEADER_LEN does not fit in 16 bits), so the figures compare directly.

Run with the system interpreter, which has numpy:  /usr/bin/python3 bench/numpy_reference.py
Rates are printed in MiB/s (what Google Benchmark's "M/s" means: base 1024)
and in MB/s (base 1000).
"""

import io
import struct
import sys
import timeit

import numpy as np
from numpy.lib import format as npformat

STRUCT_TYPES = ["<f8", "<i4", "|u1", "<c16", "|S7"]


def make_header(dict_text):
    """Preamble + padded header text, as bench_validate.cpp's make_npy."""
    unpadded = len(dict_text) + 1  # + the final '\n'
    preamble, major = 10, 1
    total = (preamble + unpadded + 63) // 64 * 64
    if total - preamble > 0xFFFF:
        preamble, major = 12, 2
        total = (preamble + unpadded + 63) // 64 * 64
    header_len = total - preamble
    text = dict_text + " " * (header_len - unpadded) + "\n"
    if major == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", header_len)
    else:
        pre = b"\x93NUMPY\x02\x00" + struct.pack("<I", header_len)
    data = pre + text.encode("latin1")
    assert len(data) == total and total % 64 == 0
    return data


def typical_header():
    return make_header("{'descr': '<f8', 'fortran_order': False, 'shape': (1000, 1000), }")


def struct_header(n):
    fields = ", ".join("('f%04d', '%s')" % (i, STRUCT_TYPES[i % 5]) for i in range(n))
    return make_header("{'descr': [" + fields + "], 'fortran_order': False, 'shape': (10,), }")


def read_header(fp, max_header_size):
    major, minor = npformat.read_magic(fp)
    if (major, minor) == (1, 0):
        return npformat.read_array_header_1_0(fp, max_header_size=max_header_size)
    if (major, minor) == (2, 0):
        return npformat.read_array_header_2_0(fp, max_header_size=max_header_size)
    raise ValueError("unexpected version %d.%d" % (major, minor))


def bench(name, data, expect_shape, expect_fields):
    fp = io.BytesIO(data)
    max_header_size = len(data) + 1  # numpy's default (10000) refuses large headers

    def once():
        fp.seek(0)
        return read_header(fp, max_header_size)

    shape, fortran_order, dtype = once()
    assert shape == expect_shape and not fortran_order, (shape, fortran_order)
    assert (len(dtype.names) if dtype.names else 0) == expect_fields

    timer = timeit.Timer(once)
    number, _ = timer.autorange()            # >= 0.2 s per repeat
    best = min(timer.repeat(repeat=5, number=number)) / number
    us = best * 1e6
    mib_s = len(data) / best / (1024 * 1024)
    mb_s = len(data) / best / 1e6
    print("%-20s header_bytes=%6d  %10.2f us/header  %8.2f MiB/s  %8.2f MB/s"
          % (name, len(data), us, mib_s, mb_s))


def main():
    print("numpy %s, Python %s" % (np.__version__, sys.version.split()[0]))
    print("read_magic + read_array_header_1_0/2_0, best of 5 repeats (timeit)")
    bench("numpy_typical", typical_header(), (1000, 1000), 0)
    bench("numpy_struct/2000", struct_header(2000), (10,), 2000)


if __name__ == "__main__":
    main()
