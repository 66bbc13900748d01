"""core/abi/include/torchnative_abi.h describes the same layout as the Rust ABI crate: a backend
written in C against the header alone (compiled here with the system C compiler) registers an
allocator and a kernel through the core's registrar, and a torch program runs on its device."""

import shutil
import subprocess

import pytest

from plugin_dists import REPO, run_torch, write_dist

pytestmark = [pytest.mark.runtime, pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")]

C_BACKEND = r"""
#include <stdio.h>
#include <stdlib.h>
#include "torchnative_abi.h"

static void *dev_alloc(void *u, size_t n, size_t align) { return aligned_alloc(align, ((n + align - 1) / align + 1) * align); }
static void dev_free(void *u, void *p, size_t n, size_t align) { free(p); }
static int32_t dev_copy(void *u, void *dst, const void *src, size_t n) {
    for (size_t i = 0; i < n; i++) ((char *)dst)[i] = ((const char *)src)[i];
    return 0;
}

/* fill_.Scalar(Tensor(a!) self, Scalar value) for float32, any strides */
static int32_t fill(void *user, const TnKernelCtx *ctx, const TnArg *args, size_t nargs,
                    TnTensor *outs, size_t nouts, TnError *err) {
    const TnTensor *t = &outs[0];
    if (t->dtype != TN_FLOAT32) {
        err->kind = TN_ERR_NOT_IMPLEMENTED;
        snprintf(err->message, err->capacity, "cdev: fill_ on dtype code %d", t->dtype);
        return 1;
    }
    float v = args[1].kind == TN_ARG_FLOAT ? (float)args[1].f : (float)args[1].i;
    int64_t idx[16] = {0}, numel = 1;
    for (int d = 0; d < t->ndim; d++) numel *= t->sizes[d];
    for (int64_t k = 0; k < numel; k++) {
        int64_t off = 0;
        for (int d = 0; d < t->ndim; d++) off += idx[d] * t->strides[d];
        ((float *)t->data)[off] = v;
        for (int d = t->ndim - 1; d >= 0 && ++idx[d] == t->sizes[d]; d--) idx[d] = 0;
    }
    return 0;
}

int tn_register(const TnRegistrar *reg) {
    if (!tn_abi_compatible(reg->abi_version, TN_ABI_VERSION)) return -1;
    if (reg->struct_size < sizeof(TnRegistrar)) return -2;
    static TnAllocator a = {sizeof(TnAllocator), NULL, dev_alloc, dev_free, dev_copy, dev_copy};
    if (reg->register_allocator(reg->core, "cdev", &a) != 0) return -3;
    if (reg->register_kernel(reg->core, "aten::fill_.Scalar", "cdev", fill, NULL) != 0) return -4;
    /* an overload the core does not know is refused, and so is a key the descriptor did not declare */
    if (reg->register_kernel(reg->core, "aten::fill_.Scalr", "cdev", fill, NULL) != 2) return -7;
    if (reg->register_kernel(reg->core, "aten::fill_.Scalar", "cpu", fill, NULL) != 3) return -5;
    if (reg->register_allocator(reg->core, "cpu", &a) != 3) return -6;
    return 1;
}
"""

PLUGIN = """
import ctypes, os
from types import SimpleNamespace

lib = ctypes.CDLL(os.path.join(os.path.dirname(__file__), "libcdev.so"))
_get = ctypes.pythonapi.PyCapsule_GetPointer
_get.restype, _get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]


class Plugin:
    def torchnative_describe(self):
        return SimpleNamespace(name="cdev", device_keys=("cdev",), abi_version=1 << 16)

    def torchnative_register(self, registrar):
        n = lib.tn_register(ctypes.c_void_p(_get(registrar.capsule, b"torchnative.registrar")))
        if n < 0:
            raise RuntimeError(f"cdev registration failed ({n})")
        return n


plugin = Plugin()
"""


def test_c_backend_from_the_header_alone(tmp_path):
    site = write_dist(tmp_path / "site", "cdev", {"cdev": "cdev_plugin:plugin"}, {"cdev_plugin.py": PLUGIN})
    (tmp_path / "cdev.c").write_text(C_BACKEND)
    cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-Wno-unused-parameter", "-shared", "-fPIC",
                         "-I", str(REPO / "core/abi/include"), str(tmp_path / "cdev.c"), "-o", str(site / "libcdev.so")],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    r = run_torch("""
        import torch
        x = torch.full((2, 3), 2.5, device="cdev")
        x[:, 1].fill_(7)                                   # a strided view (stride 3)
        print(x.device, x.cpu().tolist())
        torch.zeros(2, dtype=torch.int64, device="cdev")
    """, site)
    assert r.stdout.split(" ", 1)[0] == "cdev:0", r.stderr
    assert r.stdout.split(" ", 1)[1] == "[[2.5, 7.0, 2.5], [2.5, 7.0, 2.5]]\n"
    assert r.stderr.strip().splitlines()[-1] == "NotImplementedError: cdev: fill_ on dtype code 4"
