#!/usr/bin/env python3
"""Assemble the vendored upstream torch tree and its pure wheel.

Input:  the upstream wheel torch-2.13.0-cp311-cp311-manylinux_2_28_x86_64.whl
        (cached under ${TORCHNATIVE_CACHE:-~/.cache/torchnative}/wheels, downloaded if absent).
Output: build/vendored/{torch,torchgen,functorch,torch-2.13.0.dist-info}/
        build/wheels/torch-2.13.0-py3-none-any.whl

Every file is copied byte-for-byte except:
  * native files, left out (see is_native / EXCLUSION_RULE);
  * torch/version.py, rewritten to describe our build (see version_py);
  * dist-info METADATA (CUDA Requires-Dist dropped), WHEEL and RECORD (regenerated),
    plus TORCHNATIVE_VENDOR.json recording provenance;
Two native paths that upstream needs at import are *not* in this tree; see NEEDED_AT_IMPORT.

Stdlib only; importable (tests use wheel_path, is_native, upstream_git_version, ...) and a CLI:
    python3 tools/vendor.py        (always rebuilds; tools/build.py decides when to call it)
"""
from __future__ import annotations

import ast
import base64
import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

TORCH_VERSION = "2.13.0"
LOCAL_TAG = "torchnative"
UPSTREAM_WHEEL = f"torch-{TORCH_VERSION}-cp311-cp311-manylinux_2_28_x86_64.whl"
PURE_WHEEL = f"torch-{TORCH_VERSION}-py3-none-any.whl"
DIST_INFO = f"torch-{TORCH_VERSION}.dist-info"
TOP_LEVEL = ("torch/", "torchgen/", "functorch/", DIST_INFO + "/")

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build"
VENDORED = BUILD / "vendored"
WHEELS = BUILD / "wheels"

# --- the exclusion rule -------------------------------------------------------------------
# Directories that hold only native artefacts: shared libraries (lib/), executables (bin/),
# C++ headers for building extensions (include/, lib/libshm*/*.h) and CMake configs (share/).
NATIVE_DIRS = ("torch/lib/", "torch/bin/", "torch/include/", "torch/share/")
# Compiled code anywhere else in the tree (torch/_C.cpython-311-x86_64-linux-gnu.so).
NATIVE_SUFFIX = re.compile(r"\.(so(\.[0-9.]+)?|pyd|dll|dylib|a|lib|exe)$")
# Safety net: a kept file that starts with one of these is a binary we failed to classify.
BINARY_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"!<arch>")
EXCLUSION_RULE = (
    "keep members under torch/, torchgen/, functorch/ and the dist-info; leave out every path "
    "under " + ", ".join(NATIVE_DIRS) + " and every file matching " + NATIVE_SUFFIX.pattern +
    " (shared libraries, executables, static libs, C++ headers and CMake files for extension "
    "builds); keep everything else byte-for-byte (.py, .pyi, py.typed, yaml/json/thrift data and "
    "the .cpp/.h/.jinja/.ld text templates that torchgen, inductor and torch.utils.benchmark read "
    "as data); fail if a kept file starts with a binary magic number"
)

# Paths under the native dirs that upstream torch/__init__.py needs at import time. The pure
# wheel does not carry them (they are native-side); our native build provides them, and the
# tests check that they are present and are not upstream's bytes.
NEEDED_AT_IMPORT = {
    "torch/bin/torch_shm_manager":
        "_manager_path() raises unless it exists (os.path.exists only); "
        "torchnative-core ships a stub script (core/python/torch/bin/)",
    "torch/lib/libtorch_global_deps.so":
        "_load_global_deps() ctypes.CDLL()s it and re-raises the OSError, so it must be a real "
        "shared object (an empty file fails: 'file too short'); torchnative-core ships an empty "
        "one (core/native/torch_global_deps.c, compiled by tools/build.py into the core wheel)",
}

# Requires-Dist lines naming the CUDA stack: our build has none.
CUDA_REQUIREMENT = re.compile(r"^Requires-Dist:\s*(nvidia-|cuda-|triton\b)", re.IGNORECASE)

ZIP_DATE = (1980, 1, 1, 0, 0, 0)  # fixed timestamps: same inputs give a byte-identical wheel


def cache_dir() -> Path:
    return Path(os.environ.get("TORCHNATIVE_CACHE") or Path.home() / ".cache" / "torchnative")


def log(msg: str) -> None:
    print(f"[vendor] {msg}", flush=True)


# --- locating the upstream wheel ---------------------------------------------------------
def wheel_path(download: bool = True) -> Path:
    """Path of the cached upstream wheel; downloads it with pip when absent."""
    path = cache_dir() / "wheels" / UPSTREAM_WHEEL
    if path.is_file() or not download:
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    log(f"downloading {UPSTREAM_WHEEL} into {path.parent} (about 530 MB)")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", f"torch=={TORCH_VERSION}",
           "--only-binary=:all:", "--python-version", "3.11",
           "--platform", "manylinux_2_28_x86_64", "-d", str(path.parent)]
    if subprocess.run(cmd).returncode != 0 or not path.is_file():
        raise SystemExit(f"vendor: could not download {UPSTREAM_WHEEL} (command: {' '.join(cmd)})")
    return path


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


# --- classification ----------------------------------------------------------------------
def is_native(name: str) -> bool:
    """True for a wheel member that the exclusion rule leaves out as native."""
    return name.startswith(NATIVE_DIRS) or bool(NATIVE_SUFFIX.search(name))


def is_vendored(name: str) -> bool:
    """True for a wheel member copied (or rewritten) into the vendored tree."""
    if name.endswith("/") or not name.startswith(TOP_LEVEL):
        return False
    return not is_native(name)


REGENERATED = {f"{DIST_INFO}/RECORD", f"{DIST_INFO}/WHEEL"}


# --- the rewritten files -----------------------------------------------------------------
def upstream_git_version(upstream_version_py: str) -> str:
    """`git_version` assigned in upstream's torch/version.py (parsed, not executed)."""
    for node in ast.parse(upstream_version_py).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "git_version" for t in targets):
            return ast.literal_eval(node.value)
    raise ValueError("upstream torch/version.py has no git_version")


def version_py(git_version: str) -> str:
    """Our torch/version.py: same names as upstream's, describing a CPU-only torchnative build."""
    return (
        "from typing import Optional\n\n"
        "__all__ = ['__version__', 'debug', 'cuda', 'git_version', 'hip', 'rocm', 'xpu']\n"
        f"__version__ = '{TORCH_VERSION}+{LOCAL_TAG}'\n"
        "debug = False\n"
        "cuda: Optional[str] = None\n"
        f"git_version = '{git_version}'\n"
        "hip: Optional[str] = None\n"
        "rocm: Optional[str] = None\n"
        "xpu: Optional[str] = None\n"
    )


def filter_metadata(text: str) -> str:
    """Upstream METADATA minus the CUDA Requires-Dist lines (headers only, body untouched)."""
    head, sep, body = text.partition("\n\n")
    kept = [line for line in head.split("\n") if not CUDA_REQUIREMENT.match(line)]
    return "\n".join(kept) + sep + body


def wheel_file() -> str:
    return ("Wheel-Version: 1.0\nGenerator: torchnative tools/vendor.py\n"
            "Root-Is-Purelib: true\nTag: py3-none-any\n")


def vendor_json(src: Path, src_sha: str, git_version: str, excluded: list[str]) -> str:
    record = {
        "source_wheel": src.name,
        "source_sha256": src_sha,
        "upstream_git_version": git_version,
        "exclusion_rule": EXCLUSION_RULE,
        "native_dirs": list(NATIVE_DIRS),
        "native_suffix_regex": NATIVE_SUFFIX.pattern,
        "excluded_files": len(excluded),
        "rewritten": ["torch/version.py", f"{DIST_INFO}/METADATA", f"{DIST_INFO}/WHEEL",
                      f"{DIST_INFO}/RECORD"],
        "needed_at_import_provided_by_native_build": NEEDED_AT_IMPORT,
    }
    return json.dumps(record, indent=2, sort_keys=True) + "\n"


# --- assembling the tree -----------------------------------------------------------------
def extract_tree(src: Path, dest: Path) -> tuple[str, list[str]]:
    """Copy the vendored members of `src` into `dest`; returns (git_version, excluded names)."""
    excluded: list[str] = []
    git_version = ""
    with zipfile.ZipFile(src) as zf:
        for info in zf.infolist():
            name = info.filename
            if name.endswith("/"):
                continue
            if not is_vendored(name):
                excluded.append(name)
                continue
            if name in REGENERATED:
                continue
            data = zf.read(info)
            if data.startswith(BINARY_MAGIC):
                raise SystemExit(f"vendor: {name} looks binary but the exclusion rule keeps it")
            if name == "torch/version.py":
                git_version = upstream_git_version(data.decode())
                data = version_py(git_version).encode()
            elif name == f"{DIST_INFO}/METADATA":
                data = filter_metadata(data.decode("utf-8")).encode("utf-8")
            write(dest / name, data)
    if not git_version:
        raise SystemExit("vendor: upstream wheel has no torch/version.py")
    return git_version, excluded


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def tree_files(root: Path) -> list[str]:
    """Relative posix paths of all files under root, sorted, dist-info last (wheel convention)."""
    names = [p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()]
    return sorted(names, key=lambda n: (n.startswith(DIST_INFO + "/"), n))


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "sha256=" + digest.decode()


def write_record(root: Path) -> None:
    """RECORD lists every file with its hash and size; RECORD itself has empty fields."""
    record = f"{DIST_INFO}/RECORD"
    rows = [(n, record_hash((root / n).read_bytes()), str((root / n).stat().st_size))
            for n in tree_files(root) if n != record]
    rows.append((record, "", ""))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    write(root / record, buf.getvalue().encode())


def assemble(src: Path, dest: Path) -> None:
    """Build the full vendored tree in `dest` (which must not exist)."""
    src_sha = sha256_file(src)
    git_version, excluded = extract_tree(src, dest)
    write(dest / DIST_INFO / "WHEEL", wheel_file().encode())
    write(dest / DIST_INFO / "TORCHNATIVE_VENDOR.json",
          vendor_json(src, src_sha, git_version, excluded).encode())
    write_record(dest)
    log(f"tree: {len(tree_files(dest))} files kept, {len(excluded)} native files left out, "
        f"git_version {git_version[:12]}")


def write_wheel(tree: Path, out: Path) -> None:
    """Zip the tree into a wheel: deterministic order, timestamps and permissions."""
    tmp = out.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in tree_files(tree):
            info = zipfile.ZipInfo(name, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, (tree / name).read_bytes())
    tmp.replace(out)


def vendor(src: Path | None = None, tree: Path = VENDORED, wheels: Path = WHEELS) -> Path:
    """Rebuild tree and wheel from scratch (a partial tree is never left behind)."""
    src = src or wheel_path()
    staging = tree.with_name(tree.name + ".tmp")
    shutil.rmtree(staging, ignore_errors=True)
    log(f"extracting {src.name}")
    assemble(src, staging)
    shutil.rmtree(tree, ignore_errors=True)
    staging.rename(tree)
    wheels.mkdir(parents=True, exist_ok=True)
    out = wheels / PURE_WHEEL
    write_wheel(tree, out)
    log(f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return out


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    vendor()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
