#!/usr/bin/env python3
"""npyguard's Python package against numpy, side by side in one run.

For a 1 KiB and a 100 MB .npy file held in memory (bytes, as an upload
arrives), times:
  np.load(BytesIO)                   numpy alone (the reference)
  npyguard.check(bytes)              validation alone
  check + np.load(BytesIO)           a guard in front of numpy
  npyguard.load(bytes)               npyguard's own array (a read-only view, no copy)
  npyguard.load(bytes) + copy()      the same, made writable like np.load's
and the same for a 3-member .npz (np.load(BytesIO)[key] for every key vs
npyguard.load_npz). Reports the median of --repeat runs of a timeit loop
sized to take about 0.2 s, and the overhead of each row over numpy alone.

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_load.py
"""

import argparse
import io
import statistics
import sys
import timeit

import numpy as np

import npyguard


def npy_bytes(array):
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def npz_bytes(arrays, compressed=False):
    out = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(out, **arrays)
    return out.getvalue()


def timed(call, repeat):
    timer = timeit.Timer(call)
    number, elapsed = timer.autorange()
    number = max(1, int(number * 0.2 / max(elapsed, 1e-9)))
    runs = timer.repeat(repeat=repeat, number=number)
    return statistics.median(runs) / number


def npz_numpy(data):
    with np.load(io.BytesIO(data)) as archive:
        return {key: archive[key] for key in archive.files}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--big-mb", type=int, default=100)
    args = parser.parse_args()

    small = npy_bytes(np.arange(224, dtype="<f4").reshape(14, 16))  # 1,024 bytes with the header
    big = npy_bytes(np.ones(args.big_mb * 1_000_000 // 8, dtype="<f8"))
    archive = npz_bytes({"w": np.ones((16, 16), "<f4"), "b": np.zeros(16, "<f4"), "step": np.array(7)})
    cases = [("1 KiB .npy", small), (f"{args.big_mb} MB .npy", big)]
    print(f"numpy {np.__version__}, npyguard {npyguard.__version__}, Python {sys.version.split()[0]}")
    print(f"{'input':<14} {'call':<34} {'time':>12} {'vs np.load':>11}")
    for name, data in cases:
        assert np.array_equal(npyguard.load(data), np.load(io.BytesIO(data)))
        reference = timed(lambda: np.load(io.BytesIO(data)), args.repeat)
        rows = [
            ("np.load(BytesIO)", reference),
            ("npyguard.check(bytes)", timed(lambda: npyguard.check(data), args.repeat)),
            ("check + np.load(BytesIO)",
             timed(lambda: (npyguard.check(data), np.load(io.BytesIO(data))), args.repeat)),
            ("npyguard.load(bytes)", timed(lambda: npyguard.load(data), args.repeat)),
            ("npyguard.load(bytes).copy()", timed(lambda: npyguard.load(data).copy(), args.repeat)),
        ]
        for call, seconds in rows:
            print(f"{name:<14} {call:<34} {seconds * 1e6:>10.2f} us {seconds / reference:>10.3f}x")
    reference = timed(lambda: npz_numpy(archive), args.repeat)
    rows = [
        ("np.load(BytesIO), every key", reference),
        ("npyguard.check_npz(bytes)", timed(lambda: npyguard.check_npz(archive), args.repeat)),
        ("npyguard.load_npz(bytes)", timed(lambda: npyguard.load_npz(archive), args.repeat)),
    ]
    for call, seconds in rows:
        print(f"{'3-member .npz':<14} {call:<34} {seconds * 1e6:>10.2f} us {seconds / reference:>10.3f}x")


if __name__ == "__main__":
    main()
