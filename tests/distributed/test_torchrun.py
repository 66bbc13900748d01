"""`torchrun --nproc-per-node 2 script.py`: upstream's elastic agent (static and c10d
rendezvous) on our TCPStore launches workers that join and all_reduce; each worker's result
equals upstream's. Two agents (`--nnodes 2`, one worker each) meet through the first agent's
TCPStore and pass their exit barrier."""

import json
from pathlib import Path

from dist_harness import HERE, OURS, differences, finish, free_port, ref_python, start

WORKER = HERE / "torchrun_worker.py"


def _torchrun(python, *args):
    torchrun = str(Path(python).parent / "torchrun")
    return start(python, [torchrun, "--nproc-per-node", "2", "--monitor-interval", "0.1", *args, WORKER])


def _node(python, node_rank, port):
    torchrun = str(Path(python).parent / "torchrun")
    return start(python, [torchrun, "--nnodes", "2", "--node-rank", node_rank, "--nproc-per-node", "1",
                          "--master-addr", "127.0.0.1", "--master-port", port, "--monitor-interval", "0.1", WORKER])


def _workers(res, what):
    rc, out, err = res
    assert rc == 0, f"{what} exited {rc}:\n{err[-4000:]}"
    # The workers share the agent's stdout, and print writes the text and its newline apart, so
    # two results can land on one line ("RESULT {...}RESULT {...}"): scan for each, not by line.
    found, dec, i = [], json.JSONDecoder(), out.find("RESULT ")
    while i >= 0:
        obj, end = dec.raw_decode(out, i + len("RESULT "))
        found.append(obj)
        i = out.find("RESULT ", end)
    return sorted(found, key=lambda r: r["rank"])


def test_torchrun_workers_agree_with_upstream():
    runs = {
        "ref standalone": _torchrun(ref_python(), "--standalone"),
        "ours standalone": _torchrun(OURS, "--standalone"),
        "ours static": _torchrun(OURS, "--master-addr", "127.0.0.1", "--master-port", str(free_port())),
    }
    port = free_port()
    nodes = [_node(OURS, n, port) for n in range(2)]
    results = dict(zip(runs, finish(list(runs.values()), timeout=90)))
    node_results = finish(nodes, timeout=60)
    ref = _workers(results.pop("ref standalone"), "ref standalone")
    assert [w["all_reduce"] for w in ref] == [[3.0, 3.0, 3.0]] * 2
    for what, res in results.items():
        ours = _workers(res, what)
        assert len(ours) == 2, what
        for r in range(2):
            assert differences(ref[r], ours[r]) == [], what
    # two nodes: rank r is node r's only worker
    ours = sorted((w for n, res in enumerate(node_results) for w in _workers(res, f"node {n}")), key=lambda w: w["rank"])
    for r in range(2):
        local = {"local_rank": 0, "local_world": 1, "gathered": [{"local": 0, "rank": 0}, {"local": 0, "rank": 1}]}
        assert differences(dict(ref[r], **local), ours[r]) == [], f"node {r}"
    for n, (_, _, err) in enumerate(node_results):
        assert "Error waiting on exit barrier" not in err, f"node {n}:\n{err[-3000:]}"
