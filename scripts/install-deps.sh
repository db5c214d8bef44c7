#!/usr/bin/env bash
# Installs every build, test and demo dependency of kubex from Debian packages.
# Idempotent: packages already present are not reinstalled; nothing runs when all are there.
set -euo pipefail

PACKAGES=(
  # build
  build-essential cmake ninja-build pkg-config clang ccache
  # fuzzing (scripts/fuzz-smoke.sh): clang 16 has what libstdc++ 12's std::expected needs; 14 does not
  clang-16 libclang-rt-16-dev
  nlohmann-json3-dev libyaml-cpp-dev libcpp-httplib-dev libspdlog-dev libfmt-dev
  libcli11-dev prometheus-cpp-dev libssl-dev zlib1g-dev libbrotli-dev libjemalloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # real peers for tests, demo and benchmarks
  prometheus python3-kubernetes python3-pytest python3-pytest-xdist python3-yaml openssl
  nginx-light wrk hyperfine
  # the HTML report opened in a real browser (tests/e2e/test_report.py, RPT-4)
  chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq || true
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# KUBEX_DEPS_NO_KUBECTL=1: building only (the Dockerfile's build stage), no tests, so no kubectl needed.
if [[ -z "${KUBEX_DEPS_NO_KUBECTL:-}" ]] && ! command -v kubectl >/dev/null 2>&1; then
  echo "install-deps: kubectl not found on PATH; the end-to-end tests need a real kubectl (v1.27+)" >&2
  exit 1
fi
