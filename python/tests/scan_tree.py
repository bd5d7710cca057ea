"""A tree of files for the scan's tests: valid and hostile .npy, .npz and .ra
files from every set the test suite has (numpy's golden files, the fuzz
corpora's seeds and finds, tests/npz and tests/ra's generated sets), copied
round-robin into nested directories up to the count asked for, plus the
file system's own hostile entries: a FIFO, a directory named like a file, a
symbolic link loop, a link to a file, a name that is not UTF-8, an empty
file, names the walk skips."""

import os
from pathlib import Path

# Configuration bytes before each fuzz target's file (fuzz/*.cpp).
_CORPORA = {"fuzz_npy_file": (4, ".npy"), "fuzz_npz": (4, ".npz"), "fuzz_ra_header": (2, ".ra")}


def samples(source_dir, npz_set, ra_set):
    """[(suffix, bytes)] from every set, in a fixed order."""
    out = []
    for path in sorted((source_dir / "tests" / "golden" / "files").glob("*.npy")):
        out.append((".npy", path.read_bytes()))
    for target, (skip, suffix) in _CORPORA.items():
        for path in sorted((source_dir / "corpus" / target).iterdir()):
            out.append((suffix, path.read_bytes()[skip:]))
    for directory, suffix in ((npz_set, ".npz"), (ra_set, ".ra")):
        for path in sorted(Path(directory).rglob("*" + suffix)):
            out.append((suffix, path.read_bytes()))
    return out


def build(root, count, source_dir, npz_set, ra_set, per_directory=100):
    """Writes `count` files under root/dNN/..., then the special entries; returns
    the number of regular files the walk reports (the FIFO comes on top)."""
    root = Path(root)
    pool = samples(source_dir, npz_set, ra_set)
    for i in range(count):
        suffix, data = pool[i % len(pool)]
        directory = root / f"d{i // per_directory:03d}" / ("deep" if i % 7 == 0 else "")
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"f{i:05d}{suffix}").write_bytes(data)
    big = root / "big"  # arrays of megabytes: a scan reads their headers only
    big.mkdir()
    _big_files(big)
    special = root / "special"
    special.mkdir()
    os.mkfifo(special / "pipe.npy")  # reported, never opened
    (special / "dir_named.npy").mkdir()  # walked like any directory
    (special / "dir_named.npy" / "inside.npy").write_bytes(pool[0][1])
    os.symlink("loop.npy", special / "loop.npy")  # a link to itself: skipped
    os.symlink("../d000/f00001.npy", special / "link.npy")  # links are skipped
    os.symlink("..", special / "up")  # a link to a directory: not followed
    (special / "empty.npy").write_bytes(b"")
    (special / "notes.txt").write_bytes(b"not an array")  # skipped: no array suffix
    (special / ".npy").write_bytes(pool[0][1])  # skipped: the suffix alone is not a name
    os.mkdir(os.fsencode(special) + b"/bad\xffname")
    with open(os.fsencode(special) + b"/bad\xffname/caf\xe9.npy", "wb") as f:  # latin-1: not UTF-8
        f.write(pool[0][1])
    return count + 6  # big/ (3), inside.npy, empty.npy, caf\xe9.npy


def _big_files(directory):
    import numpy as np

    rng = np.random.default_rng(19)
    weights = rng.standard_normal((512, 1024)).astype(np.float32)  # 2 MiB
    np.save(directory / "weights.npy", weights)
    with open(directory / "image.ra", "wb") as f:  # RawArray: flags, eltype float, elbyte, size, ndims, dims
        dims = weights.shape[::-1]
        f.write(b"rawarray" + (0).to_bytes(8, "little") + (3).to_bytes(8, "little") + (4).to_bytes(8, "little") +
                weights.nbytes.to_bytes(8, "little") + len(dims).to_bytes(8, "little") +
                b"".join(d.to_bytes(8, "little") for d in dims) + weights.tobytes())
    np.savez(directory / "model.npz", **{f"layer{k}": weights[k * 64:(k + 1) * 64] for k in range(8)})
