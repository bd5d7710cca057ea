"""The upload gate: npyguard.asgi.check_upload and `python -m npyguard serve`,
driven as a client would, over real sockets: a uvicorn server on 127.0.0.1 and
a free port, started and stopped here, and httpx (python3-httpx) or a raw
socket where the test must control the bytes' timing."""

import asyncio
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

import httpx
import numpy as np
import pytest

import npyguard
from npyguard import asgi

TOOL = os.environ.get("NPYGUARD_TOOL")


class Server:
    """`python -m npyguard serve --port 0 ARGS` in a process of its own."""

    def __init__(self, *args):
        self.process = subprocess.Popen([sys.executable, "-m", "npyguard", "serve", "--port", "0", *args],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/check", line)
        assert match, f"serve said: {line!r}"
        self.port = int(match.group(1))
        self.url = f"http://127.0.0.1:{self.port}"
        for _ in range(200):
            try:
                if httpx.get(self.url + "/healthz").status_code == 200:
                    return
            except httpx.TransportError:
                time.sleep(0.05)
        raise AssertionError("serve never answered /healthz")

    def post(self, body, name=None, **kwargs):
        params = {"filename": name} if name is not None else None
        return httpx.post(self.url + "/check", content=body, params=params, timeout=30, **kwargs)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stderr.close()


@pytest.fixture(scope="module")
def server():
    """The defaults of `npyguard check` (1 MiB headers, no body limit that would lower
    max_data_bytes), so that rows compare with the command's."""
    running = Server("--max-header-bytes", "1M", "--max-stream-bytes", "1048576G", "--timeout", "20")
    yield running
    running.stop()


@pytest.fixture(scope="module")
def strict():
    """A small endpoint: .npy only, 1 MiB bodies, a 2 s deadline, 4 checks at once."""
    running = Server("--format", "npy", "--max-stream-bytes", "1M", "--timeout", "2", "--max-concurrent", "4")
    yield running
    running.stop()


def npy(array):
    import io
    out = io.BytesIO()
    np.save(out, array)
    return out.getvalue()


def npz(**arrays):
    import io
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getvalue()


def command_row(body, fmt):
    """`npyguard check --json --format FMT -` on a pipe holding `body`, without its "file"."""
    assert TOOL, "NPYGUARD_TOOL names the command (ctest sets it)"
    done = subprocess.run(f"cat | {TOOL} check --json --max-header-bytes 1M --format {fmt} -", shell=True,
                          input=body, capture_output=True, timeout=60)
    row = json.loads(done.stdout)
    del row["file"]
    return row


def gate_row(response):
    row = response.json()
    del row["file"]
    return row


def corpus(golden, npz_archives, ra_files):
    """(name, bytes) of every file of the test sets the command's options do not change."""
    for path, _ in golden:
        yield path.name, path.read_bytes()
    directory, manifest = npz_archives
    for row in manifest:
        yield row["file"], (directory / row["file"]).read_bytes()
    directory, manifest = ra_files
    for row in manifest:
        if not row["options"]:
            yield row["file"], (directory / row["file"]).read_bytes()


# ---------------------------------------------------------------------------
# Verdicts: the command's row for the same bytes, and the status


def command_rows(bodies, formats):
    """`npyguard check --json --format FMT FIFO` for each body, fed through a FIFO (a
    stream, as the gate reads its uploads), one command for them all."""
    import tempfile
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for fmt in set(formats):
            chosen = [i for i, f in enumerate(formats) if f == fmt]
            fifos = [os.path.join(scratch, f"{fmt}-{i}") for i in chosen]
            for fifo in fifos:
                os.mkfifo(fifo)

            def feed(chosen=chosen, fifos=fifos):
                for i, fifo in zip(chosen, fifos):
                    with open(fifo, "wb") as sink:
                        try:
                            sink.write(bodies[i])
                        except BrokenPipeError:  # the command stopped reading at its verdict
                            pass

            writer = threading.Thread(target=feed)
            writer.start()
            done = subprocess.run([TOOL, "check", "--json", "-j", "1", "--max-header-bytes", "1M", "--timeout", "30",
                                   "--format", fmt, *fifos], capture_output=True, timeout=300)
            writer.join(60)
            for i, line in zip(chosen, done.stdout.decode().splitlines()):
                row = json.loads(line)
                del row["file"]
                rows.append((i, row))
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def test_every_test_file_gets_the_commands_row_and_the_matching_status(server, golden, npz_archives, ra_files):
    import http.client
    names, bodies, answers = [], [], []
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    connection.connect()
    # Headers and body go in two writes: without TCP_NODELAY the body waits for
    # the server's delayed ACK (40 ms a request, the client's cost, not the gate's).
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    for name, body in corpus(golden, npz_archives, ra_files):
        connection.request("POST", "/check?filename=" + urllib.parse.quote(name), body)
        response = connection.getresponse()
        answers.append((response.status, int(response.getheader("x-npyguard-received")), json.loads(response.read())))
        names.append(name)
        bodies.append(body)
    connection.close()
    expected = command_rows(bodies, [row["format"] for _, _, row in answers])
    assert len(expected) == len(answers)
    statuses = set()
    for name, body, (status, received, row), command in zip(names, bodies, answers, expected):
        assert row.pop("file") == name
        assert row == command, name
        assert status == asgi.status_of(row), name
        assert received <= len(body)
        statuses.add(status)
    valid = sum(row["valid"] for _, _, row in answers)
    assert valid > 200 and len(answers) - valid > 100, valid
    assert statuses >= {200, 422, 413}


def test_without_a_name_the_first_bytes_choose_and_a_name_is_a_claim(server):
    body = npz(a=np.arange(3))
    assert server.post(body).json()["format"] == "npz"
    claimed = server.post(body, "weights.npy")
    assert claimed.status_code == 422
    assert claimed.json()["error"]["code"] == "bad_magic" and claimed.json()["format"] == "npy"
    # Content-Disposition carries the name too (RFC 6266, filename* first).
    disposed = server.post(body, headers={"Content-Disposition": "attachment; filename*=UTF-8''w%C3%A9ights.npz"})
    assert disposed.status_code == 200 and disposed.json()["file"] == "wéights.npz"
    # A client's path is cut to its last component.
    assert server.post(body, "C:\\uploads\\a.npz").json()["file"] == "a.npz"


def test_statuses_413_415_and_the_rows_fields(strict):
    too_big = npy(np.zeros(200_000))  # 1.6 MB: the array itself is above the 1 MiB body limit
    response = strict.post(too_big, "big.npy")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "data_too_large" and error["option"] == "max_data_bytes"
    assert error["limit"] == 1 << 20 and error["actual"] == 1_600_000
    assert int(response.headers["x-npyguard-received"]) <= 64 << 10  # refused at the header

    trailing = npy(np.zeros(4)) + b"\0" * (2 << 20)  # a small array, then 2 MiB more: refused where the data ends
    response = strict.post(trailing, "t.npy")
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "trailing_data"

    response = strict.post(npz(a=np.arange(3)), "a.npz")
    assert response.status_code == 415
    assert response.json()["error"]["code"] == "format_not_accepted" and response.json()["format"] == "npz"
    assert int(response.headers["x-npyguard-received"]) == 0


# ---------------------------------------------------------------------------
# Cost: a bad header in a huge body, a slow client, a client that leaves


def raw_request(port, head, first, rest_chunk=None, pace=None, limit=None):
    """Sends `head` and `first`, then `rest_chunk` again and again (every `pace`
    seconds, or as fast as the socket takes it) until the answer comes or
    `limit` bytes went; returns (status, headers, body, seconds, sent)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(head + first)
        sent = len(first)
        s.setblocking(False)
        answer = b""
        while True:
            wait = pace if pace is not None else 5
            readable, writable, _ = select.select([s], [s] if rest_chunk else [], [], wait)
            if readable:
                break
            if rest_chunk and writable and (limit is None or sent < limit):
                try:
                    sent += s.send(rest_chunk)
                except (BlockingIOError, BrokenPipeError, ConnectionResetError):
                    pass
            if pace is not None:
                time.sleep(pace)
        s.setblocking(True)
        s.settimeout(10)
        while b"\r\n\r\n" not in answer:
            part = s.recv(65536)
            if not part:
                break
            answer += part
        header_text, _, body = answer.partition(b"\r\n\r\n")
        lines = header_text.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:])
        while len(body) < int(headers.get("content-length", 0)):
            body += s.recv(65536)
    return int(lines[0].split()[1]), headers, body, time.monotonic() - start, sent


def test_a_bad_header_in_a_1_gib_body_is_answered_after_at_most_64_kib(server):
    size = 1 << 30
    head = (f"POST /check?filename=big.npy HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n").encode()
    header = b"{'descr': '<f8', 'fortran_order': False, 'shape': (-3,), }"
    first = b"\x93NUMPY\x01\x00\x76\x00" + header + b" " * (117 - len(header)) + b"\n"
    status, headers, body, seconds, sent = raw_request(server.port, head, first, rest_chunk=b"\0" * 65536)
    assert status == 422
    assert json.loads(body)["error"] == {"actual": None, "code": "negative_dimension", "limit": None,
                                         "message": "shape has a negative dimension", "offset": 61, "option": None}
    assert int(headers["x-npyguard-received"]) <= 64 << 10
    assert sent < size // 16  # answered long before the body could have been sent


def test_a_slow_client_is_cut_at_the_deadline_while_others_are_served(strict):
    body = npy(np.arange(1000))
    head = (f"POST /check?filename=slow.npy HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n").encode()
    answers = {}

    def slow():
        # The header at once (the validator is reading data), then a byte every 0.25 s.
        answers["slow"] = raw_request(strict.port, head, body[:200], rest_chunk=b"\0", pace=0.25)

    thread = threading.Thread(target=slow)
    thread.start()
    time.sleep(0.3)
    served = []
    while thread.is_alive() and len(served) < 200:
        started = time.monotonic()
        response = strict.post(npy(np.arange(5)), "fast.npy")
        served.append((response.status_code, time.monotonic() - started))
    thread.join(30)
    status, headers, reply, seconds, _ = answers["slow"]
    assert status == 408
    error = json.loads(reply)["error"]
    assert error["code"] == "io_error" and error["option"] == "timeout_ms"
    assert 1.5 <= seconds <= 4.5  # the 2 s deadline, whatever the client does
    assert len(served) >= 5 and all(code == 200 for code, _ in served)
    assert max(latency for _, latency in served) < 1.5


def test_a_slow_start_is_cut_at_the_deadline_too(strict):
    head = b"POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
    status, _, reply, seconds, _ = raw_request(strict.port, head, b"\x93", rest_chunk=b"N", pace=0.4)
    assert status == 408 and json.loads(reply)["error"]["option"] == "timeout_ms"
    assert seconds <= 4.5


def test_a_client_that_leaves_mid_body_frees_its_slot(strict):
    body = npy(np.arange(100_000))
    for _ in range(8):  # twice the slots: a slot kept by a departed client would starve the rest
        with socket.create_connection(("127.0.0.1", strict.port)) as s:
            s.sendall(f"POST /check HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode())
            s.sendall(body[:len(body) // 2])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        metrics = httpx.get(strict.url + "/metrics").text
        if "npyguard_checks_in_flight 0" in metrics:
            break
        time.sleep(0.1)
    assert "npyguard_checks_in_flight 0" in metrics
    assert strict.post(npy(np.arange(3)), "after.npy").status_code == 200


# ---------------------------------------------------------------------------
# multipart/form-data


def test_multipart_takes_exactly_one_file(server):
    good = npz(a=np.arange(4))
    response = httpx.post(server.url + "/check", files={"file": ("arrays.npz", good)}, data={"note": "hello"})
    assert response.status_code == 200
    assert gate_row(response) == command_row(good, "npz") and response.json()["file"] == "arrays.npz"

    bad = npy(np.arange(3)).replace(b"'<i8'", b"'<x8'")
    response = httpx.post(server.url + "/check", files={"file": ("bad.npy", bad)})
    assert response.status_code == 422 and gate_row(response) == command_row(bad, "npy")

    two = httpx.post(server.url + "/check", files=[("a", ("a.npz", good)), ("b", ("b.npz", good))])
    assert two.status_code == 400 and two.json()["error"]["code"] == "bad_upload"
    assert "more than one file" in two.json()["error"]["message"]

    none = httpx.post(server.url + "/check", data={"a": "1"}, files={})
    none = httpx.post(server.url + "/check", content=b"--XX\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n"
                      b"--XX--\r\n", headers={"Content-Type": "multipart/form-data; boundary=XX"})
    assert none.status_code == 400 and "no file field" in none.json()["error"]["message"]

    huge = httpx.post(server.url + "/check", files={"f" * 100_000: ("x.npy", npy(np.arange(3)))})
    assert huge.status_code == 400 and "headers are above" in huge.json()["error"]["message"]

    no_boundary = httpx.post(server.url + "/check", content=b"x", headers={"Content-Type": "multipart/form-data"})
    assert no_boundary.status_code == 400 and no_boundary.json()["error"]["code"] == "bad_upload"


def test_healthz_and_metrics(server):
    assert httpx.get(server.url + "/healthz").text == "ok\n"
    server.post(npy(np.arange(2)), "m.npy")
    metrics = httpx.get(server.url + "/metrics")
    assert metrics.headers["content-type"].startswith("text/plain")
    assert re.search(r'^npyguard_verdicts_total\{code="ok",status="200"\} [1-9]\d*$', metrics.text, re.M)
    assert "# TYPE npyguard_verdicts_total counter" in metrics.text


def test_serve_refuses_bad_options_before_listening():
    done = subprocess.run([sys.executable, "-m", "npyguard", "serve", "--format", "npy,zip"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "'zip' is not a format" in done.stderr
    done = subprocess.run([sys.executable, "-m", "npyguard", "serve", "--max-concurrent", "0"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "must be at least 1" in done.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = subprocess.run([sys.executable, "-m", "npyguard", "serve", "--port", str(taken.getsockname()[1])],
                              capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "Address already in use" in done.stderr


# ---------------------------------------------------------------------------
# check_upload in process


async def chunks_of(data, size=1000):
    for at in range(0, len(data), size):
        yield data[at:at + size]


def test_check_upload_returns_the_row_and_raises_upload_refused():
    good = npy(np.arange(6).reshape(2, 3))
    row = asyncio.run(asgi.check_upload(chunks_of(good), name="x.npy"))
    assert row["valid"] and row["shape"] == [2, 3] and row["file"] == "x.npy"

    bad = good.replace(b"(2, 3)", b"(2,-3)")
    with pytest.raises(asgi.UploadRefused) as refused:
        asyncio.run(asgi.check_upload(chunks_of(bad)))
    error = refused.value
    assert isinstance(error, npyguard.NpyguardError) and error.status == 422
    assert (error.code, error.offset, error.code_value) == ("negative_dimension", bad.index(b"-3"),
                                                            npyguard.ERROR_CODES["negative_dimension"])
    assert error.row["file"] == "-" and error.row["valid"] is False

    with pytest.raises(asgi.UploadRefused) as refused:
        asyncio.run(asgi.check_upload(chunks_of(good), accept=("npz",)))
    assert refused.value.status == 415 and refused.value.code == "format_not_accepted"
    assert refused.value.code_value is None  # the gate's own code, not the library's

    archive = npz(a=np.random.default_rng(1).random(300_000))  # 2.4 MB, above a 1 MiB body limit
    with pytest.raises(asgi.UploadRefused) as refused:
        asyncio.run(asgi.check_upload(chunks_of(archive, 65536), max_stream_bytes=1 << 20))
    assert refused.value.status == 413 and refused.value.option == "max_stream_bytes"
    assert refused.value.limit == 1 << 20 and refused.value.actual > 1 << 20
    assert refused.value.received <= 1 << 20

    with pytest.raises(ValueError, match="accept holds 'zip'"):
        asyncio.run(asgi.check_upload(chunks_of(good), accept=("zip",)))


def test_check_upload_deadline_in_process():
    async def slow():
        yield npy(np.arange(10))[:100]
        await asyncio.sleep(5)
        yield b"\0"

    started = time.monotonic()
    with pytest.raises(asgi.UploadRefused) as refused:
        asyncio.run(asgi.check_upload(slow(), timeout=0.5))
    assert refused.value.status == 408 and refused.value.option == "timeout_ms"
    assert time.monotonic() - started < 3


def test_disposition_filename():
    assert asgi.disposition_filename('attachment; filename="a b.npy"') == "a b.npy"
    assert asgi.disposition_filename("attachment; filename=a.npz; filename*=UTF-8''%E2%82%AC.npz") == "€.npz"
    assert asgi.disposition_filename('form-data; name="f"; filename="q\\"x.npy"') == 'q"x.npy'
    assert asgi.disposition_filename("inline") is None


# ---------------------------------------------------------------------------
# The FastAPI example (examples/fastapi_upload.py)


@pytest.fixture(scope="module")
def example_app(source_dir):
    sys.path.insert(0, str(Path(source_dir) / "examples"))
    try:
        import fastapi_upload
    finally:
        sys.path.pop(0)
    return fastapi_upload.app


def example_post(app, name, body):
    async def post():
        async with httpx.AsyncClient(app=app, base_url="http://example") as client:
            return await client.post(f"/arrays/{name}", content=body)
    return asyncio.run(post())


def test_the_fastapi_example_loads_only_what_npyguard_accepted(example_app, source_dir):
    examples = Path(source_dir) / "examples"
    response = example_post(example_app, "valid.npy", (examples / "valid.npy").read_bytes())
    assert response.status_code == 200
    expected = np.load(examples / "valid.npy", allow_pickle=False)
    assert response.json()["arrays"] == {"shape": list(expected.shape), "dtype": expected.dtype.str}

    response = example_post(example_app, "weights.npz", (examples / "weights.npz").read_bytes())
    assert response.status_code == 200 and set(response.json()["arrays"]) == set(
        np.load(examples / "weights.npz").files)

    response = example_post(example_app, "polyglot.npy", (examples / "polyglot.npy").read_bytes())
    assert response.status_code == 422 and response.json()["valid"] is False
    response = example_post(example_app, "traversal.npz", (examples / "traversal.npz").read_bytes())
    assert response.status_code == 422
    response = example_post(example_app, "image.ra", (examples / "image.ra").read_bytes())
    assert response.status_code == 415


# ---------------------------------------------------------------------------
# The README's session with the service prints what it shows


def test_the_readme_serve_session_prints_what_it_shows(source_dir, tmp_path):
    text = (Path(source_dir) / "README.md").read_text()
    block = next(body for body in re.findall(r"^```console\n(.*?)^```", text, re.S | re.M)
                 if "npyguard serve" in body)
    steps = re.findall(r"^\$ (.*?)\n(.*?)(?=^\$ |\Z)", block, re.S | re.M)
    assert steps[0][0] == "python -m npyguard serve &" and steps[1][0] == "cd examples"
    fresh = Server()  # its own counts for /metrics
    try:
        assert f"POST http://127.0.0.1:{fresh.port}/check" in steps[0][1].replace("8000", str(fresh.port))
        differ = []
        for command, expected in steps[2:]:
            assert command.startswith("curl ")
            done = subprocess.run(["bash", "-c", command.replace("127.0.0.1:8000", f"127.0.0.1:{fresh.port}")],
                                  cwd=Path(source_dir) / "examples", capture_output=True, timeout=60)
            if done.stdout.decode() != expected:
                differ.append(f"$ {command}\n--- the README shows\n{expected}--- it prints\n{done.stdout.decode()}")
        assert not differ, "\n".join(differ)
    finally:
        fresh.stop()


def test_an_upload_file_and_a_busy_server(monkeypatch):
    import io
    from starlette.datastructures import UploadFile
    from npyguard import _serve

    async def upload_file():
        upload = UploadFile(file=io.BytesIO(npy(np.arange(7))), filename="dir/u.npy")
        return await asgi.check_upload(upload)

    row = asyncio.run(upload_file())
    assert row["file"] == "u.npy" and row["shape"] == [7]

    # One check slot, held past the deadline (a check that overran it: here a
    # stand-in judge that sleeps): the next request waits for the slot until
    # its own deadline, then is answered 503 (code busy), never queued forever.
    async def overrunning(*args, **kwargs):
        await asyncio.sleep(2.5)
        return {"valid": True}, 0

    app = _serve.create_app(max_concurrent=1, timeout=1.0)

    async def both():
        async with httpx.AsyncClient(app=app, base_url="http://gate", timeout=10) as client:
            first = asyncio.ensure_future(client.post("/check", content=b"x"))
            await asyncio.sleep(0.2)
            second = await client.post("/check", content=npy(np.arange(3)))
            return await first, second

    monkeypatch.setattr(asgi, "judge_upload", overrunning)
    first, second = asyncio.run(both())
    assert first.status_code == 200
    assert second.status_code == 503 and second.json()["error"]["code"] == "busy"
    assert second.headers["retry-after"] == "1"
