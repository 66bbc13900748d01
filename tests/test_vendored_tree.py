"""The vendored upstream tree, as installed in the repo's .venv, is upstream's tree.

* every kept file (``.py``, ``.pyi``, data, templates) under torch/, torchgen/, functorch/ is
  byte-identical to the same member of the upstream wheel, none is missing, no ``.py`` was added;
* torch/version.py is the one rewritten file and describes our build;
* no native file of the upstream wheel is installed, under its own name or any other;
* ``importlib.metadata.version("torch") == "2.13.0"`` and no CUDA requirement is left;
* ``torch._C`` is our extension from torchnative-core (the import test needs ``import torch``).

Each checker is a plain function that returns a list of problems, and each is shown to catch a
planted fault (a flipped byte, a missing file, a renamed native library, ...). The installed
tree is located through ``.venv/bin/python`` and the upstream wheel through tools/vendor.py;
run ``python3 tools/build.py`` first.
"""
from __future__ import annotations

import base64
import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tools"))
import vendor  # noqa: E402

VENV_PY = REPO / ".venv" / "bin" / "python"
TREES = ("torch/", "torchgen/", "functorch/")
REWRITTEN = {"torch/version.py"}
EMPTY_SHA = hashlib.sha256(b"").hexdigest()


# --- fixtures --------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def upstream() -> zipfile.ZipFile:
    path = vendor.wheel_path(download=False)
    if not path.is_file():
        pytest.fail(f"upstream wheel {path} is missing: run python3 tools/build.py")
    with zipfile.ZipFile(path) as zf:
        yield zf


@pytest.fixture(scope="session")
def site() -> Path:
    if not VENV_PY.exists():
        pytest.fail(f"{VENV_PY} is missing: run python3 tools/build.py")
    out = venv_python("import sysconfig; print(sysconfig.get_path('purelib'))")
    return Path(out.stdout.strip())


@pytest.fixture(scope="session")
def upstream_kept(upstream) -> dict[str, str]:
    """sha256 of every upstream member the vendored tree keeps (dist-info aside)."""
    return {n: sha256(upstream.read(n)) for n in upstream.namelist()
            if n.startswith(TREES) and vendor.is_vendored(n)}


@pytest.fixture(scope="session")
def upstream_native(upstream) -> dict[str, str]:
    """sha256 (hex) of every native upstream member, from the upstream RECORD."""
    record = upstream.read(f"{vendor.DIST_INFO}/RECORD").decode().splitlines()
    hashes = {}
    for line in record:
        name, digest, _size = line.rsplit(",", 2)
        if vendor.is_native(name) and digest.startswith("sha256="):
            raw = base64.urlsafe_b64decode(digest[7:] + "=" * (-len(digest[7:]) % 4))
            hashes[name] = raw.hex()
    return hashes


@pytest.fixture(scope="session")
def upstream_version_py(upstream) -> str:
    return upstream.read("torch/version.py").decode()


# --- helpers ---------------------------------------------------------------------------------
def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def venv_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(VENV_PY), "-c", code], capture_output=True, text=True,
                          cwd="/", timeout=300)  # cwd=/ so the repo is not on sys.path


def installed_files(site: Path) -> dict[str, Path]:
    """Relative posix path -> file, for everything under the three vendored packages."""
    files = {}
    for top in TREES:
        for p in (site / top).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                files[p.relative_to(site).as_posix()] = p
    return files


# --- checkers (each returns a list of problems) ----------------------------------------------
def tree_problems(installed: dict[str, Path], upstream_kept: dict[str, str]) -> list[str]:
    """Every kept upstream file is installed byte-identical; no Python source was added."""
    problems = []
    for name, digest in sorted(upstream_kept.items()):
        if name in REWRITTEN:
            continue
        if name not in installed:
            problems.append(f"missing: {name}")
        elif sha256(installed[name].read_bytes()) != digest:
            problems.append(f"differs from upstream: {name}")
    for name in sorted(installed):
        if name.endswith((".py", ".pyi")) and name not in upstream_kept:
            problems.append(f"not in upstream: {name}")
    return problems


def version_problems(text: str, git_version: str) -> list[str]:
    """torch/version.py says: 2.13.0+torchnative, no CUDA/HIP/ROCm/XPU, upstream's git version."""
    ns: dict = {}
    exec(compile(text, "torch/version.py", "exec"), ns)
    want = {"__version__": "2.13.0+torchnative", "cuda": None, "hip": None, "rocm": None,
            "xpu": None, "debug": False, "git_version": git_version}
    return [f"version.py {k} = {ns.get(k, '<unset>')!r}, want {v!r}"
            for k, v in want.items() if ns.get(k, "<unset>") != v]


def native_problems(installed: dict[str, Path], upstream_native: dict[str, str],
                    torch_record: list[str]) -> list[str]:
    """No upstream native file is installed: not at its path (except the NEEDED_AT_IMPORT ones
    our native build provides), not as a byte copy anywhere, and not in the torch RECORD."""
    problems = [f"upstream native file installed: {name}"
                for name in sorted(set(upstream_native) & set(installed))
                if name not in vendor.NEEDED_AT_IMPORT]
    native_hashes = {h: n for n, h in upstream_native.items() if h != EMPTY_SHA}
    for name, path in sorted(installed.items()):
        twin = native_hashes.get(sha256(path.read_bytes()))
        if twin:  # also proves the NEEDED_AT_IMPORT files are ours, not upstream's
            problems.append(f"copy of upstream native {twin} installed as {name}")
    for line in torch_record:
        name = line.rsplit(",", 2)[0]
        if vendor.is_native(name):
            problems.append(f"torch RECORD lists native file {name}")
    return problems


def metadata_problems(version: str, requires: list[str]) -> list[str]:
    problems = [] if version == "2.13.0" else [f"metadata version {version!r}, want '2.13.0'"]
    cuda = [r for r in requires if vendor.CUDA_REQUIREMENT.match("Requires-Dist: " + r)]
    return problems + [f"CUDA requirement kept: {r}" for r in cuda]


# --- the installed tree ----------------------------------------------------------------------
def test_installed_tree_is_byte_identical_to_upstream(site, upstream_kept):
    installed = installed_files(site)
    assert sum(n.endswith(".py") for n in upstream_kept) > 2000  # the wheel really was read
    assert tree_problems(installed, upstream_kept) == []


def test_version_py_describes_our_build(site, upstream_version_py):
    git_version = vendor.upstream_git_version(upstream_version_py)
    assert len(git_version) == 40
    text = (site / "torch" / "version.py").read_text()
    assert version_problems(text, git_version) == []


def test_no_upstream_native_file_installed(site, upstream_native):
    assert "torch/lib/libtorch_cpu.so" in upstream_native  # the RECORD really was read
    record = (site / f"{vendor.DIST_INFO}" / "RECORD").read_text().splitlines()
    assert native_problems(installed_files(site), upstream_native, record) == []


def test_paths_needed_at_import_come_from_our_native_build(site):
    """torch/__init__.py looks these up at import; the pure wheel leaves them to the core."""
    shm = site / "torch/bin/torch_shm_manager"
    assert shm.is_file(), "torchnative-core should ship torch/bin/torch_shm_manager"
    deps = site / "torch/lib/libtorch_global_deps.so"
    assert deps.read_bytes()[:4] == b"\x7fELF", "libtorch_global_deps.so must be loadable"
    assert set(vendor.NEEDED_AT_IMPORT) == {"torch/bin/torch_shm_manager",
                                            "torch/lib/libtorch_global_deps.so"}


def test_metadata_version_is_upstream():
    probe = ("import importlib.metadata as m; d = m.distribution('torch');"
             "print(d.version); print('\\n'.join(d.requires or []))")
    out = venv_python(probe)
    assert out.returncode == 0, out.stderr
    version, *requires = out.stdout.strip().split("\n")
    assert metadata_problems(version, requires) == []


def test_core_wheel_installs_torch_C(site):
    """The extension file is in place and owned by torchnative-core (no import needed)."""
    found = sorted((site / "torch").glob("_C.*so"))
    assert len(found) == 1, found
    records = [p.read_text() for p in site.glob("torchnative_core-*.dist-info/RECORD")]
    assert len(records) == 1, "torchnative-core is not installed in .venv"
    assert f"torch/{found[0].name}," in records[0]


def test_torch_C_imports_from_our_build__NEEDS_IMPORT_TORCH(site):
    """NOT SKIPPED ON PURPOSE: fails until `import torch` works on our core (lead's work).
    `import torch._C` runs torch/__init__.py first, so this is the end-to-end check that the
    module upstream imports is our torchnative-core build inside .venv."""
    out = venv_python("import torch._C as C; print(C.__file__)")
    assert out.returncode == 0, (
        "import torch does not work in .venv yet (expected until the core can carry "
        "torch/__init__.py):\n" + out.stderr[-2000:])
    path = Path(out.stdout.strip().splitlines()[-1]).resolve()
    assert path.parent == (site / "torch").resolve() and path.name.startswith("_C."), path
    assert path.read_bytes()[:4] == b"\x7fELF"
    records = "".join(p.read_text() for p in site.glob("torchnative_core-*.dist-info/RECORD"))
    assert f"torch/{path.name}," in records


# --- each checker catches a planted fault --------------------------------------------------
@pytest.fixture()
def small_tree(tmp_path, upstream, upstream_kept):
    """Three real upstream files written to tmp_path, plus their upstream hashes."""
    names = ["torch/__init__.py", "torchgen/model.py", "functorch/__init__.py"]
    installed = {}
    for name in names:
        installed[name] = tmp_path / name
        vendor.write(installed[name], upstream.read(name))
    return installed, {n: upstream_kept[n] for n in names}


def test_tree_check_catches_one_flipped_byte(small_tree):
    installed, hashes = small_tree
    assert tree_problems(installed, hashes) == []
    path = installed["torchgen/model.py"]
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert tree_problems(installed, hashes) == ["differs from upstream: torchgen/model.py"]


def test_tree_check_catches_missing_and_added_files(small_tree, tmp_path):
    installed, hashes = small_tree
    del installed["functorch/__init__.py"]
    installed["torch/_our_patch.py"] = tmp_path / "torch" / "__init__.py"
    assert tree_problems(installed, hashes) == ["missing: functorch/__init__.py",
                                                "not in upstream: torch/_our_patch.py"]


def test_version_check_rejects_upstreams_version_py(upstream_version_py):
    git_version = vendor.upstream_git_version(upstream_version_py)
    problems = version_problems(upstream_version_py, git_version)
    assert any("__version__" in p for p in problems) and any("cuda" in p for p in problems)
    wrong_git = version_problems(vendor.version_py("0" * 40), git_version)
    assert wrong_git == [f"version.py git_version = {'0' * 40!r}, want {git_version!r}"]


def test_native_check_catches_native_files(tmp_path, upstream, upstream_native):
    so = "torch/_C.cpython-311-x86_64-linux-gnu.so"  # the smallest real native member
    shim, shm = "torch/lib/libtorch_global_deps.so", "torch/bin/torch_shm_manager"
    planted = {
        "torch/lib/libc10.so": tmp_path / "a",     # at upstream's path
        "torch/_renamed_ext.so": tmp_path / "b",   # upstream bytes under another name
        shm: tmp_path / "c",                       # needed at import, our own bytes: fine
        shim: tmp_path / "d",                      # needed at import, but upstream's bytes
    }
    planted["torch/lib/libc10.so"].write_bytes(b"anything")
    planted["torch/_renamed_ext.so"].write_bytes(upstream.read(so))
    planted[shm].write_bytes(b"#!/bin/sh\nexit 1\n")
    planted[shim].write_bytes(upstream.read(shim))
    record = ["torch/lib/libtorch_cpu.so,sha256=x,1", f"{shm},,"]
    assert native_problems(planted, upstream_native, record) == [
        "upstream native file installed: torch/lib/libc10.so",
        f"copy of upstream native {so} installed as torch/_renamed_ext.so",
        f"copy of upstream native {shim} installed as {shim}",
        "torch RECORD lists native file torch/lib/libtorch_cpu.so",
        f"torch RECORD lists native file {shm}",
    ]


def test_metadata_check_catches_wrong_version_and_cuda_requirement():
    assert metadata_problems("2.13.0", ["filelock", "sympy>=1.13.3"]) == []
    assert metadata_problems("2.13.0+cu130", ["nvidia-nccl-cu13==2.29.7", "triton==3.7.1"]) == [
        "metadata version '2.13.0+cu130', want '2.13.0'",
        "CUDA requirement kept: nvidia-nccl-cu13==2.29.7",
        "CUDA requirement kept: triton==3.7.1",
    ]
