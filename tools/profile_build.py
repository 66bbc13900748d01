"""A build of one Rust extension with line tables, for `perf`: the wheels `tools/build.py`
installs carry no symbols, so a profile names only `PyInit_*+0x...`. This builds the crate's
cdylib in release mode with `debug = "line-tables-only"` into build/profile/target (its own
target directory: the installed build and its cache stay as they are) and lays out an overlay
package, build/profile/site/<package>/, mirroring the installed one by symlinks with the new
`.so` in place. Put that directory first on PYTHONPATH and profile:

    python3 tools/profile_build.py backends/cpu
    PYTHONPATH=build/profile/site RAYON_NUM_THREADS=1 perf record -D 2500 -o p.data .venv/bin/python prog.py
    perf report -i p.data --sort srcline        # or: perf annotate -l SYMBOL

The code is the release profile's (same optimisation and LTO); only the symbols are added.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "build" / "profile"


def crate_facts(crate: Path) -> tuple[str, str, str]:
    """(cargo package name, cargo lib name, Python module name) of a maturin crate."""
    cargo = (crate / "Cargo.toml").read_text()
    package = re.search(r'^\[package\][^\[]*?^name\s*=\s*"([^"]+)"', cargo, re.M | re.S).group(1)
    lib = re.search(r'^\[lib\][^\[]*?^name\s*=\s*"([^"]+)"', cargo, re.M | re.S).group(1)
    module = re.search(r'^module-name\s*=\s*"([^"]+)"', (crate / "pyproject.toml").read_text(), re.M).group(1)
    return package, lib, module


def installed_site() -> Path:
    """The site-packages of the project's .venv."""
    out = subprocess.run([str(REPO / ".venv" / "bin" / "python"), "-c",
                          "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True)
    return Path(out.stdout.strip())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("crate", help="a maturin crate's directory, e.g. backends/cpu or core")
    a = ap.parse_args(argv)
    crate = (REPO / a.crate).resolve()
    package, lib, module = crate_facts(crate)
    env = dict(os.environ, CARGO_TARGET_DIR=str(OUT / "target"),
               CARGO_PROFILE_RELEASE_DEBUG="line-tables-only", CARGO_PROFILE_RELEASE_STRIP="none")
    subprocess.run(["cargo", "build", "--release", "--lib", "-p", package], cwd=crate, env=env, check=True)
    built = OUT / "target" / "release" / f"lib{lib}.so"

    top, _, leaf = module.rpartition(".")
    pkg_root, *inner = top.split(".")
    src = installed_site() / pkg_root
    dst = OUT / "site" / pkg_root
    shutil.rmtree(dst, ignore_errors=True)
    for d, _dirs, files in os.walk(src):
        rel = Path(d).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for f in files:
            os.symlink(Path(d) / f, dst / rel / f)
    where = Path(*inner)  # the module's directory inside the package
    suffix = ".abi3.so" if (src / where / f"{leaf}.abi3.so").exists() else sysconfig.get_config_var("EXT_SUFFIX")
    target = dst / where / f"{leaf}{suffix}"
    target.unlink(missing_ok=True)
    shutil.copy2(built, target)
    print(f"{module}: {target.relative_to(REPO)} (line tables); use PYTHONPATH={(OUT / 'site').relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
