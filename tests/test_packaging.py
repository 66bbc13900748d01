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


def _plugin_class_metadata(package_init: Path) -> dict:
    """name, device_keys and priority as the plugin class of a backend's package states them (read
    from the source: the class of the module-level `plugin = Class()`)."""
    import ast

    tree = ast.parse(package_init.read_text())
    (instance,) = [n.value.func.id for n in tree.body if isinstance(n, ast.Assign)
                   and [getattr(t, "id", None) for t in n.targets] == ["plugin"] and isinstance(n.value, ast.Call)]
    (cls,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == instance]
    return {t.id: ast.literal_eval(n.value) for n in cls.body if isinstance(n, ast.Assign)
            for t in n.targets if isinstance(t, ast.Name) and t.id in ("name", "device_keys", "priority")}


def test_plugin_metadata_has_one_source():
    """plugins.toml is the one table of first-party plugin metadata: each backend's plugin class
    states the same name, device keys and priority (it cannot read the library's table at run time),
    and a native backend's crate registers for the same device key."""
    import re

    plugins = tomllib.loads((REPO / "torchnative/plugins.toml").read_text())["plugin"]
    checked = 0
    for p in plugins:
        backend = REPO / p["path"]
        if not backend.is_dir():  # metal: built on macOS only, not in this tree yet
            continue
        project = tomllib.loads((backend / "pyproject.toml").read_text())["project"]
        assert project["name"] == p["distribution"]
        (target,) = project["entry-points"]["torchnative.backends"].values()
        assert list(project["entry-points"]["torchnative.backends"]) == [p["name"]]
        package = target.split(":")[0]
        (init,) = [f for f in backend.rglob(f"{package}/__init__.py") if "target" not in f.parts]
        assert _plugin_class_metadata(init) == {"name": p["name"], "device_keys": tuple(p["device_keys"]),
                                                "priority": p["priority"]}, init
        lib = backend / "src/lib.rs"
        if lib.is_file():
            assert re.findall(r'pub const DEVICE_KEY: &str = "(\w+)";', lib.read_text()) == p["device_keys"]
        checked += 1
    assert checked >= 3


def test_the_metadata_check_fails_on_a_disagreeing_class(tmp_path):
    init = tmp_path / "__init__.py"
    init.write_text("class P:\n    name = 'cpu'\n    device_keys = ('cpu',)\n    priority = 7\n\nplugin = P()\n")
    assert _plugin_class_metadata(init) == {"name": "cpu", "device_keys": ("cpu",), "priority": 7} != {
        "name": "cpu", "device_keys": ("cpu",), "priority": 100}
