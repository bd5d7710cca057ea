#!/bin/bash
# Builds the fuzzers with fuzz/build.sh under the environment OSS-Fuzz's
# `compile` sets for SANITIZER=address, undefined and coverage, each into its
# own OUT and WORK, then checks each build as OSS-Fuzz would (the checks of
# infra/base-images/base-runner/bad_build_check, the seed-corpus check, and
# the coverage script's profile steps):
#
#   fuzz/oss_fuzz_env_test.sh [--jobs N] [--keep] [--sanitizers "address undefined coverage"]
#                             [--oss-fuzz-build DEPS_SRC] [--msan-libcxx PREFIX] [DIR]
#
# DIR receives one subdirectory per sanitizer (default: a fresh mktemp -d,
# removed afterwards unless --keep). It must be outside the repository or
# under its ignored build/ directory.
# --jobs N        compile with N parallel jobs (default 2).
# --oss-fuzz-build DEPS_SRC
#                 run fuzz/oss-fuzz/build.sh instead of fuzz/build.sh, with
#                 $SRC holding this repository and DEPS_SRC's PEGTL, zlib and
#                 utf8proc source trees (what the Dockerfile clones).
# --msan-libcxx PREFIX
#                 allows the sanitizer memory: PREFIX holds an MSan-built
#                 libc++ (include/c++/v1, lib/libc++.a), as base-clang's
#                 /usr/msan; fuzz/README.md says how to build one. Use it with
#                 --oss-fuzz-build, which builds zlib and utf8proc with MSan.
#
# Exits 0 when every build and check passed, 1 with a message naming the
# sanitizer, target and check otherwise, 2 on a usage error.
#
# The values below are OSS-Fuzz's (google/oss-fuzz at commit 955c6866c152):
#   infra/base-images/base-clang/Dockerfile      CC, CXX, CCC, CFLAGS, CXXFLAGS_EXTRA
#   infra/base-images/base-builder/Dockerfile    SANITIZER_FLAGS_*, COVERAGE_FLAGS*,
#                                                ARCHITECTURE, FUZZING_ENGINE, UBSAN_OPTIONS
#   infra/base-images/base-builder/compile       CFLAGS/CXXFLAGS composition
#   infra/base-images/base-builder/compile_libfuzzer   LIB_FUZZING_ENGINE
#   infra/base-images/base-image/Dockerfile      SRC, WORK, OUT
#   infra/base-images/base-runner/Dockerfile     ASAN_OPTIONS, MSAN_OPTIONS, UBSAN_OPTIONS, FUZZER_ARGS
#   infra/base-images/base-runner/bad_build_check, run_fuzzer, coverage
set -u  # no pipefail: `... | grep -q` would fail when grep stops reading early

SRC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
JOBS=2
KEEP=0
SANITIZERS="address undefined coverage"
DEPS_SRC=""
MSAN_LIBCXX=""
DIR=""
usage() {
  sed -n '8,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --jobs) JOBS="${2:?}"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --sanitizers) SANITIZERS="${2:?}"; shift 2 ;;
    --oss-fuzz-build) DEPS_SRC="$(cd "${2:?}" && pwd -P)" || exit 2; shift 2 ;;
    --msan-libcxx) MSAN_LIBCXX="$(cd "${2:?}" && pwd -P)" || exit 2; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "unknown option $1" >&2; usage ;;
    *) [ -z "$DIR" ] || usage; DIR="$1"; shift ;;
  esac
done
case "$JOBS" in ''|*[!0-9]*|0) echo "--jobs takes a positive number" >&2; exit 2 ;; esac
for sanitizer in $SANITIZERS; do
  case "$sanitizer" in
    address|undefined|coverage) ;;
    memory)
      [ -n "$MSAN_LIBCXX" ] || { echo "the sanitizer memory needs --msan-libcxx" >&2; exit 2; }
      [ -f "$MSAN_LIBCXX/lib/libc++.a" ] && [ -d "$MSAN_LIBCXX/include/c++/v1" ] ||
        { echo "--msan-libcxx $MSAN_LIBCXX: no lib/libc++.a and include/c++/v1" >&2; exit 2; }
      ;;
    *) echo "sanitizer '$sanitizer': only address, undefined, coverage, memory" >&2; exit 2 ;;
  esac
done

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
step() { echo "== $*"; }

# --- OSS-Fuzz's environment -------------------------------------------------
# base-clang/Dockerfile
OSS_CC=clang
OSS_CXX=clang++
OSS_CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -Wno-error=incompatible-function-pointer-types -Wno-error=int-conversion -Wno-error=deprecated-declarations -Wno-error=implicit-function-declaration -Wno-error=implicit-int -Wno-error=unknown-warning-option -Wno-error=vla-cxx-extension -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION"
OSS_CXXFLAGS_EXTRA="-stdlib=libc++"
# base-builder/Dockerfile (read by name in build(): SANITIZER_FLAGS_$SANITIZER)
# shellcheck disable=SC2034
SANITIZER_FLAGS_address="-fsanitize=address -fsanitize-address-use-after-scope"
# shellcheck disable=SC2034
SANITIZER_FLAGS_undefined="-fsanitize=array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unsigned-integer-overflow,unreachable,vla-bound,vptr -fno-sanitize-recover=array-bounds,bool,builtin,enum,function,integer-divide-by-zero,null,object-size,return,returns-nonnull-attribute,shift,signed-integer-overflow,unreachable,vla-bound,vptr"
# shellcheck disable=SC2034
SANITIZER_FLAGS_memory="-fsanitize=memory -fsanitize-memory-track-origins"
# shellcheck disable=SC2034
SANITIZER_FLAGS_coverage=""
DEFAULT_COVERAGE_FLAGS="-fsanitize=fuzzer-no-link"
# shellcheck disable=SC2034
COVERAGE_FLAGS_coverage="-fprofile-instr-generate -fcoverage-mapping -pthread -Wl,--no-as-needed -Wl,-ldl -Wl,-lm -Wno-unused-command-line-argument"
# base-runner/Dockerfile: how the fuzzers are run
RUN_ASAN_OPTIONS="alloc_dealloc_mismatch=0:allocator_may_return_null=1:allocator_release_to_os_interval_ms=500:check_malloc_usable_size=0:detect_container_overflow=1:detect_odr_violation=0:detect_leaks=1:detect_stack_use_after_return=1:fast_unwind_on_fatal=0:handle_abort=1:handle_segv=1:handle_sigill=1:max_uar_stack_size_log=16:print_scariness=1:quarantine_size_mb=10:strict_memcmp=1:strip_path_prefix=/workspace/:symbolize=1:use_sigaltstack=1:dedup_token_length=3"
RUN_MSAN_OPTIONS="print_stats=1:strip_path_prefix=/workspace/:symbolize=1:dedup_token_length=3"
RUN_UBSAN_OPTIONS="print_stacktrace=1:print_summary=1:silence_unsigned_overflow=1:strip_path_prefix=/workspace/:symbolize=1:dedup_token_length=3"
FUZZER_ARGS="-rss_limit_mb=2560 -timeout=25"
# bad_build_check's thresholds
MIN_NUMBER_OF_RUNS=4
THRESHOLD_FOR_NUMBER_OF_EDGES=100
ASAN_CALLS_THRESHOLD_FOR_ASAN_BUILD=1000
MSAN_CALLS_THRESHOLD_FOR_MSAN_BUILD=1000
MSAN_CALLS_THRESHOLD_FOR_NON_MSAN_BUILD=3
UBSAN_CALLS_THRESHOLD_FOR_UBSAN_BUILD=168
UBSAN_CALLS_THRESHOLD_FOR_NON_UBSAN_BUILD=200

# --- tools --------------------------------------------------------------------
PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON="$(command -v python3)" || fail "no python3"
for tool in "$OSS_CC" "$OSS_CXX" objdump file unzip nm; do
  command -v "$tool" > /dev/null || fail "$tool is not installed"
done
CLANG_MAJOR="$("$OSS_CC" -dumpversion | cut -d. -f1)"
LLVM_PROFDATA="$(command -v "llvm-profdata-$CLANG_MAJOR" || command -v llvm-profdata)" ||
  fail "llvm-profdata-$CLANG_MAJOR is not installed (Debian: llvm-$CLANG_MAJOR)"
LLVM_COV="$(command -v "llvm-cov-$CLANG_MAJOR" || command -v llvm-cov)" ||
  fail "llvm-cov-$CLANG_MAJOR is not installed (Debian: llvm-$CLANG_MAJOR)"
echo '#include <string>
int main() { return static_cast<int>(std::string("x").size()) - 1; }' |
  "$OSS_CXX" -stdlib=libc++ -x c++ -o /dev/null - 2> /dev/null ||
  fail "clang++ -stdlib=libc++ cannot build a program: OSS-Fuzz compiles C++ against libc++ (Debian: libc++-$CLANG_MAJOR-dev libc++abi-$CLANG_MAJOR-dev)"

# Where this host's toolchain differs from OSS-Fuzz's image: OSS-Fuzz's libFuzzer
# is built against libc++, Debian's libclang_rt.fuzzer against libstdc++, so
# a -stdlib=libc++ link also needs libstdc++ (the two never share a type:
# std::__1 and std::__cxx11). clang rewrites -lstdc++ to -lc++ under
# -stdlib=libc++, hence -l:. CMake reads LDFLAGS on its first configure.
HOST_LDFLAGS=""
FUZZER_RUNTIME="$("$OSS_CC" --print-runtime-dir)/libclang_rt.fuzzer-x86_64.a"
if [ -f "$FUZZER_RUNTIME" ] && nm -u "$FUZZER_RUNTIME" 2> /dev/null | grep -q '_ZNSt7__cxx11'; then
  HOST_LDFLAGS="-l:libstdc++.so.6"
fi

# --- directories ------------------------------------------------------------------
MARKER=".oss_fuzz_env_test"
if [ -z "$DIR" ]; then
  DIR="$(mktemp -d "${TMPDIR:-/tmp}/npyguard-oss-fuzz-env.XXXXXX")" || fail "mktemp failed"
  [ "$KEEP" = 1 ] || trap 'rm -rf "$DIR"' EXIT
else
  DIR="$(realpath -m "$DIR")"
  case "$DIR/" in
    "$SRC_ROOT/build/"*) ;;
    "$SRC_ROOT/"*) fail "$DIR is inside the repository; use a directory outside it or under build/" ;;
  esac
  mkdir -p "$DIR" || fail "cannot create $DIR"
  if [ -n "$(ls -A "$DIR")" ] && [ ! -f "$DIR/$MARKER" ]; then
    fail "$DIR is not empty and was not made by this script"
  fi
fi
touch "$DIR/$MARKER"
echo "working in $DIR (jobs: $JOBS)"

TARGETS=()
for source in "$SRC_ROOT"/fuzz/fuzz_*.cpp; do
  TARGETS+=("$(basename "$source" .cpp)")
done
[ "${#TARGETS[@]}" -gt 0 ] || fail "no fuzz/fuzz_*.cpp"

# libFuzzer flags from a .options file, as run_fuzzer gets them from
# parse_options.py: every key of [libfuzzer] as -key=value.
options_flags() {
  "$PYTHON" - "$1" << 'EOF'
import configparser, sys
parser = configparser.ConfigParser()
parser.read(sys.argv[1])
if parser.has_section("libfuzzer"):
    print(" ".join("-%s=%s" % item for item in parser["libfuzzer"].items()))
EOF
}

# --- one build ----------------------------------------------------------------------
build() { # build SANITIZER: runs the build script under OSS-Fuzz's environment
  local sanitizer="$1"
  local base="$DIR/$sanitizer"
  rm -rf "$base"
  mkdir -p "$base/src" "$base/work" "$base/out"
  # $SRC/npyguard is the checkout, as in the Docker image.
  ln -s "$SRC_ROOT" "$base/src/npyguard"
  local script="$base/src/npyguard/fuzz/build.sh"
  if [ -n "$DEPS_SRC" ]; then
    local dep
    for dep in PEGTL zlib utf8proc; do
      [ -d "$DEPS_SRC/$dep" ] || fail "--oss-fuzz-build: no $DEPS_SRC/$dep"
      ln -s "$DEPS_SRC/$dep" "$base/src/$dep"
    done
    script="$base/src/npyguard/fuzz/oss-fuzz/build.sh"
  fi

  # compile: SANITIZER_FLAGS from SANITIZER_FLAGS_<sanitizer>, COVERAGE_FLAGS
  # overridden by COVERAGE_FLAGS_<sanitizer> when that is set, then
  # CFLAGS="$CFLAGS $SANITIZER_FLAGS $COVERAGE_FLAGS", CXXFLAGS="$CFLAGS $CXXFLAGS_EXTRA",
  # and for undefined CFLAGS (only) gets -fno-sanitize=function.
  local sanitizer_flags_var="SANITIZER_FLAGS_$sanitizer" coverage_flags_var="COVERAGE_FLAGS_$sanitizer"
  local sanitizer_flags="${!sanitizer_flags_var}"
  local coverage_flags="$DEFAULT_COVERAGE_FLAGS"
  if [ -n "${!coverage_flags_var+x}" ]; then coverage_flags="${!coverage_flags_var}"; fi
  local cflags="$OSS_CFLAGS $sanitizer_flags $coverage_flags"
  local cxxflags="$cflags $OSS_CXXFLAGS_EXTRA"
  if [ "$sanitizer" = undefined ]; then cflags="$cflags -fno-sanitize=function"; fi

  local env=(
    PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    HOME="$base/work"
    LANG=C.UTF-8
    CC="$OSS_CC" CXX="$OSS_CXX" CCC="$OSS_CXX"
    CFLAGS="$cflags" CXXFLAGS="$cxxflags" CXXFLAGS_EXTRA="$OSS_CXXFLAGS_EXTRA"
    SANITIZER_FLAGS="$sanitizer_flags" COVERAGE_FLAGS="$coverage_flags"
    LIB_FUZZING_ENGINE="-fsanitize=fuzzer"
    SANITIZER="$sanitizer" FUZZING_ENGINE=libfuzzer ARCHITECTURE=x86_64 FUZZING_LANGUAGE=c++
    SRC="$base/src" WORK="$base/work" OUT="$base/out"
    UBSAN_OPTIONS="silence_unsigned_overflow=1"
    # not OSS-Fuzz's: fuzz/build.sh runs `nproc` jobs, and nproc honours this
    OMP_NUM_THREADS="$JOBS"
  )
  local ldflags="$HOST_LDFLAGS" host_note=""
  [ -z "$HOST_LDFLAGS" ] || host_note="LDFLAGS is this host's addition: $FUZZER_RUNTIME is built against libstdc++"
  if [ "$sanitizer" = memory ]; then
    # compile copies /usr/msan into the compiler's own directories; here the
    # same libc++ is named by flags.
    cxxflags="$cxxflags -nostdinc++ -isystem $MSAN_LIBCXX/include/c++/v1"
    ldflags="-L$MSAN_LIBCXX/lib $ldflags"
    host_note="${host_note:+$host_note; }the MSan libc++ of $MSAN_LIBCXX is this host's addition to CXXFLAGS and LDFLAGS"
  fi
  local i
  for ((i = 0; i < ${#env[@]}; i++)); do
    case "${env[i]}" in CXXFLAGS=*) env[i]="CXXFLAGS=$cxxflags" ;; esac
  done
  if [ -n "$ldflags" ]; then env+=(LDFLAGS="$ldflags"); fi

  step "$sanitizer: build ($(basename "$(dirname "$script")")/$(basename "$script"))"
  local var
  for var in CC CXX CFLAGS CXXFLAGS LIB_FUZZING_ENGINE SANITIZER FUZZING_ENGINE ARCHITECTURE FUZZING_LANGUAGE SRC WORK OUT LDFLAGS; do
    local entry
    for entry in "${env[@]}"; do
      case "$entry" in "$var="*) echo "   $entry" ;; esac
    done
  done
  [ -z "$host_note" ] || echo "   ($host_note)"
  local started=$SECONDS
  # As compile runs build.sh: bash -eux, from the checkout.
  if ! (cd "$base/src/npyguard" && env -i "${env[@]}" nice -n 19 bash -eux "$script") > "$base/build.log" 2>&1; then
    tail -n 40 "$base/build.log" >&2
    fail "$sanitizer: the build failed (log: $base/build.log)"
  fi
  echo "   built in $((SECONDS - started))s"
}

# --- checks -------------------------------------------------------------------------
check_outputs() { # every target's binary, .options, seed corpus and dict
  local sanitizer="$1" out="$DIR/$1/out" target
  step "$sanitizer: outputs in \$OUT"
  for target in "${TARGETS[@]}"; do
    [ -f "$out/$target" ] && [ -x "$out/$target" ] || fail "$sanitizer: $target: no executable \$OUT/$target"
    [ -f "$out/$target.options" ] || fail "$sanitizer: $target: no \$OUT/$target.options"
    unzip -tq "$out/${target}_seed_corpus.zip" > /dev/null 2>&1 ||
      fail "$sanitizer: $target: \$OUT/${target}_seed_corpus.zip is missing or not a zip"
    [ "$(unzip -Z1 "$out/${target}_seed_corpus.zip" | wc -l)" -gt 0 ] ||
      fail "$sanitizer: $target: the seed corpus zip is empty"
    unzip -Z1 "$out/${target}_seed_corpus.zip" | grep -q / &&
      fail "$sanitizer: $target: the seed corpus zip has directories; OSS-Fuzz expects flat files"
    local dict
    dict="$(sed -n 's/^\s*dict\s*=\s*\(.*\)/\1/p' "$out/$target.options" | tail -1)"
    if [ -n "$dict" ]; then
      case "$dict" in */*) fail "$sanitizer: $target: dict = $dict must be a file name in \$OUT" ;; esac
      [ -s "$out/$dict" ] || fail "$sanitizer: $target: $target.options names $dict, which is not in \$OUT"
    fi
  done
  # OSS-Fuzz takes every executable in $OUT for a fuzzer.
  local file
  for file in "$out"/*; do
    [ -f "$file" ] && [ -x "$file" ] || continue
    local name
    name="$(basename "$file")"
    printf '%s\n' "${TARGETS[@]}" | grep -qx "$name" ||
      fail "$sanitizer: \$OUT/$name is executable but no fuzz/$name.cpp exists"
  done
  echo "   ${#TARGETS[@]} targets, each with its .options, seed corpus zip and dict"
}

check_instrumentation() { # bad_build_check: check_architecture and check_mixed_sanitizers
  local sanitizer="$1" out="$DIR/$1/out" target
  step "$sanitizer: architecture and sanitizer instrumentation (objdump call counts)"
  for target in "${TARGETS[@]}"; do
    local fuzzer="$out/$target"
    file "$fuzzer" | grep -q "x86-64" || fail "$sanitizer: $target is not an x86-64 binary: $(file "$fuzzer")"
    local calls asan msan ubsan
    calls="$(objdump -dC "$fuzzer" | grep -E -o 'callq?\s+[0-9a-f]+\s+<__(asan|msan|ubsan|dfsan)' | sed 's/.*<__//')"
    asan="$(grep -c '^asan' <<< "$calls")"
    msan="$(grep -c '^msan' <<< "$calls")"
    ubsan="$(grep -c '^ubsan' <<< "$calls")"
    local dfsan
    dfsan="$(grep -c '^dfsan' <<< "$calls")"
    [ "$dfsan" -eq 0 ] || fail "$sanitizer: $target is compiled with DFSan ($dfsan calls)"
    [ "$sanitizer" = memory ] || [ "$msan" -le "$MSAN_CALLS_THRESHOLD_FOR_NON_MSAN_BUILD" ] ||
      fail "$sanitizer: $target is compiled with MSan ($msan calls)"
    case "$sanitizer" in
      address)
        [ "$asan" -ge "$ASAN_CALLS_THRESHOLD_FOR_ASAN_BUILD" ] || fail "address: $target does not seem compiled with ASan ($asan calls to __asan_*)"
        [ "$ubsan" -le "$UBSAN_CALLS_THRESHOLD_FOR_NON_UBSAN_BUILD" ] || fail "address: $target seems compiled with UBSan too ($ubsan calls)"
        ;;
      undefined)
        [ "$asan" -eq 0 ] || fail "undefined: $target is compiled with ASan ($asan calls)"
        [ "$ubsan" -ge "$UBSAN_CALLS_THRESHOLD_FOR_UBSAN_BUILD" ] || fail "undefined: $target does not seem compiled with UBSan ($ubsan calls to __ubsan_*)"
        ;;
      memory)
        [ "$asan" -eq 0 ] || fail "memory: $target is compiled with ASan ($asan calls)"
        [ "$msan" -ge "$MSAN_CALLS_THRESHOLD_FOR_MSAN_BUILD" ] || fail "memory: $target does not seem compiled with MSan ($msan calls to __msan_*)"
        [ "$ubsan" -le "$UBSAN_CALLS_THRESHOLD_FOR_NON_UBSAN_BUILD" ] || fail "memory: $target seems compiled with UBSan too ($ubsan calls)"
        ;;
      coverage)
        [ "$asan" -eq 0 ] && [ "$ubsan" -le "$UBSAN_CALLS_THRESHOLD_FOR_NON_UBSAN_BUILD" ] ||
          fail "coverage: $target has sanitizer instrumentation ($asan ASan, $ubsan UBSan calls)"
        nm "$fuzzer" | grep -q '__llvm_profile_runtime' || fail "coverage: $target has no profile runtime (-fprofile-instr-generate)"
        ;;
    esac
    printf '   %-18s asan %6d  ubsan %5d  msan %d\n' "$target" "$asan" "$ubsan" "$msan"
  done
}

run_fuzzer_env() { # the sanitizer options of base-runner
  env ASAN_OPTIONS="$RUN_ASAN_OPTIONS" MSAN_OPTIONS="$RUN_MSAN_OPTIONS" UBSAN_OPTIONS="$RUN_UBSAN_OPTIONS" "$@"
}

check_runs() { # check_engine and check_startup_crash, then the seed corpus (check_seed_corpus)
  local sanitizer="$1" out="$DIR/$1/out" target
  step "$sanitizer: $MIN_NUMBER_OF_RUNS runs without a corpus, then each seed corpus with -runs=0"
  for target in "${TARGETS[@]}"; do
    local log="$DIR/$sanitizer/$target.run.log" flags corpus
    read -r -a flags <<< "$(options_flags "$out/$target.options")"
    # run_fuzzer: cd $OUT, $FUZZER_ARGS, the .options flags, stdin from /dev/null
    (cd "$out" && run_fuzzer_env "./$target" $FUZZER_ARGS -seed=1337 -runs=$MIN_NUMBER_OF_RUNS "${flags[@]}" < /dev/null) > "$log" 2>&1
    grep -q "ERROR: no interesting inputs were found. Is the code instrumented" "$log" &&
      fail "$sanitizer: $target has no coverage instrumentation (log: $log)"
    grep -q "Done $MIN_NUMBER_OF_RUNS runs" "$log" || { tail -n 30 "$log" >&2; fail "$sanitizer: $target crashes or exits at startup (log: $log)"; }
    local edges
    edges="$(grep -Po "INFO: Loaded [[:digit:]]+ module.*\(.*(counters|guards)\):[[:space:]]+\K[[:digit:]]+" "$log" | head -1)"
    [ -n "$edges" ] && [ "$edges" -ge "$THRESHOLD_FOR_NUMBER_OF_EDGES" ] ||
      fail "$sanitizer: $target has only partial coverage instrumentation (${edges:-no} edges)"

    corpus="$DIR/$sanitizer/corpus/$target"
    mkdir -p "$corpus"
    unzip -oq -d "$corpus" "$out/${target}_seed_corpus.zip"
    log="$DIR/$sanitizer/$target.seeds.log"
    if ! (cd "$out" && run_fuzzer_env "./$target" $FUZZER_ARGS -runs=0 "$corpus" "${flags[@]}" < /dev/null) > "$log" 2>&1; then
      tail -n 40 "$log" >&2
      fail "$sanitizer: $target fails on its seed corpus (log: $log)"
    fi
    printf '   %-18s %5d edges, %5d seeds ok\n' "$target" "$edges" "$(find "$corpus" -type f | wc -l)"
  done
}

check_coverage() { # the coverage script's steps: -merge=1 with LLVM_PROFILE_FILE, profdata, llvm-cov
  local sanitizer="$1" out="$DIR/$1/out" target
  step "coverage: profiles from each seed corpus, merged by $(basename "$LLVM_PROFDATA"), reported by $(basename "$LLVM_COV")"
  local dumps="$DIR/$sanitizer/dumps"
  mkdir -p "$dumps"
  for target in "${TARGETS[@]}"; do
    local corpus="$DIR/$sanitizer/corpus/$target" dummy="$DIR/$sanitizer/dummy/$target" log="$DIR/$sanitizer/$target.cov.log"
    rm -rf "$dummy" && mkdir -p "$dummy" "$corpus"
    unzip -oq -d "$corpus" "$out/${target}_seed_corpus.zip"
    if ! (cd "$out" && LLVM_PROFILE_FILE="$dumps/$target.%1m.profraw" "./$target" -merge=1 -timeout=100 "$dummy" "$corpus") > "$log" 2>&1 ||
      grep -qE "^==[0-9]+== ERROR: libFuzzer:" "$log"; then
      tail -n 30 "$log" >&2
      fail "coverage: $target failed while collecting coverage (log: $log)"
    fi
    compgen -G "$dumps/$target.*.profraw" > /dev/null || fail "coverage: $target wrote no .profraw"
    "$LLVM_PROFDATA" merge -j=1 -sparse "$dumps/$target".*.profraw -o "$dumps/$target.profdata" 2> "$log.profdata" ||
      fail "coverage: $(basename "$LLVM_PROFDATA") rejects $target's profile: $(cat "$log.profdata")"
    local report="$dumps/$target.report"
    "$LLVM_COV" report -instr-profile="$dumps/$target.profdata" -object="$out/$target" > "$report" 2> "$log.report" ||
      fail "coverage: $(basename "$LLVM_COV") report failed for $target: $(head -5 "$log.report")"
    local files
    files="$(grep -cE '^(\S*/)?src/[a-z_]+/[a-z_0-9]+\.(cpp|hpp)\s' "$report")"
    [ "$files" -gt 0 ] || fail "coverage: the report for $target names no src/ file ($report)"
    local total
    total="$(awk '$1 == "TOTAL" { print $10 }' "$report")"
    printf '   %-18s %3d files of src/ in the report; lines covered, whole report: %s\n' "$target" "$files" "$total"
  done
}

STARTED=$SECONDS
for sanitizer in $SANITIZERS; do
  build "$sanitizer"
  check_outputs "$sanitizer"
  check_instrumentation "$sanitizer"
  if [ "$sanitizer" = coverage ]; then
    check_coverage "$sanitizer"
  else
    check_runs "$sanitizer"
  fi
done
echo "OK: ${#TARGETS[@]} fuzz targets built and checked for: $SANITIZERS ($((SECONDS - STARTED))s)"
