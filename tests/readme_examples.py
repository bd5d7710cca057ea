#!/usr/bin/env python3
"""The README's C++ and C examples compile under the project's warnings as errors.

Each ```c block (the C API) is compiled the same way as C99 with cc.

Each ```cpp block of README.md becomes the body of a main() (its #include
lines go on top, with the standard headers the snippets use; `opts` is
declared when a block uses it without declaring it) and is compiled with
-Wall -Wextra -Wpedantic -Wconversion -Wsign-conversion -Wshadow -Werror
against include/. Exit 0 when every block compiles.
"""
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
FLAGS = ["-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wsign-conversion", "-Wshadow",
         "-Werror", "-fsyntax-only", "-I", str(ROOT / "include")]


C_FLAGS = ["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Wconversion", "-Wshadow", "-Werror", "-fsyntax-only",
           "-I", str(ROOT / "include")]


def blocks(text, language="cpp"):
    return re.findall(r"^```" + language + r"\n(.*?)^```", text, re.S | re.M)


def c_program(block):
    includes = [line for line in block.splitlines() if line.startswith("#include")]
    body = [line for line in block.splitlines() if not line.startswith("#include")]
    return "\n".join(["#include <stdio.h>"] + includes + ["int main(void) {"] + body + ["  return 0;", "}", ""])


def program(block):
    includes = [line for line in block.splitlines() if line.startswith("#include")]
    body = [line for line in block.splitlines() if not line.startswith("#include")]
    prelude = []
    if "opts" in block and "options opts" not in block:
        prelude.append("const npyguard::options opts;")
    head = ["#include <npyguard/npyguard.hpp>", "#include <cstdio>", "#include <string>", "#include <vector>"]
    return "\n".join(head + includes + ["int main() {"] + prelude + body + ["  return 0;", "}", ""])


def main():
    found = blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    failures = 0
    with tempfile.TemporaryDirectory() as scratch:
        for number, block in enumerate(found, 1):
            source = pathlib.Path(scratch) / f"readme_example_{number}.cpp"
            source.write_text(program(block))
            done = subprocess.run(["c++", *FLAGS, str(source)], capture_output=True, text=True)
            if done.returncode != 0:
                failures += 1
                print(f"README example {number} does not compile:\n{source.read_text()}\n{done.stderr}")
        c_found = blocks((ROOT / "README.md").read_text(encoding="utf-8"), "c")
        for number, block in enumerate(c_found, 1):
            source = pathlib.Path(scratch) / f"readme_c_example_{number}.c"
            source.write_text(c_program(block))
            done = subprocess.run(["cc", *C_FLAGS, str(source)], capture_output=True, text=True)
            if done.returncode != 0:
                failures += 1
                print(f"README C example {number} does not compile:\n{source.read_text()}\n{done.stderr}")
    total = len(found) + len(c_found)
    print(f"readme examples: {total - failures} passed ({len(c_found)} in C), {failures} failed")
    return 1 if failures or not found or not c_found else 0


if __name__ == "__main__":
    sys.exit(main())
