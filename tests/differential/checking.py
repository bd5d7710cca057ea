"""Running ``npyguard check --json`` and the pieces of a run: shared by the
.npy and .npz differential tests and tests/canon/run.py."""

import contextlib
import json
import shutil
import subprocess
import tempfile


def check_json(tool, paths, flags=(), timeout=300):
    """``npyguard check --json FLAGS -- PATHS``: {path: JSON object}. A crash,
    a timeout or a missing line leaves the path out."""
    try:
        proc = subprocess.run([tool, "check", "--json", *flags, "--", *paths],
                              capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {}
    out = {}
    for line in proc.stdout.decode("utf-8", "replace").splitlines():
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        out[obj.get("file")] = obj
    return out


@contextlib.contextmanager
def scratch_directory(prefix, keep=False):
    """A new temporary directory, removed afterwards unless ``keep`` (then
    its path is printed)."""
    workdir = tempfile.mkdtemp(prefix=prefix)
    try:
        yield workdir
    finally:
        if keep:
            print("files kept in %s" % workdir)
        else:
            shutil.rmtree(workdir, ignore_errors=True)


def summary_tail(lines, row, counts, rules, timings):
    """The last rows of a differential summary: one-sided accepts, tool
    failures, the violations per rule, the timings."""
    row("npyguard accepts, numpy refuses", counts(lambda c: c.outcome == "npyguard_only"))
    row("npyguard crashed or printed nothing", counts(lambda c: c.outcome == "tool"))
    lines.append("violations:")
    for rule, text in rules.items():
        row("%s  %s" % (rule, text), counts(lambda c, r=rule: c.violation is not None and c.violation[0] == r), 2)
    lines.append("time: " + ", ".join("%s %.1f s" % kv for kv in timings.items()))
