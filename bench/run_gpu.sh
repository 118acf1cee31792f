#!/usr/bin/env bash
# On a GPU machine: the GPU test suite, the CLI test, the race experiments and their fixed twins
# ten times each, every experiment at N=1024 and N=8192 on the cuda backend, and the hand-written
# reference program in the same job, with the span ratios. `safety` runs what docs/safety.md
# promises of a GPU (a kernel that never ends stopped by the time limit, a device fault blamed on
# its op); `sanitize` runs compute-sanitizer's memcheck and synccheck over every experiment and
# over the GPU suite's own cases, and racecheck over the experiments whose kernels share memory
# within a block (it is not in the default sections: about six minutes).
# `lab` grades the overlap lab (experiments/labs/overlap): its solution three times, its starter and
# each classic mistake (tests/labs/overlap), and the solution against itself as the reference.
# `transpose` (not in the default sections) times transpose_tiled against a copy with its
# matrices at several places in memory, where BENCH_DIR holds bench/transpose_placements.
#   usage: [SECTIONS="tests races c6 claims c12 libs compare safety lab predict sanitize transpose"] [CLAIMS=GLOB]
#          [MARKER_PROBE=LIB NVTX_PROBE=LIB] bench/run_gpu.sh STREAMLAB STREAMLAB_TESTS BENCH_DIR [LOG_DIR]
# BENCH_DIR holds compare, built from bench/ by CMake (build/bench/compare).
set -u
bin=$1 tests=$2 benchdir=$3 logs=${4:-/tmp/streamlab-gpu}
sections=" ${SECTIONS:-tests races c6 claims c12 libs compare safety lab} "
want() { [[ $sections == *" $1 "* ]]; }
mkdir -p "$logs"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader

# `predict`: calibrate the device profile (timed), then every claims experiment, the four C6 ones at
# N=1024 and N=8192 and the lab's solution with --predict against it: predicted and measured span
# (the measured spread beside it) and the worst per-op start error; CSVs of the runs whose
# explanations tests/predict_test.cpp checks, for tests/golden/.
if want predict; then
  echo "== calibrate"
  /usr/bin/time -f "calibrate took %e s" "$bin" calibrate --output "$logs/nvidia_h200.json" 2>&1 | tail -2
  mkdir -p "$logs/golden"
  predict_one() {  # predict_one NAME FILE [ARGS...]
    local name=$1 f=$2
    shift 2
    "$bin" run "$f" "$@" --backend cuda --predict --profile "$logs/nvidia_h200.json" --json "$logs/$name.json" \
      --csv "$logs/golden/$name.csv" >"$logs/$name.predict.log" 2>&1
    python3 - "$logs/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m, p = d["spans"]["host_ms"], d["predicted"]
spread = (m["max"] - m["min"]) / m["median"] * 100 if m["median"] else 0
err = (p["span_ms"] - m["median"]) / m["median"] * 100
ops = {o["id"]: o for o in d["ops"]}
worst, worst_id = 0, "-"
starts = [o["start_ms"] for o in p["ops"] if o["start_ms"] is not None]
for o in p["ops"]:
    w = [x for x in d["waits"] if x["op"] == o["id"]]
    if o["start_ms"] is None or not w or w[0]["started_ms"] is None: continue
    e = abs((o["start_ms"] - min(starts)) - (w[0]["started_ms"] - min(x["started_ms"] for x in d["waits"] if x["started_ms"] is not None)))
    if e > worst: worst, worst_id = e, o["id"]
print(f"| {sys.argv[2]} | {m['median']:.3f} | {spread:.1f}% | {p['span_ms']:.3f} | {err:+.1f}% | {worst:.3f} ({worst_id}) |")
PY
  }
  echo "| experiment | measured span ms | spread (max-min)/median | predicted ms | error | worst start error ms (op) |"
  echo "|---|---|---|---|---|---|"
  for f in experiments/claims/*.yaml; do predict_one "$(basename "$f" .yaml)" "$f"; done
  for f in experiments/0[1-4]_*.yaml; do
    for n in 1024 8192; do predict_one "$(basename "$f" .yaml)_N$n" "$f" --set N=$n; done
  done
  predict_one lab_solution experiments/labs/overlap/solution.yaml
  for name in c1_kernels_one_stream c13_stream_priority c18_one_connection; do
    grep -A12 "^why each op started" "$logs/$name.predict.log" | head -14
    grep -A12 "^predicted by the timeline" "$logs/$name.predict.log" | head -14
  done
fi

if want tests; then
  echo "== GPU test suite"
  STREAMLAB_SOURCE_DIR=$PWD "$tests" -ts=gpu 2>&1 | tee "$logs/gpu_tests.log" | grep -E "ERROR|values:|logged:|test cases|assertions|Status|skipped, a race"
  echo "== CLI test"
  bash tests/cli_test.sh "$bin" . "${NVTX_PROBE:-}" "${MARKER_PROBE:-}" 2>&1 | tail -3
fi

span() { grep -Eo 'span \(host[^)]*\) +median +[0-9.]+' "$1" | grep -Eo '[0-9.]+$'; }

run_one() {  # run_one LOG FILE [ARGS...]: one experiment on the cuda backend, a summary line
  local log=$1 f=$2
  shift 2
  "$bin" run "$f" "$@" --backend cuda >"$log" 2>&1
  echo "rc=$? $(grep -c PASS "$log") PASS $(grep -c FAIL "$log") FAIL  span $(span "$log") ms  $f $*"
}

# Each race experiment: what `check` says once its allow lines are removed, then ten runs (the
# race shows as a failed check, with the first wrong element), then its fixed twin ten times.
# grade_one LOG SUBMISSION [ARGS...]: a grade of the overlap lab, its score and each item short of
# full points with why.
grade_one() {
  local log=$1 sub=$2
  shift 2
  "$bin" grade "$sub" --rubric experiments/labs/overlap/overlap.rubric.yaml --json "$log.json" "$@" >"$log" 2>&1
  local rc=$?
  python3 - "$log.json" "$rc" "$sub" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
spans = ", ".join(f"{k} {v:.3f}" if v is not None else f"{k} -" for k, v in d["spans_ms"].items())
print(f"rc={sys.argv[2]} {d['score']:g}/{d['max_score']:g}  {sys.argv[3]}  spans ms: {spans}")
for i in d["items"]:
    if i["score"] < i["max_score"] or i["id"] in ("speedup", "versus_reference"):
        print(f"    {i['score']:6.2f}/{i['max_score']:<4g} {i['id']}: {i['output'][:230]}")
PY
}

if want lab; then
  echo "== lab: the overlap lab graded by its rubric"
  for pass in 1 2 3; do grade_one "$logs/lab_solution_$pass.log" experiments/labs/overlap/solution.yaml; done
  for sub in experiments/labs/overlap/starter.yaml tests/labs/overlap/*.yaml; do
    grade_one "$logs/lab_$(basename "$sub" .yaml).log" "$sub"
  done
  grade_one "$logs/lab_self.log" experiments/labs/overlap/solution.yaml --reference experiments/labs/overlap/solution.yaml
fi

if want races; then
  for racy in experiments/races/r*.yaml; do
    [[ $racy == *_fixed.yaml ]] && continue
    fixed=${racy%.yaml}_fixed.yaml name=$(basename "$racy" .yaml)
    echo "== race $name"
    sed -E 's/, allow: \[[a-z, -]+\]//' "$racy" >"$logs/${name}_unacknowledged.yaml"
    "$bin" check "$logs/${name}_unacknowledged.yaml" 2>&1 | grep -E "error:|warning:|invalid:" | sed "s|$logs/||"
    "$bin" run "$logs/${name}_unacknowledged.yaml" --backend cuda 2>&1 | tail -1
    for i in $(seq 1 10); do
      "$bin" run "$racy" --backend cuda >"$logs/${name}_run$i.log" 2>&1
      echo "racy  run $i: rc=$? $(grep -E '^ *(PASS|FAIL)' "$logs/${name}_run$i.log" | head -1 | sed 's/^ *//')"
    done
    for i in $(seq 1 10); do
      "$bin" run "$fixed" --backend cuda >"$logs/${name}_fixed_run$i.log" 2>&1
      echo "fixed run $i: rc=$? $(grep -cE '^ *PASS' "$logs/${name}_fixed_run$i.log") PASS $(grep -cE '^ *FAIL' "$logs/${name}_fixed_run$i.log") FAIL"
    done
  done
fi

if want c6; then
  echo "== experiments (C6 at N=1024 and N=8192)"
  for f in experiments/*.yaml; do
    if ! grep -qE '^params:.*\bN:' "$f"; then  # no N to set (conv_stream_ordered_workspace): as written
      run_one "$logs/$(basename "$f" .yaml).log" "$f"
      continue
    fi
    for n in 1024 8192; do run_one "$logs/$(basename "$f" .yaml)_N$n.log" "$f" --set N=$n; done
  done
fi
if want claims; then
  for pass in $(seq 1 "${CLAIMS_PASSES:-3}"); do
    echo "== claims experiments, run $pass of ${CLAIMS_PASSES:-3}"
    for f in experiments/claims/${CLAIMS:-*}.yaml; do run_one "$logs/$(basename "$f" .yaml)_run$pass.log" "$f"; done
  done
fi
# Graphs, cuBLAS, cuDNN, NCCL, user kernels, managed memory. What check says of the shared workspace without its
# allow; a user kernel that does not compile; each library missing in turn (pointed at a path that
# does not exist): the error names the library and the op.
if want libs; then
  echo "== library and graph experiments"
  for f in experiments/graph_fork_join.yaml experiments/user_kernel_saxpy.yaml experiments/library/*.yaml \
           experiments/managed/*.yaml; do
    run_one "$logs/$(basename "$f" .yaml).log" "$f"
  done
  run_one "$logs/graph_fork_join_events.log" experiments/graph_fork_join.yaml --timer events
  # What CUPTI records of a prefetch (the experiment asks for events): its device ms column.
  run_one "$logs/prefetch_cupti.log" experiments/managed/prefetch.yaml --timer cupti
  grep -A8 "^  graph 'g'" "$logs/graph_fork_join.log"
  for f in c10_graph_launch c14_conv_copy_overlap c14_own_workspaces c15_gemm_copy_overlap c17_allreduce_overlap; do
    grep -hE "^  +(PASS|FAIL)|^        [a-z]" "$logs/${f}_run"*.log 2>/dev/null | sort | uniq -c
  done
  sed -E 's/, allow: \[race\]//' experiments/claims/c14_shared_workspace.yaml >"$logs/c14_shared_unacknowledged.yaml"
  "$bin" check "$logs/c14_shared_unacknowledged.yaml" 2>&1 | grep -E "error:|help:|workspace|invalid" | sed "s|$logs/||"
  sed 's/y\[i\] = a \* x\[i\] + y\[i\];/y[i] = a * xx[i] + y[i];/' experiments/user_kernel_saxpy.yaml >"$logs/user_kernel_typo.yaml"
  "$bin" run "$logs/user_kernel_typo.yaml" --backend cuda 2>&1 | sed "s|$logs/||"; echo "rc=${PIPESTATUS[0]}"
  for lib in CUBLAS:experiments/library/gemm_types.yaml CUDNN:experiments/library/conv_types.yaml \
             NVRTC:experiments/user_kernel_saxpy.yaml NCCL:experiments/library/nccl_collectives.yaml; do
    env "STREAMLAB_${lib%%:*}=/nonexistent/lib.so" "$bin" run "${lib#*:}" --backend cuda 2>&1 | tail -1
    echo "rc=${PIPESTATUS[0]}"
  done
fi

want c12 && echo "== C12 pipeline for K = 1, 2, 4, 8: span of the pipeline (end of out[K-1] - start of in[0])"
want c12 && for k in 1 2 4 8; do
  "$bin" run experiments/claims/c12_chunked_pipeline.yaml --set K=$k --backend cuda --json "$logs/c12_K$k.json" \
    >"$logs/c12_K$k.log" 2>&1
  echo "K=$k rc=$? $(python3 - "$logs/c12_K$k.json" "$k" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); k = int(sys.argv[2])
ops = {o["id"]: o for o in d["ops"]}
med = lambda i, f: sorted(ops[i]["samples"][f])[len(ops[i]["samples"][f]) // 2]
starts, ends = ops["in[0]"]["samples"]["start_ms"], ops[f"out[{k-1}]"]["samples"]["end_ms"]
pipe = sorted(e - s for s, e in zip(starts, ends))[len(starts) // 2]
base = sorted(e - s for s, e in zip(ops["base_in"]["samples"]["start_ms"], ops["base_out"]["samples"]["end_ms"]))[len(starts) // 2]
print(f"pipeline {pipe:.3f} ms  baseline {base:.3f} ms  copy in {ops['base_in']['device_ms']['median']:.3f} ms  "
      f"copy out {ops['base_out']['device_ms']['median']:.3f} ms  pipeline/baseline {pipe / base:.3f}")
PY
)"
done

# The ratios come from bench/compare, which runs each experiment, its hand-written program and a
# second instance of that program (the control) round for round in one process, so that the
# host's drift falls on all alike; its verdict column judges each pair against 1 +- 1% and, where
# outside, against the control. The
# acceptance figure uses --timer none (spans alone, as the hand-written program measures); with
# events the runner also pays an event pair per op. CUPTI is left out: it would trace both sides.
want compare && for timer in ${COMPARE_TIMERS:-none}; do  # COMPARE_TIMERS="none events" adds the events timer
  echo "== runner vs hand-written, timer $timer"
  "$benchdir/compare" --timer "$timer" --seconds "${COMPARE_SECONDS:-10}" 2>&1 | tee "$logs/compare_$timer.log"
done

# `transpose`: the built-in transpose against a copy with its matrices at several places in memory
# (bench/transpose_placements.cu; build it with `cmake --build build --target
# bench_transpose_placements`).
if want transpose && [[ -x $benchdir/transpose_placements ]]; then
  echo "== transpose_tiled over placements"
  "$benchdir/transpose_placements" 2>&1 | tee "$logs/transpose_placements.log"
fi

# Safety on the GPU (docs/safety.md): the experiments that once failed there, a kernel that never
# ends (stopped by the time limit, named, with either timer) and a write out of bounds (blamed on
# its launch).
if want safety; then
  echo "== safety"
  for f in experiments/graph_host_function.yaml experiments/graph_pageable_copy.yaml \
           experiments/conv_stream_ordered_workspace.yaml; do
    run_one "$logs/$(basename "$f" .yaml).log" "$f"
  done
  for timer in events cupti; do
    timeout 60 "$bin" run tests/gpu_faults/never_ends.yaml --timer $timer 2>&1; echo "rc=$?"
  done
  timeout 120 "$bin" run tests/gpu_faults/out_of_bounds.yaml 2>&1; echo "rc=$?"
fi

# compute-sanitizer: every experiment once, small (N=256 where it has N), and the GPU suite's own
# cases (every experiment ran above; the CUPTI timer cannot trace under a sanitizer, so those
# cases skip their CUPTI half and say so). A line per run with the tool's summary.
sanitize_one() {  # sanitize_one TOOL FILE [RUN ARGS]: default one repetition, no warm-up, N=256 where it has N
  local tool=$1 f=$2
  shift 2
  local args=("$@") summary rc
  if ((${#args[@]} == 0)); then
    args=(--repeat 1 --warmup 0)
    grep -q '^params:.*\bN:' "$f" && args+=(--set N=256)
  fi
  timeout 300 compute-sanitizer --tool "$tool" --print-limit 20 "$bin" run "$f" "${args[@]}" --timeout 240 \
    >"$logs/sanitize_run.log" 2>&1
  rc=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$logs/sanitize_run.log" | tail -1)
  echo "$tool rc=$rc ${summary:-no summary} $f ${args[*]}" >>"$logs/sanitize.log"
  [[ $summary == *" 0 errors"* || $summary == *" 0 hazards"* ]] && return
  cat "$logs/sanitize_run.log" >>"$logs/sanitize_reports.log"
  # Whose errors: each API error with the library of the first host frame that called it, and the
  # kernels a hazard or memory error was found in.
  awk '/Program hit/ {hit = $0; sub(/.*Program hit /, "", hit); want = 1; next}
       want && /Host Frame/ && / in lib/ && !/ in libcuda(rt)?\.so/ {
         lib = $0; sub(/.* in /, "", lib); print "  API error " hit " <- " lib; want = 0}' \
    "$logs/sanitize_run.log" | sort | uniq -c >>"$logs/sanitize.log"
  grep -E "^========= (Error|Invalid|Warning)" "$logs/sanitize_run.log" | grep -oE " at .*\+0x" |
    sed -E 's/^ at //; s/\+0x$//' | sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)/  \1 in \2/' >>"$logs/sanitize.log"
  # API errors alone: the same run without them shows whether any memory error is left.
  if [[ $tool == memcheck ]] && grep -q "Program hit" "$logs/sanitize_run.log"; then
    timeout 300 compute-sanitizer --tool memcheck --report-api-errors no "$bin" run "$f" "${args[@]}" --timeout 240 \
      >"$logs/sanitize_run.log" 2>&1
    echo "  without API errors: rc=$? $(grep -E "ERROR SUMMARY" "$logs/sanitize_run.log" | tail -1)" >>"$logs/sanitize.log"
  fi
}
if want sanitize; then
  : >"$logs/sanitize.log"
  for tool in ${SANITIZE_TOOLS:-memcheck synccheck}; do
    echo "== $tool over every experiment"
    for f in experiments/*.yaml experiments/*/*.yaml; do sanitize_one $tool "$f"; done
    echo "$(grep "^$tool" "$logs/sanitize.log" | grep -c ' 0 errors') of $(grep -c "^$tool" "$logs/sanitize.log") clean"
    # The runs that were not clean, each with whose errors they were.
    awk -v t="$tool" '/^[a-z]/ {show = $1 == t && $0 !~ / 0 errors/} show' "$logs/sanitize.log"
  done
  echo "== racecheck"
  : >"$logs/racecheck.log"
  for f in experiments/claims/c9_tiled_transpose.yaml experiments/04_two_transposes_pinned_async.yaml \
           experiments/graph_fork_join.yaml experiments/library/gemm_types.yaml experiments/library/conv_types.yaml \
           experiments/user_kernel_saxpy.yaml; do
    lines=$(wc -l <"$logs/sanitize.log")
    sanitize_one racecheck "$f"
    tail -n +$((lines + 1)) "$logs/sanitize.log"
  done
  # cuBLAS at the experiment's own size and with a warm-up: the kernels it picks depend on both.
  lines=$(wc -l <"$logs/sanitize.log")
  sanitize_one racecheck experiments/library/gemm_types.yaml --repeat 1 --warmup 1
  tail -n +$((lines + 1)) "$logs/sanitize.log"
  for tool in memcheck synccheck; do
    echo "== the GPU suite's own cases under $tool"
    STREAMLAB_SOURCE_DIR=$PWD timeout 400 compute-sanitizer --tool $tool "$tests" -ts=gpu -tce="*every experiment*" \
      >"$logs/suite_$tool.log" 2>&1
    echo "rc=$? $(grep -E 'ERROR SUMMARY' "$logs/suite_$tool.log" | tail -1)"
    grep -E "Program hit|test cases|Status|skipped" "$logs/suite_$tool.log" | sort | uniq -c
  done
fi
