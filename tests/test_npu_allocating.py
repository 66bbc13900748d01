"""registrar.register_allocating_kernel (torchnative_core/allocating.py), the core hook the npu
backend's index.Tensor needs: a Python kernel for an operator whose output size depends on the
data is called before allocation and allocates its outputs itself. Shown with a throwaway
pure-Python device ("adev") implementing nonzero; a plugin ("bdev") whose registration fails after
registering one leaves none behind."""

import json

import pytest

from plugin_dists import run_torch, write_dist

pytestmark = pytest.mark.runtime

PLUGIN = '''
import ctypes
from types import SimpleNamespace

import numpy as np


class Alloc:
    def __init__(self):
        self.blocks = {}

    def alloc(self, nbytes, align):
        buf = ctypes.create_string_buffer(nbytes + align)
        a = -(-ctypes.addressof(buf) // align) * align
        self.blocks[a] = buf
        return a

    def free(self, address, nbytes):
        del self.blocks[address]

    def copy_from_host(self, dst, src, n):
        ctypes.memmove(dst, src, n)

    def copy_to_host(self, dst, src, n):
        ctypes.memmove(dst, src, n)


def nonzero(args):
    import torch
    x = args[0]
    n = x.numel()
    raw = (ctypes.c_float * max(n, 1)).from_address(x.data_ptr())
    a = np.frombuffer(raw, dtype=np.float32, count=n).reshape(tuple(x.shape))  # contiguous input
    idx = np.ascontiguousarray(np.argwhere(a), dtype=np.int64)
    out = torch._C._tn_empty(list(idx.shape), 4, "{key}", 0)
    if idx.size:
        ctypes.memmove(out.data_ptr(), idx.ctypes.data, idx.nbytes)
    return [(0, out)]


class Plugin:
    def torchnative_describe(self):
        return SimpleNamespace(name="{name}", device_keys=("{key}",), priority=0, abi_version=1 << 16,
                               available=True, reason="")

    def torchnative_register(self, registrar):
        registrar.register_allocator("{key}", Alloc())
        registrar.register_allocating_kernel("nonzero", "{key}", nonzero)
        {fail}
        return 1


plugin = Plugin()
'''


def _plugin(name, key, fail):
    return PLUGIN.replace("{name}", name).replace("{key}", key).replace("{fail}", fail)


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    good = write_dist(tmp_path_factory.mktemp("adev") / "site", "tn-adev", {"adev": "tn_adev:plugin"},
                      {"tn_adev.py": _plugin("adev", "adev", "")})
    bad = write_dist(tmp_path_factory.mktemp("bdev") / "site", "tn-bdev", {"bdev": "tn_bdev:plugin"},
                     {"tn_bdev.py": _plugin("bdev", "bdev", "raise RuntimeError('half way')")})
    return good, bad


def test_an_allocating_python_kernel_gives_nonzero_its_data_dependent_shape(sites):
    r = run_torch("""
        import json, torch
        x = torch.tensor([[0.0, 1.5, 0.0], [2.0, 0.0, 3.0]]).to("adev")
        nz = torch.nonzero(x)
        from torchnative_core import allocating
        from torchnative_core.plugins import RECORDS
        print(json.dumps({"device": str(nz.device), "nz": nz.cpu().tolist(), "bdev": RECORDS["bdev"].status,
                          "left": sorted(k for k, _ in allocating.KERNELS if _ in ("adev", "bdev"))}))
    """, *sites)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["device"] == "adev:0" and out["nz"] == [[0, 1], [1, 0], [1, 2]]
    # bdev registered an allocating kernel, then failed: nothing of it stays
    assert out["bdev"] == "error" and out["left"] == ["nonzero"]  # adev's only
