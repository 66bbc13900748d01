"""End-to-end check of the Python side of torchnative-cpu: the entry-point object, and the
`register(capsule)` handshake against a fake core built with ctypes (the same `TnRegistrar`
layout as core/abi/src/lib.rs).

    python -m pytest backends/cpu/tests/test_plugin.py     # with torchnative_cpu importable
                                                           # (maturin develop, or a built wheel)
"""

import ctypes

import pytest

torchnative_cpu = pytest.importorskip("torchnative_cpu")
plugin = torchnative_cpu.plugin

c_void_p, c_char_p, c_int32, c_uint32, c_size_t = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int32, ctypes.c_uint32, ctypes.c_size_t

KERNEL_FN = ctypes.CFUNCTYPE(c_int32, c_void_p, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, c_void_p)
REGISTER_KERNEL = ctypes.CFUNCTYPE(c_int32, c_void_p, c_char_p, c_char_p, c_void_p, c_void_p)
ALLOC = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_size_t, c_size_t)
FREE = ctypes.CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_size_t)
COPY = ctypes.CFUNCTYPE(c_int32, c_void_p, c_void_p, c_void_p, c_size_t)


class TnAllocator(ctypes.Structure):
    _fields_ = [("struct_size", c_uint32), ("user", c_void_p), ("alloc", ALLOC), ("free", FREE),
                ("copy_from_host", COPY), ("copy_to_host", COPY)]


REGISTER_ALLOCATOR = ctypes.CFUNCTYPE(c_int32, c_void_p, c_char_p, ctypes.POINTER(TnAllocator))


class TnRegistrar(ctypes.Structure):
    _fields_ = [("abi_version", c_uint32), ("struct_size", c_uint32), ("core", c_void_p), ("plugin", c_char_p),
                ("register_kernel", REGISTER_KERNEL), ("register_allocator", REGISTER_ALLOCATOR)]


def make_capsule(abi_version, refuse=()):
    seen = {"kernels": [], "allocators": []}

    @REGISTER_KERNEL
    def register_kernel(core, op, device, kernel, user):
        if op.decode() in refuse:
            return 1
        seen["kernels"].append((op.decode(), device.decode()))
        return 0

    @REGISTER_ALLOCATOR
    def register_allocator(core, device, alloc):
        a = alloc.contents
        p = a.alloc(None, 0, 8)
        assert p and p % 64 == 0
        a.free(None, p, 0, 8)
        seen["allocators"].append(device.decode())
        return 0

    reg = TnRegistrar(abi_version, ctypes.sizeof(TnRegistrar), None, b"cpu", register_kernel, register_allocator)
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [c_void_p, c_char_p, c_void_p]
    capsule = new(ctypes.addressof(reg), b"torchnative.registrar", None)
    # Keep the callbacks and the struct alive with the capsule.
    return capsule, seen, (reg, register_kernel, register_allocator)


def test_descriptor():
    assert plugin.name == "cpu"
    assert plugin.device_keys == ("cpu",)
    assert plugin.priority == 100
    assert plugin.is_available() == (True, "")
    assert plugin.abi_version == torchnative_cpu._native.ABI_VERSION == (1 << 16)


def test_register_counts_every_kernel():
    capsule, seen, keep = make_capsule(1 << 16)
    n = plugin.register(capsule)
    assert n == len(plugin.kernel_names()) == len(seen["kernels"])
    assert seen["allocators"] == ["cpu"]
    assert ("aten::add.Tensor", "cpu") in seen["kernels"]


def test_refused_kernel_is_skipped():
    capsule, seen, keep = make_capsule(1 << 16, refuse={"aten::mm"})
    n = plugin.register(capsule)
    assert n == len(plugin.kernel_names()) - 1
    assert torchnative_cpu._native.refused_kernels() == [("aten::mm", 1)]


def test_other_major_raises_import_error():
    capsule, seen, keep = make_capsule(2 << 16)
    with pytest.raises(ImportError, match=r"ABI 1\.0.*ABI 2\.0"):
        plugin.register(capsule)
    assert seen["kernels"] == []


def test_wrong_capsule_name():
    new = ctypes.pythonapi.PyCapsule_New
    new.restype = ctypes.py_object
    new.argtypes = [c_void_p, c_char_p, c_void_p]
    with pytest.raises(ValueError):
        plugin.register(new(ctypes.addressof(ctypes.c_int(1)), b"something.else", None))
