#!/usr/bin/env python3
"""Install the built wheels (never an editable tree) into a clean virtual environment and run a
torch program there: python3 tools/wheel_smoke.py [--keep DIR]

Uses build/wheels/ from tools/build.py (the vendored torch wheel, torchnative-core and every
backend: maturin abi3 wheels and the pure-Python npu wheel) plus a wheel of the root `torchnative`
package built here; torch's own dependencies (and the npu backend's onnx and onnxruntime) come from
the package index. The program runs from a directory outside the
checkout, and checks that torch, torch._C, the cpu backend and the CLI all come from the venv.
Exit code 0 when it ran and agreed. `nox -s wheels` runs the build and then this.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHEELS = REPO / "build" / "wheels"

PROGRAM = r"""
import json, torch, torch._C, torchnative_cpu, torchnative
x = torch.arange(6.0).reshape(2, 3)
y = torch.nn.functional.softmax(x * 2 + 1, dim=-1).sum(-1)
print(json.dumps({"files": [torch.__file__, torch._C.__file__, torchnative_cpu.__file__, torchnative.__file__],
                  "y": y.tolist()}))
"""

# The same computation on npu: captured as one ONNX graph, run by ONNX Runtime at .cpu().
NPU_PROGRAM = r"""
import json, torch, torchnative_npu
x = torch.arange(6.0).reshape(2, 3).to("npu")
y = torch.nn.functional.softmax(x * 2 + 1, dim=-1).sum(-1)
print(json.dumps({"device": str(y.device), "y": y.cpu().tolist(), "flushes": torchnative_npu.stats()["flushes"]}))
"""


def run(cmd, **kw):
    print("$", " ".join(map(str, cmd)), flush=True)
    return subprocess.run(list(map(str, cmd)), check=True, **kw)


def base_python() -> str:
    """The interpreter the repo's .venv was made from (python3.11: the upstream wheel's ABI)."""
    venv_py = REPO / ".venv" / "bin" / "python"
    out = subprocess.run([venv_py, "-c", "import sys; print(sys._base_executable)"], capture_output=True, text=True)
    return out.stdout.strip() if out.returncode == 0 else "python3.11"


def backends(venv: Path, cwd: Path) -> dict:
    """`torchnative backends list --json` of the venv, by plugin name."""
    cli = run([venv / "bin" / "torchnative", "backends", "list", "--json"], capture_output=True, text=True,
              cwd=cwd).stdout
    return {r["name"]: r for r in json.loads(cli)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = ap.parse_args()
    wheels = sorted(WHEELS.glob("*.whl"))
    names = {w.name.split("-")[0] for w in wheels}
    missing = {"torch", "torchnative_core", "torchnative_cpu"} - names
    if missing:
        print(f"wheel_smoke: no {', '.join(sorted(missing))} wheel in build/wheels: run python3 tools/build.py")
        return 1
    work = args.keep or Path(tempfile.mkdtemp(prefix="tn-wheels-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        # The root package's wheel, built from a copy so the build leaves nothing in the checkout.
        src = work / "src"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir()
        shutil.copy(REPO / "pyproject.toml", src)
        shutil.copytree(REPO / "torchnative", src / "torchnative", ignore=shutil.ignore_patterns("__pycache__"))
        venv = work / "venv"
        shutil.rmtree(venv, ignore_errors=True)
        run([base_python(), "-m", "venv", venv])
        py = venv / "bin" / "python"
        run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "setuptools>=77.0.3", "wheel"])
        run([py, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps", "--no-build-isolation",
             "-w", work / "dist", src])
        (root,) = (work / "dist").glob("torchnative-*.whl")
        # torch by path (its own dependencies from the index), then our distributions the way a
        # user gets them, `pip install torchnative` and `pip install torchnative[gpu]`, resolved
        # only from our wheels (--no-index: never a same-named distribution from the index).
        torch_wheel = next(w for w in wheels if w.name.startswith("torch-"))
        run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", torch_wheel, "rich", "pluggy>=1.3"])
        ours = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index",
                "--find-links", WHEELS, "--find-links", work / "dist"]
        run([*ours, "torchnative"])
        out = run([py, "-c", PROGRAM], capture_output=True, text=True, cwd=work).stdout
        result = json.loads(out)
        outside = [f for f in result["files"] if not f.startswith(str(venv))]
        if outside:
            print(f"wheel_smoke: imported from outside the venv: {outside}")
            return 1
        expect = [1.0, 1.0]
        if any(abs(a - b) > 1e-6 for a, b in zip(result["y"], expect)):
            print(f"wheel_smoke: softmax sums {result['y']}, expected {expect}")
            return 1
        rows = backends(venv, work)
        if rows["cpu"]["status"] != "ok" or rows["vulkan"]["status"] != "not installed":
            print(f"wheel_smoke: unexpected backends after `pip install torchnative`: {rows}")
            return 1
        gpu = "no torchnative-vulkan wheel in build/wheels (its build failed or was skipped)"
        if "torchnative_vulkan" in names:
            run([*ours, "torchnative[gpu]"])
            rows = backends(venv, work)
            if rows["vulkan"]["status"] not in ("ok", "unavailable"):
                print(f"wheel_smoke: unexpected vulkan row after `pip install torchnative[gpu]`: {rows['vulkan']}")
                return 1
            gpu = f"[gpu] installed vulkan: {rows['vulkan']['status']} {rows['vulkan'].get('reason') or ''}".strip()
        npu = "no torchnative-npu wheel in build/wheels (its build failed or was skipped)"
        if "torchnative_npu" in names:
            # onnx and onnxruntime come from the package index (pip's cache makes a rerun cheap);
            # our own distributions, again, only from our wheels.
            run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "onnx", "onnxruntime"])
            run([*ours, "torchnative[npu]"])
            rows = backends(venv, work)
            row = rows["npu"]
            if row["status"] != "ok" or "CPUExecutionProvider" not in row.get("extra", {}).get("execution_providers", []):
                print(f"wheel_smoke: unexpected npu row after `pip install torchnative[npu]`: {row}")
                return 1
            got = json.loads(run([py, "-c", NPU_PROGRAM], capture_output=True, text=True, cwd=work).stdout)
            if got["device"] != "npu:0" or any(abs(a - b) > 1e-6 for a, b in zip(got["y"], result["y"])):
                print(f"wheel_smoke: npu program gave {got}, expected softmax sums {result['y']} on npu:0")
                return 1
            npu = f"[npu] installed npu: ok, {', '.join(row['extra']['execution_providers'])}, {got['flushes']} graph run"
        print(f"wheel_smoke: ok: torch from {result['files'][0]}; cpu backend {rows['cpu']['kernels']} kernels; "
              f"{gpu}; {npu}; wheels: {', '.join(w.name for w in [root, *wheels])}")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
