"""scripts/check-layers (DESIGN §3, issue 13 item 8): it passes on this tree and names every include that points
up or sideways, as `file:line: <from> may not include <to>`, with exit code 1."""
import shutil
import subprocess

from conftest import ROOT

SCRIPT = ROOT / "scripts" / "check-layers"


def run(root):
    return subprocess.run([str(SCRIPT), "--root", str(root)], capture_output=True, text=True, timeout=60)


def test_this_tree_passes():
    res = run(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr


def test_planted_bad_includes_are_named(tmp_path):
    shutil.copytree(ROOT / "src", tmp_path / "src")
    planted = {  # file -> (include, the room it may not reach)
        "decide/zz_planted.h": ("kube/client/client.h", "decide may not include kube"),   # decide is pure
        "sim/zz_planted.cpp": ("controllers/kai_queues.h", "sim may not include controllers"),
        "common/zz_planted.h": ("api/kinds.h", "common may not include api"),
        "act/zz_planted.cpp": ("controllers/kai_queues.h", "act may not include controllers"),  # sideways
        "kube/zz_planted.h": ("webhook/server.h", "kube may not include webhook"),        # upwards
    }
    for rel, (inc, _) in planted.items():
        (tmp_path / "src" / rel).write_text(f'#pragma once\n\n#include <string>\n#include "{inc}"\n')
    # Allowed arrows are not reported: observe reads decide's input types, engine composes everything.
    (tmp_path / "src" / "observe").mkdir(exist_ok=True)
    (tmp_path / "src" / "observe" / "zz_ok.h").write_text('#include "decide/policy/scope.h"\n#include "kube/client/client.h"\n')
    (tmp_path / "src" / "engine" / "zz_ok.cpp").write_text('#include "controllers/kai_queues.h"\n#include "sim/x.h"\n')
    res = run(tmp_path)
    assert res.returncode == 1
    lines = res.stdout.splitlines()
    for rel, (_, message) in planted.items():
        assert f"src/{rel}:4: {message}" in lines, (rel, res.stdout)
    # engine -> sim is not an arrow either (the engine never assumes the simulator, DESIGN §1)
    assert "src/engine/zz_ok.cpp:2: engine may not include sim" in lines
    assert len(lines) == len(planted) + 1, res.stdout
