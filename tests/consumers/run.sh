#!/usr/bin/env bash
# Checks that an install holds npyguard/npy/ and the forwarding headers at
# the old paths, then builds and runs a tiny program against npyguard the
# three ways a user embeds it: find_package on an installed prefix,
# add_subdirectory from a parent project (whose cache must not get a build
# type from npyguard), and pkg-config (from C++ and from C, the C API alone);
# then a shared build, whose dynamic symbols must be the public API only (no
# npyguard::detail, the C API's functions present), used from C through its
# installed npyguard.pc. The static library is configured for the default
# prefix and installed with `cmake --install --prefix` elsewhere, and its tree
# is then copied to a third place: npyguard.pc must follow both (it finds its
# prefix from ${pcfiledir}). LICENSE and THIRD-PARTY.md must be installed.
#
#   tests/consumers/run.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source_dir="$(cd "$1" && pwd)"
work="$2"
rm -rf "$work"
mkdir -p "$work"
work="$(cd "$work" && pwd)" # absolute: CMAKE_PREFIX_PATH and the checks below need it
jobs="${NPYGUARD_CONSUMER_JOBS:-2}"
quiet() { "$@" > "$work/last.log" 2>&1 || { cat "$work/last.log"; return 1; }; }

echo "== install a static npyguard (library only) with --prefix, not the configured prefix"
# Configured for the default prefix (/usr/local); installed elsewhere.
quiet cmake -S "$source_dir" -B "$work/lib" -DCMAKE_BUILD_TYPE=Release \
  -DNPYGUARD_BUILD_TOOL=OFF -DNPYGUARD_BUILD_TESTS=OFF -DNPYGUARD_BUILD_BENCHMARKS=OFF -DNPYGUARD_BUILD_FUZZERS=OFF
quiet cmake --build "$work/lib" -j "$jobs"
quiet cmake --install "$work/lib" --prefix "$work/prefix"
for document in LICENSE THIRD-PARTY.md; do
  [ -f "$work/prefix/share/doc/npyguard/$document" ] || { echo "$document is not installed" >&2; exit 1; }
done
cmp "$source_dir/LICENSE" "$work/prefix/share/doc/npyguard/LICENSE"

echo "== the installed headers: npy/ and the forwarding headers at the old paths"
for header in model validate descr write data; do
  [ -f "$work/prefix/include/npyguard/npy/$header.hpp" ] || { echo "npyguard/npy/$header.hpp not installed" >&2; exit 1; }
  printf '#include <npyguard/%s.hpp>\n' "$header"
done | c++ -std=c++17 -fsyntax-only -I"$work/prefix/include" -x c++ -

echo "== find_package"
quiet cmake -S "$source_dir/tests/consumers/find_package" -B "$work/find_package" -DCMAKE_PREFIX_PATH="$work/prefix"
quiet cmake --build "$work/find_package"
"$work/find_package/consumer"

echo "== pkg-config"
pc_dir="$(dirname "$(find "$work/prefix" -name npyguard.pc | head -n 1)")"
pc_prefix="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --variable=prefix npyguard)"
[ "$(cd "$pc_prefix" && pwd -P)" = "$(cd "$work/prefix" && pwd -P)" ] ||
  { echo "npyguard.pc says prefix=$pc_prefix after --prefix $work/prefix" >&2; exit 1; }
grep -qx 'License: Apache-2.0' "$pc_dir/npyguard.pc" || { echo "npyguard.pc has no License: Apache-2.0" >&2; exit 1; }
PKG_CONFIG_PATH="$pc_dir" pkg-config --validate npyguard
flags="$(PKG_CONFIG_PATH="$pc_dir" pkg-config --cflags --libs npyguard)"
# shellcheck disable=SC2086 # the flags are words
c++ "$source_dir/tests/consumers/main.cpp" -o "$work/pkg_config_consumer" $flags
"$work/pkg_config_consumer"

echo "== pkg-config from C (the C API alone, a static library)"
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -Wall -Wextra -Werror "$source_dir/tests/consumers/main.c" -o "$work/c_consumer" $flags
"$work/c_consumer"

echo "== pkg-config from C after the installed tree is moved"
cp -a "$work/prefix" "$work/moved_prefix"
moved_pc="${pc_dir/#$work\/prefix/$work/moved_prefix}"
moved_flags="$(PKG_CONFIG_PATH="$moved_pc" pkg-config --cflags --libs npyguard)"
case "$moved_flags" in *"$work/prefix/"*) echo "npyguard.pc still names the old prefix: $moved_flags" >&2; exit 1 ;; esac
# shellcheck disable=SC2086 # the flags are words
cc -std=c99 -Wall -Wextra -Werror "$source_dir/tests/consumers/main.c" -o "$work/c_moved_consumer" $moved_flags
"$work/c_moved_consumer"

echo "== add_subdirectory (a parent that exports its own targets)"
quiet cmake -S "$source_dir/tests/consumers/add_subdirectory" -B "$work/add_subdirectory" \
  -DNPYGUARD_SOURCE="$source_dir" -DNPYGUARD_BUILD_TOOL=OFF -DNPYGUARD_BUILD_TESTS=OFF \
  -DNPYGUARD_BUILD_BENCHMARKS=OFF -DNPYGUARD_BUILD_FUZZERS=OFF
if grep -q '^CMAKE_BUILD_TYPE:STRING=.\+' "$work/add_subdirectory/CMakeCache.txt"; then
  echo "npyguard wrote CMAKE_BUILD_TYPE into the parent's cache" >&2
  exit 1
fi
quiet cmake --build "$work/add_subdirectory" -j "$jobs"
"$work/add_subdirectory/consumer"

echo "== shared library: exported symbols"
quiet cmake -S "$source_dir" -B "$work/shared" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
  -DCMAKE_INSTALL_PREFIX="$work/shared_prefix" \
  -DNPYGUARD_BUILD_TOOL=OFF -DNPYGUARD_BUILD_TESTS=OFF -DNPYGUARD_BUILD_BENCHMARKS=OFF -DNPYGUARD_BUILD_FUZZERS=OFF
quiet cmake --build "$work/shared" -j "$jobs"
library="$(find "$work/shared" -maxdepth 1 -name 'libnpyguard.so.*.*.*' | head -n 1)"
soname="$(objdump -p "$library" | awk '/SONAME/ {print $2}')"
echo "$(basename "$library"), SONAME $soname"
[ "$soname" = "libnpyguard.so.0.1" ] || { echo "unexpected SONAME $soname" >&2; exit 1; }
symbols="$(nm -D --defined-only -C "$library")"
if grep -E 'npyguard::detail|tao::pegtl' <<< "$symbols"; then
  echo "the shared library exports implementation symbols (above)" >&2
  exit 1
fi
grep -q 'npyguard::validate_buffer' <<< "$symbols"
# The C API's functions are exported, under their C names.
for function in npyguard_version npyguard_check_buffer npyguard_result_free npyguard_dtype_field; do
  grep -q " T $function\$" <<< "$symbols" || { echo "$function is not exported" >&2; exit 1; }
done
c++ -std=c++17 "$source_dir/tests/consumers/main.cpp" -I"$source_dir/include" -L"$work/shared" -lnpyguard \
  -Wl,-rpath,"$work/shared" -o "$work/shared_consumer"
"$work/shared_consumer"

echo "== pkg-config from C against the shared library"
quiet cmake --install "$work/shared"
shared_pc="$(dirname "$(find "$work/shared_prefix" -name npyguard.pc | head -n 1)")"
# shellcheck disable=SC2046 # the flags are words
cc -std=c99 -Wall -Wextra -Werror "$source_dir/tests/consumers/main.c" -o "$work/c_shared_consumer" \
  $(PKG_CONFIG_PATH="$shared_pc" pkg-config --cflags --libs npyguard)
LD_LIBRARY_PATH="$(PKG_CONFIG_PATH="$shared_pc" pkg-config --variable=libdir npyguard)" "$work/c_shared_consumer"
echo "consumers: 8 passed, 0 failed"
