#!/usr/bin/env bash
# Checks that the Dockerfile's runtime stage installs every Debian package whose shared libraries the kubex binary
# links, since no Docker engine runs here to try the image (issue 16). For each library `ldd` reports, `dpkg -S`
# names the package that ships it; the check fails when that package is neither in the runtime stage's
# `apt-get install` list nor part of debian:bookworm-slim itself.
#
#   scripts/check-image-libs.sh [--binary build/bin/kubex] [--dockerfile Dockerfile]
#
# Prints one line per library (`ok`, `base` or `MISSING`) and exits 0 when every package is there, 1 when one is
# missing, 2 on bad usage or when a library cannot be resolved (not found, or not from a Debian package).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BINARY="$ROOT/build/bin/kubex"
DOCKERFILE="$ROOT/Dockerfile"
# Packages debian:bookworm-slim already has (Priority required, pulled in by dpkg and apt), so the runtime stage
# need not install them.
BASE_PACKAGES=(libc6 libgcc-s1 libstdc++6)

usage() { echo "usage: $0 [--binary PATH] [--dockerfile PATH]" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --binary) [[ $# -ge 2 ]] || usage; BINARY="$2"; shift 2 ;;
    --dockerfile) [[ $# -ge 2 ]] || usage; DOCKERFILE="$2"; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) usage ;;
  esac
done

[[ -x "$BINARY" ]] || { echo "check-image-libs: $BINARY is not an executable (run make build first)" >&2; exit 2; }
[[ -r "$DOCKERFILE" ]] || { echo "check-image-libs: cannot read $DOCKERFILE" >&2; exit 2; }
command -v ldd >/dev/null && command -v dpkg >/dev/null \
  || { echo "check-image-libs: needs ldd and dpkg (a Debian system)" >&2; exit 2; }

# The packages the last stage of the Dockerfile installs with apt-get install (continuation lines joined;
# options, version pins and shell words after the command list are ignored).
runtime_packages() {
  /usr/bin/python3 - "$DOCKERFILE" <<'PY'
import re, shlex, sys
text = open(sys.argv[1]).read()
text = re.sub(r"\\\r?\n", " ", text)            # join continuation lines
lines = [l for l in text.splitlines() if not l.lstrip().startswith("#")]
stages, cur = [], None
for line in lines:
    m = re.match(r"\s*FROM\s", line, re.I)
    if m:
        cur = []
        stages.append(cur)
    elif cur is not None:
        cur.append(line)
if not stages:
    sys.exit("no FROM line")
pkgs = []
for line in stages[-1]:
    if not re.match(r"\s*RUN\s", line, re.I):
        continue
    body = re.sub(r"^\s*RUN\s+", "", line, flags=re.I)
    for cmd in re.split(r"&&|;|\|\|", body):
        try:
            words = shlex.split(cmd)
        except ValueError:
            continue
        for i, w in enumerate(words):
            if w in ("apt-get", "apt") and "install" in words[i + 1:]:
                for a in words[words.index("install", i) + 1:]:
                    if a.startswith("-") or a.startswith("$"):
                        continue                         # options, variables
                    pkgs.append(a.split("=")[0])         # libfoo=1.2-3 pins a version
                break
print("\n".join(pkgs))
PY
}

mapfile -t INSTALLED < <(runtime_packages) || true
if ((${#INSTALLED[@]} == 0)); then
  echo "check-image-libs: $DOCKERFILE: the runtime (last) stage installs no package with apt-get install" >&2
fi

in_list() { local x="$1"; shift; local y; for y in "$@"; do [[ "$x" == "$y" ]] && return 0; done; return 1; }

# Which package owns each library file, from ONE dpkg -S call (it is slow per call). Debian 12 is merged-/usr, so
# dpkg may know a library under /lib or under /usr/lib, by its symlink or by its real name: ask for every variant.
declare -A OWNER
candidates() {
  local path="$1" real
  real="$(readlink -f "$path")"
  printf '%s\n' "$path" "$real" "${path#/usr}" "/usr$path" "${real#/usr}" "/usr$real"
}
resolve_owners() {
  local -a paths=() ; local p line pkg
  for p in "$@"; do mapfile -t -O "${#paths[@]}" paths < <(candidates "$p"); done
  while IFS= read -r line; do
    [[ "$line" == *": /"* ]] || continue
    pkg="${line%%: /*}"; p="/${line#*: /}"
    pkg="${pkg%%,*}"; pkg="${pkg%%:*}"          # "libssl3:amd64" -> "libssl3"
    OWNER["$p"]="$pkg"
  done < <(dpkg -S "${paths[@]}" 2>/dev/null)
}
package_of() {
  local c
  while IFS= read -r c; do
    [[ -n "${OWNER[$c]:-}" ]] && { echo "${OWNER[$c]}"; return 0; }
  done < <(candidates "$1")
  return 1
}

LDD_OUT="$(ldd "$BINARY" 2>&1)" || { echo "check-image-libs: ldd $BINARY failed: $LDD_OUT" >&2; exit 2; }
mapfile -t LIB_PATHS < <(sed -nE 's#.*=> (/[^ ]+) .*#\1#p; s#^[[:space:]]*(/[^ ]+) \(.*#\1#p' <<<"$LDD_OUT")
resolve_owners "${LIB_PATHS[@]}"
missing=0 unresolved=0
while read -r line; do
  [[ -n "$line" ]] || continue
  lib="" path=""
  if [[ "$line" == *"=> not found"* ]]; then
    echo "check-image-libs: ${line%% *} is not found on this system" >&2; unresolved=1; continue
  elif [[ "$line" =~ ^([^[:space:]]+)[[:space:]]+=\>[[:space:]]+(/[^[:space:]]+) ]]; then
    lib="${BASH_REMATCH[1]}" path="${BASH_REMATCH[2]}"
  elif [[ "$line" =~ ^(/[^[:space:]]+)[[:space:]]+\( ]]; then   # the dynamic loader
    path="${BASH_REMATCH[1]}" lib="$(basename "$path")"
  else
    continue                                                     # linux-vdso and friends: no file
  fi
  if ! pkg="$(package_of "$path")"; then
    echo "check-image-libs: $lib ($path) does not come from a Debian package" >&2; unresolved=1; continue
  fi
  if in_list "$pkg" "${INSTALLED[@]}"; then
    printf '%-8s %-32s %s\n' ok "$lib" "$pkg"
  elif in_list "$pkg" "${BASE_PACKAGES[@]}"; then
    printf '%-8s %-32s %s\n' base "$lib" "$pkg (in debian:bookworm-slim)"
  else
    printf '%-8s %-32s %s\n' MISSING "$lib" "$pkg"
    echo "check-image-libs: $lib comes from $pkg, which the runtime stage of $DOCKERFILE does not install" >&2
    missing=1
  fi
done <<<"$LDD_OUT"

((unresolved)) && exit 2
((missing)) && exit 1
echo "check-image-libs: every shared library of $(basename "$BINARY") is provided by the runtime image"
exit 0
