"""docs/ops-index.md (tools/ops_index.py) is what the live code gives: every overload the core
implements, its file and its kind; the check fails when it is stale."""
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = str(REPO / ".venv" / "bin" / "python")
TOOL = str(REPO / "tools" / "ops_index.py")


def test_the_index_is_up_to_date():
    r = subprocess.run([PY, TOOL, "--check"], capture_output=True, text=True, timeout=300, cwd="/")
    assert r.returncode == 0, r.stdout + r.stderr


def test_rows_and_kinds():
    rows = {}
    for line in (REPO / "docs" / "ops-index.md").read_text().splitlines():
        if line.startswith("| `"):
            op, file, kind = (c.strip() for c in line.strip("|").split("|"))
            rows[op.strip("`")] = (file, kind)
    assert rows["exp"][1] == "kernel" and rows["mm"][1] == "kernel"  # primitives
    assert rows["exp_"][1] == "launch" and rows["add.Scalar"][1] == "launch"  # launch exp / add.Tensor
    assert rows["linear"][1] == "composite" and rows["view"][1] == "composite"
    assert all((REPO / f).is_file() for f, _ in rows.values() if not f.startswith("(")), "files exist"


def test_the_check_fails_when_stale(tmp_path):
    text = (REPO / "docs" / "ops-index.md").read_text()
    stale = tmp_path / "ops-index.md"
    stale.write_text(text.replace("| `exp` | ", "| `exp` | moved/", 1))
    code = (f"import sys; sys.path.insert(0, {str(REPO / 'tools')!r}); import ops_index; from pathlib import Path; "
            f"ops_index.OUT = Path({str(stale)!r}); sys.exit(ops_index.main(['--check']))")
    r = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=300, cwd="/")
    assert r.returncode == 1 and "stale" in r.stdout, r.stdout + r.stderr
