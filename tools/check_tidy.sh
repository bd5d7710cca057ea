#!/usr/bin/env bash
# clang-tidy (bugprone, clang-analyzer; .clang-tidy) on every library and
# tool source, warnings as errors. Needs a configured build with
# compile_commands.json (default: build/dev, which the README's test
# command makes).
#   tools/check_tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/dev}"
tidy="$(command -v clang-tidy-14 || command -v clang-tidy)"
[ -f "$build/compile_commands.json" ] || { echo "tidy: no $build/compile_commands.json" >&2; exit 2; }
mapfile -t files < <(git ls-files 'src/*.cpp')
# The build uses g++'s default C++17; clang-tidy's clang defaults to C++14.
if ! printf '%s\n' "${files[@]}" |
    xargs -P "$(nproc)" -n 1 "$tidy" -p "$build" --quiet --extra-arg=-std=c++17 > "$build/tidy.log" 2>&1; then
  grep -E -A4 'error:|warning:' "$build/tidy.log" | head -n 200 >&2
  echo "tidy: findings above (full log: $build/tidy.log)" >&2
  exit 1
fi
echo "tidy: ${#files[@]} files clean"
