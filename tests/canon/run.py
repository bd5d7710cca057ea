#!/usr/bin/python3
"""npyguard canon and check --canonical against numpy 1.24's np.save.

    /usr/bin/python3 tests/canon/run.py --tool build/dev/npyguard

Part 1 ("saved"): arrays over the differential generator's dtype space
(tests/differential/generate.py), filled with random bytes (object arrays
with Python objects), C and Fortran order, written by np.save. For each file
`npyguard canon` must write exactly the same bytes and `npyguard check
--canonical` must accept it (exception: where numpy's np.save is not a fixed
point, np.save(np.load(IN)) != IN, the reference is np.save(np.load(IN)) as
in part 2; see prepare()).

Part 2 ("legacy"): the generator's samples (write_array with explicit
versions, numpy's header writer with free values, hand-spelled headers,
trailing data, object dtypes) plus a few targeted ones, data replaced by
random bytes. For every file that numpy reads and npyguard accepts, `canon IN
OUT` must write exactly np.save(np.load(IN)) (object dtypes: np.save's header
followed by IN's pickle unchanged), and `check --canonical` must reject with
not_canonical at the first byte where IN differs from that header, or accept
when the header bytes are identical.

Both parts: numpy loads every canon output into an array equal to np.load(IN)
(dtype, shape, memory order, data bytes), and `check --canonical` accepts
every canon output.

Exit status 0 all good, 1 some failure (the first ones are printed with a hex
dump around the first differing byte), 2 the tool is missing.
"""

import argparse
import collections
import concurrent.futures
import json
import math
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
DIFFERENTIAL = os.path.join(os.path.dirname(HERE), "differential")
sys.path.insert(0, DIFFERENTIAL)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import numpy as np  # noqa: E402
from numpy.lib import format as npformat  # noqa: E402

import checking  # noqa: E402
import generate  # noqa: E402
import oracle  # noqa: E402

LENIENT = ["--allow-object", "--allow-trailing-data"]


class Case:
    """One input file and everything learnt about it."""

    def __init__(self, part, name, data, how):
        self.part = part            # "saved" or "legacy"
        self.name = name
        self.data = data            # input bytes
        self.how = how
        self.path = None
        self.out_path = None
        self.reading = None         # oracle.HeaderReading of the input
        self.has_object = False
        self.trailing = False
        self.expected = None        # the bytes canon must write
        self.header_end = 0         # data offset of `expected` (end of the canonical header)
        self.pickle_reproduced = None  # object dtypes: np.save(np.load(IN)) repeats IN's pickle
        self.skip = None            # reason the case is not compared
        self.canonical_in = None    # IN's header bytes are np.save's
        self.numpy_unstable = False  # saved part: np.save(np.load(IN)) != IN
        self.failures = []          # (what, detail, got_bytes or None, want_bytes or None)

    def fail(self, what, detail, got=None, want=None):
        self.failures.append((what, detail, got, want))


# ---------------------------------------------------------------------------
# numpy side
# ---------------------------------------------------------------------------

def save_bytes(arr, path):
    """np.save of arr to path (a real file, as users write them); its bytes."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(path, arr, allow_pickle=True)
    with open(path, "rb") as fh:
        return fh.read()


def load(path):
    """np.load of a trusted test file (no header-size limit, pickles allowed).

    Always from a real file: numpy then reads the data with fromfile. From a
    BytesIO numpy copies the data field by field into np.empty memory, so
    the padding bytes of structured dtypes come back as garbage."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.load(path, allow_pickle=True)


def resave(src, dst):
    """The bytes of np.save(dst, np.load(src)) (real files, as a user would)."""
    arr = load(src)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.save(dst, arr, allow_pickle=True)
    with open(dst, "rb") as fh:
        return fh.read()


def random_array(rng, dtype, shape, order="C"):
    """An array of dtype/shape whose memory is random bytes (no objects)."""
    nbytes = math.prod(shape) * dtype.itemsize
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if nbytes:
            return np.ndarray(shape, dtype=dtype, buffer=bytearray(rng.randbytes(nbytes)), order=order)
        return np.zeros(shape, dtype=dtype, order=order)  # allocates nothing


def python_objects(rng, n):
    """n varied Python objects (what an object array holds)."""
    pool = [
        lambda: rng.randint(-2 ** 70, 2 ** 70),
        lambda: rng.random() * 1e300,
        lambda: float("nan"),
        lambda: None,
        lambda: "".join(rng.choice("aΩ日😀\x00'\"\\") for _ in range(rng.randint(0, 6))),
        lambda: rng.randbytes(rng.randint(0, 5)),
        lambda: [rng.randint(0, 9), "x", (1, 2)],
        lambda: {"k": rng.randint(0, 9), 3: None},
        lambda: np.arange(rng.randint(0, 4), dtype="<i2"),
        lambda: complex(rng.random(), -1.5),
        lambda: True,
    ]
    return [rng.choice(pool)() for _ in range(n)]


def object_array(rng, dtype, shape, order="C"):
    """An array of an object-holding dtype: Python objects where the dtype
    holds objects, random bytes elsewhere."""
    arr = np.empty(shape, dtype=dtype, order=order)
    fill_objects(rng, arr)
    return arr


def fill_objects(rng, view):
    """Fill ``view`` (an array or a field view of one) field by field."""
    if view.dtype.names is not None:
        for name in view.dtype.names:
            fill_objects(rng, view[name])  # subarray fields: view has more axes
    elif view.dtype.hasobject:
        for index, obj in zip(np.ndindex(view.shape), python_objects(rng, view.size)):
            view[index] = obj
    elif view.size:
        view[...] = random_array(rng, view.dtype, view.shape)


def same_array(a, b):
    """'' when a and b are equal arrays (dtype, descr, shape, memory order,
    data bytes; objects by repr), else what differs."""
    if a.dtype != b.dtype:
        return "dtype %r != %r" % (a.dtype, b.dtype)
    if repr(npformat.dtype_to_descr(a.dtype)) != repr(npformat.dtype_to_descr(b.dtype)):
        return "descr %r != %r" % (npformat.dtype_to_descr(a.dtype), npformat.dtype_to_descr(b.dtype))
    if a.shape != b.shape:
        return "shape %r != %r" % (a.shape, b.shape)
    if (a.flags.c_contiguous, a.flags.f_contiguous) != (b.flags.c_contiguous, b.flags.f_contiguous):
        return "memory order (C, F) %r != %r" % ((a.flags.c_contiguous, a.flags.f_contiguous),
                                                (b.flags.c_contiguous, b.flags.f_contiguous))
    if a.dtype.hasobject:
        if repr(a.tolist()) != repr(b.tolist()):
            return "objects differ"
        return ""
    if a.tobytes(order="A") != b.tobytes(order="A"):  # bytes: NaNs compare equal
        return "data bytes differ"
    return ""


def first_difference(x, y):
    """Index of the first byte where x and y differ (len of the shorter if
    one is a prefix of the other), or None when equal."""
    n = min(len(x), len(y))
    for start in range(0, n, 4096):
        if x[start:start + 4096] != y[start:start + 4096]:
            for i in range(start, min(start + 4096, n)):
                if x[i] != y[i]:
                    return i
    return None if len(x) == len(y) else n


# ---------------------------------------------------------------------------
# Part 1: np.save over the generator's dtype space
# ---------------------------------------------------------------------------

def saved_arrays(rng, count):
    """Yield (arr, how): np.save inputs, ``count`` of them."""
    made = 0

    def emit(arr, how):
        nonlocal made
        if made < count:
            made += 1
            return [(arr, how)]
        return []

    # Layouts np.save treats specially: F arrays that are also C-contiguous
    # (at most one axis longer than 1, empty) are written fortran_order False;
    # non-contiguous arrays are written in C order.
    f8 = np.dtype("<f8")
    for shape in ((), (1,), (5,), (1, 4), (4, 1), (1, 1, 1), (2, 1, 3), (0, 3), (3, 0), (2, 3), (2, 3, 4)):
        for order in "CF":
            yield from emit(random_array(rng, f8, shape, order), "layout %s order=%s" % (shape, order))
    base = random_array(rng, np.dtype(">i4"), (4, 3, 5))
    yield from emit(base.transpose(1, 0, 2), "non-contiguous transpose")
    yield from emit(base[::2, :, 1:4], "non-contiguous slice")
    yield from emit(base.T, "transposed (F-contiguous view)")
    # Object dtypes (the data is a pickle; numpy writes protocol 3).
    for descr, shape, order in (("|O", (5,), "C"), ("|O", (), "C"), ("|O", (2, 3), "F"), ("|O", (0, 2), "C"),
                                ([("a", "<i4"), ("o", "|O")], (3,), "C"),
                                ([("s", [("deep", "|O", (2,))]), ("t", ">f8")], (2, 2), "F")):
        dtype = npformat.descr_to_dtype(descr)
        yield from emit(object_array(rng, dtype, shape, order), "object %r %s order=%s" % (descr, shape, order))
    # Headers over 64 KiB: version 2.0, and 3.0 with a non-latin-1 name.
    big = generate.many_fields_dtype(rng, 4000)
    yield from emit(random_array(rng, big, (1,)), "4000 fields (version 2.0)")
    big = generate.many_fields_dtype(rng, 3500)
    big.names = ("Ω_first",) + big.names[1:]
    yield from emit(random_array(rng, big, (0,)), "3500 fields, unicode name (version 3.0)")
    # The generator's special structs and every leaf type string (twice).
    for dtype, shape, _, _ in generate.special_cases(rng) + generate.systematic_cases(rng):
        order = "F" if rng.random() < 0.3 else "C"
        yield from emit(random_array(rng, dtype, shape, order), "generator case %s order=%s" % (dtype, order))
    # Random dtypes and shapes.
    while made < count:
        try:
            dtype = generate.random_dtype(rng, depth=rng.choice((1, 2, 3, 4)), unicode_ok=rng.random() < 0.3)
        except (ValueError, TypeError):
            continue
        shape = generate.random_shape(rng, dtype.itemsize)
        order = "F" if rng.random() < 0.3 else "C"
        try:
            arr = random_array(rng, dtype, shape, order)
        except (ValueError, TypeError, MemoryError):
            continue
        yield from emit(arr, "random %s order=%s" % (shape, order))


def saved_cases(rng, count, workdir):
    cases = []
    for i, (arr, how) in enumerate(saved_arrays(rng, count)):
        name = "s%05d.npy" % i
        cases.append(Case("saved", name, save_bytes(arr, os.path.join(workdir, name)), "np.save " + how))
    return cases


# ---------------------------------------------------------------------------
# Part 2: the generator's other writers, and a few targeted files
# ---------------------------------------------------------------------------

def targeted_samples(rng):
    """(name, bytes, how): files whose canonical form differs from the input
    in ways the generator produces only by chance."""
    out = []
    # fortran_order True where np.save writes False (at most one axis > 1, empty).
    for shape in ((), (1,), (5,), (1, 4), (4, 1), (1, 1, 1), (0, 3), (3, 0), (1, 0, 5), (2, 1, 3), (2, 3)):
        for version in ((1, 0), (2, 0), (3, 0)):
            data = generate.write_numpy_header("<i2", True, shape, version, math.prod(shape) * 2)
            out.append((data, "header writer fortran=True shape=%s version=%d.0" % (shape, version[0])))
    # A version that is larger than needed.
    for descr in ("|u1", [("a", ">f4"), ("b", "|S3")], [("é", "<i8")]):
        for version in ((2, 0), (3, 0)):
            arr = random_array(rng, npformat.descr_to_dtype(descr), (3,))
            out.append((generate.write_array(arr, version), "write_array version=%d.0 %r" % (version[0], descr)))
    # Object arrays pickled by other protocols (Python 2 numpy wrote 2).
    for protocol in (2, 4, 5):
        for shape, order in (((3,), "C"), ((2, 2), "F")):
            arr = object_array(rng, np.dtype("O"), shape, order)
            head = generate.write_numpy_header("|O", order == "F", shape, (1, 0), 0)
            out.append((head + pickle.dumps(arr, protocol=protocol),
                        "object array pickle protocol %d shape=%s order=%s" % (protocol, shape, order)))
    # Object arrays with a hand-built header and an odd version.
    arr = object_array(rng, np.dtype([("a", "<i4"), ("o", "|O")]), (2,))
    out.append((generate.write_array(arr, (2, 0)), "object struct write_array version=2.0"))
    return [("t%03d.npy" % i, data, how) for i, (data, how) in enumerate(out)]


def legacy_cases(rng, seed, count):
    samples = [(s.name, s.data, s.how) for s in generate.generate(seed, count)]
    cases = []
    for name, data, how in samples + targeted_samples(rng):
        cases.append(Case("legacy", name, data, how))
    return cases


# ---------------------------------------------------------------------------
# Running npyguard
# ---------------------------------------------------------------------------

def run_check(tool, flags, paths, batch=500):
    """``npyguard check --json FLAGS`` on paths, batched; {path: json}."""
    out = {}
    for start in range(0, len(paths), batch):
        out.update(checking.check_json(tool, paths[start:start + batch], flags, timeout=600))
    return out


def run_canon(tool, flags, src, dst):
    """(exit status, stderr) of ``npyguard canon FLAGS src dst``."""
    proc = subprocess.run([tool, "canon"] + flags + [src, dst], capture_output=True, timeout=120)
    return proc.returncode, proc.stderr.decode("utf-8", "replace").strip()


def canon_all(tool, jobs):
    """Run canon for each (case, flags); records failures of the exit status."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        futures = {pool.submit(run_canon, tool, flags, case.path, case.out_path): case for case, flags in jobs}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            status, err = future.result()
            if status != 0:
                case.fail("canon exit", "exit %d: %s" % (status, err[:300]))


# ---------------------------------------------------------------------------
# The comparisons
# ---------------------------------------------------------------------------

def expect_canonical_verdict(case, got, label, trailing_rejected):
    """Check one `check --canonical --json` answer on the input."""
    if got is None:
        case.fail(label, "no JSON line (crash?)")
        return
    diff = first_difference(case.data[:case.header_end], case.expected[:case.header_end])
    if diff is not None:
        err = got.get("error") or {}
        if got.get("valid") or err.get("code") != "not_canonical" or err.get("offset") != diff:
            case.fail(label, "want not_canonical at offset %d, got %s" % (diff, json.dumps(got)[:400]),
                      case.data, case.expected)
        return
    if trailing_rejected:
        err = got.get("error") or {}
        if got.get("valid") or err.get("code") != "trailing_data":
            case.fail(label, "canonical header + trailing data: want trailing_data, got %s" % json.dumps(got)[:400])
        return
    if not got.get("valid"):
        case.fail(label, "header bytes are np.save's, want valid, got %s" % json.dumps(got)[:400])


def compare_output(case):
    """canon's output against the expected bytes, and numpy's load of it."""
    if not os.path.exists(case.out_path):
        if not case.failures:
            case.fail("canon output", "no output file")
        return
    with open(case.out_path, "rb") as fh:
        out = fh.read()
    if out != case.expected:
        diff = first_difference(out, case.expected)
        case.fail("canon bytes", "output differs from %s at byte %d (output %d bytes, expected %d)"
                  % ("the input" if case.part == "saved" else "np.save(np.load(IN))", diff, len(out),
                     len(case.expected)), out, case.expected)
    try:
        want = load(case.path)
        got = load(case.out_path)
    except Exception as exc:  # noqa: BLE001
        case.fail("np.load", "%s: %s" % (type(exc).__name__, exc))
        return
    why = same_array(got, want)
    if why:
        case.fail("np.load(OUT) == np.load(IN)", why)


def prepare(cases, workdir):
    """Write the inputs; numpy's reading, expected bytes, skip reasons."""
    rng = random.Random(0x5EED)
    for case in cases:
        case.path = os.path.join(workdir, case.name)
        case.out_path = os.path.join(workdir, "out_" + case.name)
        verdict = oracle.judge(case.data)
        if not verdict.reads:
            case.skip = "numpy refuses it"
            continue
        reading = verdict.reading
        case.reading, case.has_object, case.trailing = reading, reading.has_object, verdict.trailing
        if case.part == "legacy" and not case.has_object and reading.nbytes:
            # random data instead of the generator's zeros: prove the copy
            at = reading.data_offset
            case.data = case.data[:at] + rng.randbytes(reading.nbytes) + case.data[at + reading.nbytes:]
        with open(case.path, "wb") as fh:
            fh.write(case.data)
        try:
            resaved = resave(case.path, os.path.join(workdir, "resaved_" + case.name))
        except Exception as exc:  # noqa: BLE001
            case.skip = "np.load fails: %s" % type(exc).__name__
            case.how += " (np.load: %s: %s)" % (type(exc).__name__, str(exc)[:200])
            continue
        case.header_end = oracle.read_header(resaved).data_offset
        if case.has_object:
            # np.save's header, then IN's pickle as it is (canon never reads it)
            in_pickle = case.data[reading.data_offset:]
            case.pickle_reproduced = resaved[case.header_end:] == in_pickle
            case.expected = resaved[:case.header_end] + in_pickle
        else:
            case.expected = resaved
        # numpy's np.save is not always a fixed point: an F-ordered array of
        # itemsize 0 made by np.zeros(order='F') is written fortran_order True,
        # the same array read back by np.load is C- and F-contiguous and is
        # written False. The canonical form is a function of the file alone:
        # np.save(np.load(IN)) in both parts (counted in the summary).
        case.numpy_unstable = case.part == "saved" and case.expected != case.data


def run(args, tool, workdir):
    timings = {}
    t0 = time.time()
    rng = random.Random(args.seed)
    saved = saved_cases(rng, args.saved, workdir)
    legacy = legacy_cases(rng, args.seed, args.count)
    cases = saved + legacy
    prepare(cases, workdir)
    timings["generate + numpy"] = time.time() - t0

    t0 = time.time()
    live = [c for c in cases if c.skip is None]
    # npyguard must accept every np.save file; legacy files are compared only
    # when npyguard accepts them (lenient flags: objects, trailing data).
    # Files whose header numpy reads but np.load cannot make an array of
    # must be rejected: canon would write a file numpy cannot load.
    unloadable = [c for c in cases if c.skip and c.skip.startswith("np.load fails")]
    lenient = run_check(tool, LENIENT, [c.path for c in live + unloadable])
    for case in unloadable:
        got = lenient.get(case.path)
        if got is None or got.get("valid"):
            case.fail("check", "np.load cannot load it, npyguard: %s" % json.dumps(got)[:400])
    for case in live:
        got = lenient.get(case.path)
        if got is None:
            case.fail("check", "no JSON line (crash?)")
        elif not got.get("valid"):
            code = (got.get("error") or {}).get("code")
            if case.part == "saved":
                case.fail("check", "npyguard rejects an np.save file: %s" % json.dumps(got)[:400])
            else:
                case.skip = "npyguard rejects it (%s)" % code
    live = [c for c in live if c.skip is None and not c.failures]

    # check --canonical on the inputs: lenient flags, and default flags.
    canonical_lenient = run_check(tool, ["--canonical"] + LENIENT, [c.path for c in live])
    canonical_default = run_check(tool, ["--canonical"], [c.path for c in live if not c.has_object])
    canonical_object = run_check(tool, ["--canonical", "--allow-object"], [c.path for c in live if c.has_object])
    for case in live:
        case.canonical_in = case.data[:case.header_end] == case.expected[:case.header_end]
        expect_canonical_verdict(case, canonical_lenient.get(case.path), "check --canonical (lenient)", False)
        if case.has_object:
            expect_canonical_verdict(case, canonical_object.get(case.path), "check --canonical --allow-object", False)
        else:
            expect_canonical_verdict(case, canonical_default.get(case.path), "check --canonical", case.trailing)
    timings["check"] = time.time() - t0

    # canon: the flags a file needs; without them canon refuses it (exit 1, no output).
    t0 = time.time()
    jobs = []
    refusals = []
    for case in live:
        flags = (["--allow-object"] if case.has_object else []) + (["--allow-trailing-data"] if case.trailing else [])
        jobs.append((case, flags))
        if flags:
            refusals.append(case)
    canon_all(tool, jobs)
    for case in refusals:
        status, err = run_canon(tool, [], case.path, case.out_path + ".refused")
        if status != 1 or os.path.exists(case.out_path + ".refused"):
            case.fail("canon without flags", "want exit 1 and no output, got exit %d: %s" % (status, err[:200]))
    timings["canon"] = time.time() - t0

    t0 = time.time()
    for case in live:
        compare_output(case)
    outputs = [c.out_path for c in live if os.path.exists(c.out_path)]
    canon_out = run_check(tool, ["--canonical", "--allow-object"], outputs)
    for case in live:
        if case.out_path in canon_out and not canon_out[case.out_path].get("valid"):
            case.fail("check --canonical OUT", "canon output rejected: %s" % json.dumps(canon_out[case.out_path])[:400])
    timings["compare"] = time.time() - t0
    return cases, timings


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def hexdump(data, at, width=16, before=32, after=48):
    """A few lines of hex + ASCII around byte ``at``."""
    lines = []
    start = max(0, (at - before) // width * width)
    for row in range(start, min(len(data), at + after), width):
        chunk = data[row:row + width]
        hexes = " ".join(("[%02x]" if row + i == at else " %02x ") % b for i, b in enumerate(chunk))
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append("      %08x  %s  %s" % (row, hexes, text))
    return "\n".join(lines)


def summary(cases, timings, args, tool):
    print("npyguard canon / check --canonical vs numpy %s np.save   seed %d   tool %s"
          % (np.__version__, args.seed, tool))
    parts = ("saved", "legacy")

    def row(label, pred, indent=0):
        values = [sum(1 for c in cases if c.part == p and pred(c)) for p in parts]
        print("%-58s%8d%8d%8d" % (" " * indent + label, values[0], values[1], sum(values)))

    print("%-58s%8s%8s%8s" % ("", "saved", "legacy", "total"))
    row("files", lambda c: True)
    row("compared (numpy reads, npyguard accepts)", lambda c: c.skip is None)
    compared = lambda c: c.skip is None  # noqa: E731
    row("input header is np.save's (check --canonical accepts)", lambda c: compared(c) and c.canonical_in)
    row("input header differs (not_canonical expected)", lambda c: compared(c) and c.canonical_in is False)
    row("np.save(np.load(IN)) != IN (numpy not idempotent)", lambda c: compared(c) and c.numpy_unstable, 2)
    row("canon output identical to the input", lambda c: compared(c) and not c.failures
        and c.expected == c.data)
    row("canon output == np.save(np.load(IN)) (other bytes)", lambda c: compared(c) and not c.failures
        and c.expected != c.data)
    row("with trailing data (dropped by canon)", lambda c: compared(c) and c.trailing, 2)
    row("object dtypes (pickle copied unchanged)", lambda c: compared(c) and c.has_object, 2)
    row("np.save(np.load(IN)) repeats IN's pickle", lambda c: compared(c) and c.pickle_reproduced is True, 4)
    row("np.save(np.load(IN)) writes another pickle", lambda c: compared(c) and c.pickle_reproduced is False, 4)
    reasons = collections.Counter((c.part, c.skip) for c in cases if c.skip)
    print("skipped:")
    for reason in sorted({r for _, r in reasons}):
        row(reason, lambda c, r=reason: c.skip == r, 2)
    if not reasons:
        print("  none")
    row("FAILED", lambda c: bool(c.failures))
    print("time: " + ", ".join("%s %.1f s" % kv for kv in timings.items()))


def report_failures(cases, limit=10):
    failed = [c for c in cases if c.failures]
    for case in failed[:limit]:
        print("\nFAIL %s (%s part): %s" % (case.name, case.part, case.how[:300]))
        print("  input: %s" % case.path)
        for what, detail, got, want in case.failures:
            print("  %s: %s" % (what, detail))
            if got is not None and want is not None:
                at = first_difference(got, want)
                if at is not None:
                    print("    got (byte %d):\n%s" % (at, hexdump(got, at)))
                    print("    want:\n%s" % hexdump(want, at))
    if len(failed) > limit:
        print("\n... and %d more failing files" % (len(failed) - limit))
    return failed


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", required=True, help="npyguard binary")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--saved", type=int, default=1000, help="np.save files (part 1, default 1000)")
    p.add_argument("--count", type=int, default=2000, help="generator samples (part 2, default 2000)")
    p.add_argument("--keep", metavar="DIR", help="write the files to DIR and keep them")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    tool = os.path.abspath(args.tool)
    if not os.access(tool, os.X_OK):
        print("npyguard not found: %s" % tool, file=sys.stderr)
        return 2
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        workdir = args.keep
    else:
        workdir = tempfile.mkdtemp(prefix="npyguard-canon-")
    t0 = time.time()
    try:
        cases, timings = run(args, tool, workdir)
        timings["total"] = time.time() - t0
        summary(cases, timings, args, tool)
        failed = report_failures(cases)
        if failed and not args.keep:
            print("\n(failing inputs are deleted with the temporary directory; rerun with --keep DIR)")
        return 1 if failed else 0
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
