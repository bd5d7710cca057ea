"""The input boundary from Python: every entry point that takes a path opens it
once without blocking and takes timeout=; Ctrl-C interrupts a waiting call."""

import io
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import npyguard


def _fifo(tmp_path, name):
    path = tmp_path / name
    os.mkfifo(path)
    return path


PATH_CALLS = [
    ("check_file", "f.npy", lambda p, **k: npyguard.check_file(p, **k)),
    ("load_file", "f.npy", lambda p, **k: npyguard.load_file(p, **k)),
    ("check_npz", "f.npz", lambda p, **k: npyguard.check_npz(p, **k)),
    ("load_npz", "f.npz", lambda p, **k: npyguard.load_npz(p, **k)),
    ("check_ra", "f.ra", lambda p, **k: npyguard.check_ra(p, **k)),
    ("load_ra", "f.ra", lambda p, **k: npyguard.load_ra(p, **k)),
]


@pytest.mark.parametrize("name,file,call", PATH_CALLS, ids=[c[0] for c in PATH_CALLS])
def test_a_fifo_without_a_writer_ends_at_the_timeout(tmp_path, name, file, call):
    fifo = _fifo(tmp_path, file)
    started = time.monotonic()
    with pytest.raises(npyguard.NpyguardIOError) as raised:
        call(fifo, timeout=0.2)
    assert time.monotonic() - started < 10
    assert raised.value.code == "io_error"
    if name.startswith("check"):
        # The boundary reads FIFOs as streams, up to the deadline.
        assert raised.value.option == "timeout_ms"
        assert "(timeout=)" in str(raised.value)
    else:
        # The data views read regular files only: refused at once.
        assert raised.value.option in (None, "timeout_ms")


@pytest.mark.parametrize("bad", [0, -1, float("nan"), 4294968])
def test_timeout_must_be_positive_seconds(tmp_path, bad):
    with pytest.raises(ValueError, match="timeout"):
        npyguard.check_file(tmp_path / "x.npy", timeout=bad)


@pytest.mark.parametrize("bad", ["1", True, b"1"])
def test_timeout_is_a_number(tmp_path, bad):
    with pytest.raises(TypeError, match="timeout"):
        npyguard.check_file(tmp_path / "x.npy", timeout=bad)


def test_a_timeout_changes_nothing_for_a_regular_file(tmp_path):
    path = tmp_path / "a.npy"
    np.save(path, np.arange(6, dtype="<i4").reshape(2, 3))
    assert npyguard.check_file(path, timeout=0.001).shape == (2, 3)
    assert npyguard.load_file(path, timeout=5).tolist() == [[0, 1, 2], [3, 4, 5]]


def test_the_named_format_judges_the_file(tmp_path):
    """A zip named .npy is the .npy reader's bad_magic at 0; .npy bytes checked
    as an archive are the archive reader's verdict."""
    archive = io.BytesIO()
    np.savez(archive, a=np.arange(3))
    (tmp_path / "x.npy").write_bytes(archive.getvalue())
    with pytest.raises(npyguard.NpyguardError) as raised:
        npyguard.check_file(tmp_path / "x.npy")
    assert (raised.value.code, raised.value.offset) == ("bad_magic", 0)
    np.save(tmp_path / "y.npy", np.arange(3))
    with pytest.raises(npyguard.NpyguardError) as raised:
        npyguard.check_npz(tmp_path / "y.npy")
    assert raised.value.code == "not_zip"


def test_a_call_on_another_thread_keeps_its_timeout(tmp_path):
    fifo = _fifo(tmp_path, "t.npy")
    outcome = []

    def run():
        try:
            npyguard.check_file(fifo, timeout=0.2)
        except npyguard.NpyguardIOError as e:
            outcome.append(e.code)

    worker = threading.Thread(target=run)
    worker.start()
    worker.join(20)
    assert not worker.is_alive()
    assert outcome == ["io_error"]


# The child restores Python's SIGINT handler: a process started with SIGINT
# ignored (a job a non-interactive shell put in the background, as a CI
# runner may) keeps it ignored, and Python then installs no handler.
CTRL_C = """
import os, signal, sys, time
import npyguard
signal.signal(signal.SIGINT, signal.default_int_handler)
print("waiting", flush=True)
try:
    npyguard.{call}(sys.argv[1])
except KeyboardInterrupt:
    print("interrupted", time.monotonic(), flush=True)
    sys.exit(3)
print("returned", flush=True)
"""


@pytest.mark.parametrize("call,file", [("check_file", "c.npy"), ("check_npz", "c.npz"), ("check_ra", "c.ra"),
                                       ("load_npz", "c.npz"), ("check", "c.npz"), ("load", "c.npz")])
def test_ctrl_c_interrupts_a_call_waiting_on_a_fifo(tmp_path, call, file):
    """No timeout and no writer: only the signal can end the call. SIGINT ends
    it with KeyboardInterrupt, well within a second of the signal."""
    fifo = _fifo(tmp_path, file)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    child = subprocess.Popen([sys.executable, "-c", CTRL_C.format(call=call), str(fifo)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert child.stdout.readline().strip() == "waiting"
        time.sleep(0.3)  # inside the native call by now
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 3, (out, err)
    words = out.split()
    assert words[0] == "interrupted"
    # time.monotonic() is system-wide on Linux: the two clocks compare.
    assert float(words[1]) - sent < 2.0
