#!/usr/bin/env bash
# On a GPU machine: the GPU test suite, the CLI test, every experiment at N=1024 and N=8192 on the
# cuda backend, and the hand-written reference program in the same job, with the span ratios.
#   usage: bench/run_gpu.sh STREAMLAB STREAMLAB_TESTS BENCH_DIR [LOG_DIR]
# BENCH_DIR holds compare, built from bench/ by CMake (build/bench/compare).
set -u
bin=$1 tests=$2 benchdir=$3 logs=${4:-/tmp/streamlab-gpu}
mkdir -p "$logs"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

echo "== GPU test suite"
STREAMLAB_SOURCE_DIR=$PWD "$tests" -ts=gpu 2>&1 | tee "$logs/gpu_tests.log" | grep -E "ERROR|values:|logged:|test cases|assertions|Status"
echo "== CLI test"
bash tests/cli_test.sh "$bin" . 2>&1 | tail -3

span() { grep -Eo 'span \(host[^)]*\) +median +[0-9.]+' "$1" | grep -Eo '[0-9.]+$'; }

echo "== experiments"
for f in experiments/*.yaml experiments/claims/*.yaml; do
  sizes="-"
  grep -q "params: {N:" "$f" && sizes="1024 8192"
  for n in $sizes; do
    log="$logs/$(basename "$f" .yaml)_N$n.log"
    set_n=(); [[ $n != - ]] && set_n=(--set N=$n)
    "$bin" run "$f" "${set_n[@]}" --backend cuda >"$log" 2>&1
    echo "rc=$? $(grep -c PASS "$log") PASS $(grep -c FAIL "$log") FAIL  span $(span "$log") ms  $f N=$n"
  done
done

# The ratios come from bench/compare, which runs each experiment and its hand-written program
# repetition for repetition in one process, so that the host's drift falls on both alike. The
# acceptance figure uses --timer none (spans alone, as the hand-written program measures); with
# events the runner also pays an event pair per op. CUPTI is left out: it would trace both sides.
for timer in none events; do
  echo "== runner vs hand-written, timer $timer"
  "$benchdir/compare" --timer "$timer" 2>&1 | tee "$logs/compare_$timer.log"
done
