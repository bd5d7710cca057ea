"""Running ``npyguard check --json``: shared by the differential test and
tests/canon/run.py."""

import json
import subprocess


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
