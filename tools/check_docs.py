"""Checks the project's Markdown (README.md, docs/, templates/). Exit 1 with what is wrong.

1. References: every relative link points at a file that exists, and every `tools/...`,
   `tests/...`, `benchmarks/...`, `docs/...` or `templates/...` path quoted in backticks exists
   (so a command a document tells you to run is not stale).

2. Figures: a figure that has a machine-readable record in the repository is written in bold and
   followed at once by an HTML comment naming the record and how to read it:

       **664 of 692**<!-- record: tests/data/opinfo_agree.txt lines --> entries agree

   The figure is the first number in the bold span (thousands separators allowed); it must equal
   the record's value rounded to the figure's decimals. Ways to read a record:

       lines           the entries a list holds: its lines that are neither blank nor # comments
       value           the number a file holds (tests/data/fuzz_corpus_floor.txt)
       kernels         kernel-table entries (`k_name = "aten::op" => ...`) in a backend's Rust sources
       golden-cases    the cases registered under tests/golden (the registry imports without torch)
       grep REGEX      lines matching REGEX in a file, or in every file under a folder
       json KEY.KEY    a value in a JSON file; KEY[field=value] picks the element of a list

   A record that changes (a list regenerated, a floor raised, a kernel added) then fails this
   check until the document says the new figure. Figures without a record in the repository
   (timings on a given machine, counts only a test run prints) are not marked.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH = re.compile(r"`[^`]*?(?<![\w/.-])((?:tools|tests|benchmarks|docs|templates)/[\w./-]+\.(?:py|md|toml|txt))\b")

MARKER = re.compile(r"<!--\s*record:")
MARKED = re.compile(r"\*\*([^*]+)\*\*\s*<!--\s*record:\s*(\S+)\s+(.*?)\s*-->")
NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
# one line per kernel in the cpu and vulkan tables: `k_add = "aten::add.Tensor" => |c| add(c);`
KERNEL_ENTRY = re.compile(r'^\s*\w+\s*=\s*"aten::[^"]+"\s*=>')


def check(md: Path) -> list[str]:
    bad = []
    text = md.read_text()
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (md.parent / target).exists() and not (REPO / target).exists():
            bad.append(f"{md.relative_to(REPO)}: link to {target}")
    for path in PATH.findall(text):
        if not (REPO / path).exists():
            bad.append(f"{md.relative_to(REPO)}: mentions {path}")
    return bad + check_figures(text, str(md.relative_to(REPO)))


def _matching_lines(path: Path, pattern: re.Pattern) -> int:
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return sum(1 for f in files for line in f.read_text(errors="replace").splitlines() if pattern.search(line))


def _golden_cases(folder: Path) -> int:
    # imported under the name pytest gives it (`golden.registry`, tests/ being on its path), so a
    # test process that already loaded the registry reuses it instead of registering every case twice
    sys.path.insert(0, str(folder.parent))
    try:
        registry = importlib.import_module(f"{folder.name}.registry")
    finally:
        sys.path.remove(str(folder.parent))
    return len(registry.load_all())


def _json_value(path: Path, keys: str):
    value = json.loads(path.read_text())
    for key in keys.split("."):
        pick = re.fullmatch(r"(\w+)\[(\w+)=([^\]]+)\]", key)
        if pick:
            name, field, want = pick.groups()
            value = next(item for item in value[name] if str(item.get(field)) == want)
        else:
            value = value[key]
    return value


def record_value(path: str, how: str):
    """The figure a record holds: `path` relative to the repository, `how` one of the ways above."""
    where = REPO / path
    kind, _, arg = how.partition(" ")
    if kind == "lines":
        return sum(1 for line in where.read_text().splitlines() if line.strip() and not line.lstrip().startswith("#"))
    if kind == "value":
        number = float(where.read_text().split()[0])
        return int(number) if number.is_integer() else number
    if kind == "kernels":
        return _matching_lines(where, KERNEL_ENTRY)
    if kind == "golden-cases":
        return _golden_cases(where)
    if kind == "grep":
        return _matching_lines(where, re.compile(arg))
    if kind == "json":
        return _json_value(where, arg)
    raise ValueError(f"unknown way to read a record: {how!r}")


def check_figures(text: str, name: str = "docs/STATUS.md") -> list[str]:
    """Every marked figure in `text` against its record; a marker without a bold figure right
    before it is reported too, so a mistyped marker is not silently skipped."""
    bad = []
    marked = list(MARKED.finditer(text))
    starts = {m.start() + m.group(0).index("<!--") for m in marked}
    for m in MARKER.finditer(text):
        if m.start() not in starts:
            line = text.count("\n", 0, m.start()) + 1
            bad.append(f"{name}:{line}: record marker without a bold figure right before it")
    for m in marked:
        figure, path, how = m.groups()
        line = text.count("\n", 0, m.start()) + 1
        number = NUMBER.search(figure)
        if number is None:
            bad.append(f"{name}:{line}: **{figure}** has no number to check against {path}")
            continue
        try:
            value = record_value(path, how)
        except (OSError, ValueError, KeyError, IndexError, StopIteration, TypeError, ImportError) as e:
            bad.append(f"{name}:{line}: cannot read record {path} ({how}): {type(e).__name__}: {e}")
            continue
        doc = number.group().replace(",", "")
        decimals = len(doc.partition(".")[2])
        if round(float(value), decimals) != float(doc):
            bad.append(f"{name}:{line}: **{figure}** but {path} ({how}) says {value}")
    return bad


def main() -> int:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "templates").rglob("*.md"))]
    bad = [b for f in files if f.exists() for b in check(f)]
    for b in bad:
        print(b)
    print(f"check_docs: {len(files)} files, {len(bad)} broken references or wrong figures")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
