"""Throwaway plugin distributions for the plugin tests.

`write_dist` makes an installed distribution by hand in a directory (the module files plus a
`.dist-info` with METADATA and entry_points.txt), which `importlib.metadata` finds once the
directory is on `sys.path`; `install_template` pip-installs templates/python-backend there.
`run_torch` runs a program in a fresh interpreter with those directories on `PYTHONPATH`, since
backends are discovered once, at `import torch`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_PY = REPO / ".venv/bin/python"


def write_dist(site: Path, dist: str, entry_points: dict[str, str], modules: dict[str, str], version="0.1.0") -> Path:
    """A distribution `dist` in `site`: `modules` maps file names to source, `entry_points` maps
    plugin names to "module:attr" in the torchnative.backends group."""
    site.mkdir(parents=True, exist_ok=True)
    for fname, src in modules.items():
        (site / fname).write_text(textwrap.dedent(src))
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    eps = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[torchnative.backends]\n{eps}")
    return site


def install_template(site: Path, template: str = "python-backend") -> Path:
    """`pip install` (not editable) of templates/<template> into `site`, built from a copy so the
    build leaves nothing in the checkout."""
    src = site.parent / f"{template}-src"
    shutil.copytree(REPO / "templates" / template, src, dirs_exist_ok=True)
    r = subprocess.run([str(VENV_PY), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                        "--no-build-isolation", "--target", str(site), str(src)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return site


def run_python(argv: list[str], *sites: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs the venv's interpreter with `argv` in a fresh process, `sites` first on the path, and
    no plugin environment variables unless `env` sets them."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("TORCHNATIVE_")}
    e["PYTHONPATH"] = os.pathsep.join([*map(str, sites), *filter(None, [os.environ.get("PYTHONPATH")])])
    e.update(env or {})
    return subprocess.run([str(VENV_PY if VENV_PY.exists() else sys.executable), *argv],
                          capture_output=True, text=True, timeout=300, env=e)


def run_torch(code: str, *sites: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    """Runs `code` (backends are discovered once, at `import torch`, hence a fresh process)."""
    return run_python(["-c", textwrap.dedent(code)], *sites, env=env)
