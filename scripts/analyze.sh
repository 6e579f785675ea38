#!/usr/bin/env bash
# GCC's static analyzer (-fanalyzer) over the product code: hilsim and libhilsim-client with
# every library they link, built from scratch in their own build directory (about 10 minutes on
# two cores: not part of scripts/test-all.sh). Every finding is either fixed or listed, with the
# reason it is a false positive, in scripts/analyzer-known.txt; a finding not listed there fails.
# The analyzer works one translation unit at a time, so most of what it reports are contracts
# kept in another file (an ops table's out-parameter, a free in a destructor, hs_diag_set turning
# a positive errno negative): the list says which.
# Usage: scripts/analyze.sh [BUILD_DIR]   (default build-analyze)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-analyze}
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS=-fanalyzer >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
cmake --build "$dir" --clean-first -j"$(nproc)" --target hilsim hilsim-client >"$log" 2>&1 || {
  tail -20 "$log" >&2
  echo "analyze: the build failed" >&2
  exit 2
}
root="$(pwd)/"
# One key per finding: file and warning option (line numbers move with every edit).
found=$(grep -E ': warning: .*\[-Wanalyzer-' "$log" | sed -e "s#^$root##" |
  sed -E 's#^([^:]+):[0-9]+:[0-9]+: warning: .*\[(-Wanalyzer-[a-z-]+)\]$#\1 \2#' | sort -u)
known=$(grep -vE '^\s*(#|$)' scripts/analyzer-known.txt | awk '{print $1, $2}' | sort -u)
new=$(comm -23 <(printf '%s\n' "$found") <(printf '%s\n' "$known") | sed '/^$/d')
gone=$(comm -13 <(printf '%s\n' "$found") <(printf '%s\n' "$known") | sed '/^$/d')
echo "analyze: $(grep -cE ': warning: .*\[-Wanalyzer-' "$log" || true) findings," \
  "$(printf '%s\n' "$found" | sed '/^$/d' | wc -l) file/kind pairs"
if [ -n "$gone" ]; then
  echo "analyze: listed in scripts/analyzer-known.txt but no longer found (delete the lines):"
  printf '  %s\n' "$gone"
fi
if [ -n "$new" ]; then
  echo "analyze: NEW findings (fix them, or list them with the reason):" >&2
  printf '%s\n' "$new" | while read -r f k; do
    grep -E "^${root}${f}:[0-9]+:[0-9]+: warning: .*\[${k}\]" "$log" | sed "s#^$root##" >&2
  done
  exit 1
fi
echo "analyze: no finding beyond the listed false positives"
