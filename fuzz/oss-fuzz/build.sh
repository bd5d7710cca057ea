#!/bin/bash -eu
# OSS-Fuzz build script for npyguard; ClusterFuzzLite runs it too
# (.clusterfuzzlite/build.sh).
#
# It runs inside gcr.io/oss-fuzz-base/base-builder, whose `compile` has set
# CC, CXX, CFLAGS and CXXFLAGS (sanitizer and coverage flags included),
# LIB_FUZZING_ENGINE, SANITIZER, SRC, WORK and OUT. The Dockerfile has put the
# sources here:
#   $SRC/npyguard   this repository
#   $SRC/PEGTL      taocpp/PEGTL 3.2.7 (header-only)
#   $SRC/zlib       zlib 1.2.13
#   $SRC/utf8proc   utf8proc 2.8.0
#
# zlib and utf8proc are compiled here with $CC and $CFLAGS and linked
# statically, for every sanitizer: MemorySanitizer needs every linked library
# instrumented (the base image supplies an instrumented libc++), and the image
# that runs the fuzzers has no libutf8proc, so a shared link would not start.
# They and PEGTL's CMake package go to $WORK/deps, which CMAKE_PREFIX_PATH
# puts ahead of any copy in the system; fuzz/build.sh then builds every
# fuzz/fuzz_*.cpp and writes the fuzzers, seed corpora, dictionaries and
# .options files into $OUT.

DEPS="$WORK/deps"
JOBS="$(nproc)"

# PEGTL: only its headers and its CMake package (find_package(pegtl 3.2)).
cmake -S "$SRC/PEGTL" -B "$WORK/pegtl-build" \
  -DCMAKE_INSTALL_PREFIX="$DEPS" \
  -DPEGTL_BUILD_TESTS=OFF \
  -DPEGTL_BUILD_EXAMPLES=OFF
cmake --install "$WORK/pegtl-build"

# zlib: static only, so the linker cannot pick a shared libz. configure
# reads CC and CFLAGS from the environment; it builds out of tree.
mkdir -p "$WORK/zlib-build"
(cd "$WORK/zlib-build" && "$SRC/zlib/configure" --static --prefix="$DEPS" && make -j"$JOBS" install)

# utf8proc: static (BUILD_SHARED_LIBS=OFF); CMAKE_BUILD_TYPE=None adds no
# flags to CFLAGS but utf8proc's own (-O2 -std=c99).
cmake -S "$SRC/utf8proc" -B "$WORK/utf8proc-build" \
  -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER="$CC" \
  -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_INSTALL_PREFIX="$DEPS" \
  -DCMAKE_INSTALL_LIBDIR=lib
cmake --build "$WORK/utf8proc-build" --parallel "$JOBS"
cmake --install "$WORK/utf8proc-build"

export CMAKE_PREFIX_PATH="$DEPS${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
"$SRC/npyguard/fuzz/build.sh"

# The fuzzers must not need a library the runner image lacks.
for fuzzer in "$OUT"/fuzz_*; do
  case "$fuzzer" in *.*) continue ;; esac
  if ldd "$fuzzer" | grep -E 'lib(z|utf8proc)\.so'; then
    echo "$fuzzer links zlib or utf8proc dynamically; expected the static builds in $DEPS" >&2
    exit 1
  fi
done
