#!/usr/bin/python3
"""npyguard against numpy on .npz archives, in one run (bench/README.md).

Builds, with numpy, a 1,000-member archive (np.savez and np.savez_compressed
of small arrays) and 100 MB archives (stored and deflated), then times on the
same files:
  - npyguard's headers-only check and --verify (build/release/bench/npyguard_npz_bench);
  - numpy opening the archive and reading every member's header
    (np.load, then numpy.lib.format.read_magic + _read_array_header per key);
  - for the 100 MB archives, `unzip -t` and zipfile's testzip() (full CRC checks).

    /usr/bin/python3 bench/npz_compare.py [--bench build/release/bench/npyguard_npz_bench]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
from numpy.lib import format as npformat


def best(function, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def numpy_headers(path):
    with np.load(path) as archive:
        for key in archive.files:
            with archive.zip.open(key + ".npy") as member:
                version = npformat.read_magic(member)
                npformat._read_array_header(member, version)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build/release/bench/npyguard_npz_bench")
    parser.add_argument("--big-mb", type=int, default=100)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="npz_bench_")
    try:
        rng = np.random.default_rng(1)
        small = {"a%d" % i: rng.standard_normal(8) for i in range(1000)}
        files = {}
        files["1000 members, savez"] = os.path.join(scratch, "many.npz")
        np.savez(files["1000 members, savez"], **small)
        files["1000 members, savez_compressed"] = os.path.join(scratch, "many_c.npz")
        np.savez_compressed(files["1000 members, savez_compressed"], **small)
        big = rng.integers(0, 16, size=args.big_mb * 1024 * 1024, dtype=np.uint8)  # compressible, not trivially
        files["%d MB, savez" % args.big_mb] = os.path.join(scratch, "big.npz")
        np.savez(files["%d MB, savez" % args.big_mb], x=big)
        files["%d MB, savez_compressed" % args.big_mb] = os.path.join(scratch, "big_c.npz")
        np.savez_compressed(files["%d MB, savez_compressed" % args.big_mb], x=big)

        env = dict(os.environ, NPYGUARD_BENCH_NPZ=":".join(files.values()))
        run = subprocess.run([args.bench, "--benchmark_format=json", "--benchmark_min_time=0.5"],
                             env=env, capture_output=True, text=True, check=True)
        results = {b["name"]: b for b in json.loads(run.stdout)["benchmarks"]}

        def ours(kind, path):
            b = results["BM_npz_%s/%s" % (kind, path)]
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
            return b["real_time"] * scale

        print("%-34s %14s %14s %9s" % ("archive", "npyguard", "numpy headers", "speed-up"))
        for label, path in files.items():
            if "1000" not in label:
                continue
            mine = ours("check", path)
            theirs = best(lambda: numpy_headers(path), 5)
            print("%-34s %11.3f ms %11.3f ms %8.0fx" % (label, mine * 1e3, theirs * 1e3, theirs / mine))
        print()
        print("%-34s %14s %14s %14s" % ("archive (full check)", "npyguard -v", "unzip -t", "testzip()"))
        unzip = shutil.which("unzip")
        for label, path in files.items():
            if "MB" not in label:
                continue
            mine = ours("verify", path)
            unzip_time = best(lambda: subprocess.run([unzip, "-tqq", path], check=True), 3) if unzip else float("nan")

            def testzip():
                with zipfile.ZipFile(path) as z:
                    assert z.testzip() is None
            print("%-34s %11.3f s  %11.3f s  %11.3f s" % (label, mine, unzip_time, best(testzip, 3)))
    finally:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
