#!/usr/bin/env python3
"""Build everything: python3 tools/build.py [--ref] [--force] [--clean]

Steps, in order (each is skipped when the hash of its inputs matches its stamp in
build/stamps/ and its outputs still exist):
  vendor     upstream wheel -> build/vendored/ + build/wheels/torch-2.13.0-py3-none-any.whl
  venv       .venv/ (python3.11) + pip install -r requirements/runtime.txt
  gen-tables .venv/bin/python tools/gen_tables.py build/vendored core/python/torchnative_core/generated
             (when that file exists)
  maturin    core/ and backends/*/ (those with a pyproject.toml) -> build/wheels/; a backend whose
             build-backend is not maturin (backends/npu: pure Python) is built with `pip wheel`
  install    pip install --no-deps --force-reinstall of every wheel that changed
  torch-deps pip install --no-deps -r requirements/runtime-torch.txt (packages that require torch:
             their other dependencies are in runtime.txt, so pip never fetches upstream torch)
  editable   pip install -e . (the root torchnative package, when pyproject.toml exists)
  flower     pip install --target build/flwr-site -r requirements/flower.txt (kept out of .venv)
  ref        (--ref) the upstream torch 2.13.0 reference venv -> build/ref-python

Stdlib only; runs with any python3 >= 3.10. Exit code 1 and a one-line reason on failure.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vendor  # noqa: E402  (tools/vendor.py, beside this file)

REPO = vendor.REPO
BUILD = vendor.BUILD
STAMPS = BUILD / "stamps"
WHEELS = vendor.WHEELS
VENV = REPO / ".venv"
VENV_PY = VENV / "bin" / "python"
REQ_RUNTIME = REPO / "requirements" / "runtime.txt"
REQ_REF = REPO / "requirements" / "ref.txt"
REQ_TORCH_DEPS = REPO / "requirements" / "runtime-torch.txt"
REQ_FLOWER = REPO / "requirements" / "flower.txt"
FLOWER_SITE = BUILD / "flwr-site"
GEN_TABLES = REPO / "tools" / "gen_tables.py"
GENERATED = REPO / "core" / "python" / "torchnative_core" / "generated"
REF_PYTHON_FILE = BUILD / "ref-python"
# Inputs shared by every Rust crate: the workspace manifest, lock file, toolchain pins, the ABI
# crate, the backend SDK crate (sdk/: every native backend is built on it) and the patched crates
# the manifest's [patch.crates-io] points at.
WORKSPACE_INPUTS = ["Cargo.toml", "Cargo.lock", ".cargo", "rust-toolchain", "rust-toolchain.toml",
                    "core/abi", "sdk", "third_party"]
# Native wheels link against glibc 2.28's symbol versions through zig (the `ziglang` wheel in
# requirements/runtime.txt; maturin finds it as `python -m ziglang` on PATH) and maturin checks the
# result, so their tag is manylinux_2_28 whatever glibc this machine has: the wheels the build
# installs are the wheels tools/wheelhouse.py ships.
MATURIN_PORTABLE = ["--zig", "--compatibility", "manylinux_2_28"]
# Never part of a fingerprint: build outputs and caches that live inside source dirs.
JUNK_DIRS = {"target", "__pycache__", ".pytest_cache", ".git", ".nox", "node_modules"}


class BuildError(Exception):
    """A step failed; the message says which and why."""


def log(step: str, msg: str) -> None:
    print(f"[{step}] {msg}", flush=True)


# --- hashing and stamps ------------------------------------------------------------------
def fingerprint(*paths: Path) -> str:
    """sha256 over the relative names and contents of every file under `paths` (missing ok)."""
    h = hashlib.sha256()
    for root in paths:
        files = [root] if root.is_file() else sorted(_walk(root)) if root.is_dir() else []
        for f in files:
            h.update(f.relative_to(REPO).as_posix().encode() + b"\0")
            h.update(hashlib.sha256(f.read_bytes()).digest())
    return h.hexdigest()


def _walk(root: Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in JUNK_DIRS and not d.endswith(".egg-info")]
        for name in filenames:
            if not name.endswith(".pyc"):
                yield Path(dirpath) / name


def read_stamp(name: str) -> dict:
    try:
        return json.loads((STAMPS / f"{name}.json").read_text())
    except (OSError, ValueError):
        return {}


def write_stamp(name: str, data: dict) -> None:
    STAMPS.mkdir(parents=True, exist_ok=True)
    (STAMPS / f"{name}.json").write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def drop_stamps(prefix: str) -> None:
    for f in STAMPS.glob(f"{prefix}*.json"):
        f.unlink()


def sha256_cached(path: Path) -> str:
    """sha256 of a large file, remembered by (size, mtime) so warm runs do not re-read it."""
    st = path.stat()
    key = f"{path}:{st.st_size}:{st.st_mtime_ns}"
    cache = read_stamp("file-hashes")
    if key not in cache:
        cache = {k: v for k, v in cache.items() if not k.startswith(f"{path}:")}
        cache[key] = vendor.sha256_file(path)
        write_stamp("file-hashes", cache)
    return cache[key]


def run(step: str, cmd: list, cwd: Path = REPO, env: dict | None = None) -> None:
    """Run a command with its output streaming through; a non-zero exit fails the step."""
    log(step, "$ " + " ".join(str(c) for c in cmd))
    full_env = {**os.environ, **(env or {})}
    if subprocess.run([str(c) for c in cmd], cwd=cwd, env=full_env).returncode != 0:
        raise BuildError(f"{step}: command failed: {' '.join(str(c) for c in cmd)}")


# --- results -------------------------------------------------------------------------------
class Summary:
    def __init__(self) -> None:
        self.rows: list[tuple[str, str, float, str]] = []

    def add(self, step: str, status: str, started: float, note: str = "") -> None:
        self.rows.append((step, status, time.monotonic() - started, note))
        log(step, f"{status}{' - ' + note if note else ''}")

    def print(self, total: float) -> None:
        print("\nbuild summary:")
        for step, status, secs, note in self.rows:
            print(f"  {step:<22} {status:<9} {secs:6.1f}s  {note}")
        print(f"  {'total':<22} {'':<9} {total:6.1f}s")


# --- a. vendor -------------------------------------------------------------------------------
def step_vendor(s: Summary, force: bool) -> str:
    """Returns the sha256 of the vendored pure wheel (input of later steps)."""
    t = time.monotonic()
    src = vendor.wheel_path()  # downloads on a fresh machine
    key = sha256_cached(src) + fingerprint(Path(vendor.__file__))
    out = WHEELS / vendor.PURE_WHEEL
    stamp = read_stamp("vendor")
    if not force and stamp.get("input") == key and out.is_file() and vendor.VENDORED.is_dir():
        s.add("vendor", "skipped", t, "upstream wheel and tools/vendor.py unchanged")
        return stamp["wheel_sha256"]
    vendor.vendor(src)
    wheel_sha = vendor.sha256_file(out)
    write_stamp("vendor", {"input": key, "wheel_sha256": wheel_sha})
    s.add("vendor", "rebuilt", t, out.name)
    return wheel_sha


# --- b. venv ---------------------------------------------------------------------------------
def base_python() -> str:
    """The interpreter for .venv: python3.11 (the upstream wheel's ABI), overridable."""
    exe = os.environ.get("TORCHNATIVE_VENV_PYTHON", "python3.11")
    found = shutil.which(exe)
    if not found:
        raise BuildError(f"venv: {exe} not found on PATH (set TORCHNATIVE_VENV_PYTHON)")
    return found


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages"))
    if not found:
        raise BuildError(f"no site-packages under {venv}")
    return found[0]


def step_venv(s: Summary, force: bool) -> None:
    t = time.monotonic()
    created = False
    if not VENV_PY.exists():
        run("venv", [base_python(), "-m", "venv", VENV])
        drop_stamps("install-")  # a new venv holds none of the previously installed wheels
        drop_stamps("editable")
        drop_stamps("venv")
        drop_stamps("torch-deps")
        created = True
    key = fingerprint(REQ_RUNTIME)
    if not force and read_stamp("venv").get("input") == key:
        s.add("venv", "skipped", t, "requirements/runtime.txt unchanged")
        return
    run("venv", [VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 "-r", REQ_RUNTIME])
    write_stamp("venv", {"input": key})
    s.add("venv", "rebuilt", t, ("created .venv, " if created else "") + "installed runtime.txt")


# --- c. gen-tables ---------------------------------------------------------------------------
def step_gen_tables(s: Summary, force: bool, vendor_sha: str) -> None:
    t = time.monotonic()
    if not GEN_TABLES.is_file():
        s.add("gen-tables", "absent", t, "tools/gen_tables.py does not exist yet")
        return
    key = fingerprint(GEN_TABLES) + vendor_sha
    if not force and read_stamp("gen-tables").get("input") == key and GENERATED.is_dir():
        s.add("gen-tables", "skipped", t, "generator and vendored tree unchanged")
        return
    run("gen-tables", [VENV_PY, GEN_TABLES, vendor.VENDORED, GENERATED])
    write_stamp("gen-tables", {"input": key})
    s.add("gen-tables", "rebuilt", t, str(GENERATED.relative_to(REPO)))


# --- d. maturin --------------------------------------------------------------------------------
def project_name(pyproject: Path) -> str:
    """[project] name from a pyproject.toml, normalised for wheel file names (no tomllib: 3.10)."""
    text = pyproject.read_text()
    section = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    match = section and re.search(r'^name\s*=\s*["\']([^"\']+)', section.group(1), re.M)
    if not match:
        raise BuildError(f"no [project] name in {pyproject}")
    return re.sub(r"[-_.]+", "_", match.group(1)).lower()


def crates() -> list[Path]:
    """core/ first, then every backend with a pyproject.toml."""
    found = [REPO / "core"]
    found += sorted(p.parent for p in (REPO / "backends").glob("*/pyproject.toml"))
    return found


def is_maturin(pyproject: Path) -> bool:
    """Whether [build-system] build-backend is maturin (a Rust crate); anything else (setuptools:
    a pure-Python backend such as backends/npu) is built with `pip wheel`."""
    match = re.search(r'^build-backend\s*=\s*["\']([^"\']+)', pyproject.read_text(), re.M)
    return match is None or match.group(1) == "maturin"


def build_pure_wheel(step: str, crate: Path) -> None:
    """`pip wheel --no-deps --no-build-isolation` of a pure-Python backend, from a copy of its
    directory (setuptools writes build/ and *.egg-info beside the sources, which would change the
    directory's fingerprint). Its dependencies are in requirements/runtime.txt."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="tn-wheel-") as tmp:
        src = Path(tmp) / crate.name
        shutil.copytree(crate, src, ignore=shutil.ignore_patterns(*JUNK_DIRS, "*.egg-info", "*.pyc", "build"))
        run(step, [VENV_PY, "-m", "pip", "wheel", "-q", "--disable-pip-version-check", "--no-deps",
                   "--no-build-isolation", "-w", WHEELS, src])


def step_maturin(s: Summary, force: bool, crate: Path) -> Path | None:
    """Builds one crate's wheel; returns its path (None for a tolerated backend failure)."""
    t = time.monotonic()
    rel = crate.relative_to(REPO).as_posix()
    pure = not is_maturin(crate / "pyproject.toml")
    step = f"{'wheel' if pure else 'maturin'} {rel}"
    name = project_name(crate / "pyproject.toml")
    # a pure-Python backend has no Rust: the workspace files are no input of its wheel
    key = fingerprint(crate) if pure else fingerprint(crate, *(REPO / p for p in WORKSPACE_INPUTS)) + " ".join(
        MATURIN_PORTABLE)
    stamp = read_stamp(f"maturin-{name}")
    old = Path(stamp.get("wheel", "/nonexistent"))
    if not force and stamp.get("input") == key and old.is_file():
        s.add(step, "skipped", t, "no file under the crate or workspace changed")
        return old
    for stale in WHEELS.glob(f"{name}-*.whl"):
        stale.unlink()  # one wheel per distribution, so the install step knows which is current
    WHEELS.mkdir(parents=True, exist_ok=True)
    try:
        if pure:
            build_pure_wheel(step, crate)
        else:
            run(step, [VENV / "bin" / "maturin", "build", "--release", "--out", WHEELS,
                       "--interpreter", VENV_PY, *MATURIN_PORTABLE], cwd=crate,
                env={"PATH": f"{VENV / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"})
        built = sorted(WHEELS.glob(f"{name}-*.whl"))
        if len(built) != 1:
            raise BuildError(f"{step}: expected one {name}-*.whl in build/wheels, found {built}")
    except BuildError:
        if rel in ("core", "backends/cpu"):
            raise  # the core and the default backend are the product; others are optional
        s.add(step, "FAILED", t, "optional backend, skipped")
        return None
    write_stamp(f"maturin-{name}", {"input": key, "wheel": str(built[0])})
    s.add(step, "rebuilt", t, built[0].name)
    return built[0]


# --- e. install ------------------------------------------------------------------------------
def dist_name(wheel: Path) -> str:
    return wheel.name.split("-")[0]


def installed(site: Path, dist: str) -> bool:
    return any(site.glob(f"{dist}-*.dist-info"))


def step_install(s: Summary, force: bool, wheels: list[Path]) -> None:
    t = time.monotonic()
    site = site_packages(VENV)
    changed = []
    for wheel in wheels:
        stamp = read_stamp(f"install-{dist_name(wheel)}")
        sha = sha256_cached(wheel)
        if force or stamp.get("sha256") != sha or not installed(site, dist_name(wheel)):
            changed.append((wheel, sha))
    if changed and changed[0][0] == wheels[0]:
        # The native wheels write into torch/ too; reinstalling torch must not leave them
        # half-removed (e.g. a path an older torch RECORD also listed), so redo them all.
        changed = [(w, sha256_cached(w)) for w in wheels]
    if changed:
        # --no-deps: dependencies come from requirements/runtime.txt; never let pip fetch
        # upstream torch or resolve our own distributions against PyPI.
        run("install", [VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--no-deps", "--force-reinstall", *(w for w, _ in changed)])
        for wheel, sha in changed:
            write_stamp(f"install-{dist_name(wheel)}", {"sha256": sha, "wheel": str(wheel)})
    note = ", ".join(w.name for w, _ in changed) if changed else "all wheels unchanged"
    s.add("install", "rebuilt" if changed else "skipped", t, note)


def step_torch_deps(s: Summary, force: bool) -> None:
    """Packages that declare a dependency on torch (sentence-transformers, model packages):
    installed without dependencies once our torch is in place."""
    t = time.monotonic()
    if not REQ_TORCH_DEPS.is_file():
        s.add("torch-deps", "absent", t, "no requirements/runtime-torch.txt")
        return
    key = fingerprint(REQ_TORCH_DEPS)
    if not force and read_stamp("torch-deps").get("input") == key:
        s.add("torch-deps", "skipped", t, "requirements/runtime-torch.txt unchanged")
        return
    run("torch-deps", [VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                       "-r", REQ_TORCH_DEPS])
    write_stamp("torch-deps", {"input": key})
    s.add("torch-deps", "rebuilt", t, "installed runtime-torch.txt (--no-deps)")


def build_global_deps(s: Summary) -> None:
    """torch/__init__.py dlopen()s torch/lib/libtorch_global_deps.so (RTLD_GLOBAL) before it
    imports torch._C and re-raises when that fails, so torchnative-core ships a real, empty
    shared library there (source: core/native/torch_global_deps.c). It is compiled into
    core/python/torch/lib/ (git-ignored) before maturin packs the core wheel."""
    t = time.monotonic()
    source = REPO / "core/native/torch_global_deps.c"
    target = REPO / "core/python/torch/lib/libtorch_global_deps.so"
    if target.is_file() and target.stat().st_mtime >= source.stat().st_mtime:
        s.add("global-deps lib", "skipped", t, "up to date")
        return
    cc = shutil.which(os.environ.get("CC", "cc"))
    if not cc:
        raise BuildError("global-deps lib: no C compiler (cc) to build libtorch_global_deps.so")
    target.parent.mkdir(parents=True, exist_ok=True)
    run("global-deps lib", [cc, "-shared", "-fPIC", "-o", target, source])
    s.add("global-deps lib", "rebuilt", t, target.relative_to(REPO).as_posix())


# --- f. editable -----------------------------------------------------------------------------
def step_editable(s: Summary, force: bool) -> None:
    t = time.monotonic()
    pyproject = REPO / "pyproject.toml"
    if not pyproject.is_file():
        s.add("editable", "absent", t, "no root pyproject.toml yet")
        return
    name = project_name(pyproject)
    key = fingerprint(pyproject)
    if (not force and read_stamp("editable").get("input") == key
            and installed(site_packages(VENV), name)):
        s.add("editable", "skipped", t, "pyproject.toml unchanged")
        return
    # With deps: torch/torchnative-core already satisfy their pins from the steps above.
    run("editable", [VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                     "-e", REPO])
    write_stamp("editable", {"input": key})
    s.add("editable", "rebuilt", t, f"{name} (editable)")


def step_flower(s: Summary, force: bool) -> None:
    """flwr (requirements/flower.txt) into build/flwr-site with pip --target, not into .venv:
    flwr pins protobuf, typer and packaging below .venv's. tests/federated/flower_deploy.py puts
    it first on PYTHONPATH for Flower's processes only (either interpreter: pure-Python and
    abi3/cp311 wheels)."""
    t = time.monotonic()
    if not REQ_FLOWER.is_file():
        s.add("flower", "absent", t, "no requirements/flower.txt")
        return
    key = fingerprint(REQ_FLOWER)
    if not force and read_stamp("flower").get("input") == key and (FLOWER_SITE / "flwr").is_dir():
        s.add("flower", "skipped", t, "requirements/flower.txt unchanged")
        return
    if FLOWER_SITE.exists():
        shutil.rmtree(FLOWER_SITE)
    run("flower", [VENV_PY, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--target", FLOWER_SITE,
                   "-r", REQ_FLOWER])
    write_stamp("flower", {"input": key})
    s.add("flower", "rebuilt", t, str(FLOWER_SITE.relative_to(REPO)))


# --- g. ref ------------------------------------------------------------------------------------
def ref_venv() -> Path:
    return vendor.cache_dir() / f"ref-torch-{vendor.TORCH_VERSION}"


def ref_works(python: Path) -> bool:
    """The oracle check: the interpreter imports a genuine torch 2.13.0."""
    if not python.exists():
        return False
    probe = 'import torch; assert torch.__version__.startswith("2.13.0"), torch.__version__'
    return subprocess.run([str(python), "-c", probe], capture_output=True).returncode == 0


def adopt_legacy_ref(target: Path) -> None:
    """A hand-made venv at <cache>/ref-2.13.0 predates the naming convention: link, don't copy
    (it is about 5 GB and renaming a venv breaks its scripts' shebangs)."""
    legacy = vendor.cache_dir() / f"ref-{vendor.TORCH_VERSION}"
    if not target.exists() and not target.is_symlink() and ref_works(legacy / "bin" / "python"):
        log("ref", f"linking {target} -> {legacy.name} (existing reference venv)")
        target.symlink_to(legacy.name)


def step_ref(s: Summary, force: bool) -> None:
    t = time.monotonic()
    override = os.environ.get("TORCHNATIVE_REF_PYTHON")
    if override:
        if not ref_works(Path(override)):
            raise BuildError(f"ref: TORCHNATIVE_REF_PYTHON={override} does not import torch 2.13.0")
        REF_PYTHON_FILE.write_text(override + "\n")
        s.add("ref", "skipped", t, f"TORCHNATIVE_REF_PYTHON={override}")
        return
    venv = ref_venv()
    python = venv / "bin" / "python"
    key = fingerprint(REQ_REF) + str(venv)
    torch_present = venv.is_dir() and any(venv.glob("lib/python3*/site-packages/torch-2.13.0.dist-info"))
    if not force and read_stamp("ref").get("input") == key and python.exists() and torch_present:
        REF_PYTHON_FILE.write_text(f"{python}\n")
        s.add("ref", "skipped", t, str(python))
        return
    venv.parent.mkdir(parents=True, exist_ok=True)
    adopt_legacy_ref(venv)
    if not python.exists():
        run("ref", [base_python(), "-m", "venv", venv])
    # pip skips what is already satisfied, so this also completes a half-made venv; the cached
    # upstream wheel is passed so torch itself is not downloaded again.
    run("ref", [python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                "-r", REQ_REF, vendor.wheel_path()])
    if not ref_works(python):
        raise BuildError(f"ref: {python} cannot import torch 2.13.0 after installing")
    write_stamp("ref", {"input": key})
    REF_PYTHON_FILE.write_text(f"{python}\n")
    s.add("ref", "rebuilt", t, str(python))


# --- driver ------------------------------------------------------------------------------------
def clean() -> None:
    """Remove what this script builds inside the repo (cargo's target/ and the cache stay)."""
    for path in (BUILD, VENV):
        if path.exists():
            print(f"[clean] removing {path.relative_to(REPO)}/")
            shutil.rmtree(path)


@contextlib.contextmanager
def build_lock():
    """One build at a time in this checkout: concurrent pip/maturin runs corrupt .venv."""
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".lock", "w") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print("[build] another tools/build.py is running here; waiting for it", flush=True)
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def build(args: argparse.Namespace, s: Summary) -> None:
    vendor_sha = step_vendor(s, args.force)
    step_venv(s, args.force)
    step_gen_tables(s, args.force, vendor_sha)
    wheels = [WHEELS / vendor.PURE_WHEEL]
    for crate in crates():
        if crate.name == "core":
            build_global_deps(s)
        wheel = step_maturin(s, args.force, crate)
        if wheel:
            wheels.append(wheel)
    step_install(s, args.force, wheels)
    step_torch_deps(s, args.force)
    step_editable(s, args.force)
    step_flower(s, args.force)
    if args.ref:
        step_ref(s, args.force)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n", 1)[1])
    parser.add_argument("--ref", action="store_true", help="also make the reference venv")
    parser.add_argument("--force", action="store_true", help="ignore stamps, redo every step")
    parser.add_argument("--clean", action="store_true", help="remove build/ and .venv/, then stop")
    args = parser.parse_args(argv)
    if args.clean:
        clean()
        return 0
    started = time.monotonic()
    summary = Summary()
    try:
        with build_lock():
            build(args, summary)
    except (BuildError, SystemExit) as err:
        if isinstance(err, SystemExit) and not isinstance(err.code, str):
            raise
        summary.print(time.monotonic() - started)
        print(f"\nbuild.py: error: {err}", file=sys.stderr)
        return 1
    summary.print(time.monotonic() - started)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
