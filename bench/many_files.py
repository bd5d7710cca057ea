#!/usr/bin/python3
"""Times `npyguard check` over many small .npy files against a bare I/O floor.

The floor is bench/io_floor.c: per file open, fstat, pread of 4 KiB at 0 and
close, nothing else. Issue 6 sets the target: `npyguard check` over 5,000
small files costs at most 1.5 times the floor, measured in the same run.

The script writes the files itself (by hand, numpy is not needed): a mix of
dtypes (scalars of both byte orders, bytes/unicode strings, structured with
sub-arrays), shapes of 0 to 3 dimensions, C and Fortran order, format
versions 1.0 / 2.0 / 3.0, file sizes from about 100 B to 8 KiB, and a few
percent of invalid files (truncated or trailing data, bad magic, syntax
errors, unknown keys, bad type strings). It builds nothing and drops nothing
from the page cache: every command runs once to warm up, then the floor and
the tool variants alternate --runs times, each timed with
time.perf_counter() around one subprocess run that gets all the paths on its
command line (as xargs would). Standard output of the tool goes to
/dev/null. `npyguard --version` and io_floor without arguments are timed the
same way, so the report separates process start-up from per-file cost.

Flags that `npyguard check --help` advertises are measured too: -q/--quiet
(print only invalid files), -j/--jobs (-j 1 against the default) and
-r/--recursive (the directory walk, against the same floor).

Usage:
  /usr/bin/python3 bench/many_files.py --tool build/release/npyguard \\
      --floor build/release/bench/io_floor [--files 5000] [--runs 9]
"""

import argparse
import json
import os
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

MAGIC = b"\x93NUMPY"
TARGET_RATIO = 1.5

# (descr repr, itemsize); weights below favour the common numeric types.
SCALAR_TYPES = [
    ("'<f8'", 8), ("'<f4'", 4), ("'<i8'", 8), ("'<i4'", 4), ("'<i2'", 2), ("'|u1'", 1),
    ("'|i1'", 1), ("'|b1'", 1), ("'<u2'", 2), ("'<u4'", 4), ("'<u8'", 8), ("'<c8'", 8),
    ("'<c16'", 16), ("'>f8'", 8), ("'>i4'", 4), ("'<f2'", 2), ("'|S7'", 7), ("'<U3'", 12),
    ("'<M8[ms]'", 8), ("'<m8[s]'", 8), ("'|V4'", 4),
]
SCALAR_WEIGHTS = [20, 20, 10, 10, 4, 8, 2, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1]
STRUCT_TYPES = [
    ("[('x', '<f4'), ('y', '<f4')]", 8),
    ("[('id', '<u4'), ('pos', '<f8', (3,)), ('label', '|S8')]", 36),
    ("[('r', '|u1'), ('g', '|u1'), ('b', '|u1'), ('a', '|u1')]", 4),
    ("[('t', '<M8[us]'), ('value', '<f8'), ('flag', '|b1')]", 17),
    ("[('a', [('b', '<i2'), ('c', '<f4')]), ('d', '<f8', (2, 2))]", 38),
]
# Format 3.0 exists for non-ASCII (UTF-8) field names.
UTF8_STRUCT_TYPE = ("[('t\u00e9mp\u00e9rature', '<f4'), ('\u03c9', '<f8')]", 12)


def shape_repr(shape):
    if len(shape) == 1:
        return "(%d,)" % shape[0]
    return "(" + ", ".join(str(d) for d in shape) + ")"


def header_dict(descr, fortran_order, shape):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran_order else "False", shape_repr(shape))


def npy_bytes(dict_text, version=(1, 0), data=b""):
    """The preamble and the dict padded with spaces and '\\n' so that the data
    starts at a multiple of 64, as numpy writes it."""
    encoded = dict_text.encode("utf-8" if version[0] == 3 else "latin1")
    length_size = 2 if version[0] == 1 else 4
    preamble = len(MAGIC) + 2 + length_size
    total = preamble + len(encoded) + 1
    padded = encoded + b" " * ((64 - total % 64) % 64) + b"\n"
    length = struct.pack("<H" if length_size == 2 else "<I", len(padded))
    return MAGIC + bytes(version) + length + padded + data


def random_shape(rng, count):
    """A shape of 0 to 3 dimensions with about `count` items."""
    ndim = rng.choices([0, 1, 2, 3], weights=[5, 45, 35, 15])[0]
    if ndim == 0 or count <= 1:
        return () if ndim == 0 else (rng.choice([0, 1]),) * ndim
    if ndim == 1:
        return (count,)
    first = rng.randint(1, max(1, int(count ** 0.5)))
    if ndim == 2:
        return (first, count // first)
    rest = count // first
    second = rng.randint(1, max(1, int(rest ** 0.5)))
    return (first, second, rest // second)


def product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def valid_file(rng):
    """Bytes of one valid .npy file of roughly 100 B to 8 KiB."""
    version = (1, 0)
    roll = rng.random()
    if roll < 0.02:
        (descr, itemsize), version = UTF8_STRUCT_TYPE, (3, 0)
    elif roll < 0.17:
        descr, itemsize = rng.choice(STRUCT_TYPES)
    else:
        descr, itemsize = rng.choices(SCALAR_TYPES, weights=SCALAR_WEIGHTS)[0]
    if version == (1, 0) and rng.random() < 0.02:
        version = (2, 0)
    size = int(round(2 ** rng.uniform(6.6, 13.0)))  # 100 B .. 8 KiB, log-uniform
    count = max(0, (size - 128) // itemsize)
    shape = random_shape(rng, count)
    fortran = len(shape) >= 2 and rng.random() < 0.1
    data = bytes(product(shape) * itemsize)
    return npy_bytes(header_dict(descr, fortran, shape), version, data)


def invalid_file(rng, kind):
    """Bytes of one invalid file of the given kind."""
    shape = (rng.randint(10, 900),)
    data = bytes(shape[0] * 4)
    good = header_dict("'<f4'", False, shape)
    if kind == "truncated_data":
        return npy_bytes(good, data=data)[:-rng.randint(1, 4)]
    if kind == "trailing_data":
        return npy_bytes(good, data=data) + b"PK\x05\x06" + bytes(18)
    if kind == "bad_magic":
        return b"\x93NUMPZ" + npy_bytes(good, data=data)[6:]
    if kind == "syntax_error":
        return npy_bytes(good.replace(", }", ", "), data=data)
    if kind == "unknown_key":
        return npy_bytes(good.replace("}", "'extra': 1, }"), data=data)
    if kind == "bad_descr":
        return npy_bytes(header_dict("'<f5'", False, shape), data=data)
    if kind == "truncated_header":
        return npy_bytes(good, data=data)[:40]
    raise ValueError(kind)


INVALID_KINDS = ["truncated_data", "trailing_data", "bad_magic", "syntax_error", "unknown_key", "bad_descr",
                 "truncated_header"]


def write_files(root, count, subdirs, invalid_fraction, seed):
    """Writes `count` files under root/dNN/; returns (relative paths, set of invalid ones, sizes)."""
    rng = random.Random(seed)
    invalid_count = int(round(count * invalid_fraction))
    invalid_indexes = set(rng.sample(range(count), invalid_count))
    paths, invalid, sizes = [], set(), []
    for d in range(subdirs):
        os.makedirs(os.path.join(root, "d%02d" % d), exist_ok=True)
    for i in range(count):
        path = os.path.join("d%02d" % (i % subdirs), "a%05d.npy" % i)
        if i in invalid_indexes:
            content = invalid_file(rng, INVALID_KINDS[len(invalid) % len(INVALID_KINDS)])
            invalid.add(path)
        else:
            content = valid_file(rng)
        with open(os.path.join(root, path), "wb") as out:
            out.write(content)
        paths.append(path)
        sizes.append(len(content))
    return paths, invalid, sizes


def check_help(tool):
    """Which of -q, -j, -r `npyguard check` offers, spelled as it spells them."""
    text = subprocess.run([tool, "check", "--help"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          check=False).stdout.decode("utf-8", "replace")
    found = {}
    for name, short, long in (("quiet", "-q", "--quiet"), ("jobs", "-j", "--jobs"), ("recursive", "-r", "--recursive")):
        for spelling in (short, long):
            if re.search(r"(^|[\s,])" + re.escape(spelling) + r"($|[\s,=])", text, re.MULTILINE):
                found[name] = spelling
                break
    return found


def argv_bytes(argv):
    """What execve needs for argv and the environment (pointers included)."""
    strings = sum(len(os.fsencode(a)) + 1 for a in argv)
    env = sum(len(os.fsencode(k)) + len(os.fsencode(v)) + 2 for k, v in os.environ.items())
    return strings + env + 8 * (len(argv) + len(os.environ) + 2)


def run_once(argv, cwd, expect):
    start = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in expect:
        sys.exit("many_files.py: %s exited with %d (expected %s): %s" % (
            " ".join(argv[:4]) + (" ..." if len(argv) > 4 else ""), done.returncode, sorted(expect),
            done.stderr.decode("utf-8", "replace")[:500]))
    return elapsed


def named_files(output, paths):
    """{path: first line about it} for the lines of `output` that start with a
    known path and ':' (excerpt, summary and progress lines are skipped)."""
    known = set(paths)
    named = {}
    for line in output.decode("utf-8", "replace").splitlines():
        cut = line.find(": ")
        head = line[:cut] if cut >= 0 else line
        for candidate in (head, head.rsplit(":", 1)[0]):  # FILE: ... or FILE:OFFSET: ...
            if candidate in known:
                named.setdefault(candidate, line)
                break
    return named


def verify_tool(tool, paths, invalid, cwd, quiet_flag):
    """Untimed runs whose output must name exactly the invalid files."""
    problems = []
    done = subprocess.run([tool, "check"] + paths, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          check=False)
    named = named_files(done.stdout, paths)
    if len(named) != len(paths):
        problems.append("`check` named %d of the %d files" % (len(named), len(paths)))
    reported_invalid = {path for path, line in named.items() if not line.startswith(path + ": ok,")}
    if reported_invalid != invalid:
        problems.append("invalid files: expected %d, `check` reports %d (%d differ)" % (
            len(invalid), len(reported_invalid), len(reported_invalid ^ invalid)))
        for path in sorted(reported_invalid ^ invalid)[:5]:
            problems.append("  " + path + ": " + named.get(path, "(not named)"))
    if quiet_flag:
        quiet = subprocess.run([tool, "check", quiet_flag] + paths, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, check=False)
        quiet_named = set(named_files(quiet.stdout, paths))
        if quiet_named != invalid:
            problems.append("`check %s` named %d files, %d of them not among the %d invalid ones" % (
                quiet_flag, len(quiet_named), len(quiet_named - invalid), len(invalid)))
    return problems


def filesystem_of(path):
    best, kind = "", "?"
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                fields = line.split()
                if len(fields) >= 3 and path.startswith(fields[1]) and len(fields[1]) > len(best):
                    best, kind = fields[1], fields[2]
    except OSError:
        pass
    return kind


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="the npyguard binary")
    parser.add_argument("--floor", required=True, help="the compiled bench/io_floor")
    parser.add_argument("--files", type=int, default=5000, help="number of files (default 5000)")
    parser.add_argument("--runs", type=int, default=9, help="timed runs of each command (default 9)")
    parser.add_argument("--subdirs", type=int, default=10, help="spread the files over this many directories")
    parser.add_argument("--invalid-fraction", type=float, default=0.03, help="share of invalid files (default 0.03)")
    parser.add_argument("--seed", type=int, default=6, help="seed of the file generator")
    parser.add_argument("--workdir", default=None, help="where to create the temporary directory")
    parser.add_argument("--keep", action="store_true", help="keep the files (prints where they are)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw timings as JSON to FILE")
    args = parser.parse_args()

    tool = os.path.abspath(args.tool)
    floor = os.path.abspath(args.floor)
    for binary in (tool, floor):
        if not os.access(binary, os.X_OK):
            sys.exit("many_files.py: %s is not an executable" % binary)

    root = tempfile.mkdtemp(prefix="npyguard-many-", dir=args.workdir)
    try:
        paths, invalid, sizes = write_files(root, args.files, args.subdirs, args.invalid_fraction, args.seed)
        flags = check_help(tool)
        limit = os.sysconf("SC_ARG_MAX")
        needed = argv_bytes([tool, "check", "-q", "-j", "1"] + paths)
        if needed > limit // 2:
            sys.exit("many_files.py: %d paths need %d bytes of argv, ARG_MAX is %d" % (len(paths), needed, limit))

        problems = verify_tool(tool, paths, invalid, root, flags.get("quiet"))

        # (label, argv, accepted exit statuses); the floor comes first.
        expect_tool = {1} if invalid else {0}
        commands = [
            ("io_floor (open, fstat, pread 4 KiB, close)", [floor] + paths, {0}),
            ("npyguard check > /dev/null", [tool, "check"] + paths, expect_tool),
        ]
        if "quiet" in flags:
            commands.append(("npyguard check %s" % flags["quiet"], [tool, "check", flags["quiet"]] + paths, expect_tool))
        if "jobs" in flags:
            commands.append(("npyguard check %s 1 > /dev/null" % flags["jobs"],
                             [tool, "check", flags["jobs"], "1"] + paths, expect_tool))
            if "quiet" in flags:
                commands.append(("npyguard check %s %s 1" % (flags["quiet"], flags["jobs"]),
                                 [tool, "check", flags["quiet"], flags["jobs"], "1"] + paths, expect_tool))
        if "recursive" in flags:
            dirs = sorted({os.path.dirname(p) for p in paths})
            quiet = [flags["quiet"]] if "quiet" in flags else []
            commands.append(("npyguard check %s %s DIRS" % (" ".join(quiet), flags["recursive"]),
                             [tool, "check"] + quiet + [flags["recursive"]] + dirs, expect_tool))
        startups = [
            ("start-up: io_floor (no files)", [floor], {0}),
            ("start-up: npyguard --version", [tool, "--version"], {0}),
        ]

        everything = commands + startups
        for _, argv, expect in everything:  # warm the page cache, the dentry cache, the binaries
            run_once(argv, root, expect)
        times = {label: [] for label, _, _ in everything}
        for _ in range(args.runs):
            for label, argv, expect in everything:
                times[label].append(run_once(argv, root, expect))
    finally:
        if args.keep:
            print("files kept in", root)
        else:
            shutil.rmtree(root, ignore_errors=True)

    n = len(paths)
    floor_label = commands[0][0]
    startup_of = lambda label: "start-up: io_floor (no files)" if label == floor_label else "start-up: npyguard --version"
    floor_min, floor_med = min(times[floor_label]), statistics.median(times[floor_label])

    print("npyguard many-files benchmark: %d files (%d invalid), %d..%d bytes (median %d), %d directories" % (
        n, len(invalid), min(sizes), max(sizes), statistics.median(sizes), args.subdirs))
    print("files on %s (%s); %d timed runs per command after one warm-up, alternating; load average %.2f %.2f %.2f;"
          " %d CPUs" % (os.path.dirname(root), filesystem_of(root), args.runs, *os.getloadavg(), os.cpu_count() or 0))
    print("argv: %d bytes of %d (ARG_MAX); check flags found: %s" % (
        needed, limit, ", ".join("%s=%s" % kv for kv in sorted(flags.items())) or "none of -q -j -r"))
    for problem in problems:
        print("WARNING:", problem)
    print()
    header = "%-46s %9s %9s %10s %10s %7s %7s" % ("command", "min ms", "median ms", "us/file", "us/file",
                                                  "ratio", "ratio")
    print(header)
    print("%-46s %9s %9s %10s %10s %7s %7s" % ("", "", "", "(median)", "-start-up", "min", "median"))
    print("-" * len(header))
    rows = []
    for label, _, _ in commands:
        t = times[label]
        t_min, t_med = min(t), statistics.median(t)
        startup = statistics.median(times[startup_of(label)])
        row = {
            "command": label, "min_s": t_min, "median_s": t_med,
            "us_per_file": t_med / n * 1e6, "us_per_file_after_startup": (t_med - startup) / n * 1e6,
            "ratio_min": t_min / floor_min, "ratio_median": t_med / floor_med, "runs_s": t,
        }
        rows.append(row)
        print("%-46s %9.2f %9.2f %10.2f %10.2f %7.2f %7.2f" % (
            label, t_min * 1e3, t_med * 1e3, row["us_per_file"], row["us_per_file_after_startup"],
            row["ratio_min"], row["ratio_median"]))
    for label, _, _ in startups:
        t = times[label]
        print("%-46s %9.2f %9.2f" % (label, min(t) * 1e3, statistics.median(t) * 1e3))
        rows.append({"command": label, "min_s": min(t), "median_s": statistics.median(t), "runs_s": t})

    floor_startup = statistics.median(times["start-up: io_floor (no files)"])
    floor_per_file = (floor_med - floor_startup) / n
    print()
    print("ratio = time / io_floor time in the same run (min/min and median/median); target <= %.1f" % TARGET_RATIO)
    for row in rows[1:len(commands)]:
        per_file_ratio = row["us_per_file_after_startup"] / (floor_per_file * 1e6) if floor_per_file > 0 else 0
        verdict = "meets" if row["ratio_median"] <= TARGET_RATIO else "MISSES"
        print("  %-44s %s the target (median ratio %.2f; per-file cost without start-up %.2fx the floor's)" % (
            row["command"], verdict, row["ratio_median"], per_file_ratio))

    if args.json:
        with open(args.json, "w") as out:
            json.dump({"files": n, "invalid": len(invalid), "runs": args.runs, "flags": flags, "problems": problems,
                       "results": rows}, out, indent=1)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
