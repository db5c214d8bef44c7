#!/usr/bin/env bash
# Runs chosen test files many times under the load of the full suite, and reports failures per test.
#
#   scripts/stress-e2e.sh FILE... --runs N [--workers W] [--no-load] [--out DIR]
#
# FILE is a pytest file (tests/e2e/... or tests/conformance/...; a conformance file needs `make control-plane`) or
# a GoogleTest binary of the build (e.g. build/bin/unit_sim_agent).
# Each file runs N times, each run its own pytest process (fresh module fixtures, as in `make e2e`), W runs at a
# time (default 2). Beside them a load lane runs the rest of the e2e suite, one file at a time, over and over,
# until the last run ends: W + 1 test files at once (`make e2e` runs four; --workers 3 for the same; --no-load: no
# load lane). Logs and JUnit files go to DIR (default a new folder under /tmp). Prints one line per run as it ends,
# then one line per test (runs, failures), and exits 1 when any run failed. Needs a build (make build);
# KUBEX_BUILD_DIR as for make e2e.
set -uo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
files=() runs="" workers=2 load=1 out=""
while (($#)); do
  case $1 in
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --workers) workers=${2:?--workers needs a number}; shift 2 ;;
    --no-load) load=0; shift ;;
    --out) out=${2:?--out needs a folder}; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "stress-e2e: unknown option $1" >&2; exit 2 ;;
    *) files+=("$1"); shift ;;
  esac
done
if ((${#files[@]} == 0)) || ! [[ $runs =~ ^[1-9][0-9]*$ ]] || ! [[ $workers =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: scripts/stress-e2e.sh FILE... --runs N [--workers W] [--no-load] [--out DIR]" >&2
  exit 2
fi
for f in "${files[@]}"; do
  [[ -f $root/$f || -f $f ]] || { echo "stress-e2e: no such test file or binary: $f" >&2; exit 2; }
done
cd "$root"
export KUBEX_BUILD_DIR=${KUBEX_BUILD_DIR:-$root/build}
[[ -x $KUBEX_BUILD_DIR/bin/kubex ]] || { echo "stress-e2e: no $KUBEX_BUILD_DIR/bin/kubex (make build first)" >&2; exit 2; }
out=${out:-$(mktemp -d -t kubex-stress.XXXXXX)}
mkdir -p "$out"
PY=/usr/bin/python3

# One job per (file, run): "run file".
jobs_file="$out/jobs"
: >"$jobs_file"
for ((r = 1; r <= runs; r++)); do
  for f in "${files[@]}"; do echo "$r $f" >>"$jobs_file"; done
done

stop_flag="$out/.stop"
load_pid=""
if ((load)); then
  # The rest of the e2e suite, minus the stressed files and the default-interval file (mostly waiting: no load).
  mapfile -t rest < <(ls tests/e2e/test_*.py | grep -v -x -F -f <(printf '%s\n' "${files[@]}" \
    tests/e2e/test_reactive_default_interval.py))
  (
    i=0
    while [[ ! -e $stop_flag ]] && ((${#rest[@]})); do
      f=${rest[$((i % ${#rest[@]}))]}
      i=$((i + 1))
      nice $PY -m pytest -q -p no:cacheprovider "$f" >>"$out/load.log" 2>&1
    done
  ) &
  load_pid=$!
  echo "stress-e2e: load lane: ${#rest[@]} other e2e files in turn (log $out/load.log)"
fi

echo "stress-e2e: ${#files[@]} file(s) x $runs run(s), $workers at a time; logs in $out"
t0=$SECONDS
export out PY
xargs -a "$jobs_file" -L 1 -P "$workers" bash -c '
  f=$2 tag="$(basename "$2" .py).run$1" start=$SECONDS
  if [[ $f == *.py ]]; then cmd=($PY -m pytest -q -p no:cacheprovider "$f" --junitxml="$out/$tag.xml")
  else cmd=("$f" --gtest_output="xml:$out/$tag.xml"); fi
  if "${cmd[@]}" >"$out/$tag.log" 2>&1; then res=passed; else res=FAILED; fi
  echo "stress-e2e: $tag $res in $((SECONDS - start)) s"
' _
touch "$stop_flag"
if [[ -n $load_pid ]]; then
  pkill -INT -P "$load_pid" 2>/dev/null
  wait "$load_pid" 2>/dev/null
fi
echo "stress-e2e: all runs done in $((SECONDS - t0)) s"

# Failures per test from the JUnit files (a run whose pytest died before writing one counts as a failed run).
$PY - "$out" "$runs" "${files[@]}" <<'EOF'
import pathlib, sys, xml.etree.ElementTree as ET
out, runs, files = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
bad = 0
print(f"\n{'file':44} {'test':70} runs failed")
for f in files:
    stem = pathlib.Path(f).stem
    per_test, missing = {}, 0
    for r in range(1, runs + 1):
        x = out / f"{stem}.run{r}.xml"
        if not x.exists():
            missing += 1
            continue
        for case in ET.parse(x).iter("testcase"):
            name = case.get("name")
            failed = any(c.tag in ("failure", "error") for c in case)
            skipped = any(c.tag == "skipped" for c in case)
            t = per_test.setdefault(name, [0, 0])
            if not skipped:
                t[0] += 1
                t[1] += failed
    for name, (n, failed) in sorted(per_test.items()):
        bad += failed
        print(f"{stem:44} {name[:70]:70} {n:4} {failed:6}")
    if missing:
        bad += missing
        print(f"{stem:44} {'(runs without a JUnit file: pytest died)':70} {missing:4} {missing:6}")
sys.exit(1 if bad else 0)
EOF
