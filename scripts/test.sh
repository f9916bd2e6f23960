#!/usr/bin/env bash
# Sets up (scripts/setup.sh), then runs every test twice: first in the Release tree ./build, then
# built again with AddressSanitizer and UndefinedBehaviorSanitizer (QCHECK_SANITIZE) in
# ./build-asan. Exits non-zero when any test fails; a Release failure stops the script before the
# sanitizer build.
#
# Set QCHECK_SKIP_SANITIZE=1 to run the Release tests only (a quick local check).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"

if [ "${QCHECK_SKIP_SANITIZE:-0}" = 1 ]; then
  exit 0
fi
echo "test: building with ASan and UBSan in build-asan" >&2
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQCHECK_SANITIZE=ON \
  -DQCHECK_BUILD_BENCH=OFF >&2
cmake --build build-asan >&2
# Any report fails the test that triggered it: ASan, UBSan and LSan (leaks at exit) abort, so a
# report in a qcheck run is a signal, never an ordinary exit code such as 1.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}print_stacktrace=1:halt_on_error=1"
UBSAN_OPTIONS+=":abort_on_error=1"
ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
