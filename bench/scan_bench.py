#!/usr/bin/python3
"""Files per second of npyguard.scan in this process's threads, on a 2-worker
Dask LocalCluster, and of `npyguard check -r -j 2 --json`, on one tree of
10,000 files (the scan tests' tree: valid and hostile .npy, .npz and .ra), in
one run; and the bytes the scan read per file against the tree's size.

    V/bin/python bench/scan_bench.py --tool build/release/npyguard   (V: the README's venv, a Release build)

Each timing is the median of --repeat runs on a warm page cache. The
in-process scan is timed both to a DataFrame (npyguard.scan) and as the
command does it, rows streamed (scan_rows); the cluster's start is timed apart.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python" / "tests"))

import npyguard  # noqa: E402
from npyguard import _scan  # noqa: E402
from scan_tree import build  # noqa: E402


def median_time(call, repeat):
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="the npyguard command")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--no-cluster", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        for script, out in (("npz/make_archives.py", "npz"), ("ra/make_files.py", "ra")):
            subprocess.run([sys.executable, str(ROOT / "tests" / script), "--out", str(scratch / out)], check=True,
                           stdout=subprocess.DEVNULL)
        tree = scratch / "tree"
        tree.mkdir()
        build(tree, args.files, ROOT, scratch / "npz", scratch / "ra")
        total_size = sum(p.stat().st_size for p in tree.rglob("*") if p.is_file() and not p.is_symlink())

        command = [args.tool, "check", "-r", "-j", "2", "--json", str(tree)]
        reference = subprocess.run(command, capture_output=True)
        count = len(reference.stdout.splitlines())

        def run_command():
            subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def stream_rows():
            for _batch in _scan.scan_rows(str(tree), workers=2):
                pass

        frame = npyguard.scan(str(tree), workers=2)  # warm: imports, page cache
        assert len(frame) == count, (len(frame), count)
        results = {}
        results["npyguard check -r -j 2 --json"] = median_time(run_command, args.repeat)
        results["npyguard.scan(tree, workers=2) to a DataFrame"] = median_time(
            lambda: npyguard.scan(str(tree), workers=2), args.repeat)
        results["scan_rows(tree, workers=2), rows streamed"] = median_time(stream_rows, args.repeat)
        if not args.no_cluster:
            from distributed import Client, LocalCluster

            start = time.perf_counter()
            with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                              silence_logs=50) as cluster, Client(cluster) as client:
                started = time.perf_counter() - start
                npyguard.scan(str(tree), client=client)  # warm the workers' imports
                results["npyguard.scan(tree, client=2-worker LocalCluster)"] = median_time(
                    lambda: npyguard.scan(str(tree), client=client), args.repeat)
            print(f"LocalCluster(n_workers=2) start: {started:.2f} s (not in the timings)")

        print(f"tree: {count} files, {total_size:,} bytes; median of {args.repeat} runs")
        print(f"| way | seconds | files/s | × command |")
        print(f"|---|---|---|---|")
        base = results["npyguard check -r -j 2 --json"][0]
        for name, (seconds, _) in results.items():
            print(f"| {name} | {seconds:.3f} | {count / seconds:,.0f} | {seconds / base:.2f} |")
        read = int(frame["bytes_read"].sum())
        reads = int(frame["reads"].sum())
        print(f"bytes read: {read:,} of {total_size:,} ({read / total_size:.1%}); {read / count:.0f} bytes and "
              f"{reads / count:.2f} reads per file")
        for fmt in ("npy", "npz", "ra"):
            part = frame[frame["format"] == fmt]
            print(f"  {fmt}: {len(part)} files, {int(part['bytes_read'].sum()) / max(len(part), 1):.0f} bytes "
                  f"and {int(part['reads'].sum()) / max(len(part), 1):.2f} reads per file")
        print(json.dumps({name: times for name, (_, times) in results.items()}))


if __name__ == "__main__":
    main()
