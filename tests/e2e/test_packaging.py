"""The engine image (issue 16 item 4): the Dockerfile's runtime stage installs a Debian package for every shared
library the real build/bin/kubex links (scripts/check-image-libs.sh), and the check notices a package removed
from the install list. There is no Docker engine here, so this is how the image's libraries are proven."""
import re
import subprocess

import pytest

from conftest import BIN, ROOT

SCRIPT = ROOT / "scripts" / "check-image-libs.sh"
DOCKERFILE = ROOT / "Dockerfile"
KUBEX = BIN / "kubex"


def check(dockerfile=DOCKERFILE, binary=KUBEX):
    return subprocess.run([str(SCRIPT), "--binary", str(binary), "--dockerfile", str(dockerfile)],
                          capture_output=True, text=True, timeout=120)


def report(res):
    """{library: (status, package)} from the script's table lines."""
    rows = {}
    for line in res.stdout.splitlines():
        m = re.match(r"^(ok|base|MISSING)\s+(\S+)\s+(\S+)", line)
        if m:
            rows[m.group(2)] = (m.group(1), m.group(3))
    return rows


@pytest.fixture(scope="module")
def passing():
    assert KUBEX.exists(), f"{KUBEX} is missing: run make build"
    res = check()
    assert res.returncode == 0, res.stdout + res.stderr
    return res


def test_every_linked_library_has_its_package_in_the_runtime_stage(passing):
    rows = report(passing)
    ldd = subprocess.run(["ldd", str(KUBEX)], capture_output=True, text=True, check=True).stdout
    linked = {m.group(1) for m in re.finditer(r"^\s*(\S+\.so[.\d]*)\s+=>\s+/", ldd, re.M)}
    assert linked, ldd
    assert linked <= set(rows), (linked - set(rows), passing.stdout)
    # The libraries kubex is known to need beyond the C/C++ runtime (OpenSSL for TLS, yaml-cpp, prometheus-cpp).
    for lib in ("libssl.so.3", "libcrypto.so.3", "libyaml-cpp.so.0.7", "libprometheus-cpp-core.so.1.0"):
        assert rows.get(lib, ("",))[0] == "ok", (lib, passing.stdout)
    assert rows["libc.so.6"] == ("base", "libc6"), passing.stdout


def test_removing_a_package_from_the_dockerfile_fails_the_check(passing, tmp_path):
    rows = report(passing)
    packages = sorted({pkg for status, pkg in rows.values() if status == "ok"})
    assert packages, passing.stdout
    text = DOCKERFILE.read_text()
    for pkg in packages:
        pruned = re.sub(rf"^\s*{re.escape(pkg)}\s*\\\n", "", text, flags=re.M)
        assert pruned != text, f"{pkg} is not on a line of its own in the Dockerfile's install list"
        copy = tmp_path / f"Dockerfile.no-{pkg}"
        copy.write_text(pruned)
        res = check(dockerfile=copy)
        assert res.returncode == 1, (pkg, res.stdout, res.stderr)
        missing = {lib for lib, (status, p) in report(res).items() if status == "MISSING"}
        assert missing and all(rows[lib][1] == pkg for lib in missing), (pkg, res.stdout)
        assert f"comes from {pkg}, which the runtime stage" in res.stderr, res.stderr


def test_packages_of_the_build_stage_do_not_count(tmp_path):
    # Only the last stage is the image: a package installed by the build stage alone is still missing.
    text = DOCKERFILE.read_text()
    pruned = re.sub(r"^\s*libssl3\s*\\\n", "", text, flags=re.M)
    build_stage_install = "FROM debian:bookworm AS build\nRUN apt-get install -y libssl3\n"
    copy = tmp_path / "Dockerfile"
    copy.write_text(pruned.replace("FROM debian:bookworm AS build\n", build_stage_install, 1))
    res = check(dockerfile=copy)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "comes from libssl3" in res.stderr


def test_bad_usage_and_missing_binary_are_reported(tmp_path):
    res = check(binary=tmp_path / "nope")
    assert res.returncode == 2 and "is not an executable" in res.stderr
    res = subprocess.run([str(SCRIPT), "--frobnicate"], capture_output=True, text=True, timeout=30)
    assert res.returncode == 2 and "usage:" in res.stderr


def test_dockerfile_shape():
    text = DOCKERFILE.read_text()
    froms = re.findall(r"^FROM\s+(\S+)(?:\s+AS\s+(\S+))?", text, re.M)
    assert froms[0][0] == "debian:bookworm" and froms[-1][0] == "debian:bookworm-slim", froms
    build, runtime = text.split("FROM debian:bookworm-slim", 1)
    assert "scripts/install-deps.sh" in build and "make build" in build
    assert "COPY --from=build /src/build/bin/kubex" in runtime
    user = re.search(r"^USER\s+(\d+)(?::(\d+))?\s*$", runtime, re.M)
    assert user and int(user.group(1)) != 0, "the runtime stage must run as a numeric non-root user"
    assert re.search(r'^ENTRYPOINT \["/usr/local/bin/kubex", "engine"\]', runtime, re.M)
