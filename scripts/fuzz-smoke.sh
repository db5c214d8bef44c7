#!/usr/bin/env bash
# Builds every libFuzzer target of tests/fuzz (clang, ASan + UBSan) in build-fuzz/ and runs each one for a bounded
# time from its seed corpus tests/fuzz/corpus/<name>/. Fails on any crash, sanitizer report or invariant violation.
#
#   scripts/fuzz-smoke.sh [SECONDS]      seconds per target (default 20)
#
# Environment: FUZZ_BUILD_DIR (default <repo>/build-fuzz), FUZZ_CXX (default: the newest clang++-16..19 found),
# FUZZ_JOBS (build jobs, default 1). New inputs found during a run go to a temporary directory, never into the
# repository; crash reproducers are kept in $FUZZ_BUILD_DIR/artifacts/.
set -euo pipefail

seconds=${1:-20}
root=$(cd "$(dirname "$0")/.." && pwd)
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-1}

cxx=${FUZZ_CXX:-}
if [[ -z $cxx ]]; then
  for v in 19 18 17 16; do
    if command -v "clang++-$v" >/dev/null 2>&1; then cxx=clang++-$v; break; fi
  done
fi
if [[ -z $cxx ]]; then
  echo "fuzz-smoke: no clang++ >= 16 found (scripts/install-deps.sh installs clang-16 and libclang-rt-16-dev)" >&2
  exit 2
fi

targets=()
for src in "$root"/tests/fuzz/*_fuzz.cpp; do
  [[ -e $src ]] || continue
  targets+=("$(basename "$src" .cpp)")
done
if ((${#targets[@]} == 0)); then
  echo "fuzz-smoke: no tests/fuzz/*_fuzz.cpp targets" >&2
  exit 2
fi

# No precompiled headers here: clang's .pch holds the clone's absolute paths and ccache does not cache its creation,
# so with them no object of this build would be shared between clones (CMakeLists.txt, KUBEX_CCACHE).
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DKUBEX_FUZZ=ON -DKUBEX_BUILD_TESTS=OFF \
  -DKUBEX_BUILD_BENCH=OFF -DKUBEX_WERROR=OFF -DCMAKE_DISABLE_PRECOMPILE_HEADERS=ON >/dev/null
nice cmake --build "$build" -j "$jobs" --target "${targets[@]}"

mkdir -p "$build/artifacts"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
for t in "${targets[@]}"; do
  seeds="$root/tests/fuzz/corpus/$t"
  mkdir -p "$work/$t"
  args=("$work/$t")
  [[ -d $seeds ]] && args+=("$seeds")
  echo "fuzz-smoke: $t for ${seconds}s"
  if ! "$build/bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" "${args[@]}" >"$work/$t.log" 2>&1; then
    echo "fuzz-smoke: $t FAILED; reproducer in $build/artifacts/ (log below)" >&2
    tail -n 60 "$work/$t.log" >&2
    failed=1
  else
    grep -E "stat::number_of_executed_units|Done" "$work/$t.log" | tail -n 2 || true
  fi
done
if ((failed)); then
  echo "fuzz-smoke: 0 passed, ${#targets[@]} failed" >&2
  exit 1
fi
echo "fuzz-smoke: ${#targets[@]} passed, 0 failed"
