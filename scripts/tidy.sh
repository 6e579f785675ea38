#!/usr/bin/env bash
# clang-tidy over the product code (src/, rt/, drivers/, examples/, perf/) with the check set of
# .clang-tidy (its comment says what is on and why the rest is off), using the compile flags of a
# real configure (compile_commands.json; nothing is built). Any finding fails.
# Usage: scripts/tidy.sh [BUILD_DIR]   (default build-tidy; configured, not built)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-tidy}
cmake -S . -B "$dir" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
# The compile database is GCC's: options clang does not know (-Wno-tsan) are not findings.
run-clang-tidy-14 -p "$dir" -quiet -j "$(nproc)" -extra-arg=-Wno-unknown-warning-option \
  "$(pwd)/(src|rt|drivers|examples|perf)/" >"$dir/tidy.log" 2>&1 || {
  grep -E '(warning|error):' "$dir/tidy.log" | sort -u >&2
  echo "tidy: clang-tidy found the above (full log: $dir/tidy.log)" >&2
  exit 1
}
echo "tidy: clang-tidy clean"
