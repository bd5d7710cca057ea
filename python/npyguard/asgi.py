"""npyguard in front of an upload endpoint (Starlette, FastAPI, any ASGI app).

    from npyguard.asgi import check_upload, UploadRefused

    @app.post("/arrays")
    async def upload(request: Request):
        try:
            row = await check_upload(request, accept=("npy", "npz"), timeout=30)
        except UploadRefused as refused:
            return JSONResponse(refused.row, status_code=refused.status)
        ...  # the body was valid: row is `npyguard check --json`'s object for it

check_upload validates an upload **while its bytes arrive**: the body is fed,
chunk by chunk, into a pipe that the input boundary (npyguard/input.hpp)
reads on a worker thread, so a bad .npy header is answered once the header
has arrived, not after the whole body; .npy and .ra data is counted, never
kept; an .npz is spooled to an unlinked file in $TMPDIR (bounded memory).
One deadline covers the whole upload: a client that sends a byte a second
is cut when it passes. The answer is the row `npyguard check --json` prints
for the same bytes (written by the command's own code), as a dict.

Statuses (UploadRefused.status):
    422  the upload is not a well-formed file of its format (any error code
         below not covered by another status)
    413  over a size limit: the body above max_stream_bytes (code io_error,
         option "max_stream_bytes"), an array above max_data_bytes
         (data_too_large), an archive above max_total_bytes
         (total_size_exceeded)
    408  the deadline passed before the verdict (io_error, option "timeout_ms")
    415  a format the endpoint does not take (code "format_not_accepted", a
         code of the gate only: not in npyguard.ERROR_CODES)
    400  the request itself is unusable: a body that ended in an error of the
         connection, a multipart body without exactly one file (code
         "bad_upload", the gate's only)
"""

import asyncio
import concurrent.futures
import json
import os
import re
import time
import urllib.parse

from . import ERROR_CODES, _npyguard, _options
from ._errors import NpyguardError

__all__ = ["check_upload", "judge_upload", "UploadRefused", "FORMATS", "status_of"]

#: The formats an endpoint may take.
FORMATS = ("npy", "npz", "ra")

# The pipe starts small, so that a refusal in the first bytes is answered
# after at most the pipe, the validator's first read and one chunk have been
# taken from the client (tests: at most 64 KiB); it grows once the upload
# has shown a valid start.
_PIPE_START = 16 << 10
_PIPE_GROWN = 1 << 20
_GROW_AFTER = 64 << 10
_CHUNK = 16 << 10  # the most fed at once before the pipe grows

_F_SETPIPE_SZ = 1031  # fcntl.F_SETPIPE_SZ (Linux), spelt out for Python < 3.10

# Shared by check_upload calls that pass no executor: each check holds a
# thread while its upload arrives.
_executor = None


def _default_executor():
    global _executor
    if _executor is None:
        _executor = concurrent.futures.ThreadPoolExecutor(max_workers=max(8, 2 * (os.cpu_count() or 1)),
                                                          thread_name_prefix="npyguard-gate")
    return _executor


class UploadRefused(NpyguardError):
    """An upload the gate refused: an NpyguardError (a ValueError) with the HTTP
    status to answer and the row (check --json's object for the upload).

    status  422, 413, 408, 415 or 400 (see the module's documentation)
    row     the dict to answer with: {"valid": false, "error": {...}, "file", "format"}
    received  the bytes of the body the validator was given before the answer (the
              server may hold one more read of its socket that nobody looked at)
    Also code, offset, message, member, member_offset, option, limit, actual
    (NpyguardError's), from row["error"].
    """

    def __init__(self, status, row, received=0):
        error = row.get("error") or {}
        code = error.get("code", "bad_upload")
        super().__init__(code, error.get("message", ""), error.get("offset"), row.get("member"),
                         row.get("member_offset"), ERROR_CODES.get(code), error.get("option"), error.get("limit"),
                         error.get("actual"))
        self.status = status
        self.row = row
        self.received = received

    def __reduce__(self):
        return (type(self), (self.status, self.row, self.received))


def status_of(row):
    """The HTTP status for a row: 200 when valid, else as the module says."""
    if row.get("valid"):
        return 200
    error = row.get("error") or {}
    code, option = error.get("code"), error.get("option")
    if code == "format_not_accepted":
        return 415
    if code == "bad_upload":
        return 400
    if option == "timeout_ms":
        return 408
    if option in ("max_stream_bytes", "max_data_bytes", "max_total_bytes"):
        return 413
    if code == "io_error" and option is None:
        return 400
    return 422


def gate_row(display, format, code, message, option=None, limit=None, actual=None):
    """A refusal the gate makes itself, in the shape of check --json's rows."""
    return {"error": {"actual": actual, "code": code, "limit": limit, "message": message, "offset": None,
                      "option": option},
            "file": display, "format": format, "valid": False}


# ---------------------------------------------------------------------------
# The name's claim (SPEC.md section 9)

_DISPOSITION_NAME = re.compile(r"""filename\*\s*=\s*([^']*)'[^']*'([^;\s]+)|filename\s*=\s*("(?:[^"\\]|\\.)*"|[^;\s]+)""",
                               re.IGNORECASE)


def disposition_filename(value):
    """The file name a Content-Disposition value gives (filename*= first, RFC 6266),
    or None."""
    if not value:
        return None
    best = None
    for match in _DISPOSITION_NAME.finditer(value):
        if match.group(2) is not None:
            charset = match.group(1) or "utf-8"
            try:
                return urllib.parse.unquote(match.group(2), encoding=charset, errors="strict")
            except (LookupError, UnicodeDecodeError):
                continue
        elif best is None:
            text = match.group(3)
            if text.startswith('"'):
                text = re.sub(r"\\(.)", r"\1", text[1:-1])
            best = text
    return best


def _base_name(name):
    """The last component of a client's file name (a browser may send a path)."""
    return re.split(r"[/\\]", name)[-1] if name else name


# ---------------------------------------------------------------------------
# One check: the validator on a worker thread, the body fed through a pipe


class _PipeCheck:
    """The input boundary on a pipe's reading end, on a worker thread; the event
    loop writes the body into the other end."""

    def __init__(self, loop, executor, name, display, opts, deadline, format, spool_directory):
        self._loop = loop
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)
        self._size = self._set_pipe(_PIPE_START)
        self._cancel = _npyguard.GateCancel()
        self.fed = 0
        args = (name, display, opts, deadline, format, spool_directory)
        try:
            self.verdict = loop.run_in_executor(executor, self._run, *args)
        except BaseException:
            os.close(self._read)
            os.close(self._write)
            raise

    def _set_pipe(self, size):
        try:
            import fcntl
            return fcntl.fcntl(self._write, _F_SETPIPE_SZ, size)
        except OSError:
            return 64 << 10

    def _run(self, name, display, opts, deadline, format, spool_directory):
        try:
            if self._cancel.is_set():
                return format or "npy", None
            left = deadline - time.monotonic()
            timeout_ms = max(1, int(left * 1000)) if deadline != float("inf") else 0
            return _npyguard.gate_fd(self._read, os.fsencode(name), display, opts, timeout_ms, format or "",
                                     spool_directory, self._cancel)
        finally:
            os.close(self._read)  # a write after this is EPIPE: the feeder stops

    async def _writable(self):
        ready = self._loop.create_future()
        self._loop.add_writer(self._write, lambda: ready.done() or ready.set_result(None))
        try:
            await asyncio.wait({ready, self.verdict}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._loop.remove_writer(self._write)

    async def feed(self, data):
        """Write `data` into the pipe; False once the validator has stopped
        reading (its verdict is in)."""
        view = memoryview(data)
        while view:
            if self.verdict.done():
                return False
            if self._size < _PIPE_GROWN and self.fed >= _GROW_AFTER:
                self._size = self._set_pipe(_PIPE_GROWN)
            piece = view if self._size >= _PIPE_GROWN else view[:_CHUNK]
            try:
                written = os.write(self._write, piece)
            except BlockingIOError:
                await self._writable()
                continue
            except BrokenPipeError:
                return False
            self.fed += written
            view = view[written:]
        return not self.verdict.done()

    def end(self):
        """The body is complete: the validator sees its end."""
        if self._write >= 0:
            os.close(self._write)
            self._write = -1

    def cancel(self):
        self._cancel.set()
        self.end()

    async def result(self):
        try:
            return await asyncio.shield(self.verdict)
        finally:
            self.end()


# ---------------------------------------------------------------------------
# Sources: a Starlette Request, an UploadFile, any async iterable of bytes


def _name_of(source):
    """(name, display): the upload's claim and how the row calls it ("-" without one)."""
    name = getattr(source, "filename", None)  # an UploadFile
    if name is None and hasattr(source, "query_params"):
        name = source.query_params.get("filename") or disposition_filename(
            source.headers.get("content-disposition"))
    name = _base_name(name) if isinstance(name, str) else None
    return (name or ""), (name or "-")


async def _chunks(source):
    if hasattr(source, "stream") and hasattr(source, "receive"):  # a Starlette Request
        async for chunk in source.stream():
            if chunk:
                yield chunk
        return
    if hasattr(source, "read") and asyncio.iscoroutinefunction(source.read):  # an UploadFile
        while True:
            chunk = await source.read(256 << 10)
            if not chunk:
                return
            yield chunk
    elif hasattr(source, "__aiter__"):
        async for chunk in source:
            if chunk:
                yield bytes(chunk)
    else:
        raise TypeError(f"check_upload takes a Starlette Request, an UploadFile or an async iterable of bytes, "
                        f"not {type(source).__name__!r}")


async def check_upload(source, **keywords):
    """Validate an upload as it arrives; return check --json's row (a dict) for a
    valid one, raise UploadRefused (with .status and .row) for any other.
    Keywords: format, accept, timeout, name, max_stream_bytes, spool_directory,
    executor and the limits, as judge_upload() says."""
    row, _ = await judge_upload(source, **keywords)
    return row


async def judge_upload(source, *, format=None, accept=FORMATS, timeout=30.0, name=None, max_stream_bytes=1 << 30,
                       spool_directory="", executor=None, **limits):
    """check_upload(), answering (row, received): received is the bytes of the body
    the validator was given before its verdict (also UploadRefused.received).

    source     a Starlette/FastAPI Request (its body, read as it arrives; the name
               from a `filename` query parameter or the Content-Disposition
               header), an UploadFile (its .filename), or an async iterable of
               bytes (with name=)
    format     judge the upload as "npy", "npz" or "ra"; None (SPEC.md section 9):
               the name's claim (a name ending in .npy, .npz or .ra), else the
               first bytes
    accept     the formats the endpoint takes; another is 415 (format_not_accepted)
    timeout    seconds for the whole upload, from this call to the verdict; past
               it, 408. None: no deadline (not for the open internet)
    name       the upload's file name (overrides the source's)
    max_stream_bytes  the most body taken (default 1 GiB): more is 413. An .npy
               or .ra array that declares more is refused at its header
               (data_too_large: max_data_bytes is lowered to this for them)
    spool_directory  where an .npz is spooled (unlinked at once; "" for $TMPDIR)
    executor   a concurrent.futures executor for the checks (each holds a thread
               while its upload arrives); None: a shared pool of max(8, 2 x CPUs)
    limits     as for npyguard.check(): max_header_bytes (default 10,000),
               max_depth, max_ndim, max_data_bytes, allow_trailing_data,
               allow_object, canonical, verify (.npz: every member read in full),
               max_members, max_total_bytes, max_ratio, allow_type5, reject_metadata

    The row's "file" is the upload's name ("-" without one).
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"format must be 'npy', 'npz', 'ra' or None, not {format!r}")
    accept = tuple(accept)
    for taken in accept:
        if taken not in FORMATS:
            raise ValueError(f"accept holds {taken!r}; the formats are {FORMATS}")
    if timeout is not None and (isinstance(timeout, bool) or not timeout > 0):
        raise ValueError(f"timeout must be a number of seconds above 0 or None, not {timeout!r}")
    if isinstance(max_stream_bytes, bool) or not isinstance(max_stream_bytes, int) or max_stream_bytes < 1:
        raise ValueError(f"max_stream_bytes must be a whole number of bytes above 0, not {max_stream_bytes!r}")
    deadline = time.monotonic() + timeout if timeout is not None else float("inf")
    # An .npy or .ra array larger than the body may be is refused at its header;
    # an archive's members are bounded by the archive (max_total_bytes, max_ratio).
    data_limit = limits.pop("max_data_bytes", None)
    opts = {"npz": _options(max_data_bytes=data_limit, max_stream_bytes=max_stream_bytes, **limits)}
    data_limit = max_stream_bytes if data_limit is None else min(data_limit, max_stream_bytes)
    opts["npy"] = opts["ra"] = _options(max_data_bytes=data_limit, max_stream_bytes=max_stream_bytes, **limits)
    claimed, display = _name_of(source)
    if name is not None:
        claimed, display = _base_name(name), (_base_name(name) or "-")
    loop = asyncio.get_running_loop()
    executor = executor or _default_executor()
    checking = _Gate(loop, executor, claimed, display, opts, deadline, format, accept, max_stream_bytes,
                     spool_directory)
    row = await checking.run(_chunks(source))
    return row, checking.received


class _Gate:
    """One upload: the first bytes choose the format, then the body is fed."""

    def __init__(self, loop, executor, name, display, opts, deadline, format, accept, max_stream_bytes,
                 spool_directory):
        self.loop, self.executor, self.name, self.display = loop, executor, name, display
        self.opts, self.deadline, self.format, self.accept = opts, deadline, format, accept
        self.max_stream_bytes, self.spool_directory = max_stream_bytes, spool_directory
        self.taken = 0  # from the source, whether or not the validator saw it yet
        self.check = None

    @property
    def received(self):
        return self.check.fed if self.check is not None else 0

    def _left(self):
        return self.deadline - time.monotonic()

    def _refuse(self, row):
        raise UploadRefused(status_of(row), row, self.received)

    def _timed_out(self, chosen):
        # The words the validator uses when its own deadline passes.
        self._refuse(gate_row(self.display, chosen, "io_error",
                              "cannot read: no input within the time allowed (--timeout)", option="timeout_ms"))

    async def _next(self, chunks):
        left = self._left()
        if left <= 0:
            raise asyncio.TimeoutError
        if left == float("inf"):
            return await chunks.__anext__()
        return await asyncio.wait_for(chunks.__anext__(), left)

    async def run(self, chunks):
        head = b""
        try:
            try:
                while len(head) < 8:
                    try:
                        chunk = await self._next(chunks)
                    except StopAsyncIteration:
                        break
                    self.taken += len(chunk)
                    head += chunk
            except asyncio.TimeoutError:
                self._timed_out(self.format or _npyguard.detect_format(head[:8], os.fsencode(self.name)))
            chosen = self.format or _npyguard.detect_format(head[:8], os.fsencode(self.name))
            if chosen not in self.accept:
                taken = ", ".join("." + f for f in self.accept)
                how = "its name" if self.name.endswith("." + chosen) else "its first bytes"
                self._refuse(gate_row(self.display, chosen, "format_not_accepted",
                                      f"this endpoint takes {taken}; the upload is .{chosen} ({how})",
                                      option="accept"))
            self.check = _PipeCheck(self.loop, self.executor, self.name, self.display, self.opts[chosen],
                                    self.deadline, chosen, self.spool_directory)
            try:
                more = await self._feed(head, chosen)
                while more:
                    try:
                        chunk = await self._next(chunks)
                    except StopAsyncIteration:
                        break
                    self.taken += len(chunk)
                    more = await self._feed(chunk, chosen)
                self.check.end()  # the whole body: the validator sees its end
            except asyncio.TimeoutError:
                pass  # the pipe stays open: the validator's own deadline (the same instant) gives the row
            return await self._verdict()
        except BaseException:
            if self.check is not None:
                self.check.cancel()
            raise
        finally:
            await _close(chunks)

    async def _feed(self, data, chosen):
        if self.check.fed + len(data) > self.max_stream_bytes:
            self.check.cancel()
            self._refuse(gate_row(self.display, chosen, "io_error",
                                  f"the upload holds more than {self.max_stream_bytes} bytes, above the limit "
                                  f"(--max-stream-bytes)", option="max_stream_bytes",
                                  limit=self.max_stream_bytes, actual=self.check.fed + len(data)))
        if self.deadline == float("inf"):
            return await self.check.feed(data)
        return await asyncio.wait_for(self.check.feed(data), max(0.0, self._left()))

    async def _verdict(self):
        verdict = self.check.verdict
        left = self._left()
        try:
            if left == float("inf"):
                chosen, line = await verdict
            else:
                # The validator's deadline is the same instant; a moment more for it to say so.
                chosen, line = await asyncio.wait_for(asyncio.shield(verdict), max(0.0, left) + 2.0)
        except asyncio.TimeoutError:
            self.check.cancel()
            self._timed_out(self.format or "npy")
        finally:
            self.check.end()
        if line is None:  # canceled before it began
            self._timed_out(self.format or "npy")
        row = json.loads(line)
        if not row.get("valid"):
            self._refuse(row)
        return row


async def _close(chunks):
    aclose = getattr(chunks, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # a stream that ended in an error: the answer is already decided
            pass
