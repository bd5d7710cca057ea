"""npyguard.scan and `python -m npyguard scan` (issue 19): a tree of 10,000 valid and
hostile files checked in threads, on a 2-process Dask LocalCluster and through
fsspec's memory:// file system, against `npyguard check -r --json` file for file;
the bytes each check reads; a worker killed mid-scan; the file system's hostile
entries; the report's files (issue 32): CSV, JSON lines, a JSON array and
Parquet by the suffix, names escaped as the command escapes them and
recoverable exactly, and the summary's skipped entries and time."""

import base64
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
import zipfile
import zlib

import pytest

import npyguard
from npyguard import _scan

pd = pytest.importorskip("pandas")
distributed = pytest.importorskip("distributed")
fsspec = pytest.importorskip("fsspec")

from scan_tree import build  # noqa: E402  (python/tests, on pytest's path)

# tornado 6.2 under distributed 2022.12 (Debian 12): not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")

TREE_FILES = 10_000
TOOL = os.environ.get("NPYGUARD_TOOL")


@pytest.fixture(scope="module")
def tree(tmp_path_factory, source_dir, npz_archives, ra_files):
    root = tmp_path_factory.mktemp("scan") / "tree"
    root.mkdir()
    regular = build(root, TREE_FILES, source_dir, npz_archives[0], ra_files[0])
    return root, regular


@pytest.fixture(scope="module")
def check_records(tree):
    """`npyguard check -r --json` on the tree: the reference, one record per file."""
    if not TOOL:
        pytest.skip("NPYGUARD_TOOL (the command) is not set")
    done = subprocess.run([TOOL, "check", "-r", "--json", str(tree[0])], capture_output=True, check=False)
    assert done.returncode == 2, done.stderr  # the FIFO is unreadable
    return [json.loads(line) for line in done.stdout.decode().splitlines()]


@pytest.fixture(scope="module")
def local_rows(tree):
    return [row for batch in _scan.scan_rows(str(tree[0]), workers=2) for row in batch]


@pytest.fixture(scope="module")
def cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50) as local, Client(local) as client:
        yield client


def name_bytes(record):
    return base64.b64decode(record["file_bytes"]) if "file_bytes" in record else record["file"].encode()


def from_check(record):
    error = record.get("error") or {}
    fmt = record["format"]
    detail = None
    if record["valid"]:
        if fmt == "npz":
            detail = (sum(m["nbytes"] for m in record["members"]), len(record["members"]))
        elif fmt == "ra":
            detail = (tuple(record["dims"]), record["data_length"])
        else:
            detail = (tuple(record["shape"]), record["descr"], None if record["data_is_pickle"] else record["nbytes"])
    return (name_bytes(record), fmt, record["valid"], error.get("code"), error.get("offset"), record.get("member"),
            record.get("member_offset"), detail)


def from_scan(row):
    detail = None
    if row.valid:
        if row.format == "npz":
            detail = (row.nbytes, row.members)
        elif row.format == "ra":
            detail = (row.shape, row.nbytes)
        else:
            detail = (row.shape, row.descr, row.nbytes)
    return (os.fsencode(row.file), row.format, row.valid, row.code, row.offset, row.member, row.member_offset, detail)


def rows_of(frame):
    """The DataFrame's rows as FileReports, pandas' missing values as None."""
    out = []
    for values in frame.astype(object).itertuples(index=False, name=None):
        out.append(npyguard.FileReport(*(None if v is pd.NA else v for v in values)))
    return out


# ---------------------------------------------------------------------------
# The tree against the command


def test_the_tree_holds_every_format_and_many_codes(check_records, tree):
    assert len(check_records) == tree[1] + 1  # the FIFO is reported too
    formats = {r["format"] for r in check_records}
    codes = {(r.get("error") or {}).get("code") for r in check_records}
    assert formats == {"npy", "npz", "ra"}
    assert None in codes and "io_error" in codes
    assert len(codes) > 40, sorted(c for c in codes if c)


def test_in_process_scan_equals_check(check_records, local_rows):
    assert [from_scan(r) for r in local_rows] == [from_check(r) for r in check_records]


def test_cluster_scan_equals_check_file_for_file(cluster, check_records, local_rows, tree):
    frame = npyguard.scan([str(tree[0])], client=cluster)
    rows = rows_of(frame)
    assert [from_scan(r) for r in rows] == [from_check(r) for r in check_records]
    assert rows == local_rows  # bytes_read and reads included
    assert list(frame.columns) == list(npyguard._scan.COLUMNS)
    assert str(frame["offset"].dtype) == "UInt64" and frame["valid"].dtype == bool


def test_globs_select_a_subset(local_rows, tree):
    # One directory's names, in the walk's order.
    frame = npyguard.scan(str(tree[0]) + "/d00[0-2]/f*.npy")
    expected = [r for r in local_rows if r.file.endswith(".npy") and "/deep/" not in r.file and
                any(f"/d00{k}/" in r.file for k in range(3))]
    assert expected and rows_of(frame) == expected
    # '**': any depth, each directory's matches before its subdirectories'.
    rows = rows_of(npyguard.scan(str(tree[0]) + "/**/*.ra"))
    expected = [r for r in local_rows if r.file.endswith(".ra")]
    assert expected and sorted(rows) == sorted(expected) and len(rows) == len(expected)
    assert rows_of(npyguard.scan(str(tree[0]) + "/**/**/*.ra")) == rows  # '**/**' is '**': no file twice


# ---------------------------------------------------------------------------
# Bytes read


def _npz_bound(data):
    """The end window + the central directory + per member its local header (and
    64 bytes after it), its .npy header, and 1 KiB of a deflated member."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    end = zipfile._EndRecData(io.BytesIO(data))  # noqa: SLF001  (the directory's size and offset)
    bound = min(len(data), 65557) + end[zipfile._ECD_SIZE]
    for info in archive.infolist():
        bound += 30 + len(info.orig_filename.encode("utf-8")) + 64
        local = info.header_offset
        start = local + 30 + int.from_bytes(data[local + 26:local + 28], "little") + int.from_bytes(
            data[local + 28:local + 30], "little")
        head = data[start:start + 12]
        if info.compress_type == zipfile.ZIP_DEFLATED:  # no CRC check: the default mode does not read that far
            head = zlib.decompressobj(-15).decompress(data[start:start + info.compress_size], 12)
        width = 2 if head[6:7] == b"\x01" else 4
        header = 10 + (width - 2) + int.from_bytes(head[8:8 + width], "little")
        bound += header + (1024 if info.compress_type == zipfile.ZIP_DEFLATED else 0)
    return bound


def test_memory_filesystem_scan_reads_only_headers(tree, local_rows, check_records):
    fs = fsspec.filesystem("memory")
    root = f"/scan-{uuid.uuid4().hex}"
    base = os.fsencode(tree[0])
    copied = {}
    for row in local_rows:
        raw = os.fsencode(row.file)
        if row.code == "io_error" or b"\xff" in raw:
            continue  # the FIFO; and memory:// names are text
        relative = raw[len(base):].decode()
        data = open(raw, "rb").read()
        fs.pipe_file(root + relative, data)
        copied["memory://" + root + relative] = (row, data)
    try:
        rows = rows_of(npyguard.scan("memory://" + root))
    finally:  # (fs.rm is quadratic in the files of the tree)
        for key in [k for k in fs.store if k.startswith(root + "/")]:
            del fs.store[key]
        fs.pseudo_dirs[:] = [d for d in fs.pseudo_dirs if not d.startswith(root)]
    assert [r.file for r in rows] == sorted(copied, key=lambda u: u.split("/"))
    by_name = {name_bytes(r): r for r in check_records}
    total_read = total_size = 0
    for row in rows:
        local, data = copied[row.file]
        # The same verdict and the same reads as from the local file system.
        assert row[1:] == local[1:], row.file
        total_read += row.bytes_read
        total_size += len(data)
        record = by_name[os.fsencode(local.file)]
        if row.format == "npy":
            if row.valid:  # exactly the preamble and header: not one byte of data
                assert row.bytes_read == record["data_offset"] and row.reads == 2
            assert row.bytes_read <= max(12, _declared_npy_header_end(data))
        elif row.format == "ra":
            if row.valid:
                assert row.bytes_read == 48 + 8 * record["ndims"]
            assert row.bytes_read <= 48 + 8 * min(_ra_ndims(data), 1 << 20)
        elif row.valid:
            assert row.bytes_read <= _npz_bound(data), row.file
        assert row.bytes_read <= len(data)
    print(f"\nmemory:// scan: {len(rows)} files, {total_read} of {total_size} bytes read "
          f"({total_read / total_size:.1%})")
    # The tree's arrays are small (most under 1 KiB: headers are most of them);
    # its big ones are read only at their headers and ends.
    big = [r for r in rows if "/big/" in r.file]
    assert len(big) == 3 and all(r.valid for r in big)
    for row in big:
        size = len(copied[row.file][1])
        assert row.bytes_read <= (65557 + 4096 if row.format == "npz" else size / 1000), row


def _declared_npy_header_end(data):
    if len(data) < 10 or not data.startswith(b"\x93NUMPY"):
        return len(data)
    width = 2 if data[6] == 1 else 4
    return 8 + width + int.from_bytes(data[8:8 + width], "little")


def _ra_ndims(data):
    return int.from_bytes(data[40:48], "little") if len(data) >= 48 else 0


# ---------------------------------------------------------------------------
# Faults


def test_a_worker_killed_mid_scan_loses_no_file(tree, local_rows):
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                      silence_logs=50) as local, Client(local) as client:
        pids = client.run(os.getpid)
        result = {}
        scanning = threading.Thread(target=lambda: result.setdefault(
            "rows", [r for b in _scan.scan_rows(str(tree[0]), client=client, batch_size=5) for r in b]))
        scanning.start()
        victim = None
        deadline = time.monotonic() + 60
        while victim is None and time.monotonic() < deadline:
            busy = [w for w, tasks in client.processing().items() if tasks and w in pids]
            if busy:
                victim = busy[0]
            else:
                time.sleep(0.005)
        assert victim is not None, "no worker ever had a task"
        os.kill(pids[victim], signal.SIGKILL)
        killed_mid_scan = scanning.is_alive()
        scanning.join(timeout=300)
        assert not scanning.is_alive()
        assert killed_mid_scan
        assert pids[victim] not in client.run(os.getpid).values()  # it really died (the nanny started another)
    rows = result["rows"]
    assert len(rows) == len(local_rows)
    assert len({r.file for r in rows}) == len(rows)  # every file once
    assert rows == local_rows


def test_a_hostile_file_cannot_make_the_scan_read_or_allocate_past_the_limits(tmp_path):
    # A header length of 4 GiB, an .npz declaring 2**64 entries, a .ra of 2**60 dimensions.
    huge_header = b"\x93NUMPY\x02\x00" + (0xFFFFFFFF).to_bytes(4, "little") + b"{" * 100
    ra = b"rawarray" + bytes(8) + (3).to_bytes(8, "little") + (4).to_bytes(8, "little") + (0).to_bytes(
        8, "little") + (1 << 60).to_bytes(8, "little") + bytes(64)
    for name, data in (("huge.npy", huge_header), ("dims.ra", ra)):
        (tmp_path / name).write_bytes(data)
    rows = {r.file.rsplit("/", 1)[1]: r for r in rows_of(npyguard.scan(str(tmp_path)))}
    assert rows["huge.npy"].code == "header_too_large" and rows["huge.npy"].bytes_read == 12
    assert rows["dims.ra"].code == "too_many_dimensions" and rows["dims.ra"].bytes_read <= 48


class GrowingFile:
    """A source that grows by a kilobyte each time it is read."""

    def __init__(self, data):
        self.data = bytearray(data)
        self.reads = 0

    def size(self):
        return len(self.data)

    def read_at(self, offset, length):
        self.reads += 1
        chunk = bytes(self.data[offset:offset + length])
        self.data += b"\0" * 1024
        return chunk


def test_a_file_that_grows_while_read(tmp_path, source_dir):
    data = (source_dir / "examples" / "valid.npy").read_bytes()
    growing = GrowingFile(data)
    report = npyguard.check_source(growing, name="growing.npy")
    # The verdict is about the size the source had when the check began.
    assert report.valid and report.reads == growing.reads == 2 and report.bytes_read == 128
    # A local file appended to while a scan runs: a verdict about the size it had
    # when it was opened, valid or trailing_data, never a crash.
    path = tmp_path / "appended.npy"
    path.write_bytes(data)
    stop = threading.Event()

    def append():
        with open(path, "ab") as f:
            while not stop.is_set():
                f.write(b"\0" * 64)
                f.flush()

    writer = threading.Thread(target=append)
    writer.start()
    try:
        codes = {npyguard.check_source(path).code for _ in range(200)}
    finally:
        stop.set()
        writer.join()
    assert codes <= {None, "trailing_data"}


class Failing:
    def __init__(self, fail_size=False, oversize=False):
        self.fail_size = fail_size
        self.oversize = oversize

    def size(self):
        if self.fail_size:
            raise PermissionError("403 Forbidden")
        return 200

    def read_at(self, offset, length):
        if self.oversize:
            return b"\x93NUMPY" + bytes(length)
        raise TimeoutError("the bucket did not answer")


def test_a_source_that_fails_is_a_row_not_an_exception():
    cases = {
        "size": (Failing(fail_size=True), "cannot stat: PermissionError: 403 Forbidden"),
        "read": (Failing(), "cannot read: TimeoutError: the bucket did not answer"),
    }
    for name, (source, message) in cases.items():
        report = npyguard.check_source(source, name=name + ".npy")
        assert (report.valid, report.code, report.message) == (False, "io_error", message), name
    oversize = npyguard.check_source(Failing(oversize=True), name="x.npy")
    assert oversize.code == "io_error" and "more than asked" in oversize.message


def test_hostile_file_system_entries(tree, local_rows):
    special = [r for r in local_rows if "/special/" in r.file]
    names = [os.fsencode(r.file).split(b"/special/")[1] for r in special]
    # The walk: the FIFO reported (never opened), the directory named like a file
    # walked, links (the loop, a file, a directory) skipped, the name that is not
    # UTF-8 reported under its own bytes, names without a suffix skipped.
    assert names == [b"bad\xffname/caf\xe9.npy", b"dir_named.npy/inside.npy", b"empty.npy", b"pipe.npy"]
    fifo = special[3]
    assert (fifo.code, fifo.bytes_read) == ("io_error", 0) and "FIFO" in fifo.message
    assert special[2].code == "truncated_preamble" and special[2].bytes_read == 0
    assert special[0].valid
    record = _scan.report_record(special[0])
    assert base64.b64decode(record["file_bytes"]).endswith(b"/bad\xffname/caf\xe9.npy")
    assert json.loads(json.dumps(record))["file"].endswith("/bad\\xffname/caf\\xe9.npy")
    # Named directly: a symlink loop cannot be opened; a FIFO is not read.
    loop = npyguard.check_source(os.path.join(tree[0], "special", "loop.npy"))
    assert loop.code == "io_error" and "Too many levels of symbolic links" in loop.message
    pipe = npyguard.check_source(os.path.join(tree[0], "special", "pipe.npy"))
    assert pipe.code == "io_error" and "FIFO" in pipe.message


# ---------------------------------------------------------------------------
# The command


def run_scan(*args, cwd=None, env=None):
    return subprocess.run([sys.executable, "-m", "npyguard", "scan", *args], capture_output=True, cwd=cwd,
                          env=dict(os.environ, **(env or {})), timeout=600)


def test_command_writes_the_report_and_exits_as_check(tree, local_rows, tmp_path):
    out = tmp_path / "report.jsonl"
    done = run_scan(str(tree[0]), "--output", str(out), "--workers", "2")
    assert done.returncode == 2, done.stderr  # the FIFO: unreadable, as check says
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [name_bytes(r) for r in records] == [os.fsencode(r.file) for r in local_rows]
    assert [r["code"] for r in records] == [r.code for r in local_rows]
    assert f"{len(local_rows)} files: " in done.stderr.decode()
    csv_out = tmp_path / "report.csv"
    valid_only = tree[0] / "d000" / "f00001.npy"
    done = run_scan(str(valid_only), str(tree[0] / "d000" / "deep"), "-o", str(csv_out), "-q")
    assert done.returncode in (0, 1)
    frame = pd.read_csv(csv_out)
    assert list(frame.columns) == list(_scan.COLUMNS) + ["file_bytes"]
    first = npyguard.check_source(valid_only)
    done = run_scan(str(valid_only))
    assert (done.returncode, json.loads(done.stdout)["valid"]) == (0 if first.valid else 1, first.valid)


def test_command_help_and_usage_errors():
    done = run_scan("--help")
    text = done.stdout.decode()
    assert done.returncode == 0
    for words in ("--scheduler", "--workers", "--output", "Exit status", "bytes_read", "memory://"):
        assert words in text, words
    assert run_scan().returncode == 2
    bad = run_scan(".", "--max-depth", "-3")
    assert bad.returncode == 2 and b"max-depth" in bad.stderr
    both = run_scan(".", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1")
    assert both.returncode == 2 and b"not allowed with" in both.stderr


def test_verify_reads_npz_members_in_full(tree, local_rows):
    big = str(tree[0] / "big")
    light = {r.file: r for r in rows_of(npyguard.scan(big))}
    full = {r.file: r for r in rows_of(npyguard.scan(big, verify=True))}
    archive = next(name for name in full if name.endswith(".npz"))
    size = os.path.getsize(archive)
    assert full[archive].valid and light[archive].bytes_read < size / 20 < size <= full[archive].bytes_read
    for name in full:  # .npy and .ra: verify changes nothing
        if not name.endswith(".npz"):
            assert full[name] == light[name]
    # Members whose CRC-32, length or deflate stream is wrong: only verify sees them.
    broken = [r for r in local_rows if r.format == "npz" and r.valid]
    verified = rows_of(npyguard.scan([r.file for r in broken], verify=True))
    assert {r.code for r in verified} - {None} == {"crc_mismatch", "size_mismatch", "bad_deflate"}


def test_an_object_store_that_fails_gives_rows_not_a_failed_scan(monkeypatch, source_dir):
    fs = fsspec.filesystem("memory")
    root = f"/fail-{uuid.uuid4().hex}"
    valid = (source_dir / "examples" / "valid.npy").read_bytes()
    for name in ("a.npy", "sub/b.npy", "z.npy"):
        fs.pipe_file(f"{root}/{name}", valid)
    listing, reading = fs.ls, fs.cat_file

    def ls(path, *args, **kwargs):
        if path.rstrip("/").endswith("/sub"):
            raise RuntimeError("SlowDown: please reduce your request rate")
        return listing(path, *args, **kwargs)

    def cat_file(path, *args, **kwargs):
        if path.endswith("/z.npy"):
            raise ConnectionResetError(104, "Connection reset by peer")
        return reading(path, *args, **kwargs)

    monkeypatch.setattr(fs, "ls", ls)
    monkeypatch.setattr(fs, "cat_file", cat_file)
    try:
        rows = rows_of(npyguard.scan("memory://" + root, workers=1))
        globbed = rows_of(npyguard.scan("memory://" + root + "/**/*.npy", workers=1))
    finally:
        for key in [k for k in fs.store if k.startswith(root + "/")]:
            del fs.store[key]
    assert [(r.file.rsplit(root, 1)[1], r.valid, r.code) for r in rows] == [
        ("/a.npy", True, None), ("/sub", False, "io_error"), ("/z.npy", False, "io_error")]
    assert rows[1].message == "cannot read the directory: RuntimeError: SlowDown: please reduce your request rate"
    assert rows[2].message == "cannot read: ConnectionResetError: [Errno 104] Connection reset by peer"
    # A glob's '**' reports the directory it cannot list too, never skips it.
    assert [(r.file.rsplit(root, 1)[1], r.code, r.message) for r in globbed] == [
        (r.file.rsplit(root, 1)[1], r.code, r.message) for r in (rows[0], rows[2], rows[1])]


def test_the_readme_shows_the_real_output(source_dir, tmp_path):
    text = (source_dir / "README.md").read_text()
    section = text[text.index("### Scanning many files"):]
    shown = re.search(r"^```text\n(.*?)^```", section, re.S | re.M).group(1)
    out = tmp_path / "report.csv"
    done = run_scan("examples/", "--output", str(out), cwd=source_dir)
    summary = re.escape("8 files: 4 valid, 4 invalid; skipped 2 other names (not .npy/.npz/.ra); ")
    assert done.returncode == 1 and re.fullmatch(summary + r"\d+\.\d\d s", done.stderr.decode().strip())
    assert "8 files: 4 valid, 4 invalid; skipped 2 other names (not .npy/.npz/.ra); 0.04 s" in section
    assert out.read_text().replace("\r\n", "\n") == shown


def test_a_tree_deeper_than_the_recursion_limit(tmp_path, source_dir):
    depth = sys.getrecursionlimit() + 200
    path = tmp_path
    for _ in range(depth):  # (os.makedirs recurses)
        path = path / "a"
        path.mkdir()
    (path / "deep.npy").write_bytes((source_dir / "examples" / "valid.npy").read_bytes())
    try:
        for pattern in (str(tmp_path), str(tmp_path) + "/**/*.npy", str(tmp_path) + "/**/**/deep.npy"):
            rows = rows_of(npyguard.scan(pattern))
            assert [r.file.count("/a") for r in rows] == [depth] and rows[0].valid, pattern
    finally:  # bottom up: shutil.rmtree (and pytest's cleanup) would recurse as deep
        (path / "deep.npy").unlink()
        while path != tmp_path:
            path.rmdir()
            path = path.parent


def test_a_frame_of_equal_shapes(tmp_path, source_dir):
    # Every shape a 2-tuple, or none at all: still one column of tuples (or of None).
    for k in range(3):
        (tmp_path / f"v{k}.npy").write_bytes((source_dir / "examples" / "valid.npy").read_bytes())
    frame = npyguard.scan(str(tmp_path))
    assert list(frame["shape"]) == [(3, 4)] * 3 and frame["shape"].dtype == object
    empty = npyguard.scan(str(tmp_path / "nothing-here"))
    assert list(empty["code"]) == ["io_error"] and list(empty["shape"]) == [None]
    assert list(npyguard.scan([]).columns) == list(_scan.COLUMNS)  # no input: no row, every column


def test_globs_report_what_the_walk_reports(tmp_path, monkeypatch, source_dir):
    valid = (source_dir / "examples" / "valid.npy").read_bytes()
    (tmp_path / "d").mkdir()
    (tmp_path / "top.npy").write_bytes(valid)
    (tmp_path / "d" / "inner.npy").write_bytes(valid)
    os.mkfifo(tmp_path / "d" / "pipe.npy")
    monkeypatch.chdir(tmp_path)
    # A lone '**' is everything under the current directory, each file once.
    assert [r.file for r in rows_of(npyguard.scan("**"))] == ["d/inner.npy", "d/pipe.npy", "top.npy"]
    assert [r.file for r in rows_of(npyguard.scan("**/**/*.npy"))] == ["top.npy", "d/inner.npy", "d/pipe.npy"]
    # A FIFO matched by a pattern is reported as the walk reports it, never opened.
    pipe = rows_of(npyguard.scan("d/*.npy"))[1]
    assert pipe.code == "io_error" and pipe.message.startswith("is a FIFO; not opened")
    # A pattern that matches nothing is a row (the shell would pass it on to check, which would not find it).
    nothing = rows_of(npyguard.scan("d/*.ra"))
    assert [(r.file, r.format, r.code, r.message) for r in nothing] == [
        ("d/*.ra", "ra", "io_error", "no file matches the pattern")]


def test_two_file_systems_with_the_same_paths_are_both_scanned(source_dir):
    from fsspec.implementations.memory import MemoryFileSystem

    class OtherMemory(MemoryFileSystem):  # a second store: the same paths, other files
        protocol = "othermemory"
        store = {}
        pseudo_dirs = [""]

        @classmethod
        def _strip_protocol(cls, path):
            return MemoryFileSystem._strip_protocol(path.replace("othermemory://", "", 1))

    fsspec.register_implementation("othermemory", OtherMemory, clobber=True)
    directory = f"/same-{uuid.uuid4().hex}"
    fsspec.filesystem("memory").pipe_file(f"{directory}/a.npy", (source_dir / "examples" / "valid.npy").read_bytes())
    OtherMemory().pipe_file(f"{directory}/a.npy", (source_dir / "examples" / "negative.npy").read_bytes())
    try:
        rows = rows_of(npyguard.scan([f"memory://{directory}", f"othermemory://{directory}"]))
    finally:
        fsspec.filesystem("memory").rm_file(f"{directory}/a.npy")
    assert [(r.file.split("://")[0], r.valid, r.code) for r in rows] == [
        ("memory", True, None), ("othermemory", False, "negative_dimension")]


class Flaky:
    """A reader whose n-th call raises `error`."""

    def __init__(self, data, n, error):
        self.data, self.n, self.error, self.calls = data, n, error, 0

    def size(self):
        return len(self.data)

    def read_at(self, offset, length):
        self.calls += 1
        if self.calls == self.n:
            raise self.error
        return self.data[offset:offset + length]


def test_a_readers_own_error_is_the_message_whichever_read_fails(source_dir):
    data = (source_dir / "examples" / "valid.npy").read_bytes()
    for n, name in ((1, "a.npy"), (2, "a.npy"), (1, "b.ra")):
        report = npyguard.check_source(Flaky(data, n, PermissionError(13, "Forbidden")), name=name)
        assert (report.code, report.message) == ("io_error", "cannot read: PermissionError: [Errno 13] Forbidden"), n
    interrupted = Flaky(data, 2, KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        npyguard.check_source(interrupted, name="a.npy")
    assert interrupted.calls == 2  # no read after it
    with pytest.raises(TypeError, match="size\\(\\) and read_at"):
        npyguard.check_source(b"\x93NUMPY")


def test_csv_cells_cannot_be_spreadsheet_formulas(tmp_path, source_dir):
    (tmp_path / "=HYPERLINK(1).npy").write_bytes((source_dir / "examples" / "negative.npy").read_bytes())
    out = tmp_path / "report.csv"
    assert run_scan(str(tmp_path), "-o", str(out), "-q").returncode == 1
    cell = out.read_text().splitlines()[1].split(",")[0]
    assert cell.startswith(str(tmp_path)) and cell.endswith("/=HYPERLINK(1).npy")  # not at the cell's start
    assert run_scan(str(tmp_path / "*.none"), "-o", str(out), "-q").returncode == 2
    assert "'-x" in _cell_of("-x")
    assert run_scan(".", "--batch-size", "0").returncode == 2


def _cell_of(value):
    from npyguard.__main__ import _cell

    return _cell(value)


def test_a_name_is_a_claim_as_in_the_command(tmp_path, source_dir):
    # SPEC.md section 9: a name ending in .npy, .npz or .ra is judged as that
    # format alone, whatever it holds; the scan and `check` agree.
    examples = source_dir / "examples"
    claims = {"zip.npy": ("weights.npz", "npy", "bad_magic", 0), "ra.npy": ("image.ra", "npy", "bad_magic", 0),
              "npy.npz": ("valid.npy", "npz", "not_zip", None), "npy.ra": ("valid.npy", "ra", "bad_magic", 0)}
    for name, (example, _, _, _) in claims.items():
        (tmp_path / name).write_bytes((examples / example).read_bytes())
    rows = {r.file.rsplit("/", 1)[1]: r for r in rows_of(npyguard.scan(str(tmp_path)))}
    for name, (_, fmt, code, offset) in claims.items():
        assert (rows[name].format, rows[name].valid, rows[name].code, rows[name].offset) == (fmt, False, code, offset)


# ---------------------------------------------------------------------------
# The report's files (issue 32)

# Names a hostile uploader picks: terminal escapes, a right-to-left override,
# line breaks, C1 controls, a backslash, a spreadsheet formula, two names that
# are not UTF-8 and differ in one byte, and an ordinary non-ASCII one.
HOSTILE_NAMES = [b"esc\x1b[31mred.npy", "bidi\u202egpj.npy".encode(), b"nl\nx.npy", b"tab\tx.npy", b"cr\rx.npy",
                 b"back\\slash.npy", "c1\u009bx.npy".encode(), "ls\u2028x.npy".encode(), b"del\x7fx.npy",
                 b"=formula.npy", b"bad\xff\xfe.npy", b"bad\xff\xfd.npy", "caf\u00e9.npy".encode()]
# What must never reach a report raw: a terminal or an editor acts on them.
RAW_FORBIDDEN = ["\x1b", "\r", "\x7f", "\u009b", "\u202e", "\u2028"]


def hostile_tree(directory, source_dir):
    """The hostile names (rejected files, so that `check -q` lists them) beside
    every example (.npy, .npz, .ra; valid and not)."""
    negative = (source_dir / "examples" / "negative.npy").read_bytes()
    for name in HOSTILE_NAMES:
        with open(os.fsencode(directory) + b"/" + name, "wb") as f:
            f.write(negative)
    for example in sorted((source_dir / "examples").iterdir()):
        if example.suffix in (".npy", ".npz", ".ra"):
            (directory / example.name).write_bytes(example.read_bytes())
    return directory


def unescape_name(cell):
    """Undoes the command's escaping of a name: the exact bytes."""
    out = bytearray()
    i = 0
    while i < len(cell):
        if cell[i] != "\\":
            out += cell[i].encode()
            i += 1
        elif cell[i + 1] in "\\nt":
            out += {"\\": b"\\", "n": b"\n", "t": b"\t"}[cell[i + 1]]
            i += 2
        elif cell[i + 1] == "x":
            out.append(int(cell[i + 2:i + 4], 16))
            i += 4
        else:
            assert cell[i + 1] == "u", cell
            out += chr(int(cell[i + 2:i + 6], 16)).encode()
            i += 6
    return bytes(out)


def json_tuple(record):
    shape = record["shape"]
    return (name_bytes(record), record["format"], record["valid"], record["code"], record["offset"], record["member"],
            record["member_offset"], record["message"], None if shape is None else tuple(shape), record["descr"],
            record["nbytes"], record["members"], record["bytes_read"], record["reads"])


def csv_tuple(cells):
    """A CSV row with its types back; text cells stay as written (escaped)."""
    def number(text):
        return None if text == "" else int(text)

    def text(cell):
        return None if cell == "" else cell

    name = base64.b64decode(cells["file_bytes"]) if cells["file_bytes"] else cells["file"].encode()
    return (name, cells["format"], {"True": True, "False": False}[cells["valid"]], text(cells["code"]),
            number(cells["offset"]), text(cells["member"]), number(cells["member_offset"]), text(cells["message"]),
            None if cells["shape"] == "" else tuple(json.loads(cells["shape"])), text(cells["descr"]),
            number(cells["nbytes"]), number(cells["members"]), number(cells["bytes_read"]), number(cells["reads"]))


def as_csv_writes_it(values):
    """A JSON tuple's text columns as CSV writes them: escaped, formulas defused."""
    values = list(values)
    for index, escape in ((5, _scan.escape_name), (7, _scan.escape_text), (9, _scan.escape_text)):
        if values[index] is not None:
            values[index] = _scan._spreadsheet_safe(escape(values[index]))
    return tuple(values)


def test_an_unknown_output_suffix_is_refused_before_scanning(tmp_path, source_dir):
    tree = tmp_path / "in"
    tree.mkdir()
    hostile_tree(tree, source_dir)
    for name in ("report.txt", "report", "report.parquet.gz", "report.csv.bak"):
        out = tmp_path / name
        done = run_scan(str(tree), "--output", str(out))
        err = done.stderr.decode()
        assert done.returncode == 2 and err.startswith("npyguard: --output ") and "suffix" in err, err
        assert "files:" not in err and err.count("\n") == 1 and done.stdout == b""  # nothing scanned
        assert not out.exists()
    with pytest.raises(_scan.OutputError, match=r"\.csv, \.jsonl .* \.json .* \.parquet"):
        _scan.output_format("r.xlsx")
    assert [_scan.output_format(n) for n in ("a.csv", "a.JSONL", "a.json")] == ["csv", "jsonl", "json"]
    # A file that cannot be created is refused before scanning too.
    done = run_scan(str(tree), "--output", str(tmp_path / "no-such-directory" / "r.csv"))
    assert done.returncode == 2 and "cannot write" in done.stderr.decode() and "files:" not in done.stderr.decode()


def test_parquet_without_pyarrow_is_refused_before_scanning(tmp_path, source_dir):
    blocker = tmp_path / "no_pyarrow"
    blocker.mkdir()
    (blocker / "pyarrow.py").write_text("raise ImportError('pyarrow is blocked for this test')\n")
    path = os.pathsep.join(p for p in (str(blocker), os.environ.get("PYTHONPATH", "")) if p)
    out = tmp_path / "report.parquet"
    done = run_scan(str(source_dir / "examples"), "--output", str(out), env={"PYTHONPATH": path})
    err = done.stderr.decode()
    assert done.returncode == 2 and "Parquet needs pyarrow" in err and "files:" not in err, err
    assert not out.exists()


def test_parquet_holds_the_rows(tmp_path, source_dir):
    pq = pytest.importorskip("pyarrow.parquet")
    tree = tmp_path / "in"
    tree.mkdir()
    hostile_tree(tree, source_dir)
    out = tmp_path / "report.parquet"
    assert run_scan(str(tree), "--output", str(out)).returncode == 1
    table = pq.read_table(out).to_pylist()
    rows = [r for b in _scan.scan_rows(str(tree)) for r in b]
    assert [c["file_bytes"] or c["file"].encode() for c in table] == [os.fsencode(r.file) for r in rows]
    assert [(c["format"], c["valid"], c["code"], c["offset"]) for c in table] == [
        (r.format, r.valid, r.code, r.offset) for r in rows]


def test_names_are_escaped_in_every_output_as_the_command_escapes_them(tmp_path, source_dir):
    tree = tmp_path / "in"
    tree.mkdir()
    hostile_tree(tree, source_dir)
    reports = {}
    for suffix in ("csv", "jsonl", "json"):
        out = tmp_path / f"report.{suffix}"
        assert run_scan(str(tree), "--output", str(out)).returncode == 1
        reports[suffix] = out.read_bytes()
    reports["stdout"] = run_scan(str(tree)).stdout
    rows = len([r for b in _scan.scan_rows(str(tree)) for r in b])
    for kind, data in reports.items():
        text = data.decode("utf-8")
        if kind == "csv":  # RFC 4180's line ends; no other carriage return
            text = text.replace("\r\n", "\n")
        for char in RAW_FORBIDDEN:
            assert char not in text, (kind, char)
        assert text.count("\n") == rows + {"csv": 1, "json": 2}.get(kind, 0), kind  # one line per row
        if kind != "csv":  # JSON: ASCII, every character beyond it escaped
            assert data.isascii() and not re.search(rb"[\x00-\x09\x0b-\x1f]", data), kind
    cells = {unescape_name(c["file"]): c["file"] for c in csv.DictReader(io.StringIO(reports["csv"].decode()))}
    base = os.fsencode(tree) + b"/"
    assert cells[base + b"esc\x1b[31mred.npy"].endswith("/esc\\x1b[31mred.npy")
    assert cells[base + "bidi\u202egpj.npy".encode()].endswith("/bidi\\u202egpj.npy")
    assert cells[base + b"back\\slash.npy"].endswith("/back\\\\slash.npy")
    assert cells[base + b"bad\xff\xfe.npy"].endswith("/bad\\xff\\xfe.npy")
    assert cells[base + "caf\u00e9.npy".encode()].endswith("/caf\u00e9.npy")  # printable: as it is
    if TOOL:  # the command's own text form of the same names
        done = subprocess.run([TOOL, "check", "-r", "-q", str(tree)], capture_output=True, check=False)
        shown = {line.split(":61: negative_dimension")[0] for line in done.stdout.decode().split("\n")}
        # (U+2028 aside: the command's text form prints it, its JSON and the CSV escape it.)
        expected = {_scan.escape_name(os.fsdecode(base + name)) for name in HOSTILE_NAMES
                    if "\u2028".encode() not in name}
        assert expected <= shown, sorted(expected - shown)
        # and its JSON: the same text after decoding, the same file_bytes.
        done = subprocess.run([TOOL, "check", "-r", "--json", str(tree)], capture_output=True, check=False)
        theirs = [json.loads(line) for line in done.stdout.decode().splitlines()]
        ours = [json.loads(line) for line in reports["jsonl"].decode().splitlines()]
        assert [(r["file"], r.get("file_bytes")) for r in ours] == [(r["file"], r.get("file_bytes")) for r in theirs]


def test_csv_and_json_reload_to_the_same_rows(tmp_path, source_dir):
    tree = tmp_path / "in"
    tree.mkdir()
    hostile_tree(tree, source_dir)
    outputs = {}
    for suffix in ("csv", "jsonl", "json"):
        outputs[suffix] = tmp_path / f"report.{suffix}"
        assert run_scan(str(tree), "--output", str(outputs[suffix])).returncode == 1
    with open(outputs["json"], encoding="utf-8") as f:
        from_array = [json_tuple(r) for r in json.load(f)]
    from_lines = [json_tuple(json.loads(line)) for line in outputs["jsonl"].read_text().splitlines()]
    with open(outputs["csv"], encoding="utf-8", newline="") as f:
        from_csv = [csv_tuple(cells) for cells in csv.DictReader(f)]
    rows = [r for b in _scan.scan_rows(str(tree)) for r in b]
    assert from_array == from_lines
    assert [r[0] for r in from_array] == [os.fsencode(r.file) for r in rows]
    assert [r[1:] for r in from_array] == [(r.format, r.valid, r.code, r.offset, r.member, r.member_offset, r.message,
                                            r.shape, r.descr, r.nbytes, r.members, r.bytes_read, r.reads) for r in rows]
    assert from_csv == [as_csv_writes_it(r) for r in from_array]
    assert {r[1] for r in from_csv} == {"npy", "npz", "ra"} and any(r[5] for r in from_csv)  # a member name too


def test_a_name_that_is_not_utf8_is_recovered_exactly(tmp_path, source_dir):
    tree = tmp_path / "in"
    tree.mkdir()
    valid = (source_dir / "examples" / "valid.npy").read_bytes()
    names = [b"bad\xff\xfe.npy", b"bad\xff\xfd.npy", b"latin\xe9.npy", b"cut\xe2\x82.npy"]
    for name in names:
        with open(os.fsencode(tree) + b"/" + name, "wb") as f:
            f.write(valid)
    base = os.fsencode(tree) + b"/"
    expected = sorted(base + n for n in names)
    csv_out, jsonl_out, json_out = (tmp_path / f"r.{s}" for s in ("csv", "jsonl", "json"))
    for out in (csv_out, jsonl_out, json_out):
        assert run_scan(str(tree), "--output", str(out)).returncode == 0
    with open(csv_out, encoding="utf-8", newline="") as f:
        assert sorted(base64.b64decode(c["file_bytes"]) for c in csv.DictReader(f)) == expected
    assert sorted(name_bytes(json.loads(line)) for line in jsonl_out.read_text().splitlines()) == expected
    assert sorted(name_bytes(r) for r in json.loads(json_out.read_text())) == expected
    # Two names that differ in a byte that is not UTF-8 stay apart in the text too.
    assert len({json.loads(line)["file"] for line in jsonl_out.read_text().splitlines()}) == len(names)


def skipping_tree(directory, source_dir):
    valid = (source_dir / "examples" / "valid.npy").read_bytes()
    (directory / "sub").mkdir(parents=True)
    (directory / "a.npy").write_bytes(valid)
    (directory / "sub" / "b.npy").write_bytes(valid)
    (directory / "UPPER.NPY").write_bytes(valid)  # the walk takes .npy, not .NPY
    (directory / "notes.txt").write_bytes(b"not an array")
    os.symlink("a.npy", directory / "link.npy")
    os.symlink("loop.npy", directory / "loop.npy")
    os.symlink("..", directory / "sub" / "up")
    os.mkfifo(directory / "pipe")  # not named as an array: skipped
    os.mkfifo(directory / "pipe.npy")  # named as one: a row (io_error), never opened
    return directory


def test_the_summary_counts_what_was_skipped_and_the_time(tmp_path, source_dir):
    tree = skipping_tree(tmp_path / "in", source_dir)
    listing = _scan.ScanListing()
    rows = [r for b in _scan.scan_rows([str(tree), str(tree)], listing=listing) for r in b]
    assert [os.path.relpath(r.file, tree) for r in rows] == ["a.npy", "pipe.npy", "sub/b.npy"]
    assert dict(listing.skipped) == {_scan.SKIPPED_LINK: 3, _scan.SKIPPED_NAME: 2, _scan.SKIPPED_SPECIAL: 1,
                                     _scan.SKIPPED_REPEATED: 1}
    assert listing.complete and listing.listed == 3
    done = run_scan(str(tree), str(tree))
    summary = done.stderr.decode().strip().splitlines()[-1]
    assert done.returncode == 2 and re.fullmatch(
        re.escape("3 files: 2 valid, 0 invalid, 1 unreadable; skipped 3 symbolic links, 2 other names "
                  "(not .npy/.npz/.ra), 1 special file, 1 repeated directory; ") + r"\d+\.\d\d s", summary), summary
    frame = npyguard.scan(str(tree))
    assert frame.attrs["skipped"] == {_scan.SKIPPED_LINK: 3, _scan.SKIPPED_NAME: 2, _scan.SKIPPED_SPECIAL: 1}
    assert frame.attrs["seconds"] > 0
    # A glob's match that is a link is skipped too, and counted.
    globbed = _scan.ScanListing()
    matched = [r.file for b in _scan.scan_rows(str(tree) + "/l*.npy", listing=globbed) for r in b]
    assert matched == [str(tree) + "/l*.npy"] and globbed.skipped == {_scan.SKIPPED_LINK: 2}  # no file: a row


def test_the_progress_bar_has_a_total_once_the_listing_is_known(tmp_path, source_dir, capsys):
    pytest.importorskip("tqdm")
    tree = skipping_tree(tmp_path / "in", source_dir)
    npyguard.scan(str(tree), progress=True)
    err = capsys.readouterr().err
    assert "npyguard scan" in err and "3/3" in err, err

    class Bar:
        total, n = None, 0

        def update(self, k):
            self.n += k

    bar, listing = Bar(), _scan.ScanListing()
    _scan._advance(bar, 5, listing)
    assert bar.total is None  # still listing: no total to show
    listing.listed, listing.complete = 12, True
    _scan._advance(bar, 5, listing)
    assert (bar.total, bar.n) == (12, 10)


def test_pip_installs_an_npyguard_scan_command(tmp_path, source_dir, capsys):
    from npyguard.__main__ import scan_main

    tomllib = pytest.importorskip("tomllib")
    scripts = tomllib.loads((source_dir / "python" / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"npyguard-scan": "npyguard.__main__:scan_main"}
    with pytest.raises(SystemExit) as exit_info:
        scan_main(["--help"])
    assert exit_info.value.code == 0 and capsys.readouterr().out.startswith("usage: npyguard-scan ")
    out = tmp_path / "r.json"
    assert scan_main([str(source_dir / "examples"), "--output", str(out), "-q"]) == 1
    assert {r["valid"] for r in json.loads(out.read_text())} == {False}  # -q: the invalid files only
    installed = os.path.join(os.path.dirname(sys.executable), "npyguard-scan")
    if os.path.exists(installed):  # a pip install (.ci/run's venv)
        done = subprocess.run([installed, str(source_dir / "examples" / "valid.npy")], capture_output=True)
        assert done.returncode == 0 and json.loads(done.stdout)["valid"] is True
