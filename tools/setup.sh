#!/usr/bin/env bash
# Sets up, builds and runs streamlab on Debian 12 with the CUDA toolkit (/usr/local/cuda or nvcc
# on PATH). Installs the Debian packages that are missing (needs root or sudo).
#   tools/setup.sh demo   install, build, run the two-transposes experiment
#   tools/setup.sh test   install, build, run every test (the GPU suite skips without a GPU)
#   tools/setup.sh sanitize
#                         install clang, build the unit tests and the fuzz target with
#                         AddressSanitizer + UndefinedBehaviorSanitizer into build-sanitize/
#                         (clang++, -DSTREAMLAB_FUZZ=ON), run the unit tests and every seed of
#                         tests/fuzz/corpus under them, then fuzz for $STREAMLAB_FUZZ_SECONDS
#                         (default 120) seconds. A finding fails it; its input is kept in
#                         build-sanitize/fuzz-artifacts/ and printed. Experiment files are untrusted
#                         input (docs/safety.md): this is what keeps them from crashing streamlab.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev doctest-dev python3 python3-jsonschema python3-yaml libxml2-utils
          zsh groff-base binutils dpkg-dev file)

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}"
    local sudo=""
    [[ $(id -u) -eq 0 ]] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [[ ! -x /usr/local/cuda/bin/nvcc ]] && ! command -v nvcc >/dev/null; then
    echo "setup: the CUDA toolkit (nvcc) is not installed: install CUDA 12.x or 13.x into /usr/local/cuda" >&2
    exit 1
  fi
}

# Line tables only (-g1): file:line in backtraces and debuggers, without the variables' full debug
# information, which took 15% of the build (625 s against 529 s on 2 cores).
build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" \
    "$@" >/dev/null
  cmake --build build -j"$(nproc)"
}

# The sanitizer build: one clang build serves both the unit tests and the fuzz target (the core is
# built with -fsanitize=fuzzer-no-link, whose hooks the sanitizer runtime provides to the tests).
# Only what it runs is built: not the program, the benches or the CLI and schema tests' tools.
sanitize() {
  packages+=(clang libclang-rt-14-dev llvm)  # clang++, its sanitizer and libFuzzer runtimes, llvm-symbolizer
  install_missing
  # -O1 and line tables, as the sanitizers' documentation advises: reports keep file:line, and the
  # build is faster than at -O2 with full debug information.
  cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ -DSTREAMLAB_FUZZ=ON \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" "$@" >/dev/null
  cmake --build build-sanitize -j"$(nproc)" --target streamlab_tests fuzz_experiment
  ctest --test-dir build-sanitize -R '^(unit|fuzz_corpus)$' --output-on-failure -j"$(nproc)"
  # Fuzzing: new inputs go to a scratch corpus (kept between local runs), never into the source
  # tree; a crash, timeout or out-of-memory input goes to fuzz-artifacts/ (this run's only).
  local seconds=${STREAMLAB_FUZZ_SECONDS:-120}
  local work=build-sanitize/fuzz-corpus artifacts=build-sanitize/fuzz-artifacts
  rm -rf "$artifacts"
  mkdir -p "$work" "$artifacts"
  echo "setup: fuzzing for ${seconds}s (tests/fuzz/fuzz_experiment.cpp)"
  if ! build-sanitize/tests/fuzz/fuzz_experiment -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -dict=tests/fuzz/experiment.dict -artifact_prefix="$artifacts/" -print_final_stats=1 \
      "$work" tests/fuzz/corpus >build-sanitize/fuzz.log 2>&1; then
    grep -vE '^#[0-9]+[[:space:]]+(NEW|REDUCE|pulse)' build-sanitize/fuzz.log | tail -80
    for f in "$artifacts"/*; do
      [[ -f $f ]] || continue
      echo "setup: fuzz input $f (reproduce: build-sanitize/tests/fuzz/fuzz_experiment $f):"
      cat -v "$f"
      echo
      echo "setup: the same input in base64: $(base64 -w0 "$f")"
    done
    echo "setup: the fuzz target failed: see above" >&2
    return 1
  fi
  grep -E '^(Done|stat::)|DONE' build-sanitize/fuzz.log || true
}

case "${1:-}" in
  demo)
    install_missing
    build
    build/streamlab run experiments/04_two_transposes_pinned_async.yaml
    ;;
  test)
    install_missing
    build -DSTREAMLAB_WERROR=ON
    # The GPU suite first and verbose, so a skip shows its reason; then everything else.
    ctest --test-dir build -L gpu -V | grep -E "gpu tests skipped|test cases|assertions|Status|tests passed|Skipped" || true
    # Two at a time: unit and schema take about 50 s each, on separate cores.
    ctest --test-dir build -LE gpu --output-on-failure -j"$(nproc)"
    ;;
  sanitize)
    sanitize
    ;;
  *)
    echo "usage: tools/setup.sh demo|test|sanitize" >&2
    exit 2
    ;;
esac
