#!/usr/bin/env bash
# Sets up, builds and runs streamlab on Debian 12 with the CUDA toolkit (/usr/local/cuda or nvcc
# on PATH). Installs the Debian packages that are missing (needs root or sudo).
#   tools/setup.sh demo   install, build, run the two-transposes experiment
#   tools/setup.sh test   install, build, run every test (the GPU suite skips without a GPU)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake make g++ libyaml-cpp-dev libfmt-dev libcli11-dev nlohmann-json3-dev doctest-dev python3 python3-jsonschema python3-yaml)

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

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build build -j"$(nproc)"
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
    ctest --test-dir build -LE gpu --output-on-failure
    ;;
  *)
    echo "usage: tools/setup.sh demo|test" >&2
    exit 2
    ;;
esac
