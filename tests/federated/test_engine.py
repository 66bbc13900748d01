"""The federated engine as separate processes on 127.0.0.1 (gloo), on upstream torch and on ours.

Each run is checked against tests/federated/worker.py's sequential recomputation of the same
rounds in one process: final weights equal bit for bit on every surviving rank."""

from __future__ import annotations

import signal

import numpy as np
import pytest

import harness


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def check_run(out: dict, ranks) -> None:
    for r in ranks:
        assert r in out, f"rank {r} wrote no result; logs: {out['logs'].get(r)}"
        assert "error" not in out[r], f"rank {r}: {out[r]['error']}\n{out[r].get('traceback')}"


FINAL = {}  # side -> final weights of the FedAvg run, compared across sides below


def test_fedavg_equals_sequential_recomputation(side, tmp_path, request):
    cfg = {"world": 5, "rounds": 3, "local_epochs": 2, "fraction": 0.75, "min_clients": 2, "seed": 3}
    out = harness.run(side, cfg, tmp_path)
    check_run(out, range(5))
    seq = harness.sequential(side, cfg, tmp_path)
    expected = harness.weights(tmp_path, "seq")
    for r in range(5):
        assert same(harness.weights(tmp_path, r), expected), f"rank {r} differs from the recomputation"
    hist = out[0]["history"]
    assert [h["participants"] for h in hist] == [h["participants"] for h in seq["history"]]
    assert [h["examples"] for h in hist] == [h["examples"] for h in seq["history"]]
    assert all(len(h["participants"]) == 3 for h in hist)  # int(0.75 * 4) of 4, seeded
    assert len({tuple(h["participants"]) for h in hist}) > 1  # the sample changes with the round
    assert all(h["bytes"] > 0 and h["seconds"] > 0 and np.isfinite(h["loss"]) for h in hist)
    assert out[1]["history"] == hist  # every rank gets the coordinator's history
    # the comparator can fail: FedProx's recomputation of the same rounds differs
    harness.sequential(side, {**cfg, "aggregator": "fedprox", "mu": 0.5}, tmp_path / "other")
    assert not same(harness.weights(tmp_path / "other", "seq"), expected)
    FINAL[request.node.callspec.params["side"]] = expected


def test_upstream_and_ours_reach_the_same_weights():
    """The same FedAvg run on upstream torch (gloo) and on ours: the final global weights agree
    to float32 rounding (training itself agrees to ~2.4e-7 between the runtimes, tests/test_training.py)."""
    if len(FINAL) < 2:
        pytest.skip(f"needs the FedAvg run on both sides (have: {sorted(FINAL) or 'none'})")
    a, b = FINAL["upstream"], FINAL["ours"]
    worst = max(float(np.abs(a[k] - b[k]).max()) for k in a)
    assert worst <= 1e-6, f"upstream and ours differ by {worst}"
    print(f"largest difference upstream vs ours: {worst:.3g}")


def test_killed_client_and_straggler_are_dropped(side, tmp_path):
    """Rank 2 is SIGKILLed mid-round 2; rank 3 straggles past the timeout in round 3. Both leave
    for good, the rounds finish with the rest, nothing is counted twice, nobody hangs, and the
    straggler still ends with the final weights."""
    cfg = {"world": 5, "rounds": 4, "round_timeout": 5, "faults": {"2": ["hang", 2], "3": ["slow", 3]}}
    killed = []

    def kill_when_training(procs):
        if not killed and (tmp_path / "2.training").exists():
            procs[2].send_signal(signal.SIGKILL)
            killed.append(2)

    out = harness.run(side, cfg, tmp_path, timeout=120, on_tick=kill_when_training)
    assert killed == [2]
    check_run(out, [0, 1, 3, 4])
    assert 2 not in out
    hist = out[0]["history"]
    assert [h["participants"] for h in hist] == [[1, 2, 3, 4], [1, 3, 4], [1, 4], [1, 4]]
    assert list(hist[1]["dropped"]) == ["2"] and "failed" in hist[1]["dropped"]["2"]
    assert list(hist[2]["dropped"]) == ["3"] and "timed out" in hist[2]["dropped"]["3"]
    seq = harness.sequential(side, {**cfg, "expect_gone": {"2": 2, "3": 3}}, tmp_path)
    assert [h["examples"] for h in hist] == [h["examples"] for h in seq["history"]]
    expected = harness.weights(tmp_path, "seq")
    for r in (0, 1, 3, 4):
        assert same(harness.weights(tmp_path, r), expected), f"rank {r} differs from the recomputation"
    # the comparator can fail: counting the killed client's round-2 update would give other weights
    harness.sequential(side, {**cfg, "expect_gone": {"3": 3}}, tmp_path / "wrong")
    assert not same(harness.weights(tmp_path / "wrong", "seq"), expected)


def test_secure_aggregation_survives_dropout(side, tmp_path):
    """Rank 3 shares its keys in round 2, then exits before sending its masked input: the
    survivors' masks are stripped with its reconstructed key, and the result is exactly the
    plain fixed-point sum of the survivors' inputs (the recomputation sums them unmasked)."""
    cfg = {"world": 5, "rounds": 2, "round_timeout": 30, "secagg": {"frac_bits": 24}, "faults": {"3": ["exit", 2]}}
    out = harness.run(side, cfg, tmp_path, timeout=120)
    check_run(out, [0, 1, 2, 4])
    hist = out[0]["history"]
    assert [h["participants"] for h in hist] == [[1, 2, 3, 4], [1, 2, 4]]
    seq = harness.sequential(side, {**cfg, "expect_gone": {"3": 2}}, tmp_path)
    assert [h["examples"] for h in hist] == [h["examples"] for h in seq["history"]]
    expected = harness.weights(tmp_path, "seq")
    for r in (0, 1, 2, 4):
        assert same(harness.weights(tmp_path, r), expected), f"rank {r} differs from the plain sum"


@pytest.mark.parametrize("case,expect", [
    ({"hidden": {"2": 12}}, "state dict differs from the coordinator's: '0.weight' has shape [12, 8] here, [16, 8] there"),
    ({"sizes": {"1": 0}}, "its data loader yields no examples"),
    ({"coordinator_data": True}, "rank 0 coordinates and trains on nothing"),
])
def test_bad_input_fails_on_every_rank(side, tmp_path, case, expect):
    cfg = {"world": 3, "rounds": 2, **case}
    out = harness.run(side, cfg, tmp_path, timeout=90)
    for r in range(3):
        assert r in out, f"rank {r} wrote no result; logs: {out['logs'].get(r)}"
        assert "FederatedError" in out[r].get("error", ""), f"rank {r} did not fail: {out[r]}"
        assert expect in out[r]["error"], f"rank {r}: {out[r]['error']}"


def test_fedprox_checkpoint_resume(side, tmp_path):
    """FedProx for two rounds, stop, then a new fleet resumes from the coordinator's checkpoint
    to round 4: the same weights as the sequential recomputation of four rounds (proximal term
    included)."""
    ckpt = tmp_path / "ckpt"
    cfg = {"world": 3, "rounds": 2, "checkpoint_dir": str(ckpt), "aggregator": "fedprox", "mu": 0.5, "local_epochs": 2}
    check_run(harness.run(side, cfg, tmp_path / "a"), range(3))
    out = harness.run(side, {**cfg, "rounds": 4}, tmp_path / "b")
    check_run(out, range(3))
    assert [h["round"] for h in out[0]["history"]] == [1, 2, 3, 4]
    harness.sequential(side, {**cfg, "rounds": 4}, tmp_path / "s")
    expected = harness.weights(tmp_path / "s", "seq")
    assert same(harness.weights(tmp_path / "b", 0), expected)
    assert not same(harness.weights(tmp_path / "a", 0), expected)  # the first half alone differs
