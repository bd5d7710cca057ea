#!/usr/bin/env python3
"""The library's public API does not throw (STYLE.md, "Errors"): every
function a public header exports (NPYGUARD_API, the declarations up to their
';' or body) is declared noexcept. Exit 1 with the offenders listed."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
EXPORTED = re.compile(r"NPYGUARD_API\b(?!\s*(class|struct)\b)(?P<rest>[^;{]*)[;{]", re.S)


def offenders():
    found = []
    for header in sorted((ROOT / "include" / "npyguard").rglob("*.hpp")):
        text = re.sub(r"//[^\n]*", "", header.read_text(encoding="utf-8"))
        text = re.sub(r"#\s*define[^\n]*", "", text)
        text = text.replace("{}", "<default>")  # "= {}" default arguments are not bodies
        for match in EXPORTED.finditer(text):
            declaration = " ".join(match.group("rest").split())
            if "(" in declaration and "noexcept" not in declaration:
                line = text.count("\n", 0, match.start()) + 1
                found.append(f"{header.relative_to(ROOT)}:{line}: {declaration[:100]}")
    return found


def main():
    bad = offenders()
    for line in bad:
        print("not noexcept:", line)
    print(f"public noexcept: {len(bad)} exported function(s) without noexcept")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
