#!/usr/bin/python3
"""Regenerates the README's sample files with numpy (run with /usr/bin/python3)."""
import io
import zipfile
from pathlib import Path

import numpy as np

here = Path(__file__).resolve().parent
weights = np.arange(12, dtype="<f4").reshape(3, 4)
np.save(here / "valid.npy", weights)

records = np.zeros(2, dtype=[("id", "<u4"), ("pos", "<f8", (3,)), ("label", "S8")])
np.save(here / "structured.npy", records)

# A valid array with a zip archive glued to its end: numpy loads the array
# and never notices; npyguard reports trailing_data.
archive = io.BytesIO()
with zipfile.ZipFile(archive, "w") as z:
    z.writestr(zipfile.ZipInfo("payload.txt", date_time=(1980, 1, 1, 0, 0, 0)), "not an array")
(here / "polyglot.npy").write_bytes((here / "valid.npy").read_bytes() + archive.getvalue())
# A header numpy 1.24 reads without complaint: a negative dimension, which
# makes its size arithmetic meaningless. npyguard reports negative_dimension.
header = "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 4), }"
header += " " * (64 - (10 + len(header) + 1) % 64) + "\n"
(here / "negative.npy").write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little")
                                    + header.encode("latin-1") + weights.tobytes())
# An archive as np.savez_compressed writes it (keys with '/', as frameworks
# name layers), and one numpy loads although its member name climbs out of
# any directory it is extracted to: npyguard reports bad_member_name.
np.savez_compressed(here / "weights.npz", **{"dense/kernel": weights, "dense/bias": np.zeros(4, "<f4")})
member = io.BytesIO()
np.save(member, np.arange(3, dtype="<i8"))
with zipfile.ZipFile(here / "traversal.npz", "w") as z:
    z.writestr(zipfile.ZipInfo("../../etc/cron.d/x.npy", date_time=(1980, 1, 1, 0, 0, 0)), member.getvalue())

# RawArray (SPEC-ra.md): the layout the Python reference ra.write gives the
# same array (six little-endian u64 words, the dims as numpy's shape, the data
# column-major), with YAML metadata after the data, which the format allows.
# And a file flagged compressed (flags bit 1, as the C library's LZ4 files
# and Julia's LEB128 files set it): npyguard reports unsupported_flags.
def rawarray(array, flags=0, eltype=3, metadata=b""):
    words = [0x7961727261776172, flags, eltype, array.dtype.itemsize, array.nbytes, array.ndim, *array.shape]
    return b"".join(w.to_bytes(8, "little") for w in words) + array.T.tobytes() + metadata


(here / "image.ra").write_bytes(rawarray(weights, metadata=b"---\nunits: volts\nsource: sensor 7\n...\n"))
(here / "compressed.ra").write_bytes(rawarray(weights, flags=2))
print("wrote valid.npy, structured.npy, polyglot.npy, negative.npy, weights.npz, traversal.npz, image.ra, "
      "compressed.ra")
