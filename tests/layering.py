#!/usr/bin/env python3
"""The house's layering (STYLE.md, issue 12): dependencies point one way.

    core <- npy <- npz;  core <- ra;  npy, ra <- convert (which writes files);  platform: only for the entry
    points of npy, npz and ra, their data views and npy's writer;  cli: the public headers only;  public headers:
    each other only.  POSIX headers: platform and cli only.

Reads every #include in src/ and include/ and fails, naming file, line and
rule, when one points the wrong way (or to a room that does not exist).
Exit 0 clean, 1 a violation.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
QUOTED = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM = re.compile(r'^\s*#\s*include\s+<([^>]+)>')
# Opening an input outside platform: every entry point goes through the
# boundary (npyguard/input.hpp, platform::open_for_reading), so that no input
# is opened blocking or twice.
OPENS = re.compile(r'std::(i|o)?fstream\b|\bfopen\s*\(|(^|[^\w.>])::open\s*\(|\bopen\s*\(\s*[\w.]*(c_str|path)|std::filesystem::(is_regular_file|status|exists)')
POSIX = re.compile(r'^(unistd|fcntl|poll|dirent|pthread)\.h$|^sys/')
# The upload gate answers with check --json's rows: the command's writer,
# which it may include (and nothing else of the command).
CLI_REPORT_USERS = {"python/src/gate.cpp"}
PLATFORM_USERS = {"src/npy/entry_points.cpp", "src/npy/entry_points.hpp", "src/npy/data.cpp", "src/npy/data.hpp",
                  "src/npy/write.cpp", "src/npz/entry_points.cpp", "src/ra/entry_points.cpp", "src/ra/data.cpp"}

# room -> rooms its quoted includes may name ("npyguard" = public headers)
ALLOWED = {
    "include/npyguard": {"npyguard"},
    "include": set(),  # npyguard.h, the C API: standard C headers only
    "src/core": {"npyguard", "core"},
    "src/platform": {"npyguard", "core", "platform"},
    "src/npy": {"npyguard", "core", "npy", "grammar"},
    "src/npz": {"npyguard", "core", "npy", "npz"},
    "src/ra": {"npyguard", "core", "ra"},
    "src/convert": {"npyguard", "core", "npy", "ra", "platform", "convert"},
    "src/input": {"npyguard", "core", "platform", "input"},  # the boundary: public entry points of each format
    "src/cli": {"npyguard", "cli"},
    "src/capi": {"npyguard", "capi"},
    "python/src": {"npyguard", "src"},  # the Python package's native half: public headers and its own
}


def room_of(path, root):
    relative = path.relative_to(root).as_posix()
    for room in ALLOWED:
        if relative.startswith(room + "/"):
            return room, relative
    return None, relative


def target_room(include, room):
    if include == "npyguard.h":
        return "npyguard"  # the C API, a public header
    if "/" not in include:
        return room.split("/")[-1] if room != "include/npyguard" else "npyguard"  # same directory
    first = include.split("/")[0]
    return first


def check(path, root):
    room, relative = room_of(path, root)
    problems = []
    if room is None:
        return [f"{relative}: not in a room ({', '.join(sorted(ALLOWED))})"]
    allowed = set(ALLOWED[room])
    if relative in PLATFORM_USERS:
        allowed.add("platform")
    report_only = relative in CLI_REPORT_USERS
    posix_ok = room in ("src/platform", "src/cli")
    opens_ok = room == "src/platform"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        quoted = QUOTED.match(line)
        if quoted:
            include = quoted.group(1)
            target = target_room(include, room)
            if ".." in include.split("/"):
                problems.append(f"{relative}:{number}: includes {include!r} by a relative path upward")
            elif report_only and include == "cli/report.hpp":
                pass
            elif target not in allowed:
                problems.append(f"{relative}:{number}: includes {include!r}: {room} may include only "
                                f"{', '.join(sorted(allowed))}")
        system = SYSTEM.match(line)
        if system and POSIX.match(system.group(1)) and not posix_ok:
            problems.append(f"{relative}:{number}: includes <{system.group(1)}>: POSIX calls belong in "
                            "src/platform")
        code = line.split("//", 1)[0]
        if not opens_ok and OPENS.search(code):
            problems.append(f"{relative}:{number}: opens a file outside src/platform: read inputs through "
                            "npyguard::validate_input (npyguard/input.hpp) or platform::open_for_reading")
    return problems


def tree_problems(root):
    files = [p for top in ("src", "include", "python/src") for p in sorted((root / top).rglob("*"))
             if p.suffix in (".hpp", ".cpp", ".h", ".inc")]
    return files, [problem for path in files for problem in check(path, root)]


def self_test():
    """The checker must catch each kind of wrong include (so it can fail)."""
    import tempfile
    cases = {
        "src/core/a.cpp": '#include "npy/parse.hpp"\n',          # core reaching up into npy
        "src/core/b.cpp": "#include <unistd.h>\n",                # POSIX outside platform
        "src/npy/c.cpp": '#include "platform/fd.hpp"\n',         # platform from the pipeline
        "src/cli/d.cpp": '#include "npy/data.hpp"\n',            # cli past the public headers
        "include/npyguard/e.hpp": '#include "../../src/core/x.hpp"\n',
        "src/f.cpp": "\n",                                        # outside every room
        "src/npy/h.cpp": '#include "npz/reader.hpp"\n',         # npy reaching up into npz
        "src/npz/i.cpp": '#include "platform/fd.hpp"\n',        # platform from the archive pipeline
        "src/ra/j.cpp": '#include "npy/pipeline.hpp"\n',       # ra depends on core alone
        "python/src/k.cpp": '#include "npz/reader.hpp"\n',     # Python past the public headers
        # the gate may include the command's rows, nothing else of the command
        "python/src/gate.cpp": '#include "cli/report.hpp"\n#include "cli/inputs.hpp"\n',
    }
    cases["src/npy/data.cpp"] = "#include <sys/mman.h>\n"      # the data view calls platform, not mmap
    cases["src/capi/l.cpp"] = "  std::ifstream in(path, std::ios::binary);\n"  # a blocking second open
    cases["src/cli/m.cpp"] = "  const int fd = ::open(name.c_str(), O_RDONLY);\n"  # an open beside the boundary
    cases["src/cli/n.cpp"] = "  if (std::filesystem::is_regular_file(path)) {}\n"  # the path asked again      # the data view calls platform, not mmap
    fine = {"src/npy/entry_points.cpp": '#include "platform/fd.hpp"\n#include <cerrno>\n',
            "src/core/g.cpp": '#include "core/utf8.hpp"\n#include "npyguard/error.hpp"\n',
            "src/npz/central.cpp": '#include "npy/pipeline.hpp"\n#include "npz/names.hpp"\n',
            "src/cli/o.cpp": "  DIR* listing = ::opendir(path.c_str());\n  builder.open(kind, at);\n",
            "src/platform/p.cpp": "  return unique_fd(::open(path, O_RDONLY | O_NONBLOCK));\n"}
    with tempfile.TemporaryDirectory() as scratch:
        root = pathlib.Path(scratch)
        for name, text in {**cases, **fine}.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(text)
        _, problems = tree_problems(root)
    caught = {name for name in cases if any(problem.startswith(name) for problem in problems)}
    wrongly = [problem for problem in problems if any(problem.startswith(name) for name in fine)]
    wrongly += [problem for problem in problems if "cli/report.hpp" in problem]
    ok = caught == set(cases) and not wrongly
    print(f"layering self-test: {len(caught)} of {len(cases)} bad includes caught, "
          f"{len(wrongly)} good ones flagged: {'ok' if ok else 'FAILED'}")
    return ok


def main():
    if not self_test():
        return 1
    files, problems = tree_problems(ROOT)
    for problem in problems:
        print(problem)
    print(f"layering: {len(files)} files, {len(problems)} violations")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
