#!/usr/bin/python3
"""npyguard convert against numpy and the Python reference layout
(SPEC-ra.md section 10a):

1. .npy -> .ra: for arrays of every dtype both formats hold (C and Fortran
   order, 0-d to 5-d, empty, big-endian), np.save's file converted by
   npyguard is byte for byte what Python's ra.write writes for the array
   (tests/ra/make_files.py's python_ra_write), except bool, which becomes
   type 5 (RawArray.jl's Bool) instead of Python's user type 0;
2. .ra -> .npy -> .ra: every convertible writer file of make_files.py
   without metadata comes back byte-identical (a big-endian flag on a
   one-byte type comes back 0), and the .npy equals np.save of the array
   numpy reads from the .ra (shape = dims, Fortran order);
3. .npy -> .ra -> .npy: np.load gives an equal array (same dtype, shape and
   values), and the bytes equal np.save's input whenever it was Fortran
   order or had at most one dim above 1;
4. refusals: the inputs SPEC-ra.md section 10a refuses give not_convertible
   (exit 1) and leave no output behind.

    /usr/bin/python3 tests/ra/convert_round_trip.py --tool build/release/npyguard
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import make_files  # noqa: E402


def arrays():
    rng = np.random.default_rng(17)
    out = []
    for code in ("<i1", "<i2", "<i4", "<i8", "<u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "<f16", "<c8", "<c16",
                 "<c32", ">i2", ">i4", ">u8", ">f4", ">f8", ">c16", "|b1"):
        for shape in ((), (5,), (3, 4), (2, 3, 4), (2, 1, 3, 1, 2), (0, 3), (4, 0), (1, 6), (6, 1)):
            values = rng.integers(-100, 100, size=shape) if code != "|b1" else rng.integers(0, 2, size=shape)
            array = values.astype(code)
            out.append(("%s_%s_C" % (code, "x".join(map(str, shape)) or "0d"), array))
            if len(shape) >= 2:
                out.append(("%s_%s_F" % (code, "x".join(map(str, shape))), np.asfortranarray(array)))
    return out


def run(tool, *args):
    return subprocess.run([tool, "convert", *map(str, args)], capture_output=True, text=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tool", required=True)
    args = parser.parse_args()
    problems = []
    counts = {"npy->ra": 0, "ra->npy->ra": 0, "refused": 0}
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        # 1 and 3.
        for name, array in arrays():
            npy = root / (name + ".npy")
            np.save(npy, array)
            ra = root / (name + ".ra")
            done = run(args.tool, npy, ra)
            if done.returncode != 0:
                problems.append("%s: npy -> ra failed: %s" % (name, done.stderr.strip()))
                continue
            expected, *_ = make_files.python_ra_write(array)
            if array.dtype.kind == "b":  # type 5 where Python writes user type 0
                expected = expected[:16] + make_files.words(5) + expected[24:]
            if ra.read_bytes() != expected:
                problems.append("%s: the .ra differs from Python ra.write's layout" % name)
            back = root / (name + ".back.npy")
            done = run(args.tool, ra, back)
            if done.returncode != 0:
                problems.append("%s: ra -> npy failed: %s" % (name, done.stderr.strip()))
                continue
            loaded = np.load(back)
            if loaded.dtype != array.dtype or loaded.shape != array.shape or not np.array_equal(loaded, array):
                problems.append("%s: the round trip changed the array" % name)
            long_dims = sum(1 for d in array.shape if d > 1)
            if (array.flags.f_contiguous and long_dims >= 2) or long_dims <= 1:
                if back.read_bytes() != npy.read_bytes():
                    problems.append("%s: .npy -> .ra -> .npy is not byte-identical" % name)
            counts["npy->ra"] += 1
        # 2 and 4.
        writers = root / "writers"
        subprocess.run([sys.executable, str(HERE / "make_files.py"), "--out", str(writers)], check=True,
                       stdout=subprocess.DEVNULL)
        for row in json.loads((writers / "manifest.json").read_text(encoding="utf-8")):
            if not row["valid"] or row["options"] or row["model"]["metadata_length"]:
                continue
            model = row["model"]
            source = writers / row["file"]
            npy = root / (row["file"] + ".npy")
            refused = (model["eltype"] == 0 or (model["eltype"] == 5 and model["elbyte"] == 2)
                       or (model["eltype"] in (1, 2) and model["elbyte"] == 16)
                       or (model["eltype"] == 4 and model["elbyte"] == 4) or model["ndims"] > 32)
            done = run(args.tool, source, npy)
            if refused:
                if done.returncode != 1 or "not_convertible" not in done.stderr or npy.exists():
                    problems.append("%s: expected not_convertible and no output, got %d %s" %
                                    (row["file"], done.returncode, done.stderr.strip()))
                counts["refused"] += 1
                continue
            if done.returncode != 0:
                problems.append("%s: ra -> npy failed: %s" % (row["file"], done.stderr.strip()))
                continue
            data = source.read_bytes()[model["data_offset"]:]
            kind = {1: "i", 2: "u", 3: "f", 4: "c", 5: "b"}[model["eltype"]]
            order = "|" if model["elbyte"] == 1 else (">" if model["big_endian"] else "<")
            expected = np.frombuffer(data, dtype=np.dtype("%s%s%d" % (order, kind, model["elbyte"])))
            expected = expected.reshape(model["dims"], order="F")
            loaded = np.load(npy)
            saved = root / "expected.npy"
            np.save(saved, expected)
            if loaded.dtype != expected.dtype or not np.array_equal(loaded, expected, equal_nan=kind in "fc"):
                problems.append("%s: the .npy does not hold the array numpy reads from the .ra" % row["file"])
            elif npy.read_bytes() != saved.read_bytes():
                problems.append("%s: the .npy is not what np.save writes for that array" % row["file"])
            again = root / (row["file"] + ".again.ra")
            done = run(args.tool, npy, again)
            original = source.read_bytes()
            if model["big_endian"] and model["elbyte"] == 1:
                original = original[:8] + make_files.words(0) + original[16:]
            if done.returncode != 0 or again.read_bytes() != original:
                problems.append("%s: .ra -> .npy -> .ra is not byte-identical" % row["file"])
            counts["ra->npy->ra"] += 1
        # 4: what .npy -> .ra refuses.
        for name, array in (("struct", np.zeros(2, dtype=[("a", "<i4")])), ("bytes", np.array([b"x"])),
                            ("unicode", np.array(["x"])), ("datetime", np.zeros(2, dtype="<M8[s]")),
                            ("void", np.zeros(2, dtype="V3"))):
            npy = root / ("refused_" + name + ".npy")
            np.save(npy, array)
            out = root / ("refused_" + name + ".ra")
            done = run(args.tool, npy, out)
            if done.returncode != 1 or ":10: not_convertible: " not in done.stderr or out.exists():
                problems.append("%s: expected not_convertible at 10, got %d %s" % (name, done.returncode, done.stderr))
            counts["refused"] += 1
        # 5: an OUT named for another format than the one written is refused,
        # and nothing is written.
        examples = HERE.parent.parent / "examples"
        for source, out in ((examples / "image.ra", root / "named.ra"), (examples / "image.ra", root / "named.npz"),
                            (examples / "valid.npy", root / "named.npy"), (examples / "valid.npy", root / "named.npz")):
            done = run(args.tool, source, out)
            if done.returncode != 2 or "named for another format" not in done.stderr or out.exists():
                problems.append("%s -> %s: expected a refusal and no output, got %d %s" %
                                (source.name, out.name, done.returncode, done.stderr.strip()))
            counts["refused"] += 1
        # 6: the input's name is escaped on every line convert prints (the
        # metadata note on standard error included): no OSC title sequence.
        hostile = root / "t\x1b]0;owned\x07\x7f.ra"
        hostile.write_bytes((examples / "image.ra").read_bytes())
        done = subprocess.run([args.tool, "convert", str(hostile), str(root / "t.npy")], capture_output=True)
        if done.returncode != 0 or b"not carried over" not in done.stderr or any(
                b in done.stdout + done.stderr for b in (b"\x1b", b"\x07", b"\x7f")):
            problems.append("a name with ESC, BEL and DEL reached the terminal raw: %r %r" % (done.stdout, done.stderr))
    for problem in problems:
        print("ra convert: " + problem)
    print("ra convert: %d arrays .npy -> .ra -> .npy, %d writer files .ra -> .npy -> .ra, %d refusals: %s" %
          (counts["npy->ra"], counts["ra->npy->ra"], counts["refused"],
           "ok" if not problems else "%d problems" % len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
