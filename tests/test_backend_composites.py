"""A backend's own kernel for a composite operator (`linear`, `layer_norm`, `max_pool1d_with_indices`)
runs before the core's decomposition, on that backend's device only; with an input that
requires grad the decomposition runs, so backward works (core/python/torchnative_core/
backend_composites.py, docs/plugins.md "Kernels for composite operators").

The backend is the Python template's Backend class on a device of its own, "fused", with three
numpy kernels that count their calls; everything else it lacks runs through the CPU fallback."""

import json

import pytest

from plugin_dists import install_template, run_torch, write_dist

pytestmark = pytest.mark.runtime

FUSED = {
    "tn_fused.py": """
        import numpy as np
        from mydev_backend import Backend
        from mydev_backend.memory import as_numpy

        CALLS = {}
        SEEN = {}

        def counted(name):
            def deco(fn):
                def kernel(args, outs):
                    CALLS[name] = CALLS.get(name, 0) + 1
                    SEEN[name] = [a if isinstance(a, (int, float, bool, list, type(None))) else type(a).__name__
                                  for a in args]
                    fn(args, outs)
                return kernel
            return deco

        @counted("linear")
        def linear(args, outs):  # linear(Tensor input, Tensor weight, Tensor? bias=None)
            x, w, b = args
            y = as_numpy(x) @ as_numpy(w).T
            as_numpy(outs[0])[...] = y if b is None else y + as_numpy(b)

        @counted("layer_norm")
        def layer_norm(args, outs):  # layer_norm(input, normalized_shape, weight, bias, eps, cudnn_enable)
            x, shape, w, b, eps, _ = args
            a = as_numpy(x).astype(np.float64)
            axes = tuple(range(a.ndim - len(shape), a.ndim))
            y = (a - a.mean(axes, keepdims=True)) / np.sqrt(a.var(axes, keepdims=True) + eps)
            if w is not None:
                y = y * as_numpy(w)
            if b is not None:
                y = y + as_numpy(b)
            as_numpy(outs[0])[...] = y

        @counted("max_pool1d_with_indices")
        def max_pool1d(args, outs):  # (self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
            x, (k,) = as_numpy(args[0]), args[1]
            n = x.shape[-1] // k
            windows = x[..., : n * k].reshape(*x.shape[:-1], n, k)
            as_numpy(outs[0])[...] = windows.max(-1)
            as_numpy(outs[1])[...] = windows.argmax(-1) + np.arange(n) * k

        @counted("special_polygamma")
        def polygamma(args, outs):  # special_polygamma(int n, Tensor self): never reached (no meta step)
            as_numpy(outs[0])[...] = 0.0

        class Fused(Backend):
            def torchnative_register(self, registrar):
                n = super().torchnative_register(registrar)
                for op, fn in (("linear", linear), ("layer_norm", layer_norm), ("special_polygamma", polygamma),
                               ("max_pool1d_with_indices", max_pool1d)):
                    registrar.register_kernel(op, "fused", fn)
                return n + 4

        plugin = Fused("fused", device_keys=("fused",))
    """,
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    base = tmp_path_factory.mktemp("composites")
    install_template(base / "template")
    write_dist(base / "template", "tn-fused", {"fused": "tn_fused:plugin"}, FUSED)
    return base / "template"


def _run(code, site):
    r = run_torch(code, site)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_backend_kernels_for_composites_run_first_on_their_device(site):
    out = _run("""
        import json, torch, warnings
        import torch.nn.functional as F
        import tn_fused
        from torchnative_core import backend_composites
        warnings.simplefilter("ignore")  # the CPU fallback warns once per operator
        g = torch.Generator().manual_seed(0)
        x, w, b = torch.randn(4, 3, generator=g), torch.randn(5, 3, generator=g), torch.randn(5, generator=g)
        X, W, Bias = x.to("fused"), w.to("fused"), b.to("fused")
        y = F.linear(X, W, Bias)
        y_nobias = F.linear(X, W)
        ln = F.layer_norm(X, (3,), eps=1e-3)
        p = torch.randn(2, 3, 8, generator=g)
        pooled = F.max_pool1d(p.to("fused"), 2, return_indices=True)
        on_device = dict(tn_fused.CALLS)
        # the same calls on cpu stay the core's composites: no new kernel calls
        ref_y, ref_ln = F.linear(x, w, b), F.layer_norm(x, (3,), eps=1e-3)
        ref_pooled = F.max_pool1d(p, 2, return_indices=True)
        print(json.dumps({
            "calls": on_device, "after_cpu": tn_fused.CALLS, "seen": tn_fused.SEEN,
            "y_device": str(y.device), "y_shape": list(y.shape), "y_dtype": str(y.dtype),
            "y": torch.allclose(y.cpu(), ref_y, atol=1e-5), "y_nobias": torch.allclose(y_nobias.cpu(), x @ w.T, atol=1e-5),
            "ln": torch.allclose(ln.cpu(), ref_ln, atol=1e-5),
            "pooled": [torch.equal(pooled[0].cpu(), ref_pooled[0]), torch.equal(pooled[1].cpu(), ref_pooled[1]),
                       str(pooled[1].dtype), type(pooled).__name__],
            "overridden": {op: d for op, d in backend_composites.overridden().items() if "fused" in d},
        }))
    """, site)
    assert out["calls"] == {"linear": 2, "layer_norm": 1, "max_pool1d_with_indices": 1}
    assert out["after_cpu"] == out["calls"]
    assert out["y_device"] == "fused:0" and out["y_shape"] == [4, 5] and out["y_dtype"] == "torch.float32"
    assert out["y"] and out["y_nobias"] and out["ln"]
    assert out["pooled"] == [True, True, "torch.int64", "tuple"]
    # every schema argument in order, defaults filled in
    assert out["seen"]["layer_norm"] == ["Tensor", [3], None, None, 1e-3, True]
    assert out["seen"]["linear"] == ["Tensor", "Tensor", None]
    assert out["overridden"] == {"layer_norm": ["fused"], "linear": ["fused"], "max_pool1d_with_indices": ["fused"],
                                 "special_polygamma": ["fused"]}


def test_a_composite_without_a_meta_step_decomposes_and_says_so(site):
    # A decomposition that reads values on the host cannot run on meta tensors, so the output
    # metadata is unknown without data: the decomposition runs (right answer) and a warning names
    # why, once. The core's own composites all have meta steps by now, so the test stands one in
    # for special_polygamma.
    out = _run("""
        import json, math, torch, warnings
        import tn_fused
        from torchnative_core import backend_composites, ops

        def host_polygamma(n, x):  # reads the values: fails on meta tensors
            return torch.tensor([math.nan if v <= 0 else 1.0 / v for v in x.tolist()], dtype=x.dtype)

        del backend_composites._ORIGINAL["special_polygamma"]
        ops.IMPLS["special_polygamma"] = host_polygamma
        backend_composites.refresh(torch._C)
        x = torch.tensor([0.5, 1.0, 2.5], dtype=torch.float64)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            p = torch.special.polygamma(1, x.to("fused"))
            torch.special.polygamma(1, x.to("fused"))
        ours = [str(m.message) for m in w if "aten.special_polygamma" in str(m.message)]
        print(json.dumps({"calls": tn_fused.CALLS, "warned": len(ours), "message": ours[:1],
                          "values": p.cpu().tolist()}))
    """, site)
    assert out["calls"] == {} and out["warned"] == 1 and "cannot compute its output shapes" in out["message"][0]
    assert out["values"] == [2.0, 1.0, 0.4]


def test_with_grad_the_decomposition_records_and_backward_works(site):
    out = _run("""
        import json, torch, warnings
        import torch.nn.functional as F
        import tn_fused
        warnings.simplefilter("ignore")
        g = torch.Generator().manual_seed(1)
        x, w = torch.randn(4, 3, generator=g), torch.randn(5, 3, generator=g)
        W = w.to("fused").requires_grad_()
        y = F.linear(x.to("fused"), W)
        y.sum().backward()
        wc = w.clone().requires_grad_()
        F.linear(x, wc).sum().backward()
        with torch.no_grad():
            F.linear(x.to("fused"), W)   # grad mode off: the backend's kernel again
        print(json.dumps({"calls": tn_fused.CALLS, "grad_fn": type(y.grad_fn).__name__,
                          "grad": torch.allclose(W.grad.cpu(), wc.grad)}))
    """, site)
    assert out["calls"] == {"linear": 1}  # only the no_grad call reached the kernel
    assert out["grad_fn"] != "NotImplemented" and out["grad"]


def test_a_dispatch_mode_does_not_see_the_metadata_run(site):
    out = _run("""
        import json, torch, warnings
        import torch.nn.functional as F
        from torch.utils._python_dispatch import TorchDispatchMode
        import tn_fused
        warnings.simplefilter("ignore")

        class Log(TorchDispatchMode):
            def __init__(self):
                super().__init__()
                self.devices = set()
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                self.devices.update(str(a.device) for a in args if isinstance(a, torch.Tensor))
                return func(*args, **(kwargs or {}))

        X, W = torch.ones(2, 3, device="fused"), torch.ones(4, 3, device="fused")
        with Log() as m:
            y = F.linear(X, W)
        print(json.dumps({"devices": sorted(m.devices), "y": y.cpu().tolist(), "calls": tn_fused.CALLS}))
    """, site)
    assert "meta" not in out["devices"]
    assert out["y"] == [[3.0] * 4] * 2 and out["calls"] == {"linear": 1}
