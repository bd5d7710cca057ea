#!/usr/bin/python3
"""Times `npyguard check -r -q -j N` over a generated tree against the bare
I/O floor at the same parallelism, for N = 1, 2, ..., nproc (issue 33).

The tree: --files small .npy files (many_files.py's generator: a mix of
dtypes, shapes and versions, 100 B to 8 KiB, 1% invalid), 1,000 to a
directory, ten directories to a parent (root/gNN/dNNN/). --million makes it
1,000,000 files (about 5 GB of disk with 4 KiB blocks, some minutes to
write).

The floor at N is bench/io_floor (open, fstat, pread 4 KiB, close per file,
no parsing) in N processes at once, each given a contiguous Nth of the
sorted file list on standard input; the list is made before the timing, so
the floor does not pay for the walk that the tool does. Each command runs
once to warm the caches, then the commands alternate --runs times; the best
time is reported, with the peak resident set and the CPU time, user and
system, of that run (from /usr/bin/time, which every command, the floor's
included, runs under; for the floor, summed over its N processes). On a
loaded machine the CPU time per file is the steadier figure. --before adds a second build of the
tool (the one before a change) to the same table, measured in the same run.

Usage:
  /usr/bin/python3 bench/walk_scaling.py --tool build/h-walk-rel/npyguard \\
      --floor build/h-walk-rel/bench/io_floor [--before /tmp/npyguard-before] \\
      [--files 100000 | --million] [--jobs 1,2] [--runs 3]
"""

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import many_files  # noqa: E402  (the file generator)

PER_DIRECTORY = 1000
PER_GROUP = 10


def write_tree(root, count, seed):
    """Writes the tree; returns the sorted paths and the number of invalid files."""
    rng = random.Random(seed)
    invalid = 0
    paths = []
    for i in range(count):
        leaf = i // PER_DIRECTORY
        directory = os.path.join(root, "g%03d" % (leaf // PER_GROUP), "d%04d" % leaf)
        if i % PER_DIRECTORY == 0:
            os.makedirs(directory, exist_ok=True)
        if i % 100 == 37:  # 1% invalid
            content = many_files.invalid_file(rng, many_files.INVALID_KINDS[invalid % len(many_files.INVALID_KINDS)])
            invalid += 1
        else:
            content = many_files.valid_file(rng)
        path = os.path.join(directory, "f%07d.npy" % i)
        with open(path, "wb") as out:
            out.write(content)
        paths.append(path)
    paths.sort()
    return paths, invalid


def timed(argv, stdin):
    """Starts argv under /usr/bin/time, which reports the peak RSS of the
    command itself (a child forked from this Python would count Python's
    pages in its ru_maxrss)."""
    report = tempfile.NamedTemporaryFile(prefix="npyguard-walk-rss-", delete=False)
    report.close()
    child = subprocess.Popen(["/usr/bin/time", "-f", "%M %U %S", "-o", report.name] + argv, stdin=stdin,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return child, report.name


def finished(child, report):
    """(exit status, peak RSS KiB, CPU seconds) of a timed() command."""
    status = child.wait()
    with open(report) as text:
        fields = text.read().split()[-3:]
    os.unlink(report)
    return status, int(fields[0]), float(fields[1]) + float(fields[2])


def run_tool(tool, jobs, root):
    """(seconds, peak RSS KiB, CPU seconds) of one `check -r -q -j N`."""
    start = time.perf_counter()
    status, rss, cpu = finished(*timed([tool, "check", "-r", "-q", "-j", str(jobs), root], subprocess.DEVNULL))
    elapsed = time.perf_counter() - start
    if status != 1:  # 1: some file invalid, as generated
        sys.exit("walk_scaling.py: %s -j %d exited with %d (expected 1)" % (tool, jobs, status))
    return elapsed, rss, cpu


def run_floor(floor, lists):
    """(seconds, summed peak RSS KiB, CPU seconds) of io_floor in len(lists) processes."""
    inputs = [open(path, "rb") for path in lists]
    start = time.perf_counter()
    children = [timed([floor, "-"], handle) for handle in inputs]
    results = [finished(*child) for child in children]
    elapsed = time.perf_counter() - start
    for handle in inputs:
        handle.close()
    if any(result[0] != 0 for result in results):
        sys.exit("walk_scaling.py: io_floor failed")
    return elapsed, sum(result[1] for result in results), sum(result[2] for result in results)


def same_verdicts(tools, root):
    """The tools name the same invalid files, in the same order (the words
    of the messages may differ between builds)."""
    named = []
    for tool in tools:
        out = subprocess.run([tool, "check", "-r", "-q", "-j", "2", root], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=False).stdout
        named.append([line[:line.index(b".npy:") + 4] for line in out.splitlines()])
    return all(names == named[0] for names in named) and len(named[0]) > 0


def print_table(n, best, labels, jobs_list, cpus, runs):
    """The markdown table of the best runs."""
    print("%d files, %d to a directory; %d CPUs; best of %d runs; load average at the end %.2f %.2f %.2f" % (
        n, PER_DIRECTORY, cpus, runs, *os.getloadavg()))
    header = "| -j | floor files/s |" + "".join(" %s files/s | %s/floor |" % (l, l) for l in labels)
    header += " floor RSS |" + "".join(" %s RSS |" % l for l in labels)
    header += " floor CPU us/file |" + "".join(" %s CPU us/file |" % l for l in labels)
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    for jobs in jobs_list:
        floor_rate = n / best[("floor", jobs)][0]
        row = "| %d | %s |" % (jobs, format(int(floor_rate), ","))
        for label in labels:
            rate = n / best[(label, jobs)][0]
            row += " %s | %.2f |" % (format(int(rate), ","), rate / floor_rate)
        row += " %.1f MiB |" % (best[("floor", jobs)][1] / 1024)
        for label in labels:
            row += " %.1f MiB |" % (best[(label, jobs)][1] / 1024)
        for label in ["floor"] + labels:
            row += " %.2f |" % (best[(label, jobs)][2] / n * 1e6)
        print(row)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="the npyguard binary")
    parser.add_argument("--floor", required=True, help="the compiled bench/io_floor")
    parser.add_argument("--before", help="another npyguard binary to measure beside --tool")
    parser.add_argument("--files", type=int, default=100000, help="number of files (default 100,000)")
    parser.add_argument("--million", action="store_true", help="1,000,000 files")
    parser.add_argument("--jobs", help="comma-separated -j values (default 1, 2, 4, ... up to nproc, and nproc)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs of each command; the best is kept")
    parser.add_argument("--workdir", default=None, help="where to create the tree")
    parser.add_argument("--seed", type=int, default=33)
    args = parser.parse_args()
    count = 1000000 if args.million else args.files
    cpus = os.cpu_count() or 1
    if args.jobs:
        jobs_list = [int(j) for j in args.jobs.split(",")]
    else:
        jobs_list = sorted({min(1 << k, cpus) for k in range(cpus.bit_length() + 1)})
    tools = [("after", os.path.abspath(args.tool))]
    if args.before:
        tools.insert(0, ("before", os.path.abspath(args.before)))

    root = tempfile.mkdtemp(prefix="npyguard-walk-", dir=args.workdir)
    try:
        started = time.perf_counter()
        paths, invalid = write_tree(os.path.join(root, "tree"), count, args.seed)
        print("wrote %d files (%d invalid) in %.0f s" % (len(paths), invalid, time.perf_counter() - started))
        tree = os.path.join(root, "tree")
        if len(tools) > 1 and not same_verdicts([tool for _, tool in tools], tree):
            sys.exit("walk_scaling.py: the tools disagree on the tree")
        lists = {}
        for jobs in jobs_list:
            lists[jobs] = []
            share = (len(paths) + jobs - 1) // jobs
            for part in range(jobs):
                path = os.path.join(root, "list-%d-%d" % (jobs, part))
                with open(path, "wb") as out:
                    out.write(b"\0".join(os.fsencode(p) for p in paths[part * share:(part + 1) * share]))
                lists[jobs].append(path)
        best = {}
        for round_number in range(args.runs + 1):  # round 0 warms the caches
            for jobs in jobs_list:
                measured = [("floor", run_floor(args.floor, lists[jobs]))]
                measured += [(label, run_tool(tool, jobs, tree)) for label, tool in tools]
                if round_number == 0:
                    continue
                for label, result in measured:
                    key = (label, jobs)
                    if key not in best or result[0] < best[key][0]:
                        best[key] = result
        # Printed before the tree goes: deleting a million files can take minutes.
        print_table(len(paths), best, [label for label, _ in tools], jobs_list, cpus, args.runs)
    finally:
        shutil.rmtree(root, ignore_errors=True)

if __name__ == "__main__":
    main()
