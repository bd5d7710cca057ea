#!/usr/bin/python3
"""Differential test of npyguard's .npz reader against numpy.

    /usr/bin/python3 tests/differential/npz_run.py --tool build/release/npyguard [--numpy PATH]

runs under the interpreter ``--numpy`` names (default /usr/bin/python3,
Debian's numpy 1.24; the run re-executes itself under another one),
generates valid archives and mutants of them (``npz_generate.py``), asks
numpy (``np.load`` and reading every key, in worker processes with a
memory limit and a timeout; a worker that dies is replaced by a forked
child per archive) and ``npyguard check --json --format npz``, with and
without ``--verify``, about every archive, and checks:

1. npyguard with --verify accepts  =>  numpy loads the archive and reads
   every key as an array, with npyguard's keys in the same order, and each
   member's shape, descr, fortran order, itemsize, data offset and nbytes
   are what numpy's header reader makes of the member's bytes;
2. a valid generated archive  =>  npyguard accepts it, in both modes;
3. numpy reads it and npyguard (--verify) rejects it  =>  a listed deviation
   explains it: an npz-* class of ``npz_deviations.py`` for archive-level
   errors, a .npy class of ``deviations.py`` on the member's bytes for
   errors inside a member;
4. the two modes agree: a rejection without --verify is the same error with
   it, and what --verify adds is only verification's codes (SPEC-npz
   section 10).

Exit status 0 when no rule is broken, 1 otherwise, 2 when the tool is missing.
"""

import argparse
import concurrent.futures
import io
import json
import multiprocessing
import os
import resource
import select
import signal
import sys
import tempfile
import time
import warnings
import zipfile

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import interpreter  # noqa: E402  (standard library only)

if __name__ == "__main__":  # before anything imports numpy
    interpreter.run_under_requested(os.path.abspath(__file__), sys.argv[1:])

import checking  # noqa: E402
import deviations  # noqa: E402
import generate  # noqa: E402
import npz_deviations  # noqa: E402
import npz_generate  # noqa: E402
import numpy as np  # noqa: E402
import oracle  # noqa: E402
from numpy.lib import format as npformat  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
VERIFY_CODES = {"crc_mismatch", "size_mismatch", "bad_deflate"}
MEMORY_LIMIT = 1 << 30
TIMEOUT = 10
RULES = {
    "rule1": "ng --verify accepts => numpy reads it the same",
    "rule2": "valid generator => ng accepts",
    "rule3": "numpy-only read => listed deviation",
    "rule4": "default and --verify agree",
    "tool": "ng crashed or printed nothing",
    "harness": "a predicate raised",
}


# ---------------------------------------------------------------------------
# numpy's verdict, in a forked child
# ---------------------------------------------------------------------------

def _numpy_reading(data):
    warnings.simplefilter("ignore")
    obj = np.load(io.BytesIO(data), allow_pickle=False, max_header_size=oracle.HUGE_HEADER)
    if not isinstance(obj, np.lib.npyio.NpzFile):
        return {"loads": False, "why": "np.load returned %s" % type(obj).__name__}
    members = []
    for key in obj.files:
        value = obj[key]
        if not isinstance(value, np.ndarray):
            return {"loads": False, "why": "%r is %s, not an array" % (key, type(value).__name__)}
        members.append({"key": key, "shape": list(value.shape),
                        "descr": repr(npformat.dtype_to_descr(value.dtype))})
    return {"loads": True, "members": members}


def numpy_verdict(data):
    """{"loads": bool, "why" or "members"}; a crash, a timeout or the memory
    limit is a refusal."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: limits, np.load, every key, one JSON line
        os.close(r)
        try:
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
            signal.alarm(TIMEOUT)
            try:
                res = _numpy_reading(data)
            except BaseException as exc:  # noqa: B036 - every refusal is an answer
                res = {"loads": False, "why": "%s: %s" % (type(exc).__name__, str(exc)[:200])}
            os.write(w, json.dumps(res).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    deadline = time.monotonic() + TIMEOUT + 5
    with os.fdopen(r, "rb", buffering=0) as pipe:
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([pipe], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                break
            chunk = pipe.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    if chunks:
        try:
            return json.loads(b"".join(chunks))
        except ValueError:
            pass
    if os.WIFSIGNALED(status):
        return {"loads": False, "why": "numpy killed by signal %d" % os.WTERMSIG(status)}
    return {"loads": False, "why": "numpy gave no answer"}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout("numpy took more than %d s" % TIMEOUT)


def _worker_setup():
    """A pool worker: the memory limit and the deadline of numpy_verdict,
    kept for the worker's life (a fork per archive costs 15 ms here, 40
    times numpy's reading of a small archive)."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")


def _in_worker(archives):
    """numpy_verdict's answers for a chunk of archives, read in this worker."""
    answers = []
    for data in archives:
        signal.alarm(TIMEOUT)
        try:
            res = _numpy_reading(data)
        except BaseException as exc:  # noqa: B036 - every refusal is an answer
            res = {"loads": False, "why": "%s: %s" % (type(exc).__name__, str(exc)[:200])}
        finally:
            signal.alarm(0)
        answers.append(json.loads(json.dumps(res)))  # the same values the forked child sends
    return answers


def numpy_verdicts(archives, jobs, chunk=64):
    """numpy_verdict for every archive: chunks read by long-lived workers; a
    chunk whose worker died (a crash in numpy) is asked again a fork per
    archive, so a crash is still that archive's refusal."""
    chunks = [archives[i:i + chunk] for i in range(0, len(archives), chunk)]
    answers = [None] * len(chunks)
    context = multiprocessing.get_context("fork")
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context, initializer=_worker_setup) as pool:
        futures = {pool.submit(_in_worker, c): i for i, c in enumerate(chunks)}
        for future in concurrent.futures.as_completed(futures):
            try:
                answers[futures[future]] = future.result()
            except concurrent.futures.process.BrokenProcessPool:
                pass
    out = []
    for i, c in enumerate(chunks):
        out.extend(answers[i] if answers[i] is not None else [numpy_verdict(data) for data in c])
    return out


# ---------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------

class Case:
    def __init__(self, archive):
        self.archive = archive
        self.name = archive.name
        self.origin = archive.origin
        self.numpy = None
        self.plain = None   # npyguard without --verify
        self.verify = None  # npyguard with --verify
        self.outcome = None
        self.violation = None
        self.explained_by = []


def member_bytes(data, name):
    """The member's bytes as numpy reads them (zipfile, last entry of that name)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.read(name)


def member_differences(case):
    """Rule 1 on an accepted archive: keys and every member's reading."""
    got = case.verify["members"]
    want = case.numpy["members"]
    if [m["key"] for m in got] != [m["key"] for m in want]:
        return "keys: npyguard %r, numpy %r" % ([m["key"] for m in got], [m["key"] for m in want])
    zf = zipfile.ZipFile(io.BytesIO(case.archive.data))  # numpy's reader, opened once
    for ng, np_member in zip(got, want):
        if ng["shape"] != np_member["shape"] or ng["descr"] != np_member["descr"]:
            return "%r: npyguard %s %s, numpy %s %s" % (ng["key"], ng["shape"], ng["descr"],
                                                        np_member["shape"], np_member["descr"])
        reading = oracle.read_header(zf.read(ng["name"]))
        mine = {"fortran_order": bool(reading.fortran_order), "itemsize": reading.dtype.itemsize,
                "data_offset": reading.data_offset, "nbytes": reading.nbytes}
        diffs = [k for k in mine if ng.get(k) != mine[k]]
        if diffs:
            return "%r: readings differ in %s" % (ng["key"], ", ".join(diffs))
    return None


def explain(case):
    """IDs explaining npyguard's rejection of an archive numpy reads."""
    error = case.verify["error"]
    code = error["code"]
    matching, other, errors = npz_deviations.explain(case.archive.data, code, error.get("offset"))
    if case.verify.get("member_offset") is not None and case.verify.get("member") is not None:
        data = member_bytes(case.archive.data, case.verify["member"])
        inside = deviations.explain(data, oracle.judge(data), code, case.verify["member_offset"])
        matching, other, errors = matching + inside[0], other + inside[1], errors + inside[2]
    return matching, other, errors


def same_error(a, b):
    keys = ("code", "offset")
    return all(a["error"].get(k) == b["error"].get(k) for k in keys) and \
        a.get("member") == b.get("member") and a.get("member_offset") == b.get("member_offset")


def compare(case):
    ng, plain, v = case.verify, case.plain, case.numpy
    if ng is None or plain is None:
        case.outcome = "tool"
        case.violation = ("tool", "no JSON line (crash or timeout)")
        return
    if not plain["valid"] and (ng["valid"] or not same_error(plain, ng)):
        case.violation = ("rule4", "without --verify %s, with it %s" % (
            plain["error"], ng.get("error")))
    elif plain["valid"] and not ng["valid"] and ng["error"]["code"] not in VERIFY_CODES:
        case.violation = ("rule4", "--verify adds %s" % ng["error"]["code"])
    elif plain["valid"] and ng["valid"] and plain["members"] != ng["members"]:
        case.violation = ("rule4", "members differ between the modes")
    if case.origin == "valid" and not (plain["valid"] and ng["valid"]):
        case.violation = ("rule2", "npyguard rejects a valid archive: %s %s" % (
            (ng.get("error") or plain.get("error"))["code"], (ng.get("error") or plain["error"])["message"]))
    if ng["valid"]:
        case.outcome = "both_accept" if v["loads"] else "npyguard_only"
        if not v["loads"]:
            case.violation = ("rule1", "npyguard --verify accepts, numpy: " + v["why"])
        else:
            diff = member_differences(case)
            if diff:
                case.violation = ("rule1", diff)
        return
    if not v["loads"]:
        case.outcome = "both_reject"
        return
    case.outcome = "numpy_only"
    matching, other, errors = explain(case)
    case.explained_by = matching
    if errors:
        case.violation = ("harness", "; ".join(errors)[:500])
    elif not matching and case.violation is None:
        detail = "unlisted rejection %s" % ng["error"]["code"]
        if ng.get("member_offset") is not None:
            detail += " inside member %r" % ng.get("member")
        if other:
            detail += " (classes matching with other codes: %s)" % ", ".join(other)
        case.violation = ("rule3", detail)


# ---------------------------------------------------------------------------
# Running it
# ---------------------------------------------------------------------------

def limit_flags():
    """npyguard's limits for this numpy. numpy 1.x builds no array of more
    than 32 dimensions (NPY_MAXDIMS), so its np.load fails on a member with
    33 to 64, which npyguard's default max_ndim (64, numpy 2's limit) allows."""
    return ("--max-ndim", "32") if oracle.numpy_major() < 2 else ()


def run_tool(tool, workdir, cases, batch):
    paths = []
    for case in cases:
        path = os.path.join(workdir, case.name)
        with open(path, "wb") as fh:
            fh.write(case.archive.data)
        paths.append(path)
    limits = limit_flags()
    for flags, attr in ((("--format", "npz", *limits), "plain"),
                        (("--format", "npz", "--verify", *limits), "verify")):
        for start in range(0, len(paths), batch):
            chunk = paths[start:start + batch]
            results = checking.check_json(tool, chunk, flags)
            if len(results) != len(chunk):
                for path in chunk:
                    if path not in results:
                        results.update(checking.check_json(tool, [path], flags))
            for case, path in zip(cases[start:start + batch], chunk):
                setattr(case, attr, results.get(path))


ORIGINS = ("valid", "mutant")


def summary(cases, timings, args):
    lines = []

    def row(label, values, indent=0):
        lines.append("%-52s %8s %8s %8s" % (" " * indent + label, *values))

    def counts(pred):
        per = [sum(1 for c in cases if c.origin == o and pred(c)) for o in ORIGINS]
        return tuple(per) + (sum(per),)

    lines.append("npyguard .npz vs %s   seed %d   tool %s %s" % (
        oracle.describe(), args.seed, args.tool, " ".join(limit_flags()) or "(default limits)"))
    row("", ("valid", "mutants", "total"))
    row("archives", counts(lambda c: True))
    row("both accept (npyguard with --verify)", counts(lambda c: c.outcome == "both_accept"))
    row("  accepted without --verify only", counts(
        lambda c: c.plain and c.verify and c.plain["valid"] and not c.verify["valid"]))
    row("both reject", counts(lambda c: c.outcome == "both_reject"))
    row("numpy reads, npyguard rejects", counts(lambda c: c.outcome == "numpy_only"))
    codes = sorted({c.verify["error"]["code"] for c in cases if c.outcome == "numpy_only"})
    lines.append("  by npyguard error code:")
    for code in codes:
        row(code, counts(lambda c, code=code: c.outcome == "numpy_only"
                         and c.verify["error"]["code"] == code), 4)
    lines.append("  by deviation ID (a file can match several):")
    ids = [cls.id for cls in npz_deviations.CLASSES] + [cls.id for cls in deviations.CLASSES]
    for i in ids:
        n = counts(lambda c, i=i: c.outcome == "numpy_only" and i in c.explained_by)
        if n[-1]:
            row(i, n, 4)
    unused = [cls.id for cls in npz_deviations.CLASSES
              if not any(c.outcome == "numpy_only" and cls.id in c.explained_by for c in cases)]
    lines.append("    (npz classes not seen this run: %s)" % (", ".join(unused) or "none"))
    checking.summary_tail(lines, row, counts, RULES, timings)
    return "\n".join(lines)


def write_violations(directory, cases):
    os.makedirs(directory, exist_ok=True)
    for case in cases:
        stem = os.path.join(directory, "%s_%s" % (case.violation[0], case.name[:-4]))
        with open(stem + ".npz", "wb") as fh:
            fh.write(case.archive.data)
        with open(stem + ".json", "w", encoding="utf-8") as fh:
            fh.write(json.dumps({
                "file": case.name, "rule": case.violation[0], "detail": case.violation[1],
                "origin": case.origin, "how": case.archive.how, "parent": case.archive.parent,
                "numpy": case.numpy, "npyguard": case.verify, "npyguard_default": case.plain,
            }, sort_keys=True, default=str) + "\n")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", default=os.path.join(REPO, "build", "release", "npyguard"))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=300, help="valid archives (default 300)")
    p.add_argument("--mutants", type=int, default=3000, help="mutants (default 3000)")
    p.add_argument("--members", type=int, default=600,
                   help=".npy files generated to fill archives with (default 600)")
    p.add_argument("--violations", help="directory for violating archives (default: a new temp dir)")
    p.add_argument("--doc", default=os.path.join(REPO, "docs", "deviations.md"))
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="processes asking numpy (default: one per core)")
    p.add_argument("--batch", type=int, default=1000, help="archives per npyguard invocation")
    p.add_argument("--keep", action="store_true", help="keep the generated archives (path printed)")
    interpreter.add_option(p)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not os.access(args.tool, os.X_OK):
        print("npyguard binary not found: %s" % args.tool, file=sys.stderr)
        return 2
    with open(args.doc, encoding="utf-8") as fh:
        doc_problems = npz_deviations.doc_problems(fh.read(), args.doc)
    timings = {}
    t0 = time.monotonic()
    warnings.simplefilter("ignore")  # np.savez of version 3.0 headers says so
    samples = list(generate.generate(args.seed, args.members))
    cases = [Case(a) for a in npz_generate.generate(args.seed, args.count, args.mutants, samples)]
    timings["generate"] = time.monotonic() - t0
    t1 = time.monotonic()
    verdicts = numpy_verdicts([c.archive.data for c in cases], args.jobs)
    for case, verdict in zip(cases, verdicts):
        case.numpy = verdict
    timings["numpy"] = time.monotonic() - t1
    t2 = time.monotonic()
    with checking.scratch_directory("npyguard-npz-diff-", args.keep) as workdir:
        run_tool(args.tool, workdir, cases, args.batch)
    timings["npyguard"] = time.monotonic() - t2
    t3 = time.monotonic()
    for case in cases:
        compare(case)
    timings["compare"] = time.monotonic() - t3
    timings["total"] = time.monotonic() - t0
    print(summary(cases, timings, args))
    for problem in doc_problems:
        print("doc: " + problem)
    bad = [c for c in cases if c.violation]
    if bad:
        directory = args.violations or tempfile.mkdtemp(prefix="npyguard-npz-violations-")
        write_violations(directory, bad)
        print("%d violations written to %s" % (len(bad), directory))
        for case in bad[:30]:
            print("  %s %s: %s [%s]" % (case.violation[0], case.name, case.violation[1], case.archive.how[:150]))
    return 1 if bad or doc_problems else 0


if __name__ == "__main__":
    sys.exit(main())
