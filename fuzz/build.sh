#!/bin/bash -eu
# Builds npyguard's fuzz targets the way OSS-Fuzz and ClusterFuzzLite do.
#
# Honours CC, CXX, CFLAGS, CXXFLAGS and LIB_FUZZING_ENGINE (the engine's link
# flag or library, e.g. -fsanitize=fuzzer) and writes into $OUT:
#   fuzz_<surface>                      the fuzzer binaries
#   fuzz_<surface>_seed_corpus.zip      corpus/<target>/ plus corpus/regressions/
#   fuzz_<surface>.dict                 the fuzz/*.dict its .options names (npy.dict, npz.dict)
#   fuzz_<surface>.options              libFuzzer flags, naming the .dict
#
# Run from anywhere; for example, from the repository root:
#   CC=clang CXX=clang++ \
#   CFLAGS="-O1 -g -fsanitize=address,undefined -fsanitize=fuzzer-no-link" \
#   CXXFLAGS="$CFLAGS" LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/fuzzers fuzz/build.sh
#
# Sanitizer and optimisation flags come only from CFLAGS/CXXFLAGS, as on
# OSS-Fuzz; without -O1 or higher the fuzzers run at -O0 speed.

SRC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${CC:=clang}"
: "${CXX:=clang++}"
: "${CFLAGS:=}"
: "${CXXFLAGS:=}"
: "${LIB_FUZZING_ENGINE:=-fsanitize=fuzzer}"
: "${OUT:?set OUT to the directory that receives the fuzzers}"
# $WORK on OSS-Fuzz; otherwise a directory under the (ignored) build/.
BUILD_DIR="${WORK:-$SRC_ROOT/build}/npyguard-fuzz-build"

mkdir -p "$OUT"
# CMAKE_BUILD_TYPE=None: no flags beyond CFLAGS/CXXFLAGS.
cmake -S "$SRC_ROOT" -B "$BUILD_DIR" \
  -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER="$CC" \
  -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DNPYGUARD_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DNPYGUARD_BUILD_FUZZERS=ON \
  -DNPYGUARD_BUILD_TOOL=OFF \
  -DNPYGUARD_BUILD_TESTS=OFF \
  -DNPYGUARD_BUILD_BENCHMARKS=OFF \
  -DNPYGUARD_INSTALL=OFF
cmake --build "$BUILD_DIR" --parallel "$(nproc)"

zip_dir() { # zip_dir ARCHIVE DIR...: the files below DIRs, flat, as OSS-Fuzz expects
  local archive="$1"
  shift
  rm -f "$archive"
  find "$@" -type f -print0 | xargs -0 python3 -c '
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1], "a", zipfile.ZIP_DEFLATED) as archive:
    for path in sys.argv[2:]:
        archive.write(path, os.path.basename(path))
' "$archive"
}

for source in "$SRC_ROOT"/fuzz/fuzz_*.cpp; do
  target="$(basename "$source" .cpp)"
  cp "$BUILD_DIR/fuzz/$target" "$OUT/"
  zip_dir "$OUT/${target}_seed_corpus.zip" "$SRC_ROOT/corpus/$target" "$SRC_ROOT/corpus/regressions"
  options="$SRC_ROOT/fuzz/$target.options"
  dict="$(sed -n 's/^dict *= *\([a-z_]*\.dict\)$/\1/p' "$options")"
  if [ -n "$dict" ]; then
    cp "$SRC_ROOT/fuzz/$dict" "$OUT/$target.dict"
    sed "s/^dict *= *$dict/dict = $target.dict/" "$options" > "$OUT/$target.options"
  else
    cp "$options" "$OUT/$target.options"
  fi
done
echo "fuzzers written to $OUT:"
ls "$OUT"
