#!/usr/bin/python3
"""npyguard against numpy on .npz archives, in one run (bench/README.md).

Builds, with numpy, a 1,000-member archive (np.savez and np.savez_compressed
of small arrays) and 100 MB archives (stored and deflated), then times on the
same files:
  - npyguard's headers-only check and --verify (build/release/bench/npyguard_npz_bench);
  - numpy opening the archive and reading every member's header
    (np.load, then numpy.lib.format.read_magic + _read_array_header per key);
  - for the 100 MB archives, `unzip -t` and zipfile's testzip() (full CRC checks);
  - the peak memory of `npyguard check --verify` on a 1 GiB member (stored
    and deflated), with the time of unzip -t and testzip() on the same file.

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


def peak_rss_kib(command):
    """Exit status and peak resident set size of one run of ``command``, by
    GNU time (Debian `time`). Not from Python's RUSAGE_CHILDREN: a child
    forked from Python counts the interpreter's pages it held before exec."""
    out = subprocess.run(["/usr/bin/time", "-f", "%x %M"] + command, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, check=False)
    status, kib = out.stderr.strip().splitlines()[-1].split()
    return int(status), int(kib)


def peak_memory(args, scratch):
    """npyguard check --verify on one member of --peak-gb GiB, stored and
    deflated (zeros, written in chunks with zipfile: numpy's savez would
    hold the array in memory), against unzip -t and testzip()."""
    size = args.peak_gb << 30
    fields = npformat.header_data_from_array_1_0(np.zeros(0, np.uint8)) | {"shape": (size,)}
    text = "{" + "".join("'%s': %r, " % kv for kv in sorted(fields.items())) + "}"
    header = npformat._wrap_header(text, (1, 0))  # numpy's own padding
    chunk = bytes(1 << 24)
    print("%-34s %12s %12s %12s %12s" % ("one %d GiB member, --verify" % args.peak_gb, "npyguard", "peak RSS",
                                          "unzip -t", "testzip()"))
    for label, method in (("stored", zipfile.ZIP_STORED), ("deflated", zipfile.ZIP_DEFLATED)):
        path = os.path.join(scratch, "peak_%s.npz" % label)
        with zipfile.ZipFile(path, "w", method) as z:
            with z.open("x.npy", "w", force_zip64=True) as member:
                member.write(header)
                for _ in range(size // len(chunk)):
                    member.write(chunk)
        command = [args.tool, "check", "--verify", path]
        start = time.perf_counter()
        status, kib = peak_rss_kib(command)
        elapsed = time.perf_counter() - start
        if status != 0:
            raise SystemExit("npyguard rejected %s" % path)
        unzip = shutil.which("unzip")
        unzip_time = best(lambda: subprocess.run([unzip, "-tqq", path], check=True), 1) if unzip else float("nan")

        def testzip():
            with zipfile.ZipFile(path) as z:
                assert z.testzip() is None
        print("%-34s %10.2f s %9.1f MiB %10.2f s %10.2f s" % (label, elapsed, kib / 1024, unzip_time, best(testzip, 1)))
        os.unlink(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", default="build/release/bench/npyguard_npz_bench")
    parser.add_argument("--big-mb", type=int, default=100)
    parser.add_argument("--tool", default="build/release/npyguard", help="for the peak-memory table")
    parser.add_argument("--peak-gb", type=int, default=1,
                        help="size of the member for the peak-memory table (0: skip it)")
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
        if args.peak_gb:
            print()
            peak_memory(args, scratch)
    finally:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
