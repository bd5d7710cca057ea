"""A FastAPI endpoint that takes .npy and .npz uploads from strangers.

npyguard judges each upload while it arrives (npyguard.asgi.check_upload: a
bad header is answered once the header is in, a slow client is cut at the
deadline) and only a valid one is loaded, with npyguard.load (never pickle,
never np.load on unchecked bytes). The body is kept in a SpooledTemporaryFile
as it passes (memory up to 8 MiB, then disk) so that it is read once.

    PYTHONPATH=build/dev/python uvicorn --app-dir examples fastapi_upload:app
    curl --data-binary @examples/valid.npy 'http://127.0.0.1:8000/arrays/valid.npy'

Its test: python/tests/test_gate.py (test_the_fastapi_example_*).
"""

import tempfile

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

import npyguard
from npyguard.asgi import UploadRefused, check_upload

app = FastAPI(title="arrays")


async def _kept(request, spool):
    """The request's body as it arrives, each chunk also written to `spool`."""
    async for chunk in request.stream():
        spool.write(chunk)
        yield chunk


def _summary(arrays):
    if isinstance(arrays, dict):  # an .npz: its arrays by key
        return {key: {"shape": list(a.shape), "dtype": a.dtype.str} for key, a in arrays.items()}
    return {"shape": list(arrays.shape), "dtype": arrays.dtype.str}


@app.post("/arrays/{name}")
async def upload(name: str, request: Request):
    with tempfile.SpooledTemporaryFile(max_size=8 << 20) as spool:
        try:
            row = await check_upload(_kept(request, spool), name=name, accept=("npy", "npz"), timeout=30,
                                     max_stream_bytes=256 << 20)
        except UploadRefused as refused:
            # 422 malformed, 413 too large, 408 too slow, 415 not .npy/.npz:
            # check --json's row says where and why.
            return JSONResponse(refused.row, status_code=refused.status)
        spool.seek(0)
        arrays = await run_in_threadpool(npyguard.load, spool, format=row["format"])
        return {"file": row["file"], "format": row["format"], "arrays": _summary(arrays)}
