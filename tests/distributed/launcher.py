"""Runs one process per rank of a collective_programs.py program under a given python (ours or
upstream's), on a free loopback port, through dist_harness's start/finish (bounded, every
process killed at the deadline), and collects every rank's JSON result file."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from dist_harness import OURS, REPO, finish, free_port, start  # noqa: E402

PROGRAMS = HERE / "collective_programs.py"


def ours_python() -> str:
    return OURS


def ref_python() -> str | None:
    """The reference interpreter, or None (tests skip) when build/ref-python is absent."""
    path = REPO / "build" / "ref-python"
    exe = path.read_text().strip() if path.is_file() else ""
    return exe if exe and os.path.exists(exe) else None


def run_world(python, program, world, timeout=120.0, pg_timeout=60.0, env=None):
    """-> (results: list of dict or None per rank, returncodes (None: killed), stderr texts)."""
    with tempfile.TemporaryDirectory(prefix="tn-dist-") as tmp:
        port = free_port()
        outs = [Path(tmp) / f"out{rank}.json" for rank in range(world)]
        procs = [start(python, [PROGRAMS, program, rank, world, port, outs[rank], pg_timeout], env=env, cwd=tmp)
                 for rank in range(world)]
        done = finish(procs, timeout)
        results = [json.loads(p.read_text()) if p.is_file() else None for p in outs]
        return results, [rc for rc, _, _ in done], [err for _, _, err in done]


if __name__ == "__main__":  # manual use: python launcher.py ours|ref PROGRAM WORLD
    which, program, world = sys.argv[1], sys.argv[2], int(sys.argv[3])
    res, codes, texts = run_world(ours_python() if which == "ours" else ref_python(), program, world)
    print(json.dumps({"codes": codes, "results": res}, indent=1)[:20000])
    for t in texts:
        print(t[-3000:])
