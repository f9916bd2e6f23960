#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang, ASan and UBSan into ./build-fuzz and runs
# each for SECONDS_PER_TARGET seconds (default 60), FUZZ_JOBS targets at a time (default: one per
# core). Prints the executions per target; exits non-zero when a target crashed, hung (more than
# 10 s on one input) or used more than 2 GB.
#
# Usage: bash scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Seeds: the hand-picked tests/fuzz/corpus/<target>/ plus seeds made from fixtures/ by
# tests/fuzz/make_seeds.py. Inputs the fuzzer finds interesting accumulate in
# build-fuzz/work/corpus/<target>/ (kept between runs, never committed); crashing inputs are
# written to build-fuzz/work/artifacts/. Reproduce one with
#   build-fuzz/tests/fuzz/<target> build-fuzz/work/artifacts/<file>
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
targets=("$@")
if ((${#targets[@]} == 0)); then
  # Every target tests/fuzz/targets.cmake lists.
  read -r -a targets <<<"$(sed -n '/^set(QCHECK_FUZZ_TARGETS/,/)/p' tests/fuzz/targets.cmake |
    grep -o 'fuzz_[a-z_]*' | tr '\n' ' ')"
fi
jobs="${FUZZ_JOBS:-$(nproc)}"

packages=(clang libclang-rt-14-dev cmake ninja-build python3 nlohmann-json3-dev libsimdjson-dev
          libfmt-dev)
bash scripts/install_packages.sh fuzz "${packages[@]}"

cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DQCHECK_FUZZ=ON -DQCHECK_BUILD_TESTS=OFF -DQCHECK_BUILD_BENCH=OFF >&2
cmake --build build-fuzz --target "${targets[@]}" >&2

work=build-fuzz/work
mkdir -p "$work/artifacts" "$work/logs"
python3 tests/fuzz/make_seeds.py fixtures "$work/seeds"

# Longest input per target: a shard header, a config, a pattern and a name, a block of dynamic
# keys and names.
max_len_of() {
  case "$1" in
    fuzz_safetensors) echo 24576 ;;
    fuzz_regex) echo 2048 ;;
    fuzz_dynamic_rules) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

dict_of() {
  case "$1" in
    fuzz_regex) echo tests/fuzz/regex.dict ;;
    fuzz_compiled_list | fuzz_dynamic_rules) echo tests/fuzz/patterns.dict ;;
    *) echo tests/fuzz/json.dict ;;
  esac
}

run_target() {
  local target="$1"
  local corpus="$work/corpus/$target"
  mkdir -p "$corpus" "$work/seeds/$target" "tests/fuzz/corpus/$target"
  # New inputs go to the first directory; the others only seed it.
  "build-fuzz/tests/fuzz/$target" -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
    -max_len="$(max_len_of "$target")" -dict="$(dict_of "$target")" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$target-" \
    "$corpus" "tests/fuzz/corpus/$target" "$work/seeds/$target" >"$work/logs/$target.log" 2>&1
}

running=()
for target in "${targets[@]}"; do
  if ((${#running[@]} >= jobs)); then
    wait -n || true
    still=()
    for pid in "${running[@]}"; do
      kill -0 "$pid" 2>/dev/null && still+=("$pid")
    done
    running=("${still[@]+"${still[@]}"}")
  fi
  echo "fuzz: running $target for ${seconds}s" >&2
  (
    rc=0
    start="$(date +%s)"
    run_target "$target" || rc=$?
    echo "$rc $(($(date +%s) - start))" >"$work/logs/$target.rc"
  ) &
  running+=("$!")
done
wait

failed=0
printf '%-18s %12s %8s %10s %8s  %s\n' target executions seconds exec/s corpus result
for target in "${targets[@]}"; do
  log="$work/logs/$target.log"
  read -r rc took <"$work/logs/$target.rc"
  runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
  units="$(find "$work/corpus/$target" -type f | wc -l)"
  result=ok
  if [ "$rc" != 0 ]; then
    failed=1
    result="FAILED (exit $rc): $(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|property violated|^ALARM' \
      "$log" || echo "see $log")"
  fi
  printf '%-18s %12s %8s %10s %8s  %s\n' "$target" "${runs:-?}" "$took" "${rate:-?}" "$units" \
    "$result"
done
if ((failed)); then
  echo "fuzz: failures above; logs in $work/logs, inputs in $work/artifacts" >&2
fi
exit "$failed"
