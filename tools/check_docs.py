"""Checks the project's Markdown: every relative link points at a file that exists, and every
`tools/...`, `tests/...` or `benchmarks/...` path quoted in backticks exists too (so a command a
document tells you to run is not stale). Exit 1 with the list of broken references."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[[^\]]*\]\(([^)#\s]+)(?:#[^)]*)?\)")
PATH = re.compile(r"`[^`]*?(?<![\w/.-])((?:tools|tests|benchmarks|docs|templates)/[\w./-]+\.(?:py|md|toml|txt))\b")


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
    return bad


def main() -> int:
    files = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "templates").rglob("*.md"))]
    bad = [b for f in files if f.exists() for b in check(f)]
    for b in bad:
        print(b)
    print(f"check_docs: {len(files)} files, {len(bad)} broken references")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
