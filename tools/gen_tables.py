"""Generate torchnative's schema and surface tables from the vendored upstream tree.

Tables are data, never typed by hand: everything here is derived from files that ship in the
torch 2.13.0 wheel, using upstream's own code generator (`torchgen`) where it exists.

* ``ops.json``      every ATen schema of ``native_functions.yaml`` (plus ``autogen`` ones), and the
                    Python argument-parser signatures upstream generates for ``torch.*``,
                    ``Tensor.*``, ``torch._C._nn``, ``_linalg``, ``_special``, ``_fft``, grouped and
                    ordered exactly as ``gen_python_functions.py`` orders them.
* ``autograd.json`` per operator overload with a `derivatives.yaml` entry (in-place and out=
                    variants matched to their functional entry by torchgen): the backward node's
                    class name (``AddBackward0``), the inputs it differentiates, and which outputs
                    are differentiable.
* ``surface.json``  the names ``torch/_C/*.pyi`` declares: functions, classes with their methods,
                    and annotated constants, per ``torch._C`` submodule.

Usage: ``python tools/gen_tables.py VENDORED_DIR OUT_DIR`` (needs PyYAML: torchgen reads YAML).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

# The Python namespaces upstream binds, and the predicate torchgen uses for each.
NAMESPACES = {
    "torch": "is_py_torch_function",
    "Tensor": "is_py_variable_method",
    "_nn": "is_py_nn_function",
    "_linalg": "is_py_linalg_function",
    "_special": "is_py_special_function",
    "_fft": "is_py_fft_function",
    "_nested": "is_py_nested_function",
    "_sparse": "is_py_sparse_function",
}


def gen_ops(vendored: Path) -> dict:
    sys.path.insert(0, str(vendored))
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd import gen_python_functions as gpf

    packaged = vendored / "torchgen" / "packaged"
    native_yaml = packaged / "ATen" / "native" / "native_functions.yaml"
    tags_yaml = packaged / "ATen" / "native" / "tags.yaml"
    deprecated_yaml = packaged / "autograd" / "deprecated.yaml"
    parsed = parse_native_yaml(str(native_yaml), str(tags_yaml))

    schemas = []
    for f in parsed.native_functions:
        schemas.append(
            {
                "schema": str(f.func),
                "tags": sorted(f.tags),
                "python_module": f.python_module,
                "variants": sorted(v.name for v in f.variants),
                "autogen": [str(a) for a in f.autogen],
                # Decomposed above the Python dispatch key upstream: modes never see these.
                "composite_implicit": bool(f.has_composite_implicit_autograd_kernel),
                # A structured kernel's out= takes only the dtype its meta function computes
                # ("kernel"); one built on a TensorIterator casts into out's ("iterator").
                "structured": (("iterator" if f.structured_inherits == "TensorIteratorBase" else "kernel")
                               if f.structured else None),
            }
        )

    bindable = [f for f in parsed.native_functions if gpf.should_generate_py_binding(f)]
    bindings: dict[str, dict[str, list]] = {}
    for namespace, pred_name in NAMESPACES.items():
        method = namespace == "Tensor"
        pairs = gpf.load_signatures(bindable, str(deprecated_yaml), method=method)
        grouped = gpf.group_filter_overloads(pairs, getattr(gpf, pred_name))
        table: dict[str, list] = {}
        for name in sorted(grouped, key=str):
            groups = gpf.sort_overloads(gpf.group_overloads(grouped[name]))
            entries = []
            for g in groups:
                sig = g.signature
                entry = {
                    "signature": sig.signature_str(),
                    "op": _overload_name(g.base.func),
                    "out_op": _overload_name(g.outplace.func) if g.outplace else None,
                }
                if getattr(sig, "deprecated_args_exprs", None):
                    # Deprecated signatures reorder arguments onto a real schema.
                    entry["deprecated_args"] = list(sig.deprecated_args_exprs)
                entries.append(entry)
            table[str(name)] = entries
        bindings[namespace] = table
    return {"schemas": schemas, "bindings": bindings}


def _overload_name(func) -> str:
    name = str(func.name)
    return name if "." in name else name


def gen_autograd(vendored: Path) -> dict:
    from torchgen.api.autograd import match_differentiability_info
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    packaged = vendored / "torchgen" / "packaged"
    native_yaml = str(packaged / "ATen" / "native" / "native_functions.yaml")
    tags_yaml = str(packaged / "ATen" / "native" / "tags.yaml")
    parsed = parse_native_yaml(native_yaml, tags_yaml)
    infos, _ = load_derivatives(str(packaged / "autograd" / "derivatives.yaml"), native_yaml, tags_yaml)
    table = {}
    for fi in match_differentiability_info(parsed.native_functions, infos):
        if not fi.info or fi.func.func.is_out_fn():
            continue
        info = fi.info.get("Default")
        if info is None:
            continue  # only a dispatch-key-specific (e.g. sparse) formula
        table[_overload_name(fi.func.func)] = {
            "node": info.op,
            "inputs": [a.name for a in info.args_with_derivatives],
            "output_differentiability": info.output_differentiability,
        }
    from torchgen.packaged.autograd.gen_variable_type import DONT_REQUIRE_DERIVATIVE

    # Operators without an entry are "not implemented" for autograd upstream, except these.
    return {"ops": table, "dont_require": sorted(DONT_REQUIRE_DERIVATIVE)}


# --- surface from the .pyi stubs --------------------------------------------------------------

def gen_surface(vendored: Path) -> dict:
    stub_root = vendored / "torch" / "_C"
    modules = {}
    for pyi in sorted(stub_root.rglob("*.pyi")):
        rel = pyi.relative_to(stub_root).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"]
        modname = ".".join(["torch._C", *parts])
        modules[modname] = _stub_names(ast.parse(pyi.read_text()))
    return modules


def _stub_names(tree: ast.Module) -> dict:
    functions: list[str] = []
    classes: dict[str, dict] = {}
    variables: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name not in functions:
                functions.append(node.name)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = _class_spec(node)
        else:
            _record_assignment(node, variables)
    return {"functions": functions, "classes": classes, "variables": variables}


def _class_spec(node: ast.ClassDef) -> dict:
    """Methods (with their kind), annotated/assigned members, and nested classes (nested enums
    such as ProcessGroup.BackendType)."""
    methods, attrs, nested = [], {}, {}
    for item in node.body:
        if isinstance(item, ast.ClassDef):
            nested[item.name] = _class_spec(item)
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            kind = "method"
            for d in item.decorator_list:
                if ast.unparse(d) in ("property", "staticmethod", "classmethod"):
                    kind = ast.unparse(d)
            if item.name not in [m[0] for m in methods]:
                methods.append((item.name, kind))
        else:
            _record_assignment(item, attrs)
    # `order` keeps declaration order (the JSON is written with sorted keys): enum members
    # without explicit values are numbered by it.
    return {"bases": [ast.unparse(b) for b in node.bases], "methods": methods, "attrs": attrs, "nested": nested,
            "order": list(attrs)}


def _record_assignment(node: ast.stmt, into: dict) -> None:
    """`name: Annotation` records the annotation; `name = value` records the value's source."""
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        into[node.target.id] = ast.unparse(node.annotation)
    elif isinstance(node, ast.Assign):
        for t in node.targets:
            if isinstance(t, ast.Name):
                into[t.id] = _literal(node.value)


def _literal(value: ast.expr) -> str:
    return ast.unparse(value)


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    vendored, out = Path(argv[1]), Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    tables = {"ops.json": gen_ops(vendored), "surface.json": gen_surface(vendored),
              "autograd.json": gen_autograd(vendored)}
    for name, data in tables.items():
        tmp = out / (name + ".tmp")
        tmp.write_text(json.dumps(data, indent=0, sort_keys=True))
        tmp.replace(out / name)
    (out / "__init__.py").write_text('"""Generated by tools/gen_tables.py; do not edit."""\n')
    print(f"gen_tables: wrote {', '.join(tables)} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
