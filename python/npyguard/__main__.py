"""python -m npyguard scan: one verdict per file, `npyguard check -r`'s, for
directories, globs and fsspec URLs, in threads or on a Dask cluster."""

import argparse
import csv
import json
import os
import sys

from . import _scan

EXIT_VALID, EXIT_INVALID, EXIT_USAGE_OR_IO = 0, 1, 2

_EPILOG = """\
Each file is checked as `npyguard check` checks it, reading only what the
verdict needs (a .npy's header, a .ra's 48 + 8 * ndims bytes, an .npz's end
records, directory and member headers; --verify reads .npz members in full).
Directories are walked as `npyguard check -r` walks them: entries sorted by
name, only names ending in .npy, .npz or .ra, symbolic links skipped, FIFOs,
sockets and devices reported and never opened. A glob ('uploads/**/*.npz')
is matched one directory at a time; quote it so that the shell does not.
URLs go through fsspec (s3://, gs://, memory://, ...; its packages must be
installed), one ranged request per read.

Report: one row per file with the columns
  """ + ", ".join(_scan.COLUMNS) + """
as JSON lines (default: on standard output) or CSV (--output FILE.csv).

Exit status: 0 every file valid, 1 some file invalid, 2 some file unreadable
(or a usage error), as `npyguard check`.

Examples:
  python -m npyguard scan uploads/ --output report.jsonl
  python -m npyguard scan 'uploads/**/*.npz' --verify --workers 8
  python -m npyguard scan s3://bucket/arrays/ --scheduler tcp://10.0.0.5:8786 --output report.csv
"""


def _size(text):
    """A byte count with an optional K, M or G suffix (times 1024, 1024^2, 1024^3)."""
    shifts = {"K": 10, "M": 20, "G": 30}
    shift = shifts.get(text[-1:].upper(), 0)
    digits = text[:-1] if shift else text
    if not digits.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of bytes (digits, then K, M or G)")
    return int(digits) << shift


def _count(text):
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    return int(text)


def _positive(text):
    value = _count(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _cell(value):
    """A CSV cell that a spreadsheet will not run: text starting with =, +, -, @,
    a tab or a carriage return (a hostile file or member name) gets a leading '."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def _parser():
    parser = argparse.ArgumentParser(prog="python -m npyguard", description="npyguard for Python: the scan command.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    scan = commands.add_parser(
        "scan", help="check every file of directories, globs and URLs; one report row per file",
        description="Check every .npy, .npz and .ra file of directories, globs and fsspec URLs, in threads or on a "
        "Dask cluster, reading only the bytes each verdict needs.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    scan.add_argument("inputs", nargs="+", metavar="PATH_OR_URL", help="files, directories, globs, fsspec URLs")
    where = scan.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="a Dask scheduler (tcp://host:8786): batches of files become tasks on its workers, "
                       "which need npyguard installed")
    where.add_argument("--workers", type=_positive, metavar="N",
                       help="threads in this process (default: the CPU count)")
    scan.add_argument("--output", "-o", metavar="FILE",
                      help="write the report here: CSV when FILE ends in .csv (a text cell starting with =, +, "
                      "-, @ gets a leading ', so that no spreadsheet runs a hostile name), else JSON lines (default: "
                      "JSON lines on standard output)")
    scan.add_argument("--quiet", "-q", action="store_true",
                      help="no progress bar, no summary, and only the invalid and unreadable files in the report")
    scan.add_argument("--batch-size", type=_positive, metavar="N",
                      help="files per batch (default: from the rate so far, about a second per Dask task and "
                      "20 ms per thread)")
    policy = scan.add_argument_group("policy (the command's defaults)")
    policy.add_argument("--verify", action="store_true",
                        help=".npz: also read every member in full (inflate, exact lengths, CRC-32)")
    policy.add_argument("--allow-object", action="store_true",
                        help="accept object ('O') dtypes; the pickle is never read")
    policy.add_argument("--allow-trailing-data", action="store_true", help="accept bytes after the array data")
    policy.add_argument("--canonical", action="store_true", help="headers must be exactly np.save's bytes")
    policy.add_argument("--max-header-bytes", type=_size, default=1 << 20, metavar="BYTES",
                        help="largest accepted HEADER_LEN (default 1M)")
    policy.add_argument("--max-depth", type=_count, default=32, metavar="N",
                        help="deepest nesting of lists and tuples (default 32, at most 199)")
    policy.add_argument("--max-ndim", type=_count, default=64, metavar="N", help="most dimensions (default 64)")
    policy.add_argument("--max-data-bytes", type=_size, metavar="BYTES", help="largest array (default: no limit)")
    policy.add_argument("--max-members", type=_count, default=65535, metavar="N",
                        help=".npz: most members (default 65535)")
    policy.add_argument("--max-total-bytes", type=_size, default=1 << 32, metavar="BYTES",
                        help=".npz: largest sum of the members' declared sizes (default 4G)")
    policy.add_argument("--max-ratio", type=_count, default=1032, metavar="N",
                        help=".npz: largest declared size per compressed byte (default 1032)")
    policy.add_argument("--ra-reject-metadata", action="store_true", help=".ra: refuse bytes after the data")
    policy.add_argument("--no-ra-type5", action="store_true", help=".ra: refuse element type 5")
    return parser


class _Writer:
    def __init__(self, stream, kind):
        self._stream = stream
        self._csv = None
        if kind == "csv":
            self._csv = csv.writer(stream)
            self._csv.writerow(_scan.COLUMNS)

    def write(self, row):
        record = _scan.report_record(row)
        if self._csv is None:
            # ASCII only: a hostile name's control characters are escaped, never printed.
            self._stream.write(json.dumps(record) + "\n")
        else:
            self._csv.writerow(["" if record[c] is None else json.dumps(record[c]) if c == "shape" else _cell(record[c])
                                for c in _scan.COLUMNS])


def _scan_command(args):
    limits = dict(max_header_bytes=args.max_header_bytes, max_depth=args.max_depth, max_ndim=args.max_ndim,
                  max_data_bytes=args.max_data_bytes, allow_trailing_data=args.allow_trailing_data,
                  allow_object=args.allow_object, canonical=args.canonical, max_members=args.max_members,
                  max_total_bytes=args.max_total_bytes, max_ratio=args.max_ratio,
                  allow_type5=not args.no_ra_type5, reject_metadata=args.ra_reject_metadata)
    try:
        _scan._scan_options(verify=args.verify, **limits)
    except (TypeError, ValueError) as e:
        print(f"npyguard: {e}; run 'python -m npyguard scan --help'", file=sys.stderr)
        return EXIT_USAGE_OR_IO
    client = None
    if args.scheduler:
        from distributed import Client
        client = Client(args.scheduler)
    kind = "csv" if args.output and args.output.endswith(".csv") else "jsonl"
    stream = open(args.output, "w", encoding="utf-8", newline="") if args.output else sys.stdout
    counts = {"valid": 0, "invalid": 0, "unreadable": 0}
    bar = None if args.quiet else _scan._progress_bar(sys.stderr.isatty())
    try:
        writer = _Writer(stream, kind)
        for batch in _scan.scan_rows(args.inputs, client=client, workers=args.workers, verify=args.verify,
                                     batch_size=args.batch_size, **limits):
            for row in batch:
                outcome = "valid" if row.valid else "unreadable" if row.code == "io_error" else "invalid"
                counts[outcome] += 1
                if not (args.quiet and row.valid):
                    writer.write(row)
            if bar is not None:
                bar.update(len(batch))
            stream.flush()
    finally:
        if bar is not None:
            bar.close()
        if args.output:
            stream.close()
        if client is not None:
            client.close()
    total = sum(counts.values())
    if not args.quiet:
        summary = f"{total} files: {counts['valid']} valid, {counts['invalid']} invalid"
        if counts["unreadable"]:
            summary += f", {counts['unreadable']} unreadable"
        print(summary, file=sys.stderr)
    if counts["unreadable"]:
        return EXIT_USAGE_OR_IO
    return EXIT_INVALID if counts["invalid"] else EXIT_VALID


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        return _scan_command(args)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_USAGE_OR_IO


if __name__ == "__main__":
    sys.exit(main())
