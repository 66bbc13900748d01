"""The legacy constructor `torch.Tensor(...)` (upstream: legacy_tensor_ctor in
torch/csrc/utils/tensor_new.cpp), called by TensorBase.__new__ in core/src/tensor.rs when it is
not wrapping a tensor of ours. The result's storage becomes the new object's.

  torch.Tensor()               an empty tensor of the default dtype
  torch.Tensor(2, 3)           uninitialised, of those sizes (also torch.Tensor(torch.Size([2, 3])))
  torch.Tensor([1, 2])         from data (any nested sequence; a tuple is data too)
  torch.Tensor(t)              an alias of t
  torch.Tensor(storage)        a 1-d tensor over the storage
"""

from __future__ import annotations


def tensor_new(args, kwargs, dtype=None):
    import torch

    kwargs = dict(kwargs or {})
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"new() received an invalid combination of arguments - got unexpected {sorted(kwargs)}")
    dtype = dtype or torch.get_default_dtype()
    if not args:
        return torch.empty(0, dtype=dtype, device=device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, torch.Tensor):
            return a.view(a.shape) if a.dtype == dtype else a.to(dtype)
        if isinstance(a, torch.Size):
            return torch.empty(tuple(a), dtype=dtype, device=device)
        if isinstance(a, (torch.UntypedStorage, torch.TypedStorage)):
            return torch.empty(0, dtype=dtype, device=device).set_(a)
        if not isinstance(a, int):
            return torch.tensor(a, dtype=dtype, device=device)
    if all(isinstance(a, int) and not isinstance(a, bool) for a in args):
        return torch.empty(args, dtype=dtype, device=device)
    raise TypeError(f"new() received an invalid combination of arguments - got {tuple(type(a).__name__ for a in args)}")


class tensortype(type):
    """The metaclass of the legacy typed tensor classes (upstream: torch.tensortype, from
    torch/csrc/tensor/python_tensor.cpp): `torch.LongTensor([1, 2])` constructs with that dtype,
    `isinstance(t, torch.LongTensor)` checks dtype and device."""

    def __call__(cls, *args, **kwargs):
        return tensor_new(args, kwargs, cls.dtype)

    def __instancecheck__(cls, obj):
        import torch

        return isinstance(obj, torch.Tensor) and obj.dtype == cls.dtype and obj.device.type == "cpu"


LEGACY_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                "BFloat16Tensor": "bfloat16", "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}


def install_tensor_types(torch):
    """Called by torch._C._initExtension, as upstream's initialize_python_bindings."""
    tensortype.__module__ = "torch"
    for name, dtype in LEGACY_TYPES.items():
        cls = tensortype(name, (object,), {"__module__": "torch", "dtype": getattr(torch, dtype), "is_cuda": False,
                                           "is_sparse": False, "layout": torch.strided})
        setattr(torch, name, cls)
