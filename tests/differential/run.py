#!/usr/bin/python3
"""Differential test of npyguard against numpy (the oracle).

    /usr/bin/python3 tests/differential/run.py --tool build/release/npyguard [--numpy PATH]

runs under the interpreter ``--numpy`` names (default /usr/bin/python3,
Debian's numpy 1.24; the run re-executes itself under another one),
generates valid files (``generate.py``) and mutants of their headers
(``mutate.py``), asks numpy (``oracle.py``) and ``npyguard check --json``
about every file, and checks three rules:

1. npyguard accepts  =>  numpy reads it, with the same shape, fortran order,
   descr, itemsize, data offset and nbytes;
2. numpy reads a file of the valid generator  =>  npyguard accepts it (files
   built to hit a listed deviation must be rejected by exactly that one);
3. numpy reads it and npyguard rejects it  =>  a deviation class listed in
   docs/deviations.md recognises it (``deviations.py``) with npyguard's code.

Prints a summary table and exits 1 on any violation; each violating file is
written with a one-line JSON description to ``--violations DIR``.
"""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import interpreter  # noqa: E402  (standard library only)

if __name__ == "__main__":  # before anything imports numpy
    interpreter.run_under_requested(os.path.abspath(__file__), sys.argv[1:])

import checking  # noqa: E402
import deviations  # noqa: E402
import generate  # noqa: E402
import mutate  # noqa: E402
import oracle  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
RULES = {
    "rule1": "ng accepts => numpy reads it the same",
    "rule2": "valid generator => ng accepts",
    "rule3": "numpy-only read => listed deviation",
    "tool": "ng crashed or printed nothing",
    "harness": "a deviation predicate raised",
}


class Case:
    """One file: its bytes, where it came from, numpy's verdict, npyguard's."""

    def __init__(self, name, data, origin, how, expect=None, parent=None):
        self.name = name
        self.data = data
        self.origin = origin  # "valid", "mutant" or "replay"
        self.how = how
        self.expect = expect
        self.parent = parent
        self.verdict = oracle.judge(data)
        self.npyguard = None
        self.outcome = None       # both_accept, both_reject, numpy_only, npyguard_only
        self.violation = None     # (rule, detail)
        self.explained_by = []


# ---------------------------------------------------------------------------
# Running npyguard
# ---------------------------------------------------------------------------

def check_all(tool, workdir, cases, batch):
    """Write every case to workdir and fill in case.npyguard."""
    paths = []
    for case in cases:
        path = os.path.join(workdir, case.name)
        with open(path, "wb") as fh:
            fh.write(case.data)
        paths.append(path)
    for start in range(0, len(cases), batch):
        chunk = paths[start:start + batch]
        results = checking.check_json(tool, chunk)
        if len(results) != len(chunk):  # retry one by one to isolate a crash
            for path in chunk:
                if path not in results:
                    results.update(checking.check_json(tool, [path]))
        for case, path in zip(cases[start:start + batch], chunk):
            case.npyguard = results.get(path)


# ---------------------------------------------------------------------------
# The comparison
# ---------------------------------------------------------------------------

def reading_fields(reading):
    """numpy's reading in npyguard's JSON terms."""
    return {
        "version": "%d.%d" % reading.version,
        "shape": oracle.shape_as_json(reading.shape),
        "fortran_order": bool(reading.fortran_order),
        "descr": reading.descr_repr,
        "itemsize": reading.dtype.itemsize,
        "header_length": reading.header_length,
        "data_offset": reading.data_offset,
        "count": reading.count,
        "nbytes": None if reading.has_object else reading.nbytes,
    }


def field_differences(ng, reading):
    """Names of the fields where npyguard's reading differs from numpy's."""
    mine = reading_fields(reading)
    return [key for key in mine if ng.get(key) != mine[key]]


def compare(case):
    """Classify the case and record a violation of rules 1-3, if any."""
    ng, v = case.npyguard, case.verdict
    if ng is None:
        case.outcome = "tool"
        case.violation = ("tool", "no JSON line (crash or timeout)")
        return
    if ng["valid"]:
        case.outcome = "both_accept" if v.reads else "npyguard_only"
        if not v.reads:
            case.violation = ("rule1", "npyguard accepts, numpy refuses: " + v.why)
        elif v.trailing:
            case.violation = ("rule1", "npyguard accepts a file with trailing data")
        else:
            diffs = field_differences(ng, v.reading)
            if diffs:
                case.violation = ("rule1", "readings differ in " + ", ".join(diffs))
        return
    code = ng["error"]["code"]
    if not v.reads:
        case.outcome = "both_reject"
        return
    case.outcome = "numpy_only"
    matching, other, errors = deviations.explain(case.data, v, code, ng["error"].get("offset"))
    case.explained_by = matching
    if errors:
        case.violation = ("harness", "predicate raised: " + "; ".join(errors)[:500])
        return
    if case.origin == "valid":
        if case.expect is None:
            case.violation = ("rule2", "npyguard rejects a valid file: %s" % code)
            return
        if case.expect not in matching:
            case.violation = ("rule2", "expected deviation %s, npyguard says %s" % (case.expect, code))
            return
    if not matching:
        detail = "unlisted rejection %s" % code
        if other:
            detail += " (classes matching with other codes: %s)" % ", ".join(other)
        case.violation = ("rule3", detail)


def describe(case):
    """The one-line JSON description of a violation."""
    v = case.verdict
    numpy_side = {"reads": v.reads, "trailing": v.trailing, "why": v.why}
    if v.reading.ok:
        numpy_side.update(reading_fields(v.reading))
    return {
        "file": case.name,
        "rule": case.violation[0],
        "detail": case.violation[1],
        "origin": case.origin,
        "how": case.how,
        "parent": case.parent,
        "numpy": numpy_side,
        "npyguard": case.npyguard,
        "size": len(case.data),
    }


def write_violations(directory, cases):
    """Each violating file and its JSON description into ``directory``."""
    os.makedirs(directory, exist_ok=True)
    for case in cases:
        stem = os.path.join(directory, "%s_%s" % (case.violation[0], case.name[:-4]))
        with open(stem + ".npy", "wb") as fh:
            fh.write(case.data)
        with open(stem + ".json", "w", encoding="utf-8") as fh:
            fh.write(json.dumps(describe(case), sort_keys=True, default=str) + "\n")


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

ORIGINS = ("valid", "mutant", "replay")


def summary(cases, timings, args):
    """The summary table as text: one column per origin, then the total."""
    lines = []

    def row(label, values, indent=0):
        lines.append("%-52s %8s %8s %8s %8s" % (" " * indent + label, *values))

    def counts(pred):
        per = [sum(1 for c in cases if c.origin == o and pred(c)) for o in ORIGINS]
        return tuple(per) + (sum(per),)

    lines.append("npyguard vs %s   seed %d   tool %s" % (oracle.describe(), args.seed, args.tool))
    row("", ("valid", "mutants", "replay", "total"))
    row("files", counts(lambda c: True))
    row("both accept", counts(lambda c: c.outcome == "both_accept"))
    row("both reject", counts(lambda c: c.outcome == "both_reject"))
    row("numpy reads, npyguard rejects", counts(lambda c: c.outcome == "numpy_only"))
    codes = sorted({c.npyguard["error"]["code"] for c in cases if c.outcome == "numpy_only"})
    lines.append("  by npyguard error code:")
    for code in codes:
        row(code, counts(lambda c, code=code: c.outcome == "numpy_only" and c.npyguard["error"]["code"] == code), 4)
    lines.append("  by deviation ID (a file can match several):")
    for cls in deviations.CLASSES:
        n = counts(lambda c, i=cls.id: c.outcome == "numpy_only" and i in c.explained_by)
        if n[-1]:
            row(cls.id, n, 4)
    unused = [cls.id for cls in deviations.CLASSES
              if not any(c.outcome == "numpy_only" and cls.id in c.explained_by for c in cases)]
    lines.append("    (not seen this run: %s)" % (", ".join(unused) or "none"))
    checking.summary_tail(lines, row, counts, RULES, timings)
    return "\n".join(lines)


def check_doc(doc_path):
    """Problems between the class table and docs/deviations.md (a list)."""
    with open(doc_path, encoding="utf-8") as fh:
        return deviations.doc_problems(fh.read(), doc_path)


def replay_cases(directory):
    """Cases for every .npy file in ``directory`` (earlier violations)."""
    if not directory or not os.path.isdir(directory):
        return []
    out = []
    for name in sorted(os.listdir(directory)):
        if name.endswith(".npy"):
            with open(os.path.join(directory, name), "rb") as fh:
                out.append(Case("r_" + name, fh.read(), "replay", "replay of %s/%s" % (directory, name)))
    return out


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tool", default=os.path.join(REPO, "build", "release", "npyguard"), help="npyguard binary")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=2000, help="valid files (default 2000)")
    p.add_argument("--mutants", type=int, default=20000, help="mutants (default 20000)")
    p.add_argument("--violations", help="directory for violating files (default: a new temp dir)")
    p.add_argument("--doc", default=os.path.join(REPO, "docs", "deviations.md"))
    p.add_argument("--replay", default=os.path.join(HERE, "regressions"),
                   help="directory of .npy files checked in every run (rules 1 and 3)")
    p.add_argument("--batch", type=int, default=1000, help="files per npyguard invocation")
    p.add_argument("--keep", action="store_true", help="keep the generated files (path printed)")
    interpreter.add_option(p)
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if not os.access(args.tool, os.X_OK):
        print("npyguard binary not found: %s (cmake --preset release && cmake --build --preset release "
              "--target npyguard_tool)" % args.tool, file=sys.stderr)
        return 2
    doc_problems = check_doc(args.doc)
    timings = {}
    t0 = time.monotonic()
    cases = [Case(s.name, s.data, "valid", s.how, s.expect) for s in generate.generate(args.seed, args.count)]
    unreadable = [c for c in cases if not c.verdict.reads or (c.verdict.trailing and c.expect is None)]
    cases = [c for c in cases if c not in unreadable]
    timings["valid files"] = time.monotonic() - t0
    t1 = time.monotonic()
    samples = [generate.Sample(c.name, c.data, c.how, c.expect) for c in cases]
    for i, m in enumerate(mutate.mutants(args.seed, samples, args.mutants)):
        cases.append(Case("m%06d.npy" % i, m.data, "mutant", "; ".join(m.ops), parent=m.parent))
    timings["mutants"] = time.monotonic() - t1
    cases += replay_cases(args.replay)
    t2 = time.monotonic()
    with checking.scratch_directory("npyguard-diff-", args.keep) as workdir:
        check_all(args.tool, workdir, cases, args.batch)
    timings["npyguard"] = time.monotonic() - t2
    t3 = time.monotonic()
    for case in cases:
        compare(case)
    timings["compare"] = time.monotonic() - t3
    timings["total"] = time.monotonic() - t0
    print(summary(cases, timings, args))
    if unreadable:
        print("note: %d generated files numpy cannot read were dropped (generator limits): %s"
              % (len(unreadable), "; ".join(sorted({c.verdict.why[:60] for c in unreadable})[:5])))
    bad = [c for c in cases if c.violation]
    for problem in doc_problems:
        print("doc: " + problem)
    if bad:
        directory = args.violations or tempfile.mkdtemp(prefix="npyguard-violations-")
        write_violations(directory, bad)
        print("%d violations written to %s" % (len(bad), directory))
        for case in bad[:20]:
            print("  %s %s: %s" % (case.violation[0], case.name, case.violation[1]))
    return 1 if bad or doc_problems else 0


if __name__ == "__main__":
    sys.exit(main())
