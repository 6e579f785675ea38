#!/usr/bin/env bash
# Builds and runs every test: a -Werror build with ctest (including the PREEMPT_RT guest tests),
# an ASan+UBSan build with ctest, a TSan build of the threaded tests, a clang-format check,
# cppcheck (scripts/lint.sh), clang-tidy (scripts/tidy.sh) and a short libFuzzer run per target.
# Installs nothing: run scripts/setup.sh first (the README's test command does).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=$(nproc)

step() { printf '\n=== %s ===\n' "$*"; }

step "format check"
mapfile -t SRCS < <(git ls-files '*.c' '*.h')
clang-format --dry-run --Werror "${SRCS[@]}"

step "lint (cppcheck)"
scripts/lint.sh build-lint

step "lint (clang-tidy, .clang-tidy's checks)"
scripts/tidy.sh build-tidy

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

# ThreadSanitizer over the tests that run hilsim's threads, building only what they need: the CAN
# reply thread (test_can_replier), the recorder's writer thread (test_record), the control socket
# (test_ctl_e2e: the hilsim binary's socket thread, driven by the python client), shm between
# server and client threads (test_shm_stress, test_shm_commands) and the RT thread and tick loop
# (test_tick_loop), the view replaying a recording while its server reads the contacts
# (test_view_rec_contacts). The python client loads the TSan-built libhilsim-client, so the TSan runtime
# is preloaded into that test's python (tests/ctl/CMakeLists.txt).
step "build (ThreadSanitizer): the threaded tests"
TSAN_TESTS=(test_can_replier test_record test_shm_stress test_shm_commands test_tick_loop test_view_rec_contacts)
cmake -S . -B build-tsan -DHS_WERROR=ON -DHS_TSAN=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tsan -j"$JOBS" --target "${TSAN_TESTS[@]}" hilsim hilsim-client
step "threaded tests under ThreadSanitizer"
tsan_rx=$(IFS='|'; echo "^(${TSAN_TESTS[*]}|test_ctl_e2e)\$")
(cd build-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  ctest --output-on-failure -j"$JOBS" -R "$tsan_rx")

# 17 targets: 12 s each keeps the whole run near 20 min on 2 cores; each target was also run
# for minutes when written (its commit says how long). HS_FUZZ_SECONDS=60 for a deeper pass.
step "fuzz (clang-14 libFuzzer + ASan/UBSan, ${HS_FUZZ_SECONDS:=12} s per target)"
# Each target's time is split: three quarters at libFuzzer's default input length (grown from
# the corpus), then a quarter with -max_len=HS_FUZZ_LONG_LEN and no length ramp, so inputs reach
# the parsers' size limits (nesting depth, signals per message, file sizes) at least for part of
# every run.
: "${HS_FUZZ_LONG_LEN:=262144}"
# Only the fuzzers and the libraries they need are built here; the corpus in the repository is
# read-only to libFuzzer (new inputs go to a scratch folder).
CC=clang-14 cmake -S . -B build-fuzz -DHS_FUZZ=ON -DHS_SANITIZE=ON -DHS_WERROR=ON \
  -DCMAKE_BUILD_TYPE=Debug >/dev/null
mapfile -t FUZZERS < build-fuzz/fuzzers.txt
[ ${#FUZZERS[@]} -gt 0 ] || { echo "no fuzz targets found" >&2; exit 1; }
cmake --build build-fuzz -j"$JOBS" --target $(for f in "${FUZZERS[@]}"; do basename "${f%% *}"; done)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for entry in "${FUZZERS[@]}"; do
  bin=${entry%% *} corpus=${entry#* }
  name=$(basename "$bin")
  mkdir -p "$scratch/$name"
  echo "--- $name"
  # (-max_total_time=0 would mean "forever": each pass gets at least a second)
  short=$((HS_FUZZ_SECONDS * 3 / 4)); [ "$short" -ge 1 ] || short=1
  long=$((HS_FUZZ_SECONDS - short)); [ "$long" -ge 1 ] || long=1
  # A long input that takes 25 s is a finding (a parser gone quadratic), not a slow pass.
  for pass in "-max_total_time=$short" \
              "-max_total_time=$long -max_len=$HS_FUZZ_LONG_LEN -len_control=0 -timeout=25"; do
    # shellcheck disable=SC2086 # pass holds several options
    "$bin" $pass -print_final_stats=1 -artifact_prefix="$scratch/$name-" \
      "$scratch/$name" "$corpus" 2>&1 | grep -E "^(stat::number_of_executed_units|Done|==.*ERROR)" || true
  done
  # libFuzzer exits non-zero and leaves a crash-* artifact on a finding.
  if ls "$scratch/$name-"crash-* "$scratch/$name-"leak-* "$scratch/$name-"timeout-* >/dev/null 2>&1; then
    echo "fuzz: $name found a failing input: $(ls "$scratch/$name-"*)" >&2
    exit 1
  fi
done

echo
echo "test-all: every step passed"
