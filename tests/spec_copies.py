#!/usr/bin/env python3
"""docs/SPEC.md, docs/SPEC-npz.md and docs/SPEC-ra.md are the repository's copies of the
acceptance policies in ../shared/. Where the originals sit beside the
checkout (development machines, CI), each copy must equal its original after
an optional leading <!-- ... --> note, optionally followed by one section of
its own, "## Points settled by the implementation" (rules the original leaves
open). Exit 0 when they agree or when there are no originals to compare with
(said on the output), 1 on drift.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTE = re.compile(r"\A<!--.*?-->\n\n", re.S)
ADDITION = "\n## Points settled by the implementation\n"


def main():
    drift = 0
    for name in ("SPEC.md", "SPEC-npz.md", "SPEC-ra.md"):
        original = ROOT.parent / "shared" / name
        copy = ROOT / "docs" / name
        if not original.exists():
            print(f"spec copies: no {original}, {name} not compared")
            continue
        text = NOTE.sub("", copy.read_text(encoding="utf-8"), count=1)
        if ADDITION in text:
            text = text[:text.index(ADDITION)].rstrip("\n") + "\n"
        if text != original.read_text(encoding="utf-8"):
            print(f"spec copies: docs/{name} differs from {original}; copy it again (keeping the note)")
            drift += 1
        else:
            print(f"spec copies: docs/{name} matches {original}")
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
