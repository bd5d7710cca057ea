"""python -m npyguard serve: the upload gate as an HTTP service (Starlette on
uvicorn, Debian's python3-starlette and python3-uvicorn).

    POST /check      the file as the raw body (its name from ?filename= or
                     Content-Disposition), or multipart/form-data with exactly
                     one file field; answers check --json's row for it: 200
                     valid, else the status npyguard.asgi.status_of gives
                     (422, 413, 408, 415, 400), and 503 when every check slot
                     stayed busy until the deadline
    GET  /healthz    200 "ok"
    GET  /metrics    verdicts by code and status, in Prometheus' text format

Every answer has the header X-Npyguard-Received: the bytes of the body the
validator was given before the answer (uvicorn may hold one more read of the
socket that nobody looked at).
"""

import asyncio
import collections
import concurrent.futures
import json
import os
import threading

from . import asgi

# multipart/form-data (python3-multipart): bounds on what is not the file.
_MAX_PART_HEADERS = 16 << 10  # a part's header lines, all together
_MAX_FORM_BYTES = 64 << 10  # the text fields' values, all together


class _BadUpload(Exception):
    """A request that carries no single file to judge (400, code bad_upload)."""


class Metrics:
    """Counts of verdicts by code and status (thread-safe), as Prometheus text."""

    def __init__(self):
        self._lock = threading.Lock()
        self._verdicts = collections.Counter()
        self._received = 0
        self.in_flight = 0

    def count(self, code, status, received):
        with self._lock:
            self._verdicts[(code, status)] += 1
            self._received += received

    def text(self):
        with self._lock:
            lines = ["# HELP npyguard_verdicts_total Uploads judged, by error code (\"ok\" when valid) and HTTP status.",
                     "# TYPE npyguard_verdicts_total counter"]
            for (code, status), count in sorted(self._verdicts.items()):
                lines.append(f'npyguard_verdicts_total{{code="{code}",status="{status}"}} {count}')
            lines += ["# HELP npyguard_received_bytes_total Body bytes taken from clients.",
                      "# TYPE npyguard_received_bytes_total counter", f"npyguard_received_bytes_total {self._received}",
                      "# HELP npyguard_checks_in_flight Uploads being judged now.",
                      "# TYPE npyguard_checks_in_flight gauge", f"npyguard_checks_in_flight {self.in_flight}"]
        return "\n".join(lines) + "\n"


def _body(row):
    return (json.dumps(row, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


class _Multipart:
    """One file field of a multipart/form-data body, read as it arrives: the
    parser (python-multipart) is pumped until the file's headers are complete
    (its name), then its data is handed on chunk by chunk; after the file the
    rest of the body is read to make sure no second file follows."""

    def __init__(self, request, boundary, next_chunk):
        from multipart.multipart import MultipartParser
        self._request = request
        self._next_chunk = next_chunk
        self._events = collections.deque()
        self._last = None  # the kind of the last header event: a field or value may come in pieces
        self._field = self._value = b""
        self._header_bytes = 0
        self._form_bytes = 0
        self._headers = {}
        self._in_file = False
        self.received = 0
        self.name = None
        self._files = 0
        self._ended = False

        def data(kind):
            return lambda d, start, end: self._events.append((kind, bytes(d[start:end])))

        callbacks = {"on_part_begin": lambda: self._events.append(("begin", None)),
                     "on_part_data": data("data"),
                     "on_part_end": lambda: self._events.append(("end", None)),
                     "on_header_field": data("field"),
                     "on_header_value": data("value"),
                     "on_header_end": lambda: self._events.append(("header_end", None)),
                     "on_headers_finished": lambda: self._events.append(("headers", None)),
                     "on_end": lambda: self._events.append(("finished", None))}
        self._parser = MultipartParser(boundary, callbacks)

    async def _pump(self):
        """Parse one more chunk of the body; False at its end."""
        try:
            chunk = await self._next_chunk()
        except StopAsyncIteration:
            if not self._ended:
                self._parser.finalize()
            return False
        self.received += len(chunk)
        try:
            self._parser.write(chunk)
        except Exception as e:  # python-multipart's FormParserError / MultipartParseError
            raise _BadUpload(f"the multipart/form-data body cannot be parsed: {e}") from None
        return True

    def _event(self):
        """The next parser event, applied to the part's state; file data returned."""
        kind, value = self._events.popleft()
        if kind == "begin":
            self._headers, self._header_bytes, self._last = {}, 0, None
        elif kind in ("field", "value"):
            self._header_bytes += len(value)
            if self._header_bytes > _MAX_PART_HEADERS:
                raise _BadUpload(f"a part's headers are above {_MAX_PART_HEADERS} bytes")
            if kind == "field":
                self._field = self._field + value if self._last == kind else value
            else:
                self._value = self._value + value if self._last == kind else value
            self._last = kind
        elif kind == "header_end":
            self._headers[self._field.lower()] = self._value
            self._field = self._value = b""
            self._last = None
        elif kind == "headers":
            disposition = self._headers.get(b"content-disposition", b"").decode("utf-8", "replace")
            filename = asgi.disposition_filename(disposition)
            if filename is not None:
                self._files += 1
                if self._files > 1:
                    raise _BadUpload("the multipart/form-data body holds more than one file; send one per request")
                self.name = filename
                self._in_file = True
        elif kind == "data":
            if self._in_file:
                return value
            self._form_bytes += len(value)
            if self._form_bytes > _MAX_FORM_BYTES:
                raise _BadUpload(f"the form's text fields hold more than {_MAX_FORM_BYTES} bytes")
        elif kind == "end":
            if self._in_file:
                self._in_file = False
                return None
        elif kind == "finished":
            self._ended = True
        return b""

    async def open(self):
        """Read up to the file's data; _BadUpload when the body holds no file."""
        while not self._in_file:
            while self._events and not self._in_file:
                self._event()
            if self._in_file:
                break
            if not await self._pump():
                raise _BadUpload("the multipart/form-data body holds no file field")

    async def chunks(self):
        """The file's data, then the rest of the body checked for a second file."""
        file_done = False
        while True:
            while self._events:
                got = self._event()
                if file_done:
                    continue
                if got is None:
                    file_done = True
                elif got:
                    yield got
            if file_done and self._ended:
                return
            if not await self._pump():
                if not file_done:
                    raise _BadUpload("the multipart/form-data body ended inside the file")
                return


def create_app(*, accept=asgi.FORMATS, timeout=30.0, max_stream_bytes=1 << 30, max_concurrent=None,
               spool_directory="", **limits):
    """The gate as a Starlette app: POST /check, GET /healthz, GET /metrics.

    accept, timeout, max_stream_bytes, spool_directory and limits as for
    npyguard.asgi.check_upload; max_concurrent: uploads judged at once (each
    holds a thread while it arrives; default 4 x CPUs); more wait for a slot
    within their deadline, then 503."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse, Response
    from starlette.requests import ClientDisconnect
    from starlette.routing import Route

    max_concurrent = max_concurrent or 4 * (os.cpu_count() or 1)
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=max_concurrent, thread_name_prefix="npyguard-serve")
    slots = asyncio.Semaphore(max_concurrent)
    metrics = Metrics()

    def answer(row, status, received):
        code = "ok" if row.get("valid") else (row.get("error") or {}).get("code", "bad_upload")
        metrics.count(code, status, received)
        return Response(_body(row), status_code=status, media_type="application/json",
                        headers={"X-Npyguard-Received": str(received)})

    async def check(request):
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            await asyncio.wait_for(slots.acquire(), timeout)
        except asyncio.TimeoutError:
            row = asgi.gate_row("-", "npy", "busy", f"every one of the {max_concurrent} check slots stayed busy "
                                "until the deadline; try again later", option="max_concurrent")
            metrics.count("busy", 503, 0)
            return Response(_body(row), status_code=503, media_type="application/json",
                            headers={"Retry-After": "1", "X-Npyguard-Received": "0"})
        metrics.in_flight += 1
        left = max(0.001, deadline - asyncio.get_running_loop().time())
        received = 0
        try:
            content_type = request.headers.get("content-type", "")
            if content_type.split(";")[0].strip().lower() == "multipart/form-data":
                return await check_multipart(request, content_type, left)
            try:
                row, received = await asgi.judge_upload(request, timeout=left, accept=accept,
                                                        max_stream_bytes=max_stream_bytes,
                                                        spool_directory=spool_directory, executor=executor, **limits)
                return answer(row, 200, received)
            except asgi.UploadRefused as refused:
                return answer(refused.row, refused.status, refused.received)
        except ClientDisconnect:
            metrics.count("client_disconnected", 499, received)
            return Response(b"", status_code=400)
        finally:
            metrics.in_flight -= 1
            slots.release()

    async def check_multipart(request, content_type, left):
        from multipart.multipart import parse_options_header
        _, params = parse_options_header(content_type)
        boundary = params.get(b"boundary")
        stream = request.stream().__aiter__()
        end = asyncio.get_running_loop().time() + left

        async def next_chunk():
            remaining = end - asyncio.get_running_loop().time()
            if remaining <= 0:
                raise asyncio.TimeoutError
            return await asyncio.wait_for(stream.__anext__(), remaining)

        form = None
        try:
            if not boundary:
                raise _BadUpload("multipart/form-data without a boundary")
            form = _Multipart(request, boundary, next_chunk)
            await form.open()
            remaining = max(0.001, end - asyncio.get_running_loop().time())
            row, received = await asgi.judge_upload(form.chunks(), name=form.name or "", timeout=remaining, accept=accept,
                                          max_stream_bytes=max_stream_bytes, spool_directory=spool_directory,
                                          executor=executor, **limits)
            return answer(row, 200, received)
        except asgi.UploadRefused as refused:
            return answer(refused.row, refused.status, refused.received)
        except _BadUpload as bad:
            row = asgi.gate_row(form.name if form and form.name else "-", "npy", "bad_upload", str(bad))
            return answer(row, 400, form.received if form else 0)
        except asyncio.TimeoutError:
            row = asgi.gate_row(form.name if form and form.name else "-", "npy", "io_error",
                                "cannot read: no input within the time allowed (--timeout)", option="timeout_ms")
            return answer(row, 408, form.received if form else 0)

    async def healthz(request):
        return PlainTextResponse("ok\n")

    async def metrics_endpoint(request):
        return PlainTextResponse(metrics.text(), media_type="text/plain; version=0.0.4")

    app = Starlette(routes=[Route("/check", check, methods=["POST"]), Route("/healthz", healthz),
                            Route("/metrics", metrics_endpoint)])
    app.state.metrics = metrics
    return app
