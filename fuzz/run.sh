#!/bin/bash -eu
# Runs one fuzzer built by fuzz/build.sh for a bounded time, the way CI does:
# starting from its seed corpus and the regressions, with the flags of its
# .options file and the memory and time limits below. New corpus entries and
# crash artifacts go to a scratch directory, never into the repository.
#
#   fuzz/run.sh FUZZER_DIR TARGET SECONDS [extra libFuzzer flags...]
#
# Exits non-zero (libFuzzer's status) on any crash, leak, timeout,
# out-of-memory or failed invariant.

if [ $# -lt 3 ]; then
  echo "usage: $0 FUZZER_DIR TARGET SECONDS [libFuzzer flags...]" >&2
  exit 2
fi
SRC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
FUZZERS="$(cd "$1" && pwd)"
TARGET="$2"
SECONDS_TO_RUN="$3"
shift 3

SCRATCH="${SCRATCH:-$(mktemp -d)}"
mkdir -p "$SCRATCH/$TARGET/corpus" "$SCRATCH/$TARGET/artifacts"

# key = value lines of the [libfuzzer] section become -key=value flags.
flags=()
if [ -f "$FUZZERS/$TARGET.options" ]; then
  while IFS='=' read -r key value; do
    key="$(echo "$key" | tr -d ' ')"
    value="$(echo "$value" | sed 's/^ *//;s/ *$//')"
    case "$key" in
      ''|'['*|'#'*) ;;
      dict) flags+=("-dict=$FUZZERS/$value") ;;
      *) flags+=("-$key=$value") ;;
    esac
  done < "$FUZZERS/$TARGET.options"
fi

echo "== $TARGET: ${SECONDS_TO_RUN}s, scratch $SCRATCH/$TARGET"
"$FUZZERS/$TARGET" "${flags[@]}" \
  -max_total_time="$SECONDS_TO_RUN" \
  -rss_limit_mb=2560 -malloc_limit_mb=64 -timeout=5 \
  -print_final_stats=1 \
  -artifact_prefix="$SCRATCH/$TARGET/artifacts/" \
  "$@" \
  "$SCRATCH/$TARGET/corpus" "$SRC_ROOT/corpus/$TARGET" "$SRC_ROOT/corpus/regressions"
