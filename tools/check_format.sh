#!/usr/bin/env bash
# Fails when a C or C++ file of the repository differs from .clang-format's
# layout (clang-format 14, Debian's clang-format). With --fix, formats them.
set -euo pipefail
cd "$(dirname "$0")/.."
formatter="$(command -v clang-format-14 || command -v clang-format)"
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.c' '*.h')
if [ "${1:-}" = "--fix" ]; then
  "$formatter" -i "${files[@]}"
  exit 0
fi
if ! "$formatter" --dry-run --Werror "${files[@]}"; then
  echo "format: the files above differ from .clang-format; run tools/check_format.sh --fix" >&2
  exit 1
fi
echo "format: ${#files[@]} files match .clang-format"
