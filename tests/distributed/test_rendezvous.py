"""init_process_group through upstream's own torch/distributed/rendezvous.py on our stores:
env://, tcp:// and file:// at world 2, and bad input (world size 0, a wrong rank, a used port,
an unreachable master, missing parameters) raising upstream's exception types."""

import pytest

from dist_harness import HERE, OURS, differences, finish, free_port, last_json, ref_python, run_pair, start

PROGRAMS = HERE / "rendezvous_programs.py"
WORLD = 2


def _join(python, method, env_for=None):
    procs = [start(python, [PROGRAMS, "join", method, r, WORLD], env=env_for(r) if env_for else None)
             for r in range(WORLD)]
    return procs


def _results(procs, what):
    res = finish(procs, timeout=60)
    for r, (rc, _, err) in enumerate(res):
        assert rc == 0, f"{what} rank {r} exited {rc}:\n{err[-3000:]}"
    return [last_json(out) for _, out, _ in res]


def test_init_methods_agree_with_upstream(tmp_path):
    env_port = free_port()

    def env_for(r):
        return {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(env_port), "RANK": str(r), "WORLD_SIZE": str(WORLD)}

    # upstream once (tcp://); ours by each init method; every rank's result must equal upstream's
    runs = {
        "ref tcp://": _join(ref_python(), f"tcp://127.0.0.1:{free_port()}"),
        "ours tcp://": _join(OURS, f"tcp://127.0.0.1:{free_port()}"),
        "ours env://": _join(OURS, "env://", env_for),
        "ours file://": _join(OURS, f"file://{tmp_path}/rendezvous"),
    }
    results = {what: _results(procs, what) for what, procs in runs.items()}
    ref = results.pop("ref tcp://")
    assert [r["all_reduce"] for r in ref] == [[0.0, 3.0, 6.0, 9.0]] * WORLD
    for what, ours in results.items():
        for r in range(WORLD):
            assert differences(ref[r], ours[r]) == [], what


def test_bad_input_agrees_with_upstream(tmp_path):
    # the program makes its own subdirectory per interpreter
    ref, ours = run_pair([PROGRAMS, "bad", tmp_path], timeout=90)
    assert ref["used_port"].startswith("raise DistNetworkError")
    assert ref["workers_missing"].startswith("raise DistStoreError")
    assert differences(ref, ours) == []


@pytest.mark.parametrize("field", ["all_reduce", "peer"])
def test_join_comparison_can_fail(field):
    ref = {"all_reduce": [0.0, 3.0], "peer": "from 1"}
    ours = dict(ref, **{field: "changed"})
    assert differences(ref, ours) != []
