"""The host (CPU) fallback is off unless the user turns it on, and then every fallback is counted.

With it off, an operator a device has no kernel for refuses by name. Turned on (the environment
variable TORCHNATIVE_CPU_FALLBACK=<keys> before import, or torchnative.enable_cpu_fallback), it
runs on the cpu backend, warns once per operator and device (FallbackWarning), and counts every
call: torchnative.fallback_report(), fallback_summary(), and TORCHNATIVE_FALLBACK_REPORT=1 prints
the summary at exit. Shown on a throwaway device "alpha" (templates/python-backend without its own
opt-in) and, where a Vulkan adapter exists, on vulkan itself."""

import json

import pytest

from plugin_dists import install_template, run_torch, write_dist

pytestmark = pytest.mark.runtime

ALPHA = {"tn_alpha.py": """
    from mydev_backend import Backend
    alpha = Backend("alpha", ("alpha",), cpu_fallback=False)
"""}


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    root = tmp_path_factory.mktemp("fallback")
    return (install_template(root / "template"),
            write_dist(root / "alpha", "tn-alpha", {"alpha": "tn_alpha:alpha"}, ALPHA))


PROGRAM = """
import json, warnings, torch, torchnative
from torchnative_core.cpu_fallback import FallbackWarning
DEV = {dev!r}
out = {{"before": torchnative.cpu_fallback_devices()}}
x = torch.arange(6.).reshape(2, 3).to(DEV)

def refusal():
    try:
        {op}
    except NotImplementedError as e:
        return str(e)

out["off"] = refusal()
torchnative.enable_cpu_fallback(DEV)
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    y = [({op}).cpu().tolist() for _ in range(3)]
out["y"] = y[0]
out["warnings"] = [str(m.message) for m in w if issubclass(m.category, FallbackWarning)]
out["report"] = torchnative.fallback_report()
out["summary"] = torchnative.fallback_summary()
torchnative.disable_cpu_fallback(DEV)
out["off_again"] = refusal()
print(json.dumps(out))
"""


def _run(dev, op, *sites, env=None):
    r = run_torch(PROGRAM.format(dev=dev, op=op), *sites, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1]), r.stderr


def test_fallback_is_off_by_default_then_counted_when_turned_on(sites):
    out, _ = _run("alpha", "x.exp().t()", *sites)
    refusal = "aten.exp.default has no kernel for device 'alpha' (installed backends: alpha, cpu, mydev"
    assert out["before"] == ["mydev"]  # only the template's own opt-in; alpha is off
    assert out["off"].startswith(refusal) and out["off_again"] == out["off"]
    cpu = run_torch("import json, torch; print(json.dumps(torch.arange(6.).reshape(2, 3).exp().t().tolist()))")
    assert out["y"] == json.loads(cpu.stdout)
    assert out["report"] == {"alpha": {"aten.exp.default": 3}}  # every call counted
    assert len(out["warnings"]) == 1 and out["warnings"][0].startswith(
        "aten.exp.default has no kernel for device 'alpha': it ran on the CPU fallback")
    assert out["summary"].splitlines() == [
        "CPU fallback on alpha: 3 calls of 1 operators (calls, operator):", "         3  aten.exp.default"]


def test_fallback_turned_on_by_environment_and_reported_at_exit(sites):
    r = run_torch("""
        import torch, torchnative
        x = torch.arange(3.).to("alpha")
        print(torchnative.cpu_fallback_devices(), x.exp().sum().cpu().item())
    """, *sites, env={"TORCHNATIVE_CPU_FALLBACK": "alpha", "TORCHNATIVE_FALLBACK_REPORT": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("]")[0] == "['alpha', 'mydev'"
    tail = r.stderr.strip().splitlines()[-3:]
    assert tail == ["CPU fallback on alpha: 2 calls of 2 operators (calls, operator):",
                    "         1  aten.exp.default", "         1  aten.sum.dim_IntList"], r.stderr[-2000:]


def test_counts_can_fail():
    """The report is the counter, not a constant: a fault that drops a count is visible."""
    import importlib.util
    import pathlib
    from collections import Counter

    spec = importlib.util.spec_from_file_location(
        "cf", pathlib.Path(__file__).parents[1] / "core/python/torchnative_core/cpu_fallback.py")
    cf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cf)
    with pytest.warns(cf.FallbackWarning) as w:
        cf._count("dev", "aten::add.Tensor")
        cf._count("dev", "add.Tensor")
        cf._count("dev", "exp")
    assert len(w) == 2  # once per operator and device
    assert cf.report() == {"dev": {"aten.add.Tensor": 2, "aten.exp.default": 1}}
    cf.COUNTS = Counter()
    assert cf.report() == {} and cf.summary().startswith("CPU fallback: no operator fell back")


def _vulkan_missing_op():
    """An operator vulkan has no kernel for, as a Python expression on `x` (2x3 float32)."""
    r = run_torch("""
        import json, torch
        from torchnative_core.plugins import RECORDS
        rec = RECORDS.get("vulkan")
        kernels = torch._C._tn_registered_kernels().get("vulkan", {}).get("vulkan", [])
        print(json.dumps([rec.status if rec else "not installed", rec.reason if rec else "", kernels]))
    """)
    assert r.returncode == 0, r.stderr[-2000:]
    status, reason, kernels = json.loads(r.stdout.strip().splitlines()[-1])
    if status != "ok":
        pytest.skip(f"vulkan: {status}: {reason}")
    have = {k.removeprefix("aten::") for k in kernels}
    for op, expr in (("erfinv", "(x / 8).erfinv()"), ("cummax", "x.cummax(1)[0]"), ("sort", "x.sort(1)[0]"),
                     ("topk", "x.topk(2)[0]"), ("cumprod", "x.cumprod(1)"), ("digamma", "(x + 1).digamma()")):
        if op not in have:
            return expr
    pytest.skip(f"vulkan has kernels for every candidate operator ({len(have)} kernels)")


def test_vulkan_refuses_by_name_unless_the_fallback_is_on():
    op = _vulkan_missing_op()
    out, _ = _run("vulkan", op)
    assert out["before"] == [], "vulkan must not opt into the CPU fallback by itself"
    assert "has no kernel for device 'vulkan'" in out["off"] and out["off"].startswith("aten.")
    assert out["off_again"] == out["off"]
    name = out["off"].split(" ")[0]
    assert out["report"]["vulkan"][name] == 3 and len(out["warnings"]) >= 1
    cpu = run_torch(f"import json, torch; x = torch.arange(6.).reshape(2, 3); print(json.dumps(({op}).tolist()))")
    assert out["y"] == json.loads(cpu.stdout)
