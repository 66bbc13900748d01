"""Dependencies run one way (docs/plugins.md, "The backend SDK"): library (torchnative/) -> core
(core/python/torchnative_core, core/src) -> ABI (core/abi); backends -> SDK (sdk/) -> ABI. The core
imports no library module and no backend; a backend imports no private (`_name`) of the core, and
its crate depends on the SDK, not on the core's crates. Static checks (an AST scan of the Python,
the Cargo manifests), each shown able to fail on a doctored source."""

import ast
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORE_PY = REPO / "core/python/torchnative_core"
LIBRARY = "torchnative"
# Top-level packages of the backends, which the core must not import either.
BACKEND_PACKAGES = ("torchnative_cpu", "torchnative_vulkan", "torchnative_npu", "torchnative_metal",
                    "mydev_backend", "rustdev_backend")


def _backend_sources():
    for root in (REPO / "backends", REPO / "templates"):
        yield from (p for p in sorted(root.rglob("*.py")) if "target" not in p.parts and "build" not in p.parts)


def _imported_modules(tree):
    """(line, module) of every import, `importlib.import_module("x")` with a literal included."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.lineno, node.args[0].value


def core_violations(source: str) -> list[str]:
    """Imports of the library or of a backend in one core module."""
    out = []
    for line, mod in _imported_modules(ast.parse(source)):
        top = mod.split(".")[0]
        if top == LIBRARY or top in BACKEND_PACKAGES:
            out.append(f"line {line}: imports {mod}")
    return out


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def backend_violations(source: str) -> list[str]:
    """Private names of the core (`torchnative_core` and its modules) that one backend module
    imports or reads: `from torchnative_core.m import _x`, `from torchnative_core import _m`,
    `m._x` on a name bound to a core module, `torchnative_core.m._x`."""
    tree = ast.parse(source)
    out, core_names = [], set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "torchnative_core":
            for part in node.module.split("."):
                if _private(part):
                    out.append(f"line {node.lineno}: imports {node.module}")
            for a in node.names:
                if _private(a.name):
                    out.append(f"line {node.lineno}: imports {node.module}.{a.name}")
                else:  # a module or object of the core: its private attributes are off limits too
                    core_names.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "torchnative_core":
                    if any(_private(p) for p in a.name.split(".")):
                        out.append(f"line {node.lineno}: imports {a.name}")
                    core_names.add(a.asname or a.name.split(".")[0])
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in core_names:
                out.append(f"line {node.lineno}: reads {ast.unparse(node)}")
    return out


def test_the_core_imports_no_library_module_and_no_backend():
    found = {str(p.relative_to(REPO)): v for p in sorted(CORE_PY.rglob("*.py"))
             if (v := core_violations(p.read_text()))}
    assert found == {}


def test_no_backend_imports_a_private_name_of_the_core():
    sources = list(_backend_sources())
    assert any("torchnative_npu" in str(p) for p in sources)
    found = {str(p.relative_to(REPO)): v for p in sources if (v := backend_violations(p.read_text()))}
    assert found == {}


@pytest.mark.parametrize("source,hit", [
    ("from torchnative import hookspecs", "imports torchnative"),
    ("from torchnative.backends import first_party_plugins", "imports torchnative.backends"),
    ("import torchnative.hookspecs as h", "imports torchnative.hookspecs"),
    ("def f():\n    import torchnative_cpu", "imports torchnative_cpu"),
    ("import importlib\nimportlib.import_module('torchnative.cli')", "imports torchnative.cli"),
])
def test_the_core_scan_fails_on_a_library_import(source, hit):
    assert any(hit in v for v in core_violations(source))
    assert core_violations("from . import plugins\nimport torchnative_core.hookspecs\nimport torch") == []


@pytest.mark.parametrize("source", [
    "from torchnative_core import cpu_fallback\ncpu_fallback._count('npu', 'add')",
    "def f(C):\n    from torchnative_core import cpu_fallback\n    return cpu_fallback._HostCopies(C, 'npu')",
    "from torchnative_core.cpu_fallback import _span",
    "import torchnative_core.cpu_fallback\ntorchnative_core.cpu_fallback._span(1)",
    "import torchnative_core.cpu_fallback as cf\ncf._span(1)",
    "from torchnative_core._private import x",
])
def test_the_backend_scan_fails_on_a_private_core_name(source):
    assert backend_violations(source)
    assert backend_violations("from torchnative_core.native_plugin import NativePlugin\n"
                              "class P(NativePlugin):\n    def f(self):\n        return self._native()") == []


def _deps(manifest: Path) -> set[str]:
    return set(tomllib.loads(manifest.read_text()).get("dependencies", {}))


def test_crates_depend_one_way():
    core_crates = {"torchnative-core", "torchnative-rng"}
    assert _deps(REPO / "sdk/Cargo.toml") & {"torchnative-abi", "torchnative-core"} == {"torchnative-abi"}
    for manifest in [*sorted((REPO / "backends").glob("*/Cargo.toml")), REPO / "templates/rust-backend/Cargo.toml"]:
        deps = _deps(manifest)
        assert "torchnative-backend" in deps, manifest  # built on the SDK ...
        assert not deps & (core_crates | {"torchnative-abi"}), manifest  # ... which brings the ABI
    assert not _deps(REPO / "core/Cargo.toml") & {"torchnative-backend", "torchnative-cpu", "torchnative-vulkan"}
