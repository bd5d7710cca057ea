"""Builds npyguard._npyguard with CMake from the repository this directory is in.

pip runs this through setuptools (pyproject.toml). The native module is the
library's CMake target npyguard_python (python/CMakeLists.txt), so the
library's sources, flags and dependencies have one description: the
repository's CMakeLists.txt. Needs cmake, a C++17 compiler, pybind11-dev,
python3-dev and the library's own Debian packages (see the README).
"""

import os
import re
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def version():
    text = (ROOT / "include" / "npyguard" / "version.hpp").read_text()
    parts = [re.search(rf"#define NPYGUARD_VERSION_{part} (\d+)", text).group(1) for part in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(parts)


class cmake_build_ext(build_ext):
    def build_extension(self, ext):
        if not (ROOT / "CMakeLists.txt").is_file():
            raise RuntimeError(f"npyguard's python/ must be built inside its repository; {ROOT} has no CMakeLists.txt")
        build_dir = Path(self.build_temp).resolve() / "cmake"
        output_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DNPYGUARD_BUILD_PYTHON=ON",
            "-DNPYGUARD_PYTHON_STAGE_PACKAGE=OFF",
            f"-DNPYGUARD_PYTHON_OUTPUT_DIR={output_dir}",
            f"-DPython_EXECUTABLE={sys.executable}",
        ]
        for option in ("TOOL", "TESTS", "BENCHMARKS", "FUZZERS", "INSTALL"):
            configure.append(f"-DNPYGUARD_BUILD_{option}=OFF" if option != "INSTALL" else "-DNPYGUARD_INSTALL=OFF")
        subprocess.run(configure, check=True)
        jobs = str(os.cpu_count() or 1)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "npyguard_python", "-j", jobs], check=True)


setup(
    version=version(),
    ext_modules=[Extension("npyguard._npyguard", sources=[])],
    cmdclass={"build_ext": cmake_build_ext},
)
