"""Backend plugins end to end: throwaway distributions installed beside torchnative, discovered
through the `torchnative.backends` entry points at `import torch`.

The working device is templates/python-backend (pure Python, device key "mydev"), pip-installed
into a temporary directory; "alpha" and "beta" are two more devices built from its Backend class
in hand-made distributions. The broken plugins each fail one step of discovery."""

import json

import pytest

from plugin_dists import install_template, run_torch, write_dist

pytestmark = pytest.mark.runtime

TWO_MORE_DEVICES = {
    "tn_alphabeta.py": """
        from mydev_backend import Backend

        class Picky(Backend):  # its own fill_ refuses: that error must not fall back to the CPU
            def torchnative_register(self, registrar):
                n = super().torchnative_register(registrar)
                registrar.register_kernel("fill_.Scalar", "picky", self.fill)
                return n

            @staticmethod
            def fill(args, outs):
                raise NotImplementedError("picky: fill_ is not written yet")

        class Twin(Backend):  # two memories: twin:0 and twin:1, each its own allocator
            def torchnative_register(self, registrar):
                from mydev_backend.memory import HostAllocator
                n = super().torchnative_register(registrar)
                self.second = HostAllocator()
                registrar.register_allocator("twin", self.second, index=1)
                return n

        alpha = Backend("alpha", ("alpha",), cpu_fallback=False)
        twin = Twin("twin", ("twin",))
        beta = Backend("beta", ("beta",))
        picky = Picky("picky", ("picky",))
    """,
}

BROKEN = {
    "tn_broken.py": """
        raise RuntimeError("boom at import")
    """,
    "tn_misfits.py": """
        from types import SimpleNamespace
        from mydev_backend import Backend

        class Misfit(Backend):
            def __init__(self, name, **descriptor):
                super().__init__(name, (name,))
                self.descriptor = descriptor

            def torchnative_describe(self):
                d = vars(super().torchnative_describe()) | self.descriptor
                return SimpleNamespace(**d)

            def torchnative_register(self, registrar):
                if self.descriptor.get("register_for"):
                    registrar.register_allocator(self.descriptor["register_for"], self.allocators[self.name])
                return super().torchnative_register(registrar)

        class Typo(Backend):
            def torchnative_regster(self, registrar):  # misspelt: must not pass silently
                pass

        class Misnamed(Backend):
            def torchnative_register(self, registrar):
                registrar.register_kernel("add.tensor", "misnamed", print)  # the overload is add.Tensor

        class Halfway(Backend):
            def torchnative_register(self, registrar):
                super().torchnative_register(registrar)
                raise RuntimeError("lost the device half way")

        class Usurper(Backend):  # overrides cpu's add.Tensor and allocator, then fails
            def torchnative_register(self, registrar):
                from mydev_backend.memory import HostAllocator
                registrar.register_allocator("cpu", HostAllocator())
                registrar.register_kernel("add.Tensor", "cpu", print)
                raise RuntimeError("usurper gave up")

        class DescribeOnly:
            def torchnative_describe(self):
                return SimpleNamespace(name="mute", device_keys=("mute",), abi_version=1 << 16)

        oldabi = Misfit("oldabi", abi_version=2 << 16)
        absent = Misfit("absent", available=False, reason="no absent hardware here")
        greedy = Misfit("greedy", register_for="cpu")
        typo = Typo("typo", ("typo",))
        mute = DescribeOnly()
        misnamed = Misnamed("misnamed", ("misnamed",))
        halfway = Halfway("halfway", ("halfway",))
        usurper = Usurper("usurper", ("cpu",), priority=1000)
    """,
}

BROKEN_EPS = {"broken": "tn_broken:plugin", "oldabi": "tn_misfits:oldabi", "absent": "tn_misfits:absent",
              "greedy": "tn_misfits:greedy", "typo": "tn_misfits:typo", "mute": "tn_misfits:mute",
              "misnamed": "tn_misfits:misnamed", "halfway": "tn_misfits:halfway",
              "usurper": "tn_misfits:usurper"}

RECORDS = """
import json, torch
from torchnative_core.plugins import RECORDS
print(json.dumps({n: {"status": r.status, "reason": r.reason, "keys": list(r.device_keys)} for n, r in RECORDS.items()}))
"""


@pytest.fixture(scope="module")
def good(tmp_path_factory):
    site = install_template(tmp_path_factory.mktemp("good") / "site")
    return write_dist(site, "tn-alphabeta", {"alpha": "tn_alphabeta:alpha", "beta": "tn_alphabeta:beta",
                                             "picky": "tn_alphabeta:picky", "twin": "tn_alphabeta:twin"},
                      TWO_MORE_DEVICES)


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    return write_dist(tmp_path_factory.mktemp("broken") / "site", "tn-broken", BROKEN_EPS, BROKEN)


def _json(r):
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_python_device_end_to_end(good):
    out = _json(run_torch("""
        import json, torch, mydev_backend
        e = torch.empty(3, device="mydev")
        a = torch.ones(2, 3, device="mydev")
        b = torch.full((3,), 2.0, device="mydev")
        c = a + b * 3                                   # broadcast; the 3 is a CPU number moved to mydev
        back = torch.arange(6.).reshape(2, 3).to("mydev")
        print(json.dumps({
            "device": str(e.device), "type": torch.device("mydev").type, "c_device": str(c.device),
            "c": c.cpu().tolist(), "roundtrip": back.cpu().tolist(), "t": back.t().cpu().tolist(),
            "allocated": mydev_backend.plugin.allocators["mydev"].allocated,
            "kernels": sorted(torch._C._tn_registered_kernels()["mydev"]["mydev"]),
        }))
    """, good))
    assert out["device"] == "mydev:0" and out["type"] == "mydev" and out["c_device"] == "mydev:0"
    assert out["c"] == [[7.0, 7.0, 7.0]] * 2
    assert out["roundtrip"] == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert out["t"] == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]  # non-contiguous: cloned on mydev by copy_
    assert out["allocated"] >= 5  # every mydev tensor above came from the plugin's allocator
    assert out["kernels"] == ["aten::add.Tensor", "aten::copy_", "aten::fill_.Scalar", "aten::mul.Tensor"]


def test_several_devices_at_once(good):
    out = _json(run_torch("""
        import json, torch
        a = torch.arange(3.).to("alpha")
        b = a.to("beta")                               # device to device, through the host
        m = torch.ones(3, device="mydev")
        errors = []
        for x, y in ((a, b), (m, torch.ones(3)), (torch.ones(3), m)):
            try:
                x + y
            except RuntimeError as e:
                errors.append(str(e))
        print(json.dumps({"devices": [str(t.device) for t in (a, b, m)], "b": (b + b).cpu().tolist(),
                          "errors": errors}))
    """, good))
    assert out["devices"] == ["alpha:0", "beta:0", "mydev:0"]
    assert out["b"] == [0.0, 2.0, 4.0]
    prefix = "Expected all tensors to be on the same device, but found at least two devices, "
    assert out["errors"] == [prefix + "alpha:0 and beta:0!", prefix + "mydev:0 and cpu!", prefix + "mydev:0 and cpu!"]


def test_device_indices_are_separate_memories(good):
    r = run_torch("""
        import json, torch, tn_alphabeta
        twin = tn_alphabeta.twin
        first, second = twin.allocators["twin"], twin.second
        counts = []
        def step(make):
            before = (first.allocated, second.allocated)
            t = make()
            counts.append([first.allocated - before[0], second.allocated - before[1]])
            return t
        a = step(lambda: torch.empty(3, device="twin:1"))
        a.copy_(torch.arange(3.0))
        b = step(lambda: a.to("twin:0"))
        c = step(lambda: b.to(torch.device("twin", 1)))
        out = {"devices": [str(a.device), str(b.device), str(c.device)], "counts": counts,
               "values": (c * 2).cpu().tolist()}
        for make in (lambda: torch.empty(1, device="twin:2"), lambda: a + b):
            try:
                make()
            except Exception as e:
                out.setdefault("errors", []).append(f"{type(e).__name__}: {e}")
        print(json.dumps(out))
    """, good)
    out = _json(r)
    assert out["devices"] == ["twin:1", "twin:0", "twin:1"]
    # each allocation went to the memory of its index, one allocation per tensor
    assert out["counts"] == [[0, 1], [1, 0], [0, 1]], out
    assert out["values"] == [0.0, 2.0, 4.0]
    assert out["errors"][0] == "RuntimeError: device 'twin:2' does not exist: its backend registered twin:0, twin:1"
    assert out["errors"][1].startswith("RuntimeError: Expected all tensors to be on the same device"), out["errors"]


def test_cpu_fallback_for_operators_a_device_lacks(good):
    out = _json(run_torch("""
        import json, torch
        x = torch.arange(6.).reshape(2, 3).to("mydev")
        z = torch.zeros(2, 3, device="mydev")
        z[:, 1] = 5                                    # index_put_ on a strided view, written back
        z.add_(1)
        nz = torch.nonzero(z > 3)                      # an output the cpu kernel allocates
        errors = []
        for f in (lambda: torch.arange(3.).to("alpha").exp(), lambda: torch.ones(2, device="picky")):
            try:
                f()
            except NotImplementedError as e:
                errors.append(str(e))
        print(json.dumps({"repr": repr(x), "exp": x.exp().t().cpu().tolist(), "z": z.cpu().tolist(),
                          "nz": [str(nz.device), nz.cpu().tolist()], "sum": [str(x.sum().device), x.sum().item()],
                          "errors": errors}))
    """, good))
    assert out["repr"] == "tensor([[0., 1., 2.],\n        [3., 4., 5.]], device='mydev:0')"
    cpu = run_torch("import json, torch; print(json.dumps(torch.arange(6.).reshape(2, 3).exp().t().tolist()))")
    assert out["exp"] == json.loads(cpu.stdout)
    assert out["z"] == [[1.0, 6.0, 1.0], [1.0, 6.0, 1.0]]
    assert out["nz"] == ["mydev:0", [[0, 1], [1, 1]]]
    assert out["sum"] == ["mydev:0", 15.0]
    refusal, picky = out["errors"]
    # the installed first-party backends (npu, vulkan) sort among the throwaway ones by name
    assert refusal.startswith(
        "aten.exp.default has no kernel for device 'alpha' (installed backends: alpha, beta, cpu, mydev, npu, picky, twin"), refusal
    assert picky == "picky: fill_ is not written yet"


def test_undeclared_device_is_rejected_as_upstream_does():
    r = run_torch("""
        import torch
        torch.device("mydev")
    """)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1] == (
        "RuntimeError: Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
        "lazy, vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: mydev")


def test_broken_plugins_are_recorded_and_skipped(good, broken):
    r = run_torch(RECORDS + "assert (torch.ones(2) + 1).tolist() == [2.0, 2.0]\n", good, broken)
    recs = _json(r)
    assert recs["broken"]["status"] == "error"
    assert recs["broken"]["reason"] == "RuntimeError: boom at import"
    assert recs["oldabi"] == {"status": "error", "reason": "ImportError: built for torchnative ABI 2.0, core speaks 1.1",
                              "keys": ["oldabi"]}
    assert recs["absent"] == {"status": "unavailable", "reason": "no absent hardware here", "keys": ["absent"]}
    assert recs["greedy"]["status"] == "error"
    assert recs["greedy"]["reason"].startswith("ValueError: plugin 'greedy' registered for device key 'cpu'")
    assert recs["typo"]["status"] == "error"
    assert recs["typo"]["reason"].startswith("PluginValidationError: unknown hook 'torchnative_regster'")
    assert recs["misnamed"]["reason"] == ("ValueError: plugin 'misnamed' registered a kernel for aten::add.tensor, "
                                          "which is no operator overload the core knows")
    assert recs["mute"] == {"status": "error", "reason": "TypeError: the plugin implements no torchnative_register hook",
                            "keys": ["mute"]}
    for name in ("cpu", "mydev", "alpha", "beta", "picky"):
        assert recs[name]["status"] == "ok", (name, recs[name])


def test_a_plugin_failing_half_way_leaves_nothing_registered(good, broken):
    r = run_torch("""
        import torch
        from torchnative_core.plugins import RECORDS
        assert RECORDS["halfway"].status == "error", RECORDS["halfway"]
        assert RECORDS["halfway"].reason == "RuntimeError: lost the device half way"
        assert "halfway" not in torch._C._tn_registered_kernels()
        assert (torch.ones(2, device="mydev") * 2).cpu().tolist() == [2.0, 2.0]
        torch.empty(2, device="halfway")
    """, good, broken)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: no allocator registered for device 'halfway'"), r.stderr[-2000:]


def test_a_failed_plugin_gives_back_what_it_had_overridden(good, broken):
    """The usurper registers after cpu (higher priority), replaces cpu's allocator and its
    add.Tensor kernel, then fails: cpu's own come back, so cpu computes as before."""
    r = run_torch("""
        import torch
        from torchnative_core.plugins import RECORDS
        assert RECORDS["usurper"].status == "error", RECORDS["usurper"]
        assert "usurper" not in torch._C._tn_registered_kernels()
        assert "aten::add.Tensor" in torch._C._tn_registered_kernels()["cpu"]["cpu"]
        x = torch.ones(3) + torch.arange(3.0)
        assert x.tolist() == [1.0, 2.0, 3.0], x
        print("ok")
    """, good, broken)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_unavailable_device_is_valid_but_names_what_is_missing(good, broken):
    r = run_torch("""
        import torch
        assert torch.device("absent").type == "absent"
        torch.empty(2, device="absent")
    """, good, broken)
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: no allocator registered for device 'absent'"), last


@pytest.mark.parametrize("env,needle", [
    ({"TORCHNATIVE_STRICT": "1", "TORCHNATIVE_BLOCK": "absent"}, "ImportError: torchnative backend 'broken' failed to load: RuntimeError: boom at import"),
    ({"TORCHNATIVE_BACKENDS": "cpu,oldabi"},
     "ImportError: torchnative backend 'oldabi' failed to load: ImportError: built for torchnative ABI 2.0, core speaks 1.1"),
    ({"TORCHNATIVE_BACKENDS": "cpu,absent"}, "ImportError: torchnative backend 'absent' is unavailable: no absent hardware here"),
    ({"TORCHNATIVE_BACKENDS": "cpu,metal"},  # (this asked for npu until tools/build.py built it)
     "ImportError: TORCHNATIVE_BACKENDS asks for 'metal', which no installed distribution provides "
     "(pip install torchnative[gpu])"),
])
def test_strict_or_named_plugins_fail_loudly(good, broken, env, needle):
    r = run_torch("import torch", good, broken, env=env)
    assert r.returncode != 0
    assert r.stderr.strip().splitlines()[-1] == needle, r.stderr[-2000:]
    if "STRICT" in env:
        assert "Traceback" in r.stderr and "boom at import" in r.stderr  # the root cause is chained


def test_allow_and_block_lists(good, broken):
    recs = _json(run_torch(RECORDS, good, broken, env={"TORCHNATIVE_BACKENDS": "cpu,mydev,alpha",
                                                       "TORCHNATIVE_BLOCK": "alpha"}))
    assert recs["mydev"]["status"] == "ok"
    assert recs["alpha"] == {"status": "blocked", "reason": "blocked by TORCHNATIVE_BLOCK", "keys": []}
    for name in ("beta", "picky", "broken", "oldabi"):
        assert recs[name] == {"status": "blocked", "reason": "not in TORCHNATIVE_BACKENDS", "keys": []}
    r = run_torch("import torch; torch.device('alpha')", good, env={"TORCHNATIVE_BLOCK": "alpha"})
    assert "device type at start of device string: alpha" in r.stderr  # a blocked plugin's key stays unknown


def test_pluggy_marked_module_plugin_and_priority(tmp_path, good):
    # A module as the plugin, hooks marked with torchnative.hookspecs.hookimpl; it declares
    # "mydev" too, with a higher priority than the template, so its add.Tensor wins there.
    site = write_dist(tmp_path / "site", "tn-override", {"override": "tn_override"}, {"tn_override.py": """
        from torchnative.hookspecs import Descriptor, hookimpl
        import mydev_backend.kernels as K

        @hookimpl
        def torchnative_describe():
            return Descriptor(name="override", device_keys=("mydev",), abi_version=1 << 16, priority=10)

        @hookimpl
        def torchnative_register(registrar):
            registrar.register_kernel("add.Tensor", "mydev", lambda args, outs: K.mul(args[:2], outs))
            return 1
    """})
    out = _json(run_torch("""
        import json, torch
        x = torch.full((2,), 3.0, device="mydev")
        owners = {p: sorted(d.get("mydev", [])) for p, d in torch._C._tn_registered_kernels().items()}
        print(json.dumps({"sum": (x + x).cpu().tolist(), "owners": owners}))
    """, site, good))
    assert out["sum"] == [9.0, 9.0]  # the override's "add" multiplies
    assert out["owners"]["override"] == ["aten::add.Tensor"]
    assert "aten::add.Tensor" not in out["owners"]["mydev"]


def test_without_the_cpu_backend_torch_imports_and_refuses_by_name():
    # cpu is a plugin like any other: blocked, nothing registers for "cpu", and the first
    # allocation names what to install.
    r = run_torch("""
        import torch
        from torchnative_core.plugins import RECORDS
        assert RECORDS["cpu"].status == "blocked" and torch.device("cpu").type == "cpu"
        torch.ones(2) + 1
    """, env={"TORCHNATIVE_BLOCK": "cpu"})
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: no allocator registered for device 'cpu'"), r.stderr[-2000:]
    assert "pip install torchnative[cpu]" in last
