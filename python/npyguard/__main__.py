"""python -m npyguard scan (and the npyguard-scan command pip installs): one
verdict per file, `npyguard check -r`'s, for directories, globs and fsspec
URLs, in threads or on a Dask cluster."""

import argparse
import os
import sys
import time

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
in the format --output's suffix names: .csv (CSV, with a column file_bytes),
.jsonl (JSON lines, also the default on standard output), .json (one JSON
array) or .parquet (Parquet, when pyarrow can be imported); any other suffix
is refused before anything is scanned. Names are escaped as `npyguard check`
escapes them: in CSV a control byte or a byte that is not UTF-8 is \\xNN, a
C1, bidi or line-separator character \\uNNNN and a backslash \\\\; JSON is
ASCII, with \\uNNNN escapes. A name that is not UTF-8 comes whole, base64, in
file_bytes (in CSV also whenever the file cell is not the name exactly).

Summary (standard error): the counts, the time taken, and the entries the
walk skipped by reason: symbolic links, other names (not .npy/.npz/.ra, such
as UPPER.NPY), special files (FIFOs, sockets, devices not so named),
repeated directories.

Exit status: 0 every file valid, 1 some file invalid, 2 some file unreadable
(or a usage error), as `npyguard check`.

Examples:
  {prog} uploads/ --output report.jsonl
  {prog} 'uploads/**/*.npz' --verify --workers 8
  {prog} s3://bucket/arrays/ --scheduler tcp://10.0.0.5:8786 --output report.csv
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


_cell = _scan._spreadsheet_safe  # (the name the tests know it by)

_DESCRIPTION = ("Check every .npy, .npz and .ra file of directories, globs and fsspec URLs, in threads or on a Dask "
                "cluster, reading only the bytes each verdict needs.")


def _parser():
    parser = argparse.ArgumentParser(prog="python -m npyguard",
                                     description="npyguard for Python: the scan command and the upload gate.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    scan = commands.add_parser(
        "scan", help="check every file of directories, globs and URLs; one report row per file",
        description=_DESCRIPTION, epilog=_EPILOG.format(prog="python -m npyguard scan"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _scan_arguments(scan)
    serve = commands.add_parser(
        "serve", help="the upload gate: POST /check answers check --json's row for the uploaded file",
        description="An HTTP service that judges uploaded .npy, .npz and .ra files while they arrive "
        "(Starlette on uvicorn).", epilog=_SERVE_EPILOG.format(prog="python -m npyguard serve"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    _serve_arguments(serve)
    return parser


def _scan_parser(prog):
    """The scan command alone, as the npyguard-scan script."""
    parser = argparse.ArgumentParser(prog=prog, description=_DESCRIPTION, epilog=_EPILOG.format(prog=prog),
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _scan_arguments(parser)
    return parser


def _scan_arguments(scan):
    scan.add_argument("inputs", nargs="+", metavar="PATH_OR_URL", help="files, directories, globs, fsspec URLs")
    where = scan.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS",
                       help="a Dask scheduler (tcp://host:8786): batches of files become tasks on its workers, "
                       "which need npyguard installed")
    where.add_argument("--workers", type=_positive, metavar="N",
                       help="threads in this process (default: the CPU count)")
    scan.add_argument("--output", "-o", metavar="FILE",
                      help="write the report here, in the format its suffix names: .csv (a text cell starting with "
                      "=, +, -, @ gets a leading ', so that no spreadsheet runs a hostile name), .jsonl, .json (one "
                      "array) or .parquet (needs pyarrow); '-' is standard output (default: JSON lines on standard "
                      "output)")
    scan.add_argument("--quiet", "-q", action="store_true",
                      help="no progress bar, no summary, and only the invalid and unreadable files in the report")
    scan.add_argument("--batch-size", type=_positive, metavar="N",
                      help="files per batch (default: from the rate so far, about a second per Dask task and "
                      "20 ms per thread)")
    _policy_arguments(scan, max_header_bytes=1 << 20)


def _policy_arguments(parser, max_header_bytes):
    """The limits, as `npyguard check` spells them."""
    default = f"{max_header_bytes >> 20}M" if max_header_bytes % (1 << 20) == 0 else f"{max_header_bytes:,}"
    policy = parser.add_argument_group("policy (the command's defaults)")
    policy.add_argument("--verify", action="store_true",
                        help=".npz: also read every member in full (inflate, exact lengths, CRC-32)")
    policy.add_argument("--allow-object", action="store_true",
                        help="accept object ('O') dtypes; the pickle is never read")
    policy.add_argument("--allow-trailing-data", action="store_true", help="accept bytes after the array data")
    policy.add_argument("--canonical", action="store_true", help="headers must be exactly np.save's bytes")
    policy.add_argument("--max-header-bytes", type=_size, default=max_header_bytes, metavar="BYTES",
                        help=f"largest accepted HEADER_LEN (default {default})")
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


_SERVE_EPILOG = """\
POST /check takes the file as the raw body (its name, whose suffix is a claim
that is checked, from ?filename=NAME or a Content-Disposition header) or as
multipart/form-data with exactly one file field. The upload is judged while
it arrives: a bad .npy header is answered once the header is in, not after
the body; .npy and .ra data is counted, never kept; an .npz is spooled to an
unlinked file in --spool-directory. The answer is the JSON object
`npyguard check --json` prints for the same bytes, with the status:
  200 valid    422 not a well-formed file of its format
  413 over a size limit (--max-stream-bytes, --max-data-bytes, --max-total-bytes)
  408 past --timeout    415 a format not in --format
  400 no single file in the request (code bad_upload)
  503 every check slot busy until the deadline (code busy)
and the header X-Npyguard-Received (body bytes taken before the answer).
GET /healthz answers "ok"; GET /metrics the verdicts by code and status in
Prometheus' text format.

Defaults are for the open internet: loopback only, a body limit (1G), one
deadline per request (30 s) that a client sending a byte a second cannot
stretch, at most --max-concurrent checks at once and --max-connections
connections (more are answered 503 by uvicorn).

Examples:
  {prog}                                  # http://127.0.0.1:8000/check
  {prog} --port 0 --format npy,npz        # a free port, printed on start
  curl --data-binary @weights.npy 'http://127.0.0.1:8000/check?filename=weights.npy'
  curl -F file=@arrays.npz http://127.0.0.1:8000/check
"""


def _formats(text):
    formats = tuple(part.strip().lower().lstrip(".") for part in text.split(",") if part.strip())
    for name in formats:
        if name not in ("npy", "npz", "ra"):
            raise argparse.ArgumentTypeError(f"{name!r} is not a format (npy, npz, ra)")
    if not formats:
        raise argparse.ArgumentTypeError("name at least one format (npy, npz, ra)")
    return formats


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError("must be above 0 and at most 86400 seconds")
    return value


def _serve_arguments(serve):
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to listen on (default 127.0.0.1: loopback only; 0.0.0.0 for every interface)")
    serve.add_argument("--port", type=_count, default=8000, help="port (default 8000; 0: a free one, printed)")
    serve.add_argument("--format", type=_formats, default=("npy", "npz", "ra"), metavar="LIST",
                       help="formats taken, comma-separated (default npy,npz,ra); another is 415")
    serve.add_argument("--timeout", type=_seconds, default=30.0, metavar="SECONDS",
                       help="deadline per request, from its start to the answer (default 30)")
    serve.add_argument("--max-stream-bytes", type=_size, default=1 << 30, metavar="BYTES",
                       help="largest body taken (default 1G); more is 413")
    serve.add_argument("--max-concurrent", type=_positive, metavar="N",
                       help="uploads judged at once (default 4 x CPUs); more wait for a slot within their deadline")
    serve.add_argument("--max-connections", type=_positive, default=1024, metavar="N",
                       help="open connections (default 1024); more are answered 503")
    serve.add_argument("--spool-directory", default="", metavar="DIR",
                       help="where .npz uploads are spooled, unlinked (default $TMPDIR or /tmp)")
    _policy_arguments(serve, max_header_bytes=10_000)


def _serve_command(args):
    import socket

    try:
        import uvicorn
        from . import _serve
    except ImportError as e:
        print(f"npyguard: serve needs Starlette and uvicorn ({e}); install python3-starlette and python3-uvicorn",
              file=sys.stderr)
        return EXIT_USAGE_OR_IO
    limits = dict(verify=args.verify, max_header_bytes=args.max_header_bytes, max_depth=args.max_depth,
                  max_ndim=args.max_ndim, max_data_bytes=args.max_data_bytes,
                  allow_trailing_data=args.allow_trailing_data, allow_object=args.allow_object,
                  canonical=args.canonical, max_members=args.max_members, max_total_bytes=args.max_total_bytes,
                  max_ratio=args.max_ratio, allow_type5=not args.no_ra_type5, reject_metadata=args.ra_reject_metadata)
    try:
        from . import _options
        _options(**{k: v for k, v in limits.items()})
        app = _serve.create_app(accept=args.format, timeout=args.timeout, max_stream_bytes=args.max_stream_bytes,
                                max_concurrent=args.max_concurrent, spool_directory=args.spool_directory, **limits)
        family = socket.AF_INET6 if ":" in args.host else socket.AF_INET
        # proto IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY on accepted sockets only
        # then (without it, keep-alive answers wait 40 ms for delayed ACKs).
        listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((args.host, args.port))
    except (TypeError, ValueError, OSError) as e:
        print(f"npyguard: serve: {e}; run 'python -m npyguard serve --help'", file=sys.stderr)
        return EXIT_USAGE_OR_IO
    host, port = listener.getsockname()[:2]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    print(f"npyguard serve: POST http://{shown}:{port}/check, taking {', '.join('.' + f for f in args.format)}; "
          f"Ctrl-C stops", file=sys.stderr, flush=True)
    config = uvicorn.Config(app, log_level="warning", limit_concurrency=args.max_connections, timeout_keep_alive=5,
                            lifespan="off")
    uvicorn.Server(config).run(sockets=[listener])
    return EXIT_VALID


def _summary(counts, seconds, skipped):
    """'8 files: 4 valid, 4 invalid; skipped 1 other name (not .npy/.npz/.ra); 0.05 s'."""
    total = sum(counts.values())
    summary = f"{total} file{'' if total == 1 else 's'}: {counts['valid']} valid, {counts['invalid']} invalid"
    if counts["unreadable"]:
        summary += f", {counts['unreadable']} unreadable"
    skipped_text = _scan.skipped_summary(skipped)
    if skipped_text:
        summary += "; " + skipped_text
    return summary + f"; {seconds:.2f} s"


def _scan_command(args, prog="python -m npyguard scan"):
    start = time.monotonic()
    limits = dict(max_header_bytes=args.max_header_bytes, max_depth=args.max_depth, max_ndim=args.max_ndim,
                  max_data_bytes=args.max_data_bytes, allow_trailing_data=args.allow_trailing_data,
                  allow_object=args.allow_object, canonical=args.canonical, max_members=args.max_members,
                  max_total_bytes=args.max_total_bytes, max_ratio=args.max_ratio,
                  allow_type5=not args.no_ra_type5, reject_metadata=args.ra_reject_metadata)
    try:
        _scan._scan_options(verify=args.verify, **limits)
        # The output's format (its suffix; pyarrow for Parquet) and the file
        # itself, before anything is listed or scanned.
        if args.output and args.output != "-":
            writer = _scan.ReportWriter.to_file(args.output)
        else:
            writer = _scan.ReportWriter("jsonl", stream=sys.stdout)
    except _scan.OutputError as e:
        print(f"npyguard: --output {e}; run '{prog} --help'", file=sys.stderr)
        return EXIT_USAGE_OR_IO
    except (TypeError, ValueError) as e:
        print(f"npyguard: {e}; run '{prog} --help'", file=sys.stderr)
        return EXIT_USAGE_OR_IO
    client = None
    counts = {"valid": 0, "invalid": 0, "unreadable": 0}
    listing = _scan.ScanListing()
    bar = None
    complete = False  # an interrupted .json report stays unclosed: json.load refuses it
    try:
        if args.scheduler:
            from distributed import Client
            client = Client(args.scheduler)
        bar = None if args.quiet else _scan._progress_bar(sys.stderr.isatty())
        for batch in _scan.scan_rows(args.inputs, client=client, workers=args.workers, verify=args.verify,
                                     batch_size=args.batch_size, listing=listing, **limits):
            for row in batch:
                outcome = "valid" if row.valid else "unreadable" if row.code == "io_error" else "invalid"
                counts[outcome] += 1
            writer.write([row for row in batch if not (args.quiet and row.valid)])
            _scan._advance(bar, len(batch), listing)
        complete = True
    finally:
        if bar is not None:
            bar.close()
        writer.close(complete)
        if client is not None:
            client.close()
    if not args.quiet:
        print(_summary(counts, time.monotonic() - start, listing.skipped), file=sys.stderr)
    if counts["unreadable"]:
        return EXIT_USAGE_OR_IO
    return EXIT_INVALID if counts["invalid"] else EXIT_VALID


def _run(args, prog):
    try:
        return _scan_command(args, prog)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_USAGE_OR_IO


def main(argv=None):
    """python -m npyguard COMMAND ... (scan, serve)."""
    args = _parser().parse_args(argv)
    if args.command == "serve":
        return _serve_command(args)
    return _run(args, "python -m npyguard scan")


def scan_main(argv=None):
    """The npyguard-scan command (pyproject.toml's [project.scripts]): the scan alone."""
    return _run(_scan_parser("npyguard-scan").parse_args(argv), "npyguard-scan")


if __name__ == "__main__":
    sys.exit(main())
