"""The GIL is released while the library validates, and concurrent calls are safe."""

import io
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor

import numpy as np

import npyguard


def test_a_blocked_validation_does_not_hold_the_gil(tmp_path):
    # check_file blocks in the library reading a FIFO with no writer yet; the
    # main thread must still run Python to open the FIFO and write the file.
    # Were the GIL held, this child would hang: the timeout fails the test.
    script = textwrap.dedent(f"""
        import io, os, threading, numpy as np, npyguard
        fifo = {str(tmp_path / 'fifo')!r}
        os.mkfifo(fifo)
        result = {{}}
        worker = threading.Thread(target=lambda: result.setdefault('h', npyguard.check_file(fifo)))
        worker.start()
        out = io.BytesIO(); np.save(out, np.arange(5)); data = out.getvalue()
        with open(fifo, 'wb') as w:
            w.write(data)
        worker.join(30)
        assert result['h'].shape == (5,), result
        print('ok')
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ))
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_concurrent_calls_agree():
    files = []
    for n in range(40):
        out = io.BytesIO()
        np.save(out, np.arange(n * 100, dtype=[">i4", "<f8", "u1"][n % 3]).reshape(-1, 1))
        files.append(out.getvalue())
    expected = [npyguard.check(data) for data in files]
    with ThreadPoolExecutor(8) as pool:
        for _ in range(5):
            assert list(pool.map(npyguard.check, files)) == expected
            arrays = list(pool.map(npyguard.load, files))
            assert all(np.array_equal(a, np.load(io.BytesIO(d))) for a, d in zip(arrays, files))
