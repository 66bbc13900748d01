"""The federated engine's parts in one process: aggregators against their formulas, secure
aggregation's protocol with dropouts, compression, differential privacy and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.nn import federated
from torchnative.nn.federated import secagg
from torchnative.nn.federated.state import flatten, spec_of


def _state(seed, shape=(3, 2)):
    g = torch.Generator().manual_seed(seed)
    return {"w": torch.randn(shape, generator=g), "b": torch.randn(shape[0], generator=g),
            "n": torch.tensor(seed, dtype=torch.int64)}


def _updates():
    return [federated.ClientUpdate(rank=i + 1, num_examples=n, state=_state(i + 10)) for i, n in enumerate([5, 1, 3])]


def test_fedavg_is_the_example_weighted_mean():
    glob, ups = _state(0), _updates()
    out = federated.FedAvg().aggregate(glob, ups)
    want = sum(u.num_examples * u.state["w"].double() for u in ups) / 9
    assert torch.equal(out["w"], want.float())
    assert out["n"].dtype == torch.int64 and int(out["n"]) == round((5 * 10 + 11 + 3 * 12) / 9)
    assert not torch.equal(out["w"], (sum(u.state["w"].double() for u in ups) / 3).float())  # unweighted differs


@pytest.mark.parametrize("name", ["FedAdam", "FedYogi", "FedAdagrad"])
def test_server_optimisers_follow_reddi_algorithm_2(name):
    """Three rounds against the formulas of Reddi et al. 2021, Algorithm 2, written out here."""
    agg = getattr(federated, name)()
    defaults = {"FedAdam": (0.1, 0.9, 0.99), "FedYogi": (0.01, 0.9, 0.99), "FedAdagrad": (0.1, 0.0, 0.0)}[name]
    eta, b1, b2 = defaults
    tau = 1e-3
    assert (agg.eta, agg.beta1, agg.beta2, agg.tau) == (eta, b1, b2, tau)
    glob = _state(0)
    spec = spec_of(glob)
    fl = np.array([True] * 9 + [False])
    x = flatten(glob, spec)
    m, v = np.zeros(9), np.full(9, tau ** 2)
    for rnd in range(3):
        ups = [federated.ClientUpdate(i, n, _state(100 * rnd + i)) for i, n in ((1, 2), (2, 3))]
        mean = (2 * flatten(ups[0].state, spec) + 3 * flatten(ups[1].state, spec)) / 5
        d = (mean - x)[fl]
        m = b1 * m + (1 - b1) * d
        if name == "FedAdam":
            v = b2 * v + (1 - b2) * d * d
        elif name == "FedYogi":
            v = v - (1 - b2) * d * d * np.sign(v - d * d)
        else:
            v = v + d * d
        want = mean.copy()
        want[fl] = x[fl] + eta * m / (np.sqrt(v) + tau)
        glob = agg.aggregate(glob, ups)
        got = flatten(glob, spec)
        np.testing.assert_allclose(got[fl], want[fl].astype(np.float32), rtol=0, atol=0)
        x = got
        assert not np.allclose(got[fl], mean[fl])  # the server step is not plain averaging


def test_aggregators_refuse_bad_input():
    with pytest.raises(federated.FederatedError, match="got no updates"):
        federated.FedAvg().aggregate(_state(0), [])
    bad = federated.ClientUpdate(2, 4, _state(1, shape=(4, 2)))
    with pytest.raises(federated.FederatedError, match=r"update from rank 2: .*'w' has shape \[4, 2\] here, \[3, 2\]"):
        federated.FedAvg().aggregate(_state(0), [bad])
    missing = federated.ClientUpdate(3, 4, {"w": _state(1)["w"]})
    with pytest.raises(federated.FederatedError, match="missing key"):
        federated.FedAdam().aggregate(_state(0), [missing])
    with pytest.raises(federated.FederatedError, match="reports 0 examples"):
        federated.FedAvg().aggregate(_state(0), [federated.ClientUpdate(1, 0, _state(1))])
    with pytest.raises(ValueError):
        federated.FedProx(mu=-1)


def test_shamir_reconstructs_from_any_threshold_subset():
    secret = 2 ** 255 + 12345
    shares = secagg.shamir_split(secret, 3, [1, 2, 3, 4, 5])
    assert secagg.shamir_combine({x: shares[x] for x in (1, 4, 5)}) == secret
    assert secagg.shamir_combine({x: shares[x] for x in (2, 3)}) != secret  # below threshold: nothing


@pytest.mark.parametrize("num_shares", [None, 2])
def test_secagg_sum_equals_plain_sum_with_dropout(num_shares):
    """Five clients; one leaves after sharing (its pairwise masks are rebuilt from shares): the
    unmasked total equals the plain fixed-point sum of the survivors, bit for bit."""
    rnd, sampled = 7, [1, 2, 3, 4, 5]
    clients = {i: secagg.SecAggClient(i, rnd, sampled, None, num_shares) for i in sampled}
    server = secagg.SecAggServer(rnd, sampled, None, num_shares)
    for i, c in clients.items():
        server.add_keys(i, c.keys())
    for i, c in clients.items():
        server.add_shares(i, c.shares(server.keys_for(i)))
    rng = np.random.default_rng(0)
    inputs = {i: secagg.quantize(rng.normal(size=50) * 100, 24) for i in sampled}
    survivors = [1, 2, 4, 5]  # 3 shared its keys, then dropped before its masked input
    total = np.zeros(50, np.uint64)
    for i in survivors:
        clients[i].receive(server.shares_for(i))
        masked = clients[i].mask(inputs[i], server.shared)
        assert not np.array_equal(masked, inputs[i])
        total = total + masked
    revealed = {i: clients[i].unmask(survivors, [3]) for i in survivors}
    plain = np.zeros(50, np.uint64)
    for i in survivors:
        plain = plain + inputs[i]
    assert np.array_equal(server.unmask(total, survivors, revealed), plain)
    assert not np.array_equal(total, plain)  # the masks were there
    assert np.allclose(secagg.dequantize(plain, 24), sum(secagg.dequantize(inputs[i], 24) for i in survivors))
    with pytest.raises(RuntimeError, match="both secrets"):
        clients[1].unmask([1, 3], [3])


def test_compression_round_trips_and_sizes():
    delta = np.random.default_rng(1).normal(size=1000)
    f16 = federated.Float16()
    assert len(f16.encode(delta)) == f16.nbytes(1000) == 2000
    assert np.abs(f16.decode(f16.encode(delta), 1000) - delta).max() < 2e-3
    top = federated.TopK(0.1)
    dec = top.decode(top.encode(delta), 1000)
    assert len(top.encode(delta)) == top.nbytes(1000) == 800
    keep = np.argsort(-np.abs(delta))[:100]
    assert np.count_nonzero(dec) == 100 and np.allclose(dec[keep], delta[keep], atol=1e-6)


def test_dp_clip_noise_and_opacus_accountant():
    dp = federated.DifferentialPrivacy(noise_multiplier=1.0, clipping_norm=0.5, delta=1e-5, seed=0)
    fl = np.array([True, True, False])
    clipped = dp.clip(np.array([3.0, 4.0, 7.0]), fl)
    assert np.allclose(clipped, [0.3, 0.4, 7.0])
    assert np.array_equal(dp.clip(np.array([0.1, 0.1, 1.0]), fl), [0.1, 0.1, 1.0])
    noisy = dp.noise(np.zeros(3), fl, sampled=5, rnd=1)
    assert noisy[2] == 0 and noisy[0] != 0
    eps = [dp.step(sample_rate=0.5) for _ in range(3)]
    assert 0 < eps[0] < eps[1] < eps[2] < 50  # privacy spent grows round by round
    from opacus.accountants import RDPAccountant

    ref = RDPAccountant()
    for _ in range(3):
        ref.step(noise_multiplier=1.0, sample_rate=0.5)
    assert eps[-1] == ref.get_epsilon(delta=1e-5)


def test_engine_refuses_without_a_process_group():
    model = torch.nn.Linear(2, 2)
    with pytest.raises(federated.FederatedError, match="initialised process group"):
        federated.Engine(model, rounds=1, aggregator=federated.FedAvg()).participate()
    with pytest.raises(ValueError, match="cannot be combined with compression"):
        federated.Engine(model, 1, federated.FedAvg(), secure_aggregation=True, compression=federated.Float16())


def test_engine_imports_nothing_of_torchnative_core_on_upstream():
    """The engine is plain torch.distributed: on upstream torch it loads no torchnative_core module."""
    import subprocess
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    ref = repo / "build" / "ref-python"
    if not ref.exists():
        pytest.skip("no reference interpreter (python3 tools/build.py --ref)")
    code = ("import sys; import torchnative.nn.federated, torchnative.nn.federated.secagg; "
            "print(sorted(m for m in sys.modules if m.startswith('torchnative_core')))")
    out = subprocess.run([ref.read_text().strip(), "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=repo, env={"PYTHONPATH": str(repo), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]", out.stdout
