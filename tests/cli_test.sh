#!/usr/bin/env bash
# The streamlab command end to end: exit codes (0 ok, 1 check failed, 2 invalid, 3 CUDA/runtime
# failure) and what the user reads.   usage: cli_test.sh STREAMLAB SOURCE_DIR
set -u
bin=$1 nvtx_probe=${3:-} marker_probe=${4:-}
cd "$2" || exit 2
passed=0 failed=0
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT

# expect NAME CODE PATTERN -- COMMAND...: runs COMMAND, checks its exit code and that
# stdout+stderr match the extended regex PATTERN.
expect() {
  local name=$1 code=$2 pattern=$3
  shift 4
  "$@" >"$out" 2>"$err"
  local rc=$?
  if [[ $rc -eq $code ]] && cat "$out" "$err" | grep -Eq -- "$pattern"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL $name: exit $rc (expected $code), output:"
    cat "$out" "$err" | head -20
  fi
}

expect version 0 '^streamlab [0-9]+\.[0-9]+\.[0-9]+ \(commit ([0-9a-f]{8}(-dirty)?, [0-9]{4}-[0-9]{2}-[0-9]{2}|unknown)\)$' -- "$bin" --version
expect help 0 'Subcommands:' -- "$bin" --help
expect run-help 0 '--backend' -- "$bin" run --help
expect list 0 'transpose_tiled' -- "$bin" list
expect check-ok 0 "ok: 'two-transposes-pinned-async', 7 ops" -- "$bin" check experiments/04_two_transposes_pinned_async.yaml
expect check-bad 2 "bad/02_unknown_op.yaml:7:5: error: unknown op 'memcpyasync'; did you mean 'memcpyAsync'\?" -- \
  "$bin" check tests/bad/02_unknown_op.yaml
expect run-bad 2 "30_many_problems.yaml:14:35: error: unknown buffer 'h_out'" -- "$bin" run tests/bad/30_many_problems.yaml --backend host
expect run-missing-file 2 'cannot read the experiment file' -- "$bin" run no/such/file.yaml
expect set-unknown 2 "--set M=3: the experiment has no param 'M' \(params: N\)" -- \
  "$bin" run experiments/01_one_transpose.yaml --set M=3 --backend host
expect set-malformed 2 "expected NAME=VALUE" -- "$bin" run experiments/01_one_transpose.yaml --set N --backend host
# streamlab check's analysis: errors exit 2 and name both ops; run refuses unless --allow-races.
racy=tests/analyze/01_race_missing_event.yaml
expect check-race 2 "01_race_missing_event.yaml:16:5: error: data race on 'd': op 'consume' \(stream 's2'\) reads it" -- \
  "$bin" check $racy
expect check-race-fix 2 '- streamWaitEvent: \{stream: s2, event: produce_done\}  # before line 16' -- "$bin" check $racy
expect check-race-json 2 '"code": "race",' -- "$bin" check --format json $racy
expect check-bad-json 2 '"code": "invalid",' -- "$bin" check --format json tests/bad/02_unknown_op.yaml
expect check-warning-only 0 "ok: .*: 1 warning$" -- "$bin" check tests/analyze/19_check_reads_unsynced.yaml
expect check-acknowledged 0 "no diagnostics \(1 acknowledged\)" -- "$bin" check experiments/races/r1_missing_event.yaml
expect run-race-refused 2 "not running '$racy': 1 error" -- "$bin" run $racy --backend host
expect run-allow-races 0 'running despite 1 error \(--allow-races\)' -- "$bin" run $racy --backend host --allow-races
expect json-diagnostics 0 '"code": "race",' -- "$bin" run experiments/races/r1_missing_event.yaml --backend host --set N=1024 --json -
expect html-diagnostics 0 "<td class='pass'>error \(acknowledged\)</td><td>race</td>" -- "$bin" run experiments/races/r1_missing_event.yaml --backend host --set N=1024 --html -
expect list-diagnostics 0 '^  use-after-free +error ' -- "$bin" list
expect env 0 'env: CUBLAS_WORKSPACE_CONFIG=:4096:8 \(from the experiment' -- "$bin" run tests/data/env.yaml --backend host
expect env-bad 2 'env: CUDA_DEVICE_MAX_CONNECTIONS needs a value' -- "$bin" run tests/bad/69_env_not_scalar.yaml --backend host
expect unknown-command 2 "unknown command 'rnu'; did you mean 'run'\?" -- "$bin" rnu
expect bad-backend 2 'backend' -- "$bin" run experiments/01_one_transpose.yaml --backend gpu
expect run-host-pass 4 'PASS  transpose\(h_in -> h_out\)' -- "$bin" run experiments/01_one_transpose.yaml --backend host --set N=64
expect run-host-fail 1 'FAIL  transpose\(h_in -> h_out\): h_out\[0, 96\] = -842150451' -- \
  "$bin" run tests/data/short_grid.yaml --backend host

printf 'name: e\nparams: {N: 64}\nops: []\nexpect:\n  - "N > 100"\n' > "$out.yaml"
expect expectation-fails 1 'FAIL  N > 100' -- "$bin" run "$out.yaml" --backend host
rm -f "$out.yaml"
expect json-stdout 4 '^  "schema_version": 1,' -- "$bin" run experiments/01_one_transpose.yaml --backend host --set N=8 --json -
expect csv-stdout 4 '^1,1,2,transpose,launch,legacy,24,' -- "$bin" run experiments/01_one_transpose.yaml --backend host --set N=8 --csv -

# Report outputs (docs/safety.md): refused before the run (exit 2), written only after it, all or none.
exp=experiments/01_one_transpose.yaml
dir=$(mktemp -d)
cp $exp "$dir/exp.yaml"
mkdir "$dir/x"
expect json-unwritable 2 "^streamlab: error: --json no/such/dir/r.json: its folder 'no/such/dir' does not exist$" -- \
  "$bin" run $exp --backend host --set N=8 --json no/such/dir/r.json
expect stdout-twice 2 '^streamlab: error: --csv -: also the output of --json; only one report can go to - \(stdout\)$' -- \
  "$bin" run $exp --backend host --set N=8 --json - --csv -
expect outputs-before-load 2 '^streamlab: error: --csv -: also the output of --json' -- \
  "$bin" run tests/bad/30_many_problems.yaml --backend host --json - --csv -
expect same-path-twice 2 "^streamlab: error: --html $dir/x/../r.json: also the path of --json$" -- \
  "$bin" run $exp --backend host --set N=8 --json "$dir/r.json" --html "$dir/x/../r.json"
mkfifo "$dir/fifo"
expect fifo-output 2 "^streamlab: error: --trace $dir/fifo: not a regular file \(a FIFO\); streamlab writes reports only" -- \
  timeout 10 "$bin" run $exp --backend host --set N=8 --trace "$dir/fifo"
expect device-output 2 '^streamlab: error: --csv /dev/null: not a regular file \(a character device\)' -- \
  "$bin" run $exp --backend host --set N=8 --csv /dev/null
expect experiment-as-output 2 "^streamlab: error: --json $dir/exp.yaml: that is the experiment file" -- \
  "$bin" run "$dir/exp.yaml" --backend host --set N=8 --json "$dir/exp.yaml"
expect experiment-unchanged 0 '^same$' -- bash -c "cmp $exp '$dir/exp.yaml' && echo same"
echo precious >"$dir/victim"
ln -s "$dir/victim" "$dir/link.json"
expect symlink-output 2 "^streamlab: error: --json $dir/link.json: not a regular file \(a symbolic link\)" -- \
  "$bin" run $exp --backend host --set N=8 --json "$dir/link.json"
expect symlink-destination-unchanged 0 '^precious$' -- cat "$dir/victim"
expect all-problems 2 "^streamlab: error: --html -: also the output of --csv; only one" -- \
  "$bin" run $exp --backend host --set N=8 --json "$dir/link.json" --csv - --html -
rm -rf "$dir/fifo" "$dir/victim" "$dir/link.json" "$dir/exp.yaml" "$dir/x"
expect reports-written 4 'PASS  transpose' -- \
  "$bin" run $exp --backend host --set N=8 --json "$dir/r.json" --csv "$dir/r.csv"
expect reports-only-targets 0 '^r\.csv r\.json $' -- bash -c "ls -A '$dir' | tr '\n' ' '; echo"
expect reports-after-failed-check 1 'FAIL  transpose' -- \
  "$bin" run tests/data/short_grid.yaml --backend host --html "$dir/fail.html"
expect report-of-failed-check 0 '<html' -- cat "$dir/fail.html"
# A sweep's plots name the unit of what they plot on the y axis (the host backend predicts it: exit 4).
expect sweep-plot-unit 4 "end\\(out\\[K-1\\]\\) - start\\(in\\[0\\]\\) \\(ms\\)</text>" -- \
  "$bin" run experiments/claims/c12_chunked_pipeline.yaml --backend host --html -
rm -rf "$dir"

# NVTX: a range per op, named by its id, around its call (an injection library logs them).
if [[ -n $nvtx_probe ]]; then
  NVTX_INJECTION64_PATH=$nvtx_probe STREAMLAB_NVTX_LOG=$out.nvtx "$bin" run experiments/01_one_transpose.yaml \
    --backend host --set N=8 --repeat 1 >/dev/null 2>&1
  expect nvtx-ranges 0 '^push h2d pop push transpose pop push d2h pop $' -- bash -c "tr '\n' ' ' < $out.nvtx; echo"
  rm -f "$out.nvtx"
fi

# Issue 6: a shared workspace is a race with its own fix; a user kernel's compile error shows at its
# line and column (check compiles with NVRTC where the toolkit is installed); the host backend says
# it cannot run a user kernel and evaluates no check of what it writes.
sed 's/, allow: \[race\]//' experiments/claims/c14_shared_workspace.yaml >"$out.ws.yaml"
expect shared-workspace 2 "give op 'conv2' a workspace of its own" -- "$bin" check "$out.ws.yaml"
sed 's/y\[i\] = a \* x\[i\] + y\[i\];/y[i] = a * xx[i] + y[i];/' experiments/user_kernel_saxpy.yaml >"$out.uk.yaml"
if [[ -e /usr/local/cuda/lib64/libnvrtc.so.13 || -n "$(ldconfig -p 2>/dev/null | grep libnvrtc.so.13)" ]]; then
  expect kernel-compile-error 2 "uk.yaml:23:31: error: in kernel 'my_saxpy': identifier \"xx\" is undefined" -- \
    "$bin" check "$out.uk.yaml"
  # grade refuses what check refuses, on the host backend too (which never compiles to run)
  expect grade-kernel-compile-error 1 "the submission does not load: .*uk.yaml:23:31: in kernel 'my_saxpy'" -- \
    "$bin" grade "$out.uk.yaml" --rubric experiments/labs/overlap/overlap.rubric.yaml --backend host
else
  expect kernel-not-compiled 0 'note: user kernels not compiled: NVRTC' -- "$bin" check "$out.uk.yaml"
fi
expect kernel-on-host 4 "skipped op 'mine' \(line 35\): kernel 'my_saxpy' is CUDA source compiled by NVRTC" -- \
  "$bin" run experiments/user_kernel_saxpy.yaml --backend host
expect kernel-check-not-evaluated 4 "0 of 1 checks passed, 1 not evaluated" -- \
  "$bin" run experiments/user_kernel_saxpy.yaml --backend host
expect list-new-ops 0 'convolutionForward' -- "$bin" list
rm -f "$out.ws.yaml" "$out.uk.yaml"

# An experiment makes streamlab read no file outside its folder, whether run or checked;
# a FIFO named as a kernel's file or as the experiment is refused at once, not waited on.
lab=$(mktemp -d)
mkdir -p "$lab/lab"
kernel_experiment() {  # FILE: an experiment whose kernel's source is FILE
  printf 'name: k\nstreams: {s1: {}}\nkernels:\n  k:\n    file: %s\n    params: [x: inout float32]\n' "$1"
  printf 'buffers:\n  d: {type: float32, count: 32, memory: device}\nops:\n'
  printf '  - launch: {kernel: k, grid: [1], block: [32], stream: s1, args: {x: d}}\n'
}
echo 'extern "C" __global__ void k(float* x) {}' >"$lab/outside.cu"
kernel_experiment "$lab/outside.cu" >"$lab/lab/absolute.yaml"
kernel_experiment ../outside.cu >"$lab/lab/up.yaml"
mkfifo "$lab/lab/pipe.cu"
kernel_experiment pipe.cu >"$lab/lab/pipe.yaml"
for cmd in check run; do
  backend=() && [[ $cmd == run ]] && backend=(--backend host)
  expect kernel-file-absolute-$cmd 2 "absolute.yaml:5:11: error: kernel 'k': file '$lab/outside.cu' is an absolute path" -- \
    "$bin" $cmd "$lab/lab/absolute.yaml" "${backend[@]}"
  expect kernel-file-outside-$cmd 2 "up.yaml:5:11: error: kernel 'k': file '../outside.cu' is outside the experiment's folder" -- \
    "$bin" $cmd "$lab/lab/up.yaml" "${backend[@]}"
  expect kernel-file-fifo-$cmd 2 "pipe.yaml:5:11: error: kernel 'k': file 'pipe.cu' is not a regular file \(a FIFO\)" -- \
    timeout 10 "$bin" $cmd "$lab/lab/pipe.yaml" "${backend[@]}"
done
expect experiment-fifo 2 "pipe.cu: error: the experiment file is not a regular file \(a FIFO\)" -- \
  timeout 10 "$bin" check "$lab/lab/pipe.cu"
# A report never replaces a file a kernel reads: its `file:`, or a header that file includes.
printf '#include "inc.cuh"\nextern "C" __global__ void k(float* x) { x[threadIdx.x] = one(); }\n' >"$lab/lab/inside.cu"
printf '__device__ inline float one() { return 1.0f; }\n' >"$lab/lab/inc.cuh"
kernel_experiment inside.cu >"$lab/lab/inside.yaml"
expect report-over-kernel-file 2 "error: --json $lab/lab/inside.cu: that is a file a user kernel reads \($lab/lab/inside.cu\)" -- \
  "$bin" run "$lab/lab/inside.yaml" --backend host --json "$lab/lab/inside.cu"
expect report-over-kernel-header 2 "error: --csv $lab/lab/./inc.cuh: that is a file a user kernel reads \($lab/lab/inc.cuh\)" -- \
  "$bin" run "$lab/lab/inside.yaml" --backend host --csv "$lab/lab/./inc.cuh"
expect kernel-files-kept 0 '^kept$' -- bash -c "grep -q one '$lab/lab/inside.cu' && grep -q one '$lab/lab/inc.cuh' && echo kept"
# grade too, also when the kernel does not compile (the submission is then refused unrun).
printf 'extern "C" __global__ void k(float* x) { x[threadIdx.x] = nothing; }\n' >"$lab/lab/broken.cu"
kernel_experiment broken.cu >"$lab/lab/broken.yaml"
expect grade-report-over-kernel-file 2 "error: --json $lab/lab/broken.cu: that is a file a user kernel reads" -- \
  "$bin" grade "$lab/lab/broken.yaml" --rubric experiments/labs/overlap/overlap.rubric.yaml --backend host --json "$lab/lab/broken.cu"
expect grade-kernel-file-kept 0 '^kept$' -- bash -c "grep -q nothing '$lab/lab/broken.cu' && echo kept"
rm -rf "$lab"

# An experiment is data. Whatever its env: says, no code from a path it names runs: the
# marker library's constructor would leave a file; the loader itself shows that it would.
if [[ -n $marker_probe ]]; then
  lab=$(mktemp -d)
  export STREAMLAB_MARKER=$lab/marker
  expect marker-control 0 '^loaded$' -- bash -c "LD_PRELOAD='$marker_probe' /bin/true; cat '$lab/marker'"
  rm -f "$lab/marker"
  for var in LD_PRELOAD LD_AUDIT STREAMLAB_NVRTC STREAMLAB_CUPTI CUDA_INJECTION64_PATH; do
    printf 'name: evil\nenv:\n  %s: %s\nkernels:\n  k: {source: "extern \\"C\\" __global__ void k() {}", params: []}\nops:\n  - launch: {kernel: k, grid: 1, block: 1}\n  - deviceSynchronize: {}\n' \
      "$var" "$marker_probe" >"$lab/evil.yaml"
    for cmd in check run; do
      expect env-$var-$cmd 2 "evil.yaml:3:3: error: env: '$var' is not a variable an experiment may set" -- \
        "$bin" $cmd "$lab/evil.yaml" $([[ $cmd == run ]] && echo --backend host)
      expect env-$var-$cmd-no-marker 0 '^no marker$' -- bash -c "test -e '$lab/marker' || echo no marker"
    done
  done
  unset STREAMLAB_MARKER
  rm -rf "$lab"
fi

# Time limits: the host backend walking a transpose 400 times (about 10 s) is stopped, and the op named.
printf 'name: slow\nparams: {N: 4096}\nbuffers:\n  a: {type: int32, shape: [N, N], memory: device, init: sequence}\n  b: {type: int32, shape: [N, N], memory: device}\nops:\n  - loop: {var: i, count: 400, ops: [{launch: {id: "t[i]", kernel: transpose_naive, grid: [128, 128], block: [32, 32], args: {in: a, out: b, n: N}}}]}\n' >"$out.slow.yaml"
expect timeout-host 3 "time limit reached: the command ran longer than 1 s \(--timeout 1\); stopped in timed repetition 1 of 1; the host backend was performing op 't\[[0-9]+\]' \(.*slow.yaml:7:" -- \
  "$bin" run "$out.slow.yaml" --backend host --timeout 1 --json "$out.slow.json"
expect timeout-no-report 0 '^absent$' -- bash -c "test -e '$out.slow.json' || echo absent"
printf 'name: slow\ntimeout: 1\nparams: {N: 4096}\nbuffers:\n  a: {type: int32, shape: [N, N], memory: device, init: sequence}\n  b: {type: int32, shape: [N, N], memory: device}\nops:\n  - loop: {var: i, count: 400, ops: [{launch: {kernel: transpose_naive, grid: [128, 128], block: [32, 32], args: {in: a, out: b, n: N}}}]}\n' >"$out.slow.yaml"
expect timeout-yaml 3 'ran longer than 1 s \(`timeout: 1` in the experiment\)' -- "$bin" run "$out.slow.yaml" --backend host
rm -f "$out.slow.yaml"
# A sweep's points share the command's limit: five points of 0.7 s each under `timeout: 1` stop in
# the second point, not after five seconds.
printf 'name: sweep-slow\ntimeout: 1\nparams: {K: 1}\nsweep: {params: {K: [1, 2, 3, 4, 5]}}\nops:\n  - launchHostFunc: {fn: sleep, us: 700000, stream: legacy}\n' >"$out.sweep.yaml"
expect timeout-sweep 3 'sweep point 2 of 5: K=2.*ran longer than 1 s \(`timeout: 1` in the experiment\)' -- \
  bash -c "'$bin' run '$out.sweep.yaml' --backend host 2>&1 | tr '\n' ' '; exit \${PIPESTATUS[0]}"
rm -f "$out.sweep.yaml"
# A sweep's values are read once, with the file's params: `2*N` is 128 at every point, not twice
# the point's own N.
printf 'name: sweep-self\nparams: {N: 64}\nsweep: {params: {N: [64, 256, 2*N]}}\nbuffers:\n  a: {type: float32, count: N, memory: pageable, init: zeros}\nops: []\n' >"$out.sweep.yaml"
expect sweep-values-once 0 'sweep over N \(3 points\).* 128 ' -- \
  bash -c "'$bin' run '$out.sweep.yaml' --backend host 2>&1 | tr '\n' ' '; exit \${PIPESTATUS[0]}"
# A run of one point (what a device fault's search runs) pins the swept param: its values are not
# read with the pinned value, where 2*N = 256 would be a value twice.
expect sweep-point-pinned 0 'verdict: passed' -- "$bin" run "$out.sweep.yaml" --backend host --set N=128
rm -f "$out.sweep.yaml"
# A plot naming an op that one point lacks is an error located in the file, at that point.
printf 'name: pl\nparams: {K: 8}\nsweep: {params: {K: [1, 8]}, plot: ["duration(k[4])"]}\nops:\n  - loop: {var: i, count: K, ops: [{launch: {id: "k[i]", kernel: empty, grid: 1, block: 32}}]}\n' >"$out.plot.yaml"
expect sweep-plot-located 2 "at sweep point K=1:.*plot.yaml:3:47: error: plot: unknown op 'k\[4\]'" -- \
  bash -c "'$bin' run '$out.plot.yaml' --backend host 2>&1 | tr '\n' ' '; exit \${PIPESTATUS[0]}"
rm -f "$out.plot.yaml"
expect memory-refused 3 "need 7.276 TiB of host memory .* nothing was allocated" -- \
  bash -c "printf 'name: big\\nbuffers:\\n  a: {type: float64, count: 1000000000000, memory: pinned}\\nops: []\\n' > '$out.big.yaml'; '$bin' run '$out.big.yaml' --backend host"
rm -f "$out.big.yaml"

# Autograder outputs, and a mode that writes nothing to stderr (GitHub Classroom fails a test on it).
expect no-stderr-error 2 "unknown op" -- bash -c "'$bin' check tests/bad/02_unknown_op.yaml --no-stderr 2>'$out.err'; rc=\$?; [ -s '$out.err' ] && exit 9; exit \$rc"
expect no-stderr-stdout-report 2 "no-stderr sends notes and diagnostics to stdout" -- \
  "$bin" run experiments/01_one_transpose.yaml --backend host --no-stderr --json -
expect autograder-files 4 "verdict: INCOMPLETE" -- bash -c "'$bin' run experiments/04_two_transposes_pinned_async.yaml --backend host --set N=64 --no-stderr --gradescope '$out.gs' --junit '$out.xml' --tap '$out.tap' 2>'$out.err'; rc=\$?; grep -q '\"score\": 2.0' '$out.gs' && grep -q 'skipped=\"2\"' '$out.xml' && grep -q '^ok 3 - .* # SKIP' '$out.tap' && [ ! -s '$out.err' ] || exit 9; exit \$rc"
rm -f "$out.err" "$out.gs" "$out.xml" "$out.tap"

# grade: the lab's rubric applied to submissions on the host backend (timing is not evaluated
# there: exit 4 when nothing failed); what a submission does wrong scores zero with its reason,
# and only the rubric's own mistakes fail the command.
lab=experiments/labs/overlap rubric=experiments/labs/overlap/overlap.rubric.yaml
expect grade-solution 4 "score: 50 of 100 points" -- "$bin" grade $lab/solution.yaml --rubric $rubric --backend host --set N=1048576
expect grade-race 1 "not run: streamlab check finds an error in the submission: line 24: data race" -- \
  "$bin" grade tests/labs/overlap/no_events.yaml --rubric $rubric --backend host --set N=1048576
expect grade-unloadable 1 "0 / 40 .*every element of h_out|the submission does not load: .*malformed YAML" -- \
  bash -c "printf 'name: x\nops: [\n' > '$out.sub.yaml'; '$bin' grade '$out.sub.yaml' --rubric $rubric --backend host"
expect grade-missing-buffer 1 "not applied to the submission: unknown buffer 'h_out'" -- \
  bash -c "sed 's/h_out/result/g' $lab/solution.yaml > '$lab/../.cli_renamed.yaml'; '$bin' grade '$lab/../.cli_renamed.yaml' --rubric $rubric --backend host --set N=1048576; rc=\$?; rm -f '$lab/../.cli_renamed.yaml'; exit \$rc"
expect grade-no-stderr 1 "score: 5 of 100" -- bash -c "'$bin' grade tests/labs/overlap/no_events.yaml --rubric $rubric --backend host --set N=1048576 --no-stderr 2>'$out.err'; rc=\$?; [ -s '$out.err' ] && exit 9; exit \$rc"
expect grade-gradescope 1 '"score": 5.0' -- bash -c "'$bin' grade tests/labs/overlap/no_events.yaml --rubric $rubric --backend host --set N=1048576 --gradescope '$out.gs' >/dev/null; rc=\$?; cat '$out.gs'; exit \$rc"
expect grade-bad-rubric 2 "bad.rubric.yaml:2:9: error: repeat: 0; expected 1 to" -- \
  bash -c "printf 'rubric: r\nrepeat: 0\npeers: {reference: /etc/passwd}\n' > '$out.bad.rubric.yaml'; '$bin' grade $lab/solution.yaml --rubric '$out.bad.rubric.yaml'"
expect grade-rubric-peer-outside 2 "peer 'reference': /etc/passwd is not a file in the rubric's folder" -- \
  bash -c "printf 'rubric: r\npeers: {reference: /etc/passwd}\n' > '$out.bad.rubric.yaml'; '$bin' grade $lab/solution.yaml --rubric '$out.bad.rubric.yaml'"
expect grade-rubric-unknown-peer 2 "relative: 'nobody' is no peer of the rubric" -- \
  bash -c "printf 'rubric: r\nexpect:\n  - {measure: \"span()\", relative: nobody, full_at: 1, zero_at: 2}\n' > '$out.bad.rubric.yaml'; '$bin' grade $lab/solution.yaml --rubric '$out.bad.rubric.yaml' --backend host"
expect grade-rubric-misfits-reference 2 "does not apply to its reference solution" -- \
  bash -c "printf 'rubric: r\npeers: {reference: solution.yaml}\nchecks:\n  - value: {buffer: nowhere, value: 0}\n' > '$lab/.cli.rubric.yaml'; '$bin' grade $lab/solution.yaml --rubric '$lab/.cli.rubric.yaml' --backend host; rc=\$?; rm -f '$lab/.cli.rubric.yaml'; exit \$rc"
expect grade-race-with-duration 1 "0 / 1 .*duration" -- \
  bash -c "sed 's/^expect:/expect:\n  - {id: kernel_time, that: \"duration(k[0]) < 1000\"}/' $rubric > '$lab/.cli2.rubric.yaml'; '$bin' grade tests/labs/overlap/no_events.yaml --rubric '$lab/.cli2.rubric.yaml' --backend host --set N=1048576; rc=\$?; rm -f '$lab/.cli2.rubric.yaml'; exit \$rc"
expect grade-relative-in-loop 4 "score: " -- \
  bash -c "printf 'rubric: r\nparams: {N: 1048576}\npeers: {reference: solution.yaml}\nexpect:\n  - loop: {var: j, count: 2, expect: [{measure: \"duration(k[j])\", relative: reference, full_at: 1.2, zero_at: 2}]}\n' > '$lab/.cli3.rubric.yaml'; '$bin' grade $lab/solution.yaml --rubric '$lab/.cli3.rubric.yaml' --backend host --set N=1048576 2>&1; rc=\$?; rm -f '$lab/.cli3.rubric.yaml'; exit \$rc"
expect grade-output-over-peer 2 "peer 'reference'" -- "$bin" grade tests/labs/overlap/one_stream.yaml --rubric $rubric --backend host --junit $lab/solution.yaml
expect grade-time-limit 1 '"status": "failed"' -- bash -c "'$bin' grade $lab/solution.yaml --rubric $rubric --backend host --timeout 1 --gradescope '$out.gs' >/dev/null 2>&1; rc=\$?; grep -q 'not finished: time limit reached' '$out.gs' || exit 9; cat '$out.gs'; exit \$rc"
expect run-rubric 2 "this file is a rubric, not an experiment" -- "$bin" run $rubric --backend host
rm -f "$out.sub.yaml" "$out.err" "$out.gs" "$out.bad.rubric.yaml"

# compare prints nothing of a results file raw: an escape sequence or a bidirectional control in
# an op's id, or a byte that is not UTF-8, is shown as \xNN.
results() { printf '{"schema_version": 1, "tool": {"name": "streamlab"}, "experiment": {"name": "e"}, "spans": {"samples": {"host_ms": [1, 2]}}, "ops": [%s]}' "$1"; }
results '' >"$out.a.json"
results '{"id": "\u001b[2J\u202eevil", "samples": {"issue_ms": [0, 0], "return_ms": [1, 1]}}' >"$out.b.json"
expect compare-escapes 0 '\\x1B\[2J\\xE2\\x80\\xAEevil \(host call\) only in B' -- "$bin" compare "$out.a.json" "$out.b.json"
expect compare-no-escape 0 '^clean$' -- bash -c "'$bin' compare '$out.a.json' '$out.b.json' | grep -q \$'\\x1b' && echo raw || echo clean"
printf '\377' >"$out.c.json"
expect compare-raw-byte 2 'not JSON: .\\xFF.$' -- "$bin" compare "$out.a.json" "$out.c.json"
rm -f "$out.a.json" "$out.b.json" "$out.c.json"

# Numeric options say their range in words, the project's limits (runner/core/limits.hpp).
one=experiments/01_one_transpose.yaml
expect repeat-zero 2 "^streamlab: error: --repeat: expected a whole number from 1 to 1000000, got '0'$" -- "$bin" run $one --repeat 0
expect repeat-huge 2 "--repeat: expected a whole number from 1 to 1000000, got '99999999999999999999'" -- "$bin" run $one --repeat 99999999999999999999
expect repeat-fraction 2 "--repeat: expected a whole number from 1 to 1000000, got '1.5'" -- "$bin" run $one --repeat 1.5
expect warmup-negative 2 "--warmup: expected a whole number from 0 to 1000000, got '-1'" -- "$bin" run $one --warmup -1
expect timeout-range 2 "--timeout: expected a whole number from 0 to 86400, got '86401'" -- "$bin" check $one --timeout 86401
expect device-word 2 "--device: expected a whole number from 0 to 2147483647, got 'x'" -- "$bin" grade $one --rubric r.yaml --device x
# --profile is read like any file the user names (no FIFO, no device, bounded), and no report
# replaces it.
cp runner/predict/profiles/nvidia_h200.json "$out.prof.json"
expect profile-not-replaced 2 "--json .*prof.json: that is the device profile \(--profile\); a report never replaces" -- \
  "$bin" run $one --backend host --set N=64 --profile "$out.prof.json" --json "$out.prof.json"
expect profile-kept 0 '"device": "NVIDIA H200"' -- grep -m1 '"device"' "$out.prof.json"
rm -f "$out.prof.json"
expect profile-device 2 "device profile /dev/zero: the file is not a regular file \(a character device\)" -- \
  timeout 10 "$bin" run $one --backend host --set N=64 --profile /dev/zero
expect json-empty-path 2 "^streamlab: error: --json: expected a file's path \(or - for stdout\), got ''" -- "$bin" run $one --backend host --json ''
expect set-twice 2 '^streamlab: error: --set N: given twice' -- "$bin" run $one --backend host --set N=64 --set N=32
expect set-before 2 "--set N=Q: 'Q' is not a param declared before 'N' in the file" -- "$bin" check $one --set N=Q
expect no-309-digits 2 '^[^0-9]*([0-9]{1,10}[^0-9]+)*$' -- "$bin" run $one --warmup -1

# Colour (runner/report/colour.hpp): never into a pipe or a file unless --color always; on a
# terminal (script(1) gives the command one) unless NO_COLOR or --color never.
esc=$'\033['
coloured() { if "$@" 2>&1 | grep -qF "$esc"; then echo coloured; else echo plain; fi; }
on_terminal() { script -qec "$(printf '%q ' "$@")" /dev/null; }
expect colour-pipe 0 '^plain$' -- coloured "$bin" run $one --backend host --set N=32
expect colour-always 0 '^coloured$' -- coloured "$bin" run $one --backend host --set N=32 --color always
expect colour-always-diagnostic 2 "error:${esc//[/\\[}0m unknown op" -- "$bin" check tests/bad/02_unknown_op.yaml --color always
expect colour-never 0 '^plain$' -- coloured "$bin" check tests/bad/02_unknown_op.yaml --color never
if command -v script >/dev/null; then
  expect colour-terminal 0 '^coloured$' -- coloured env -u NO_COLOR TERM=xterm bash -c "$(declare -f on_terminal); on_terminal '$bin' run $one --backend host --set N=32"
  expect colour-no-color 0 '^plain$' -- coloured env NO_COLOR=1 TERM=xterm bash -c "$(declare -f on_terminal); on_terminal '$bin' run $one --backend host --set N=32"
  expect colour-no-color-always 0 '^coloured$' -- coloured env NO_COLOR=1 TERM=xterm bash -c "$(declare -f on_terminal); on_terminal '$bin' run $one --backend host --set N=32 --color always"
  expect colour-terminal-never 0 '^plain$' -- coloured env -u NO_COLOR TERM=xterm bash -c "$(declare -f on_terminal); on_terminal '$bin' check tests/bad/02_unknown_op.yaml --color never"
else
  echo "cli: script(1) not found (util-linux): colour on a terminal not tested"
fi

# Progress within a repetition that runs for seconds: on a terminal, what it is doing; into a pipe,
# nothing (what the run prints is the same as without the line). The line comes from the watchdog's
# once-a-second tick, from the first tick that finds the repetition 2 s old: up to 4 s in. T=3000
# runs about 6 s at -O2 on a CI core; T=1200 ran 2.5 s there, too short to be sure of the line.
slow=tests/data/slow_repetition.yaml
if command -v script >/dev/null; then
  expect progress-terminal 0 "timed repetition 1 of 1, [0-9]+ s: performing op 'slow_transpose' \(launch" -- \
    script -qec "$(printf '%q ' "$bin" run $slow --backend host --set T=3000)" /dev/null
fi
expect progress-pipe 0 '^quiet$' -- bash -c "'$bin' run $slow --backend host --set T=3000 2>&1 >/dev/null | grep -q repetition && echo shown || echo quiet"

# Without a GPU: auto falls back to the host backend and says so; cuda is a runtime failure.
if ! "$bin" run experiments/01_one_transpose.yaml --backend cuda --set N=32 >/dev/null 2>&1; then
  expect auto-fallback 4 'note: no CUDA device .*running on the host backend' -- \
    "$bin" run experiments/01_one_transpose.yaml --set N=32
  expect cuda-missing 3 'streamlab: error: --backend cuda: no CUDA device' -- \
    "$bin" run experiments/01_one_transpose.yaml --backend cuda --set N=32
  # A run that fails writes no report.
  expect failed-run-no-report 3 'no CUDA device' -- \
    "$bin" run experiments/01_one_transpose.yaml --backend cuda --set N=32 --json "$out.failed.json"
  expect failed-run-no-report-file 0 '^absent$' -- bash -c "test -e '$out.failed.json' || echo absent"
else
  expect cuda-run 0 'backend   cuda: ' -- "$bin" run experiments/01_one_transpose.yaml --set N=32
  expect cuda-fail 1 'FAIL  transpose' -- "$bin" run tests/data/short_grid.yaml --backend cuda
  expect no-device 3 '--device 99: no such device' -- "$bin" run experiments/01_one_transpose.yaml --device 99
  # A kernel that never returns is stopped by the time limit, and named with its line; a write far
  # out of bounds is blamed on its launch, found by a run with every op synchronized.
  expect never-ends 3 "^  op 'spin_forever' \(tests/gpu_faults/never_ends.yaml:23:5\), launch in stream 's1': had not finished" -- \
    timeout 60 "$bin" run tests/gpu_faults/never_ends.yaml --timer events
  expect never-ends-cupti 3 "^  op 'spin_forever' \(tests/gpu_faults/never_ends.yaml:23:5\), launch in stream 's1': may not have finished" -- \
    timeout 60 "$bin" run tests/gpu_faults/never_ends.yaml
  expect out-of-bounds 3 "op 'bad_write' \(tests/gpu_faults/out_of_bounds.yaml:25:5\): a device fault in repetition 1: cuda" -- \
    timeout 120 "$bin" run tests/gpu_faults/out_of_bounds.yaml
  expect out-of-bounds-how 3 "^  found by running the experiment again with every op synchronized .*: the fault appeared when this launch finished" -- \
    timeout 120 "$bin" run tests/gpu_faults/out_of_bounds.yaml
fi

echo "cli: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
