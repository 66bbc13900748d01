"""torchnative/plugins.toml is the single table of first-party plugins: the extras and the
dependencies of the root pyproject.toml install exactly what it says."""

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _dist(requirement):
    return re.match(r"[A-Za-z0-9_.-]+", requirement).group(0)


def test_extras_and_dependencies_follow_plugins_toml():
    plugins = tomllib.loads((REPO / "torchnative/plugins.toml").read_text())["plugin"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    extras = {name: {_dist(r) for r in reqs} for name, reqs in project["optional-dependencies"].items()}
    expected = {}
    for p in plugins:
        expected.setdefault(p["extra"], set()).add(p["distribution"])
    assert extras == expected
    essential = {p["distribution"] for p in plugins if p["essential"]}
    assert essential == {"torchnative-cpu"}
    assert essential | {"torchnative-core"} <= {_dist(r) for r in project["dependencies"]}
    assert "plugins.toml" in tomllib.loads(
        (REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["torchnative"]


def test_core_does_not_depend_back_on_the_library():
    core = tomllib.loads((REPO / "core/pyproject.toml").read_text())["project"]
    assert "torchnative" not in {_dist(r) for r in core["dependencies"]}
