#!/usr/bin/python3
"""Every file of tests/ra/make_files.py through `npyguard check --json`:
each verdict must be the manifest's, key for key (a valid file's whole
RawArray model; an invalid one's code and offset). The files are checked
by their .ra names (format chosen by the name), each group of rows with the
same options in one run; standard input too for a sample, where the
metadata fields must be null.

    /usr/bin/python3 tests/ra/check_manifest.py --tool build/release/npyguard

Exit 0 when every row agrees, 1 otherwise (each disagreement printed).
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
MODEL_KEYS = ("flags", "big_endian", "eltype", "elbyte", "type_name", "ndims", "dims", "count", "data_offset",
              "data_length", "metadata_offset", "metadata_length")


def compare(row, verdict, streamed=False):
    problems = []
    if verdict.get("format") != "ra":
        problems.append("format %r" % verdict.get("format"))
    if verdict.get("valid") != row["valid"]:
        problems.append("valid %r, expected %r (%s)" % (verdict.get("valid"), row["valid"], verdict.get("error")))
        return problems
    if row["valid"]:
        for key in MODEL_KEYS:
            expected = row["model"][key]
            if streamed and key.startswith("metadata_"):
                expected = None
            if verdict.get(key) != expected:
                problems.append("%s %r, expected %r" % (key, verdict.get(key), expected))
    else:
        error = verdict["error"]
        if (error["code"], error["offset"]) != (row["code"], row["offset"]):
            problems.append("%s at %s, expected %s at %s" % (error["code"], error["offset"], row["code"], row["offset"]))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        out = pathlib.Path(scratch)
        subprocess.run([sys.executable, str(HERE / "make_files.py"), "--out", scratch], check=True,
                       stdout=subprocess.DEVNULL)
        rows = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        groups = {}
        for row in rows:
            groups.setdefault(tuple(row["options"]), []).append(row)
        for options, group in groups.items():
            run = subprocess.run([args.tool, "check", "--json", *options, "--", *(str(out / r["file"]) for r in group)],
                                 capture_output=True, text=True)
            verdicts = [json.loads(line) for line in run.stdout.splitlines()]
            if len(verdicts) != len(group):
                print("ra manifest: %d verdicts for %d files with options %s" % (len(verdicts), len(group), options))
                return 1
            expected_status = 0 if all(r["valid"] for r in group) else 1
            if run.returncode != expected_status:
                print("ra manifest: exit status %d, expected %d" % (run.returncode, expected_status))
                failures += 1
            for row, verdict in zip(group, verdicts):
                for problem in compare(row, verdict):
                    print("ra manifest: %s (%s%s): %s" % (row["file"], row["writer"],
                                                          ", " + " ".join(options) if options else "", problem))
                    failures += 1
        # Standard input from a pipe, for every row with the default options:
        # the same verdict, without metadata fields (a stream stops at the
        # data end). (Standard input redirected from the file is a regular
        # file, read by offset as the file itself.)
        streamed = 0
        for row in groups.get((), []):
            run = subprocess.run([args.tool, "check", "--json", "--format", "ra", "-"],
                                 input=(out / row["file"]).read_bytes(), capture_output=True)
            run = subprocess.CompletedProcess(run.args, run.returncode, run.stdout.decode(), run.stderr.decode())
            for problem in compare(row, json.loads(run.stdout), streamed=True):
                print("ra manifest: %s from standard input: %s" % (row["file"], problem))
                failures += 1
            streamed += 1
    writers = sorted({row["writer"] for row in rows})
    print("ra manifest: %d files (%d valid) from %d writers and hostile cases, %d also from standard input: %s" %
          (len(rows), sum(r["valid"] for r in rows), len(writers) - 1, streamed,
           "ok" if failures == 0 else "%d disagreements" % failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
