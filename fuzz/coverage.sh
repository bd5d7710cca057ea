#!/bin/bash -eu
# Line and branch coverage of the library (src/, grammar/) from replaying the
# committed corpus (corpus/<target>/ and corpus/regressions/) through every
# fuzz target, with clang's source-based coverage.
#
#   fuzz/coverage.sh [--min PERCENT] [--html DIR]
#
# Prints llvm-cov's per-file report, a line total for each room of src/
# (core, npy, npz, ra, capi) and for two gated groups: the parser and
# validator (grammar/, src/npy/parse.cpp, fast_parse.cpp, ast_builder.hpp,
# model_builder.cpp, type_string.cpp) and the zip reader (src/npz/: the end
# records, central and local headers, extra fields, names, reader, deflate
# decoder, inflater, members and the archive pipeline). With --min, exits 1
# when either gated group's line coverage is below PERCENT. With --html, also
# writes an annotated source view to DIR.

SRC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MIN=""
HTML=""
while [ $# -gt 0 ]; do
  case "$1" in
    --min) MIN="$2"; shift 2 ;;
    --html) HTML="$2"; shift 2 ;;
    *) echo "usage: $0 [--min PERCENT] [--html DIR]" >&2; exit 2 ;;
  esac
done

tool() { # the versioned LLVM tool when present (Debian installs llvm-cov-14)
  if command -v "$1-14" > /dev/null; then echo "$1-14"; else echo "$1"; fi
}
LLVM_PROFDATA="$(tool llvm-profdata)"
LLVM_COV="$(tool llvm-cov)"

cd "$SRC_ROOT"
cmake --preset coverage > /dev/null
cmake --build --preset coverage > /dev/null
BUILD="$SRC_ROOT/build/coverage"
PROFILES="$BUILD/profiles"
rm -rf "$PROFILES"
mkdir -p "$PROFILES"

objects=()
for source in fuzz/fuzz_*.cpp; do
  target="$(basename "$source" .cpp)"
  LLVM_PROFILE_FILE="$PROFILES/$target.profraw" \
    "$BUILD/fuzz/$target" "corpus/$target" corpus/regressions 2> /dev/null
  objects+=(-object "$BUILD/fuzz/$target")
done
"$LLVM_PROFDATA" merge -sparse "$PROFILES"/*.profraw -o "$PROFILES/merged.profdata"

# llvm-cov takes the first binary bare and the rest with -object.
report=("${objects[@]:1}" -instr-profile="$PROFILES/merged.profdata")
"$LLVM_COV" report "${report[@]}" src grammar
if [ -n "$HTML" ]; then
  "$LLVM_COV" show "${report[@]}" -format=html -output-dir="$HTML" src grammar
  echo "annotated source: $HTML/index.html"
fi

# Line coverage of a set of files: the line total of llvm-cov's report over them.
line_total() { "$LLVM_COV" report "${report[@]}" "$@" 2> /dev/null | awk '$1 == "TOTAL" { print $(NF-3) }'; }
for room in core npy npz ra capi; do
  echo "room src/$room: line coverage $(line_total "src/$room")"
done
# The gated groups: the parser and validator, and the zip reader.
parser=(grammar src/npy/parse.cpp src/npy/fast_parse.cpp src/npy/ast_builder.hpp src/npy/model_builder.cpp
  src/npy/type_string.cpp)
zip_reader=(src/npz/end_records.cpp src/npz/central.cpp src/npz/local.cpp src/npz/extra.cpp src/npz/names.cpp
  src/npz/reader.cpp src/npz/deflate_decoder.cpp src/npz/inflater.cpp src/npz/members.cpp src/npz/archive_pipeline.cpp
  src/npz/crc32.cpp)
status=0
gate() { # gate NAME FILES...: prints the group's total; below --min, status 1
  local name="$1"
  shift
  local total
  total="$(line_total "$@")"
  echo "$name ($*): line coverage $total"
  if [ -n "$MIN" ] && ! awk -v got="${total%\%}" -v min="$MIN" 'BEGIN { exit !(got + 0 >= min + 0) }'; then
    echo "$name: line coverage $total is below $MIN%" >&2
    status=1
  fi
}
gate "parser and validator" "${parser[@]}"
gate "zip reader" "${zip_reader[@]}"
exit "$status"
