"""torchnative.adapt's wrapper on our runtime, in process: the caller's model left as it was,
online/offline, lifetimes and the effect of each host event (the table in
torchnative/adapt/delta.py), the three destinations, and that importing torchnative.adapt pulls
in nothing of torchnative_core (checked on upstream torch, where that package does not exist).
Cross-runtime agreement is tests/adapt/test_adapt_agreement.py's."""

import subprocess
from pathlib import Path

import pytest
import torch
from torch import nn

from torchnative import adapt

REPO = Path(__file__).resolve().parents[2]


def small_cnn():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.Flatten(), nn.Linear(4 * 8 * 8, 10)).eval()


def batches(n=3):
    g = torch.Generator().manual_seed(1)
    return [torch.rand(16, 1, 8, 8, generator=g) * 2 for _ in range(n)]


def bits(t):
    return t.detach().clone().contiguous().view(torch.int32) if t.dtype == torch.float32 else t.detach().clone()


def snapshot(model):
    return {k: bits(v) for k, v in model.state_dict().items()}


def same(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def weights(adapted):
    return {k: bits(v) for k, v in adapted.adapted_state().items()}


def test_callers_model_is_left_as_it_was():
    m = small_cnn()
    before, grads, modes = snapshot(m), [p.requires_grad for p in m.parameters()], [x.training for x in m.modules()]
    a = adapt.wrap(m, method=adapt.Tent())
    for x in batches():
        a(x)
    assert same(snapshot(m), before)
    assert [p.requires_grad for p in m.parameters()] == grads
    assert [x.training for x in m.modules()] == modes
    assert m[1].running_mean is not None and m[1].track_running_stats
    assert a.base is m
    # frozen weights share the caller's storage; trained ones and buffers are the copy's own
    assert a.model[0].weight.data_ptr() == m[0].weight.data_ptr() and not a.model[0].weight.requires_grad
    assert a.model[1].weight.data_ptr() != m[1].weight.data_ptr()
    b = adapt.wrap(m, method=adapt.Tent(), share_frozen=False)
    assert b.model[0].weight.data_ptr() != m[0].weight.data_ptr()
    # the same base can be wrapped again (a second user, say): only an adapted model cannot
    adapt.wrap(m, method=adapt.BNAdapt())


def test_offline_changes_nothing_and_online_resumes():
    m = small_cnn()
    a = adapt.wrap(m, method=adapt.BNAdapt())
    xs = batches()
    a(xs[0])
    adapted = {k: bits(v) for k, v in a.model.state_dict().items()}
    a.offline()
    assert not a.is_online
    a(xs[1])
    a(xs[2])
    assert same({k: bits(v) for k, v in a.model.state_dict().items()}, adapted)
    a.eval()  # a host's eval() must not turn BNAdapt's batch statistics off for online calls
    a.online()(xs[1])
    assert not same({k: bits(v) for k, v in a.model.state_dict().items()}, adapted)
    assert a.model[1].training


def test_batch_lifetime_starts_every_call_from_the_base():
    m = small_cnn()
    a = adapt.wrap(m, method=adapt.Tent(), lifetime="batch")
    x = batches(1)[0]
    y1, y2 = a(x), a(x)
    assert torch.equal(bits(y1), bits(y2))
    assert any(v.abs().sum() > 0 for v in a.delta().values())
    for event in adapt.EVENTS:
        a(x)
        assert a.on_event(event) == {"event": event, "flushed": False, "reset": True}
        assert all(v.abs().sum() == 0 for v in a.delta().values())
    assert a.destination.last is None


def test_until_lifetime_flushes_on_background_and_ends_on_user_switch():
    m = small_cnn()
    mem = adapt.Memory()
    a = adapt.wrap(m, method=adapt.Tent(), lifetime=adapt.Lifetime.until("user_switch"), destination=mem)
    x = batches(1)[0]
    y1, y2 = a(x), a(x)
    assert not torch.equal(bits(y1), bits(y2))  # accumulates across calls
    w = weights(a)
    assert a.on_event("backgrounded") == {"event": "backgrounded", "flushed": True, "reset": False}
    assert same(weights(a), w) and len(mem.history) == 1
    assert same({k: bits(v) for k, v in mem.last.apply(m).items()}, w)
    assert a.on_event("sync")["flushed"] and len(mem.history) == 2
    assert a.on_event("user_switch") == {"event": "user_switch", "flushed": False, "reset": True}
    assert len(mem.history) == 2  # one user's delta never goes out on a user switch
    base = {k: bits(v) for k, v in m.state_dict().items() if k in w}
    assert same(weights(a), base)
    assert [e["event"] for e in a.events] == ["backgrounded", "sync", "user_switch"]


def test_until_sync_writes_safetensors_then_resets(tmp_path):
    m = small_cnn()
    a = adapt.wrap(m, method=adapt.Tent(), lifetime=adapt.Lifetime.until("sync"),
                   destination=adapt.SafetensorsFile(tmp_path / "delta-{n}.safetensors"))
    for x in batches():
        a(x)
    w = weights(a)
    assert a.on_event("sync") == {"event": "sync", "flushed": True, "reset": True}
    assert a.destination.last == tmp_path / "delta-0.safetensors"
    fresh = adapt.wrap(m, method=adapt.Tent()).load_delta(tmp_path / "delta-0.safetensors")
    assert same(weights(fresh), w)
    loaded = adapt.Delta.load(tmp_path / "delta-0.safetensors")
    assert loaded.metadata["lifetime"] == "until(sync)" and loaded.metadata["calls"] == "3"
    assert loaded.nbytes == sum(v.numel() * v.element_size() for v in loaded.values()) == 4 * 8


def test_persistent_lifetime_hands_updates_and_survives_user_switch():
    m = small_cnn()
    got = []
    a = adapt.wrap(m, method=adapt.Tent(), destination=adapt.StateDictUpdate(got.append))
    assert a.lifetime == adapt.Lifetime.persistent()
    for x in batches():
        a(x)
    w = weights(a)
    assert a.on_event("user_switch") == {"event": "user_switch", "flushed": False, "reset": False}
    assert a.on_event("sync") == {"event": "sync", "flushed": True, "reset": False}
    assert a.on_event("backgrounded")["flushed"] and len(got) == 2
    assert same(weights(a), w)
    update = got[0]
    assert set(update) == {"state_dict", "delta", "metadata", "nbytes", "num_examples"}
    assert update["num_examples"] == 3 * 16 and a.stats()["samples"] == 48
    consumer = small_cnn()
    consumer.load_state_dict(update["state_dict"], strict=False)
    assert same({k: bits(v) for k, v in consumer.state_dict().items() if k in w}, w)
    assert update["nbytes"] == 32 and update["metadata"]["method"] == "Tent"
    a.reset()
    assert same(weights(a), {k: bits(v) for k, v in m.state_dict().items() if k in w})


def test_lifetime_and_destination_errors():
    with pytest.raises(ValueError, match="unknown event"):
        adapt.Lifetime.until("reboot")
    with pytest.raises(ValueError, match="at least one event"):
        adapt.Lifetime.until()
    with pytest.raises(TypeError, match="lifetime must be"):
        adapt.wrap(small_cnn(), method=adapt.Tent(), lifetime="forever")
    with pytest.raises(ValueError, match="not a torchnative.adapt delta"):
        from safetensors.torch import save_file
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            save_file({"x": torch.zeros(2)}, f"{d}/x.safetensors")
            adapt.Delta.load(f"{d}/x.safetensors")


def test_importing_adapt_needs_no_core(ref_python):
    """On upstream torch (no torchnative_core installed there) the package imports and runs,
    and importing it loads nothing of torchnative_core."""
    code = ("import sys; import torchnative.adapt as a; "
            "print(sorted(m for m in sys.modules if m.startswith('torchnative_core'))); "
            "import importlib.util; print(importlib.util.find_spec('torchnative_core') is None)")
    r = subprocess.run([ref_python, "-c", code], capture_output=True, text=True, timeout=120,
                       cwd=str(REPO), env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == ["[]", "True"]
