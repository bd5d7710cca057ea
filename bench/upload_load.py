#!/usr/bin/python3
"""Load benchmark for the upload gate (issue 37): `python -m npyguard serve`
beside the numpy reference endpoint (bench/upload_reference.py), same uploads,
same clients, same seconds, one server after the other.

    /usr/bin/python3 bench/upload_load.py                        # 200 clients, 30 s per server
    /usr/bin/python3 bench/upload_load.py --seconds 3 --clients 20   # smoke run
    /usr/bin/python3 bench/upload_load.py --server \\
        'PYTHONPATH=build/dev/python /usr/bin/python3 -m npyguard serve --port {port} --max-concurrent 16'
    /usr/bin/python3 bench/upload_load.py --url http://127.0.0.1:8000 --pid PID --no-reference  # already running

Uploads are generated once, up front, into a temporary directory, each with
the verdict npyguard must give it (with its default limits): benign .npy of
several dtypes and sizes (1 KB - 4 MB) and the golden corpus, .npz from
np.savez / np.savez_compressed, .ra files; hostile .npy (bad magic, truncated
header and data, huge declared shape, negative dimension, object/pickle dtype,
trailing bytes, ...), hostile .npz (a pickle member, duplicate keys, a member
whose directory declares 1 GiB, ...), and the hostile archives and .ra files
of the test suite (tests/npz/make_archives.py, tests/ra/make_files.py, whose
expectations come from the SPECs). Before the run every expectation is
compared with npyguard.check on the same bytes (buffer and stream) and with
numpy's verdict (the reference's own function), and the differences are
printed.

Then --clients concurrent clients (httpx.AsyncClient, one connection each,
all open at once: the peak count of established connections is measured)
POST random picks (a group by weight, then a file of it) to /check?filename=NAME
for --seconds. Printed per server: requests/s, p50/p99 latency, peak RSS of
the server process (VmHWM; the server is started here, so its PID is known),
the server's and the client's CPU, wrong verdicts (npyguard: must be 0; for
numpy: its disagreements with npyguard's expectation, by file), 5xx answers
and transport errors; then a markdown table with the machine for
bench/README.md. Exit status 1 if the npyguard server gave a wrong verdict, a
5xx or a transport error.
"""

import argparse
import asyncio
import collections
import importlib.util
import io
import json
import multiprocessing
import os
import platform
import random
import resource
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
import zlib

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_PYTHONPATH = os.path.join(REPO, "build", "dev", "python")
DEFAULT_SERVER = ("PYTHONPATH=%s /usr/bin/python3 -m npyguard serve --host 127.0.0.1 --port {port}"
                  % shlex.quote(DEFAULT_PYTHONPATH))
REFERENCE_SERVER = "%s %s --host 127.0.0.1 --port {port}" % (
    shlex.quote(sys.executable), shlex.quote(os.path.join(HERE, "upload_reference.py")))
REFUSAL_STATUSES = (408, 413, 415, 422)

sys.path.insert(0, HERE)
from upload_reference import numpy_verdict  # noqa: E402


# ---------------------------------------------------------------------------
# The uploads

class Upload:
    __slots__ = ("name", "group", "data", "valid", "note", "lib_code", "numpy_ok", "numpy_message")

    def __init__(self, name, group, data, valid, note=""):
        self.name, self.group, self.data, self.valid, self.note = name, group, data, valid, note
        self.lib_code = None      # npyguard.check's error code on these bytes (None: valid or not checked)
        self.numpy_ok = None      # numpy_verdict's answer
        self.numpy_message = None


# group: weight (of a pick; a file is then picked uniformly within the group)
GROUPS = collections.OrderedDict([
    ("npy benign", 0.22),
    ("npy golden", 0.08),
    ("npz benign", 0.15),
    ("ra benign", 0.05),
    ("npy hostile", 0.20),
    ("npz hostile", 0.22),
    ("ra hostile", 0.08),
])


def saved(arr, allow_pickle=False):
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=allow_pickle)
    return buf.getvalue()


def savez(compressed=False, *args, **kw):
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, *args, **kw)
    return buf.getvalue()


def npy_hand(dict_text, data=b"", version=(1, 0), align=64):
    """magic + version + HEADER_LEN + dict padded with spaces to `align`, '\\n' last, + data."""
    lenfmt = "<H" if version == (1, 0) else "<I"
    pre = 8 + struct.calcsize(lenfmt)
    body = dict_text.encode("latin1")
    body += b" " * ((-(pre + len(body) + 1)) % align) + b"\n"
    return b"\x93NUMPY" + bytes(version) + struct.pack(lenfmt, len(body)) + body + data


def raw_deflate(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def zip_by_hand(members):
    """A zip of (name, stored bytes, method, crc, compressed size, uncompressed size) as declared."""
    out, central = b"", b""
    for name, stored, method, crc, csize, usize in members:
        name = name.encode()
        offset = len(out)
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, method, 0, 0x21, crc, csize, usize,
                           len(name), 0) + name + stored
        central += struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, method, 0, 0x21, crc, csize,
                               usize, len(name), 0, 0, 0, 0, 0o600 << 16, offset) + name
    eocd = struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(members), len(members), len(central), len(out), 0)
    return out + central + eocd


def python_ra(array):
    """Python ra.write's layout (SPEC-ra.md): 6 + ndims little-endian u64 words, then the data, column-major."""
    kinds = {"i": 1, "u": 2, "f": 3, "c": 4}
    dims = array.shape
    head = struct.pack("<%dQ" % (6 + len(dims)), 0x7961727261776172, 0, kinds[array.dtype.kind],
                       array.dtype.itemsize, array.nbytes, len(dims), *dims)
    return head + array.transpose().tobytes()


def own_uploads():
    rng = np.random.default_rng(37)
    ups = []

    def add(group, name, data, valid, note=""):
        ups.append(Upload(name, group, data, valid, note))

    # --- benign .npy, 1 KB - 4 MB
    g = "npy benign"
    add(g, "f8_1k.npy", saved(rng.standard_normal(120)), True)
    add(g, "i4_8k.npy", saved(rng.integers(-1000, 1000, 2000, dtype="<i4")), True)
    add(g, "f2_8k.npy", saved(rng.standard_normal((64, 64)).astype("<f2")), True)
    add(g, "bool_10k.npy", saved(rng.integers(0, 2, 10000).astype("?")), True)
    add(g, "M8ns_16k.npy", saved(np.arange(2000, dtype="<i8").view("<M8[ns]")), True)
    add(g, "U8_16k.npy", saved(np.array(["w%06d" % i for i in range(500)], dtype="<U8")), True)
    add(g, "struct_64k.npy", saved(np.zeros(4000, dtype=[("a", "<i4"), ("b", "<f8"), ("c", "S4")])), True)
    add(g, "u1_64k.npy", saved(rng.integers(0, 256, (256, 256), dtype="u1")), True)
    add(g, "be_i8_80k.npy", saved(np.arange(10000, dtype=">i8")), True)
    add(g, "c16_160k.npy", saved(rng.standard_normal((100, 100)) * 1j), True)
    add(g, "fortran_f8_720k.npy", saved(np.asfortranarray(rng.standard_normal((300, 300)))), True)
    add(g, "f4_1m.npy", saved(rng.standard_normal((512, 512)).astype("<f4")), True)
    add(g, "f8_2m.npy", saved(rng.standard_normal((512, 512))), True)
    add(g, "u1_4m.npy", saved(rng.integers(0, 256, (2048, 2048), dtype="u1")), True)

    # --- hostile .npy (and one file that is no format at all)
    g = "npy hostile"
    good = saved(np.arange(1000, dtype="<f8"))
    add(g, "bad_magic.npy", b"\x93NUMPZ" + good[6:], False, "magic")
    add(g, "text.npy", b"this is not an array\n" * 50, False, "not .npy")
    add(g, "truncated_header.npy", good[:40], False, "cut inside the header")
    add(g, "truncated_data.npy", good[:4128], False, "header of 8000 data bytes, 4000 sent")
    add(g, "trailing_data.npy", good + b"\0" * 64, False, "64 bytes after the data (numpy ignores them)")
    add(g, "huge_shape.npy", npy_hand("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776, 1048576), }",
                                      b"\0" * 4096), False, "2^60 elements declared, 4 KB sent")
    add(g, "large_shape_short_data.npy", npy_hand("{'descr': '<f8', 'fortran_order': False, 'shape': (1073741824,), }",
                                                  b"\0" * 4096), False, "8 GiB declared, 4 KB sent")
    add(g, "negative_dim.npy", npy_hand("{'descr': '<f8', 'fortran_order': False, 'shape': (-1, 4), }",
                                        b"\0" * 32), False, "shape (-1, 4)")
    add(g, "object_pickle.npy", saved(np.array([1, "a", None, {"k": 2}], dtype=object), allow_pickle=True),
        False, "object dtype: a pickle")
    add(g, "object_in_struct.npy",
        saved(np.array([(1, "x")], dtype=[("a", "<i4"), ("o", "O")]), allow_pickle=True), False,
        "object field: a pickle")
    add(g, "bad_descr.npy", npy_hand("{'descr': '<f7', 'fortran_order': False, 'shape': (4,), }", b"\0" * 28),
        False, "no such type")
    add(g, "code_in_header.npy",
        npy_hand("{'descr': __import__('os').getcwd(), 'fortran_order': False, 'shape': (1,), }", b"\0" * 8),
        False, "an expression")
    add(g, "fortran_order_int.npy", npy_hand("{'descr': '<i4', 'fortran_order': 0, 'shape': (2,), }", b"\0" * 8),
        False, "fortran_order 0")
    add(g, "missing_key.npy", npy_hand("{'descr': '<i4', 'shape': (2,), }", b"\0" * 8), False, "no fortran_order")
    add(g, "header_over_1MiB.npy", npy_hand("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }"
                                            + " " * (1100 * 1000), b"\0" * 32, version=(2, 0)), False,
        "HEADER_LEN 1.1 MB (spaces)")
    add(g, "too_many_dims.npy", npy_hand("{'descr': '|u1', 'fortran_order': False, 'shape': (%s), }"
                                         % ("1, " * 65), b"\0"), False, "65 dimensions")
    add(g, "header_len_past_end.npy", b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f8'", False, "HEADER_LEN 65535, 16 sent")
    nested = "'<f8'"
    for i in range(40):
        nested = "[('f%d', %s)]" % (i, nested)
    add(g, "deep_dtype.npy", npy_hand("{'descr': %s, 'fortran_order': False, 'shape': (1,), }" % nested, b"\0" * 8),
        False, "a dtype nested 40 deep")
    add(g, "random.bin", bytes(rng.integers(0, 256, 3000, dtype="u1")), False, "no format")

    # --- benign .npz
    g = "npz benign"
    add(g, "savez_small.npz", savez(False, a=np.arange(100.0), b=np.arange(100, dtype="<i4").reshape(10, 10)), True)
    add(g, "savez_positional_48k.npz", savez(False, rng.standard_normal(3000), np.arange(12000, dtype="<i2")), True)
    add(g, "savez_f4_1m.npz", savez(False, x=rng.standard_normal((512, 512)).astype("<f4")), True)
    add(g, "savez_100_members.npz", savez(False, **{"m%03d" % i: np.full(16, i) for i in range(100)}), True)
    add(g, "savez_compressed_random_1m.npz", savez(True, x=rng.standard_normal((128, 1024))), True)
    add(g, "savez_compressed_mixed.npz", savez(True, a=np.arange(100000), b=np.zeros((300, 300)),
                                               s=np.array(["abc", "de"])), True)
    add(g, "savez_compressed_zeros_32MiB.npz", savez(True, z=np.zeros(1 << 22)), True,
        "honest deflate at ratio ~1000: 32 MiB for numpy to inflate")
    add(g, "savez_struct_fortran.npz", savez(False, s=np.zeros(50, dtype=[("a", "<i4"), ("b", "<f8")]),
                                             f=np.asfortranarray(np.ones((30, 40)))), True)

    # --- hostile .npz
    g = "npz hostile"
    small = savez(False, a=np.arange(100.0), b=np.arange(10))
    add(g, "pickle_member.npz", savez(False, a=np.arange(3), o=np.array([1, None, "x"], dtype=object)), False,
        "member o is an object array: a pickle")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile: Duplicate name
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            zf.writestr("a.npy", saved(np.arange(4)))
            zf.writestr("a.npy", saved(np.arange(8.0)))
        add(g, "duplicate_keys.npz", buf.getvalue(), False, "two members a.npy")
    real = saved(np.zeros(1 << 21))  # 16 MiB of zeros, deflated to ~16 KB
    comp = raw_deflate(real)
    add(g, "declared_1GiB_member.npz", zip_by_hand([("z.npy", comp, 8, zlib.crc32(real), len(comp), 1 << 30)]),
        False, "the directory declares 1 GiB for ~16 KB of deflate (it inflates to 16 MiB)")
    add(g, "truncated_archive.npz", small[:len(small) // 2], False, "the first half of an archive")
    add(g, "member_not_npy.npz", zip_by_hand([("a.npy", b"hello", 0, zlib.crc32(b"hello"), 5, 5)]), False,
        "a member that is not .npy")
    trailing = saved(np.arange(4)) + b"junk"
    add(g, "member_trailing.npz", zip_by_hand([("a.npy", trailing, 0, zlib.crc32(trailing), len(trailing),
                                                len(trailing))]), False, "a member with bytes after its data")

    # --- benign .ra
    g = "ra benign"
    add(g, "python_f4_1m.ra", python_ra(rng.standard_normal((256, 1024)).astype("<f4")), True)
    add(g, "python_c8_32k.ra", python_ra((rng.standard_normal((64, 64)) * 1j).astype("<c8")), True)
    add(g, "python_i2_128k.ra", python_ra(rng.integers(-9, 9, (256, 256), dtype="<i2")), True)
    return ups


# Valid files whose verdict depends on max_header_bytes, whose default is 10,000 in Python (numpy's) and
# 1 MiB in the CLI and the C++ library: left out, whichever default the server takes.
LIMIT_DEPENDENT_HEADER = 10_000
LIMIT_DEPENDENT_NPZ = {"valid_numpy_header_over_10000.npz"}


def suite_uploads(tmp):
    """The test suite's golden .npy files, hostile/valid archives and .ra files, with their expectations."""
    ups = []
    golden = os.path.join(REPO, "tests", "golden")
    with open(os.path.join(golden, "expected.jsonl")) as fh:
        for line in fh:
            row = json.loads(line)
            if row["options"] or row["header_length"] > LIMIT_DEPENDENT_HEADER:
                continue  # object arrays valid only with allow_object; headers over 10,000 bytes: see below
            with open(os.path.join(golden, "files", row["file"]), "rb") as f:
                ups.append(Upload(row["file"], "npy golden", f.read(), True))

    npz_dir = os.path.join(tmp, "suite_npz")
    subprocess.run([sys.executable, os.path.join(REPO, "tests", "npz", "make_archives.py"), "--out", npz_dir,
                    "--no-numpy"], check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(npz_dir, "manifest.json")) as fh:
        for row in json.load(fh):
            if row["verify_only"] or row["file"] in LIMIT_DEPENDENT_NPZ:
                continue  # the verdict depends on verify (CRC and length checks) or on max_header_bytes
            with open(os.path.join(npz_dir, row["file"]), "rb") as f:
                ups.append(Upload("suite_" + row["file"], "npz benign" if row["valid"] else "npz hostile",
                                  f.read(), row["valid"], row["class"]))

    spec = importlib.util.spec_from_file_location("ra_make_files", os.path.join(REPO, "tests", "ra", "make_files.py"))
    ra = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ra)
    for row in ra.build():
        if row["options"]:
            continue
        ups.append(Upload("suite_" + row["file"], "ra benign" if row["valid"] else "ra hostile", row["data"],
                          row["valid"], row.get("note", "")))
    return ups


class _Stream:
    """read() only: npyguard.check reads it as an upload stream."""

    def __init__(self, data):
        self._b = io.BytesIO(data)

    def read(self, n=-1):
        return self._b.read(n)

    def readable(self):
        return True

    def seekable(self):
        return False


def suffix_format(name):
    ext = os.path.splitext(name)[1].lower()
    return {".npy": "npy", ".npz": "npz", ".ra": "ra"}.get(ext)


def cross_check(uploads, pythonpath):
    """Compare every expectation with npyguard.check (buffer and stream) and record numpy's verdict."""
    notes = []
    try:
        sys.path.insert(0, pythonpath)
        import npyguard
    except Exception as error:  # noqa: BLE001
        notes.append("npyguard not importable from %s (%s): expectations not cross-checked" % (pythonpath, error))
        npyguard = None
    for up in uploads:
        up.numpy_ok, up.numpy_message = numpy_verdict(up.data)
        if npyguard is None:
            continue
        verdicts = []
        for label, source in (("buffer", up.data), ("stream", _Stream(up.data))):
            try:
                npyguard.check(source, format=suffix_format(up.name))
                verdicts.append((label, True, None))
            except npyguard.NpyguardError as error:
                verdicts.append((label, False, getattr(error, "code", type(error).__name__)))
            except Exception as error:  # noqa: BLE001
                verdicts.append((label, None, "%s: %s" % (type(error).__name__, error)))
        up.lib_code = verdicts[0][2]
        for label, ok, code in verdicts:
            if ok is not up.valid:
                notes.append("%s: expected %s, npyguard.check(%s) says %s (%s)"
                             % (up.name, "valid" if up.valid else "invalid", label,
                                {True: "valid", False: "invalid", None: "error"}[ok], code))
    return notes


def build_uploads(tmp, keep_dir=None):
    uploads = own_uploads() + suite_uploads(tmp)
    names = set()
    for up in uploads:
        assert up.name not in names, up.name
        names.add(up.name)
    out = keep_dir or os.path.join(tmp, "uploads")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "expected.jsonl"), "w") as fh:
        for up in uploads:
            with open(os.path.join(out, up.name), "wb") as f:
                f.write(up.data)
            fh.write(json.dumps({"file": up.name, "group": up.group, "valid": up.valid, "bytes": len(up.data),
                                 "note": up.note}) + "\n")
    return uploads, out


# ---------------------------------------------------------------------------
# Servers

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def split_command(command, port):
    """argv and environment of a shell-like command line: leading NAME=value words set variables."""
    words = shlex.split(command.replace("{port}", str(port)))
    env = dict(os.environ)
    while words and "=" in words[0] and not words[0].startswith("=") and words[0].split("=", 1)[0].isidentifier():
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    if not words:
        raise SystemExit("--server: no command in %r" % command)
    return words, env


def proc_status(pid, key):
    try:
        with open("/proc/%d/status" % pid) as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])  # kB
    except OSError:
        return None
    return None


def proc_cpu_seconds(pid):
    try:
        with open("/proc/%d/stat" % pid) as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime, all threads
    except OSError:
        return None


def machine_ticks():
    """(busy, total) jiffies of all CPUs from /proc/stat (iowait counts as idle)."""
    with open("/proc/stat") as fh:
        values = [int(v) for v in fh.readline().split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    return total - idle, total


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


class Server:
    def __init__(self, label, command, log_dir):
        self.label = label
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        argv, env = split_command(command, self.port)
        self.argv = argv
        self.log_path = os.path.join(log_dir, "%s.log" % label.replace(" ", "_"))
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        self.pid = self.proc.pid

    def wait_ready(self, timeout=60):
        import httpx
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("%s exited with status %s before answering /healthz:\n%s"
                                 % (self.label, self.proc.returncode, self.log_tail()))
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise SystemExit("%s did not answer /healthz within %d s:\n%s" % (self.label, timeout, self.log_tail()))

    def log_tail(self, lines=40):
        if not self.log.closed:
            self.log.flush()
        with open(self.log_path, "rb") as fh:
            return b"\n".join(fh.read().splitlines()[-lines:]).decode("utf-8", "replace")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def established(port):
    """Established TCP connections whose local port is `port` (the server's side of each connection)."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as fh:
                next(fh)
                for line in fh:
                    parts = line.split(None, 4)
                    if parts[3] == "01" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                        n += 1
        except OSError:
            pass
    return n


# ---------------------------------------------------------------------------
# The client

def client_process(conn, url, uploads, group_members, weights, n_clients, first_client, start_at, seconds,
                   timeout, seed):
    """One client process: n_clients coroutines, one connection each; sends its records back."""
    import httpx

    groups = list(group_members)
    records = []  # (upload index, start - start_at, latency, status, verdict, code, transport error, received)
    check_url = url + "/check"

    async def worker(client, i):
        rng = random.Random(seed * 100003 + first_client + i)
        end = start_at + seconds
        while True:
            now = time.time()
            if now >= end:
                return
            group = rng.choices(groups, weights)[0]
            index = rng.choice(group_members[group])
            up = uploads[index]
            t = time.perf_counter()
            try:
                response = await client.post(check_url, params={"filename": up.name}, content=up.data,
                                             headers={"content-type": "application/octet-stream"})
                latency = time.perf_counter() - t
                verdict, code = None, None
                try:
                    body = response.json()
                    if isinstance(body, dict):
                        verdict = body.get("valid")
                        error = body.get("error")
                        if isinstance(error, dict):
                            code = error.get("code")
                except ValueError:
                    pass
                received = response.headers.get("x-npyguard-received")
                received = int(received) if received and received.isdigit() else None
                records.append((index, now - start_at, latency, response.status_code, verdict, code, None,
                                received))
            except httpx.HTTPError as error:
                records.append((index, now - start_at, time.perf_counter() - t, None, None, None,
                                "%s: %s" % (type(error).__name__, str(error)[:120]), None))

    async def main():
        # keepalive_expiry under uvicorn's 5 s keep-alive timeout: the client drops an idle connection before the
        # server closes it, so no request is sent on a connection the server is closing (a ReadError that
        # would be the benchmark's, not the server's).
        limits = httpx.Limits(max_connections=n_clients, max_keepalive_connections=n_clients, keepalive_expiry=4.0)
        async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout)) as client:
            # Open every connection before the window: n_clients responses held unread at once need
            # n_clients connections; read in full, each goes back to the pool (kept alive).
            opened = asyncio.Event()
            holding = [0]

            async def hold():
                async with client.stream("GET", url + "/healthz") as response:
                    holding[0] += 1
                    if holding[0] == n_clients:
                        opened.set()
                    await asyncio.wait_for(opened.wait(), 60)
                    await response.aread()
                    return response

            warm = await asyncio.gather(*(hold() for _ in range(n_clients)), return_exceptions=True)
            bad = [w for w in warm if isinstance(w, BaseException) or w.status_code != 200]
            if bad:
                raise RuntimeError("warm-up: %d of %d /healthz requests failed (%r)" % (len(bad), n_clients, bad[0]))
            delay = start_at - time.time()
            if delay > 0:
                await asyncio.sleep(delay)
            else:
                raise RuntimeError("warm-up took %.1f s past the start" % -delay)
            usage = resource.getrusage(resource.RUSAGE_SELF)
            await asyncio.gather(*(worker(client, i) for i in range(n_clients)))
            after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (after.ru_utime - usage.ru_utime) + (after.ru_stime - usage.ru_stime)
        return cpu

    try:
        cpu = asyncio.run(main())
        conn.send((records, cpu, None))
    except BaseException as error:  # noqa: BLE001
        conn.send((records, 0.0, "%s: %s" % (type(error).__name__, error)))
    conn.close()


def run_load(label, url, pid, uploads, args):
    """Drive one server; return the summary dict."""
    group_members = collections.OrderedDict()
    for i, up in enumerate(uploads):
        group_members.setdefault(up.group, []).append(i)
    groups = [g for g in GROUPS if g in group_members]
    members = collections.OrderedDict((g, group_members[g]) for g in groups)
    weights = [GROUPS[g] for g in groups]

    port = int(url.rsplit(":", 1)[1].split("/")[0])
    load_before = os.getloadavg()
    t0 = machine_ticks()
    time.sleep(1.0)
    t1 = machine_ticks()
    idle_busy = (t1[0] - t0[0]) / max(1, t1[1] - t0[1])  # the machine's use by others, server idle
    rss_before = proc_status(pid, "VmRSS") if pid else None
    cpu_before = proc_cpu_seconds(pid) if pid else None

    ctx = multiprocessing.get_context("fork")
    start_at = time.time() + 3.0 + 0.5 * args.client_procs
    procs = []
    share = [args.clients // args.client_procs + (1 if k < args.clients % args.client_procs else 0)
             for k in range(args.client_procs)]
    first = 0
    for k, n in enumerate(share):
        parent, child = ctx.Pipe(duplex=False)
        p = ctx.Process(target=client_process, args=(child, url, uploads, members, weights, n, first, start_at,
                                                     args.seconds, args.request_timeout, args.seed))
        p.start()
        child.close()
        procs.append((p, parent))
        first += n

    # Sample the server's connections and memory while the clients run.
    peak_conns, rss_samples, conns_at_start = 0, [], None
    wall0 = None
    while any(p.is_alive() for p, _ in procs) and not all(c.poll() for _, c in procs):
        now = time.time()
        if now >= start_at:
            if wall0 is None:
                wall0 = now
                cpu_before = proc_cpu_seconds(pid) if pid else None
                conns_at_start = established(port)
                ticks_before = machine_ticks()
            peak_conns = max(peak_conns, established(port))
            if pid:
                rss = proc_status(pid, "VmRSS")
                kids = sum(proc_status(c, "VmRSS") or 0 for c in children_of(pid))
                if rss is not None:
                    rss_samples.append(rss + kids)
        time.sleep(0.25)
    wall_end = time.time()
    cpu_after = proc_cpu_seconds(pid) if pid else None
    ticks_after = machine_ticks()
    busy = None
    if wall0 is not None and ticks_after[1] > ticks_before[1]:
        busy = (ticks_after[0] - ticks_before[0]) / (ticks_after[1] - ticks_before[1])

    records, client_cpu, failures = [], 0.0, []
    for p, conn in procs:
        try:
            got, cpu, failure = conn.recv()
        except EOFError:
            got, cpu, failure = [], 0.0, "client process died (exit %s)" % p.exitcode
        records.extend(got)
        client_cpu += cpu
        if failure:
            failures.append(failure)
        p.join()

    hwm = proc_status(pid, "VmHWM") if pid else None
    rss_after = proc_status(pid, "VmRSS") if pid else None
    alive = os.path.exists("/proc/%d" % pid) if pid else True
    try:
        import httpx
        m = httpx.get(url + "/metrics", timeout=10)
        metrics = {"status": m.status_code, "text": m.text}
    except Exception as error:  # noqa: BLE001
        metrics = {"status": None, "text": "%s: %s" % (type(error).__name__, error)}

    seconds = args.seconds
    in_window = [r for r in records if r[3] is not None and r[1] + r[2] <= seconds]
    answered = [r for r in records if r[3] is not None]
    lat = np.array([r[2] for r in answered]) * 1000.0 if answered else np.array([0.0])

    wrong = collections.Counter()      # (file, expected, status, verdict, code) for npyguard's expectation
    numpy_mismatch = collections.Counter()  # the reference against numpy_verdict offline (server-side trouble)
    codes = collections.Counter()
    statuses = collections.Counter()
    code_diff = collections.Counter()  # npyguard server's code != npyguard.check's code
    five, transport, transport_files = collections.Counter(), collections.Counter(), collections.Counter()
    per_group = collections.defaultdict(list)
    received = collections.defaultdict(lambda: [0, 0, 0])  # valid/invalid: [answers with the header, received, sent]
    for index, start, latency, status, verdict, code, error, got in records:
        up = uploads[index]
        if got is not None and status is not None:
            row = received["benign" if up.valid else "hostile"]
            row[0] += 1
            row[1] += got
            row[2] += len(up.data)
        if error is not None:
            transport[error.split(":", 1)[0]] += 1
            transport_files[(up.name, error)] += 1
            continue
        statuses[status] += 1
        per_group[up.group].append(latency * 1000.0)
        if status >= 500:
            five[(up.name, status)] += 1
            continue
        if code:
            codes[code] += 1
        ok = (status == 200 and verdict is True) if up.valid else (status in REFUSAL_STATUSES and verdict is False)
        if not ok:
            wrong[(up.name, "valid" if up.valid else "invalid", status, verdict, code)] += 1
        if label != "numpy" and not up.valid and up.lib_code and code and code != up.lib_code:
            code_diff[(up.name, up.lib_code, code)] += 1
        if label == "numpy" and up.numpy_ok is not None:
            if (status == 200 and verdict is True) != up.numpy_ok:
                numpy_mismatch[(up.name, up.numpy_ok, status)] += 1

    def pct(q):
        return float(np.percentile(lat, q)) if answered else float("nan")

    return {
        "label": label, "url": url, "pid": pid, "clients": args.clients, "client_procs": args.client_procs,
        "seconds": seconds, "load_before": load_before,
        "requests": len(records), "answered": len(answered), "in_window": len(in_window),
        "rps": len(in_window) / seconds, "p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99),
        "max_ms": float(lat.max()) if answered else float("nan"),
        "bytes_sent": sum(len(uploads[r[0]].data) for r in answered),
        "hwm_kb": hwm, "rss_before_kb": rss_before, "rss_after_kb": rss_after,
        "rss_sampled_peak_kb": max(rss_samples) if rss_samples else None,
        "server_cpu_s": (cpu_after - cpu_before) if pid and cpu_after is not None and cpu_before is not None
        else None,
        "client_cpu_s": client_cpu, "machine_busy": busy, "machine_busy_before": idle_busy,
        "wall_s": (wall_end - wall0) if wall0 else None,
        "peak_connections": peak_conns, "connections_at_start": conns_at_start,
        "statuses": dict(statuses), "codes": dict(codes),
        "wrong": [list(k) + [n] for k, n in wrong.most_common()],
        "wrong_total": sum(wrong.values()),
        "server_errors": [list(k) + [n] for k, n in five.most_common()], "server_errors_total": sum(five.values()),
        "transport": dict(transport), "transport_total": sum(transport.values()),
        "transport_files": [list(k) + [n] for k, n in transport_files.most_common()],
        "code_diff": [list(k) + [n] for k, n in code_diff.most_common()],
        "numpy_vs_offline": [list(k) + [n] for k, n in numpy_mismatch.most_common()],
        "per_group": {g: {"n": len(v), "p50_ms": float(np.percentile(v, 50)), "p99_ms": float(np.percentile(v, 99))}
                      for g, v in per_group.items() if v},
        "received": dict(received), "client_failures": failures, "server_alive": alive,
        "metrics_status": metrics["status"], "metrics_text": metrics["text"],
    }


# ---------------------------------------------------------------------------
# Report

def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = proc_meminfo_gib()
    versions = {}
    for mod in ("starlette", "uvicorn", "httpx", "h11"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            versions[mod] = "?"
    return {"nproc": len(os.sched_getaffinity(0)), "cpu": model, "mem_gib": mem, "python": platform.python_version(),
            "numpy": np.__version__, "kernel": platform.release(), **versions}


def proc_meminfo_gib():
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2 ** 20, 1)
    except OSError:
        return None


def mb(kb):
    return "%.0f" % (kb / 1024) if kb else "?"


def print_run(s, uploads):
    print("\n== %s (%s, PID %s): %d clients x %d s, %d client process(es) ==" % (
        s["label"], s["url"], s["pid"] or "?", s["clients"], s["seconds"], s["client_procs"]))
    print("  load average before: %.2f %.2f %.2f" % tuple(s["load_before"]))
    print("  requests: %d sent, %d answered, %d answered within the %d s (%.1f/s); %.1f MB of bodies"
          % (s["requests"], s["answered"], s["in_window"], s["seconds"], s["rps"], s["bytes_sent"] / 1e6))
    print("  latency ms: p50 %.1f  p90 %.1f  p99 %.1f  max %.1f" % (s["p50_ms"], s["p90_ms"], s["p99_ms"], s["max_ms"]))
    print("  statuses: %s" % ", ".join("%s: %d" % kv for kv in sorted(s["statuses"].items())))
    for kind, (n, got, sent) in sorted(s["received"].items()):
        print("  X-Npyguard-Received, %s uploads: %.1f of %.1f MB sent were read before the answer (%.1f%%, %d answers)"
              % (kind, got / 1e6, sent / 1e6, 100.0 * got / max(1, sent), n))
    print("  established connections on the server port: %s at the start, %d at the peak"
          % (s["connections_at_start"], s["peak_connections"]))
    if s["pid"]:
        print("  server memory: VmHWM %s MB (RSS %s MB idle before, %s MB after; sampled peak %s MB incl. children)"
              % (mb(s["hwm_kb"]), mb(s["rss_before_kb"]), mb(s["rss_after_kb"]), mb(s["rss_sampled_peak_kb"])))
    wall = s["wall_s"] or s["seconds"]
    n = max(1, s["requests"])
    if s["server_cpu_s"] is not None:
        print("  server CPU: %.1f s (%.0f%% of one core, %.2f ms per request)"
              % (s["server_cpu_s"], 100 * s["server_cpu_s"] / wall, 1000 * s["server_cpu_s"] / n))
    print("  client CPU: %.1f s (%.0f%% of one core, %.2f ms per request, %d process(es))"
          % (s["client_cpu_s"], 100 * s["client_cpu_s"] / wall, 1000 * s["client_cpu_s"] / n, s["client_procs"]))
    if s["machine_busy"] is not None:
        print("  all CPUs busy: %.0f%% during the run, %.0f%% in the second before it (server idle: other tenants)"
              % (100 * s["machine_busy"], 100 * s["machine_busy_before"]))
    for g, v in s["per_group"].items():
        print("    %-12s %6d answers  p50 %7.1f ms  p99 %7.1f ms" % (g, v["n"], v["p50_ms"], v["p99_ms"]))
    if s["codes"]:
        print("  refusal codes: %s" % ", ".join("%s %d" % kv for kv in sorted(s["codes"].items(),
                                                                             key=lambda kv: -kv[1])[:25]))
    print("  metrics endpoint: %s" % s["metrics_status"])
    if not s["server_alive"]:
        print("  !! the server process was gone at the end of the run")
    for f in s["client_failures"]:
        print("  !! client process failure: %s" % f)
    if s["transport_total"]:
        print("  transport errors: %s; by upload (file, error, count):" % s["transport"])
        for row in s["transport_files"][:30]:
            print("    %s" % (row,))
    if s["server_errors_total"]:
        print("  5xx answers (file, status, count):")
        for row in s["server_errors"][:30]:
            print("    %s" % (row,))
    if s["label"] == "numpy":
        print("  answers that disagree with npyguard's expected verdict: %d (%d files; by group, of every upload: "
              "see 'numpy's verdicts' above)" % (s["wrong_total"], len(set(r[0] for r in s["wrong"]))))
    else:
        print("  wrong verdicts: %d" % s["wrong_total"])
        by_name = {u.name: u for u in uploads}
        for name, expected, status, verdict, code, n in s["wrong"][:60]:
            print("    %-44s expected %-7s got %s valid=%s code=%s  x%d  %s"
                  % (name, expected, status, verdict, code, n, by_name[name].note[:60]))
    if s["code_diff"]:
        print("  refusal codes that differ from npyguard.check on the same bytes (file, check, server, count):")
        for row in s["code_diff"][:30]:
            print("    %s" % (row,))
    if s["numpy_vs_offline"]:
        print("  !! the reference answered differently from numpy in this process (file, numpy ok, status, count):")
        for row in s["numpy_vs_offline"][:30]:
            print("    %s" % (row,))


def print_numpy_verdicts(uploads):
    """Where numpy's verdict (the reference's function, run here on every upload) differs from npyguard's."""
    off = [u for u in uploads if u.numpy_ok is not u.valid]
    print("numpy's verdicts (np.load(allow_pickle=False), every array read) differ from npyguard's on %d of %d uploads:"
          % (len(off), len(uploads)))
    for g in GROUPS:
        of = [u for u in off if u.group == g]
        if not of:
            continue
        total = sum(1 for u in uploads if u.group == g)
        what = "accepts" if "hostile" in g else "refuses"
        own = [u.name for u in of if not u.name.startswith("suite_")]
        suite = collections.Counter(u.note or "?" for u in of if u.name.startswith("suite_"))
        print("  %-12s numpy %s %d of %d" % (g, what, len(of), total))
        for name in own:
            up = next(u for u in of if u.name == name)
            print("      %-36s %s" % (name, (up.note if what == "accepts" else up.numpy_message or "")[:90]))
        if suite:
            if "ra" in g:
                sample = [u for u in of if u.name.startswith("suite_")][0]
                print("      %d test-suite .ra files: %s" % (sum(suite.values()), (sample.numpy_message or "")[:80]))
            else:
                print("      test-suite files by class: %s"
                      % ", ".join("%s %d" % kv for kv in suite.most_common()))


def markdown(runs, info, uploads, args):
    groups = collections.Counter(u.group for u in uploads)
    lines = []
    lines.append("Machine: %d CPUs (%s), %s GiB, Linux %s; Python %s, numpy %s, uvicorn %s (h11), starlette %s, "
                 "httpx %s. %d clients (%d client process(es)) for %d s per server, one server after the other."
                 % (info["nproc"], info["cpu"], info["mem_gib"], info["kernel"], info["python"], info["numpy"],
                    info["uvicorn"], info["starlette"], info["httpx"], args.clients, args.client_procs,
                    args.seconds))
    lines.append("Uploads: %d files (%s), picked by group weight, half benign, half hostile."
                 % (len(uploads), ", ".join("%s %d" % (g, groups[g]) for g in GROUPS if groups[g])))
    lines.append("")
    lines.append("| server | load avg before | requests/s | p50 ms | p99 ms | peak RSS (VmHWM) | wrong verdicts "
                 "| 5xx | transport errors | server CPU (per request) | client CPU (per request) "
                 "| all CPUs busy (idle before) |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in runs:
        wall = s["wall_s"] or s["seconds"]
        wrong = str(s["wrong_total"])
        if s["label"] == "numpy":
            wrong += " (numpy's disagreements, %d files)" % len(set(r[0] for r in s["wrong"]))
        busy = "?" if s["machine_busy"] is None else "%.0f%% (%.0f%%)" % (100 * s["machine_busy"],
                                                                         100 * s["machine_busy_before"])
        n = max(1, s["requests"])
        lines.append("| %s | %.2f | %.0f | %.0f | %.0f | %s MB | %s | %d | %d | %s | %.0f%% (%.1f ms) | %s |" % (
            s["label"], s["load_before"][0], s["rps"], s["p50_ms"], s["p99_ms"],
            mb(s["hwm_kb"]) if s["hwm_kb"] else "?", wrong, s["server_errors_total"], s["transport_total"],
            ("%.0f%% (%.1f ms)" % (100 * s["server_cpu_s"] / wall, 1000 * s["server_cpu_s"] / n))
            if s["server_cpu_s"] is not None else "?",
            100 * s["client_cpu_s"] / wall, 1000 * s["client_cpu_s"] / n, busy))
    lines.append("")
    lines.append("Server and client CPU in %% of one core over the run (the client shares the machine's %d cores with "
                 "the server); all CPUs busy: the whole machine from /proc/stat, over the run and in the second "
                 "before it with the server idle (other tenants)." % info["nproc"])
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n\n", 1)[1])
    target = parser.add_mutually_exclusive_group()
    target.add_argument("--server", metavar="CMD", default=None,
                        help="the npyguard server's command line, {port} for its port; leading NAME=value words "
                             "set environment variables (default: %s)" % DEFAULT_SERVER)
    target.add_argument("--url", help="an npyguard server already running (no memory or CPU figures unless --pid)")
    parser.add_argument("--pid", type=int, help="with --url: the server's PID, for its memory and CPU")
    parser.add_argument("--reference", default=REFERENCE_SERVER, metavar="CMD",
                        help="the numpy reference's command line (default: bench/upload_reference.py)")
    parser.add_argument("--no-reference", action="store_true", help="run the npyguard server only")
    parser.add_argument("--reference-only", action="store_true", help="run the numpy reference only")
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--client-procs", type=int, default=1,
                        help="client processes sharing --clients (default 1: one asyncio loop)")
    parser.add_argument("--request-timeout", type=float, default=120.0, help="client timeout per request, seconds")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--pythonpath", default=DEFAULT_PYTHONPATH,
                        help="where npyguard is imported from for the cross-check (default build/dev/python)")
    parser.add_argument("--keep-uploads", metavar="DIR", help="write the uploads and expected.jsonl here")
    parser.add_argument("--json", metavar="PATH", help="write the summaries as JSON")
    args = parser.parse_args()
    if args.clients < 1 or args.seconds < 1 or not 1 <= args.client_procs <= args.clients:
        parser.error("--clients, --seconds and --client-procs must be at least 1 (procs at most clients)")

    tmp = tempfile.mkdtemp(prefix="upload_load_")
    try:
        return run(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def run(args, tmp):
    info = machine()
    t = time.monotonic()
    uploads, where = build_uploads(tmp, args.keep_uploads)
    notes = cross_check(uploads, args.pythonpath)
    total = sum(len(u.data) for u in uploads)
    print("%d uploads (%.1f MB) written to %s in %.1f s" % (len(uploads), total / 1e6, where, time.monotonic() - t))
    for g in GROUPS:
        of = [u for u in uploads if u.group == g]
        if of:
            print("  %-12s weight %.2f  %4d files  %8.1f KB mean  numpy accepts %d"
                  % (g, GROUPS[g], len(of), sum(len(u.data) for u in of) / len(of) / 1e3,
                     sum(1 for u in of if u.numpy_ok)))
    if notes:
        print("expectation against npyguard.check on the same bytes: %d difference(s)" % len(notes))
        for n in notes:
            print("  " + n)
    else:
        print("expectations agree with npyguard.check (buffer and stream) on every upload")
    print_numpy_verdicts(uploads)

    plan = []
    if not args.reference_only:
        if args.url:
            plan.append(("npyguard", None, args.url.rstrip("/")))
        else:
            command = args.server or DEFAULT_SERVER
            if args.server is None:
                argv, env = split_command(command, 0)
                probe = subprocess.run(argv[:argv.index("serve") + 1] + ["--help"], env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                if probe.returncode != 0:
                    print("\n!! `python -m npyguard serve` is not available from %s: the npyguard server is not run "
                          "(pass --server CMD, or --reference-only)" % DEFAULT_PYTHONPATH)
                    command = None
            if command:
                plan.append(("npyguard", command, None))
    if not args.no_reference:
        plan.append(("numpy", args.reference, None))
    if not plan:
        raise SystemExit("nothing to run")

    runs = []
    for label, command, url in plan:
        if runs:
            time.sleep(3)  # let the previous server's exit and the load settle
        server = None
        if command:
            server = Server(label, command, tmp)
            server.wait_ready()
            url, pid = server.url, server.pid
        else:
            pid = args.pid
        try:
            summary = run_load(label, url, pid, uploads, args)
        finally:
            if server:
                alive = server.proc.poll() is None
                server.stop()
        if server:
            summary["server_alive"] = alive
            summary["command"] = " ".join(server.argv)
            if summary["server_errors_total"] or not alive or summary["transport_total"]:
                summary["log_tail"] = server.log_tail()
        runs.append(summary)
        print_run(summary, uploads)
        if summary.get("log_tail"):
            print("  server log (last lines):\n    " + summary["log_tail"].replace("\n", "\n    "))

    print("\n" + markdown(runs, info, uploads, args))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"machine": info, "runs": runs, "expectation_notes": notes}, fh, indent=1, default=str)

    failed = [s for s in runs if s["label"] != "numpy"
              and (s["wrong_total"] or s["server_errors_total"] or s["transport_total"] or not s["server_alive"])]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
