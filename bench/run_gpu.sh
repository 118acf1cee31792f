#!/usr/bin/env bash
# On a GPU machine: the GPU test suite, the CLI test, every experiment at N=1024 and N=8192 on the
# cuda backend, and the hand-written reference program in the same job, with the span ratios.
#   usage: bench/run_gpu.sh STREAMLAB STREAMLAB_TESTS BENCH_DIR [LOG_DIR]
# BENCH_DIR holds two_transposes and claims, built from bench/*.cu by CMake (build/bench).
set -u
bin=$1 tests=$2 benchdir=$3 logs=${4:-/tmp/streamlab-gpu}
hand=$benchdir/two_transposes
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

echo "== runner vs hand-written, same job (median host span of 20 reps after 3 warm-ups)"
printf "%-10s %6s %12s %14s %8s\n" version N "runner ms" "hand-written ms" ratio
for pair in default:02_two_transposes_default_stream streams:03_two_transposes_two_streams pinned:04_two_transposes_pinned_async; do
  for n in 1024 8192; do
    h=$("$hand" "${pair%%:*}" $n | grep -Eo 'median [0-9.]+' | grep -Eo '[0-9.]+')
    r=$(span "$logs/${pair#*:}_N$n.log")
    printf "%-10s %6s %12s %14s %8s\n" "${pair%%:*}" $n "$r" "$h" "$(awk -v a="$r" -v b="$h" 'BEGIN{printf "%.3f", a/b}')"
  done
done
for pair in c1_one:c1_kernels_one_stream c1_four:c1_kernels_four_streams c5_one:c5_copy_kernel_one_stream c5_two:c5_copy_kernel_two_streams; do
  h=$("$benchdir/claims" "${pair%%:*}" | grep -Eo 'median [0-9.]+' | grep -Eo '[0-9.]+')
  r=$(span "$logs/${pair#*:}_N-.log")
  printf "%-10s %6s %12s %14s %8s\n" "${pair%%:*}" - "$r" "$h" "$(awk -v a="$r" -v b="$h" 'BEGIN{printf "%.3f", a/b}')"
done
