#!/usr/bin/env python3
"""Runs `npyguard check --json` on every archive of make_archives.py and
compares with the manifest (tests/npz/README.md): valid, code, offset,
member and member_offset in the default mode, the verification code with
--verify, each member's name, key, shape, descr and fortran order, and
SPEC-npz rule 1: an archive npyguard accepts with --verify is one numpy
loads. Exit 0 when all agree, 1 otherwise.

    check_manifest.py --tool build/dev/npyguard [--dir DIR]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def check_one(tool, path, verify):
    args = [tool, "check", "--json", "--format", "npz"] + (["--verify"] if verify else []) + [path]
    run = subprocess.run(args, capture_output=True, text=True, timeout=60)
    lines = run.stdout.strip().split("\n")
    if len(lines) != 1:
        raise RuntimeError(f"{path}: expected one JSON line, got {run.stdout!r} {run.stderr!r}")
    return json.loads(lines[0]), run.returncode


def compare(entry, answer, status, verify):
    expected_valid = entry["valid"] and not (verify and entry["verify_only"])
    problems = []
    if answer.get("format") != "npz":
        problems.append(f"format {answer.get('format')!r}")
    if answer["valid"] != expected_valid:
        problems.append(f"valid {answer['valid']}, expected {expected_valid}")
    if status != (0 if expected_valid else 1):
        problems.append(f"exit status {status}")
    if not expected_valid and not answer["valid"]:
        error = answer["error"]
        if error["code"] != entry["code"]:
            problems.append(f"code {error['code']}, expected {entry['code']}")
        elif error["offset"] != entry["offset"]:
            problems.append(f"offset {error['offset']}, expected {entry['offset']}")
        if entry["member"] is not None and answer.get("member") != entry["member"]:
            problems.append(f"member {answer.get('member')!r}, expected {entry['member']!r}")
        if entry["member_offset"] is not None and answer.get("member_offset") != entry["member_offset"]:
            problems.append(f"member_offset {answer.get('member_offset')}, expected {entry['member_offset']}")
    if expected_valid and answer["valid"] and entry.get("members") is not None:
        got = [(m["name"], m["key"], m["shape"], m["descr"], m["fortran_order"]) for m in answer["members"]]
        want = [(m["name"], m["key"], list(m["shape"]), m["descr"], m["fortran_order"]) for m in entry["members"]]
        if got != want:
            problems.append(f"members {got}, expected {want}")
    if verify and answer["valid"] and "numpy" in entry and entry["numpy"] != "loads":
        big_header = entry.get("numpy_max_header_size_1MiB") == "loads"
        if not big_header:
            problems.append(f"accepted with --verify, but numpy: {entry['numpy']} (SPEC-npz rule 1)")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tool", required=True)
    parser.add_argument("--dir", help="where to generate (default: a temporary directory)")
    parser.add_argument("--no-numpy", action="store_true", help="skip numpy's verdicts (and rule 1)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.dir or scratch
        generate = [sys.executable, os.path.join(HERE, "make_archives.py"), "--out", directory]
        if args.no_numpy:
            generate.append("--no-numpy")
        subprocess.run(generate, check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(directory, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        failures = 0
        runs = 0
        for entry in manifest:
            path = os.path.join(directory, entry["file"])
            for verify in (False, True):
                answer, status = check_one(args.tool, path, verify)
                runs += 1
                problems = compare(entry, answer, status, verify)
                if problems:
                    failures += 1
                    print(f"{entry['file']}{' --verify' if verify else ''}: {'; '.join(problems)}"
                          f" [{(answer.get('error') or {}).get('message', '')}]")
        print(f"npz manifest: {len(manifest)} archives, {runs} runs, {failures} disagreements")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
