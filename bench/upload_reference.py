#!/usr/bin/python3
"""The numpy reference for the upload load benchmark (bench/upload_load.py).

The endpoint people write without npyguard: a Starlette app, served by uvicorn,
whose POST /check buffers the whole body and calls
np.load(io.BytesIO(body), allow_pickle=False) (for an .npz, it also reads every
member array), in Starlette's thread pool as a plain `def` FastAPI endpoint
would run it. Same routes and answers as `python -m npyguard serve`:

    POST /check?filename=NAME   raw body -> 200 {"valid": true}
                                or 422 {"valid": false, "error": {"code": "numpy_refused", "message": ...}}
    GET  /healthz               200 "ok"
    GET  /metrics               Prometheus text: verdict counts

No body limit, no deadline, no cap on concurrent requests: what the naive
endpoint has. The filename is ignored (np.load picks the format by the first
bytes).

    /usr/bin/python3 bench/upload_reference.py --host 127.0.0.1 --port 8001
"""

import argparse
import io
import os
import threading

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def numpy_verdict(body):
    """(True, None) when numpy loads `body` without pickles and reads every
    array of it, else (False, "ExceptionType: message")."""
    try:
        loaded = np.load(io.BytesIO(body), allow_pickle=False)
        if isinstance(loaded, np.lib.npyio.NpzFile):
            with loaded:
                for key in loaded.files:
                    loaded[key]
        elif not isinstance(loaded, np.ndarray):
            return False, "unexpected result %s" % type(loaded).__name__
        return True, None
    except Exception as error:  # noqa: BLE001  (MemoryError, RecursionError, zipfile's, ...)
        return False, ("%s: %s" % (type(error).__name__, error))[:300]


def make_app():
    from starlette.applications import Starlette
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import JSONResponse, PlainTextResponse
    from starlette.routing import Route

    counts = {"valid": 0, "numpy_refused": 0}
    lock = threading.Lock()

    async def check(request):
        body = await request.body()
        ok, message = await run_in_threadpool(numpy_verdict, body)
        with lock:
            counts["valid" if ok else "numpy_refused"] += 1
        if ok:
            return JSONResponse({"valid": True})
        return JSONResponse({"valid": False, "error": {"code": "numpy_refused", "message": message}},
                            status_code=422)

    async def healthz(request):
        return PlainTextResponse("ok")

    async def metrics(request):
        lines = ["# TYPE reference_verdicts_total counter"]
        with lock:
            for code, n in sorted(counts.items()):
                lines.append('reference_verdicts_total{code="%s"} %d' % (code, n))
        return PlainTextResponse("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    return Starlette(routes=[
        Route("/check", check, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    args = parser.parse_args()
    import uvicorn
    uvicorn.run(make_app(), host=args.host, port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
