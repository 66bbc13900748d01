"""Operators that read or set a tensor's metadata (sizes, strides, autograd flags, layout
dimensions, dtype queries and promotion: is_floating_point, result_type, promote_types) and the
small views and casts upstream composes from them (`mT`, `adjoint`, `numpy_T`, `chalf`,
`type_as`, `fill_diagonal_`, `can_cast`). The Tensor methods are native; these are the same
things reached as `torch.ops.aten` overloads.
"""

from __future__ import annotations

from .. import base as B
from .. import impl
from ..elementwise.math import _num


D = B.door


@impl("dim")
def dim(self):
    return self.dim()


@impl("numel", "sym_numel")
def numel(self):
    return self.numel()


@impl("size.int", "sym_size.int")
def size_int(self, d):
    return self.size(d)


@impl("stride.int", "sym_stride.int")
def stride_int(self, d):
    return self.stride(d)


@impl("storage_offset", "sym_storage_offset")
def storage_offset(self):
    return self.storage_offset()


@impl("is_contiguous")
def is_contiguous(self):
    return self.is_contiguous()


@impl("is_contiguous.memory_format")
def is_contiguous_format(self, memory_format):
    return self.is_contiguous(memory_format=memory_format)


@impl("get_device")
def get_device(self):
    return self.get_device()


@impl("requires_grad_")
def requires_grad_(self, requires_grad=True):
    d = self.dtype
    if requires_grad and not (d.is_floating_point or d.is_complex):
        # the operator's wording (VariableTypeManual.cpp); Tensor.requires_grad_ words it otherwise
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")
    return self.requires_grad_(requires_grad)


@impl("retain_grad")
def retain_grad(self):
    self.retain_grad()


@impl("retains_grad")
def retains_grad(self):
    return self.retains_grad


@impl("is_leaf")
def is_leaf(self):
    return self.is_leaf


@impl("output_nr")
def output_nr(self):
    return self.output_nr


@impl("_version")
def version(self):
    return self._version


@impl("data")
def data(self):
    return self.data


@impl("set_data")
def set_data(self, new_data):
    self.data = new_data


@impl("is_neg")
def is_neg(self):
    return self.is_neg()


@impl("is_conj")
def is_conj(self):
    return self.is_conj()


@impl("is_inference")
def is_inference(self):
    return self.is_inference()


@impl("is_distributed")
def is_distributed(self):
    return False  # upstream's answer for every tensor (a THD leftover)


@impl("dense_dim")
def dense_dim(self):
    return self.dim()  # a strided tensor: all its dimensions are dense


@impl("sparse_dim")
def sparse_dim(self):
    return 0


@impl("mT")
def m_t(self):
    return self.mT


@impl("mH")
def m_h(self):
    return self.mH


@impl("adjoint")
def adjoint(self):
    if self.dim() == 1:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return self.mH


@impl("matrix_H")
def matrix_h(self):
    return self.H


@impl("numpy_T")
def numpy_t(self):
    return B.door("permute", self, list(range(self.dim() - 1, -1, -1)))


@impl("chalf")
def chalf(self, memory_format=None):
    import torch

    return self.to(torch.complex32, memory_format=memory_format if memory_format is not None else torch.preserve_format)


@impl("to_dense")
def to_dense(self, dtype=None, masked_grad=None):
    # a strided tensor is its own dense form (TensorConversions.cpp); other layouts do not exist here
    return self if dtype is None else self.to(dtype)


@impl("can_cast")
def can_cast(from_, to):
    # c10::canCast: no complex to real, no floating to integral, nothing but bool to bool
    import torch

    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex) and to is not torch.bool:
        return False
    return not (from_ is not torch.bool and to is torch.bool)


@impl("fill_diagonal_")
def fill_diagonal_(self, fill_value, wrap=False):
    # upstream's Fill.cpp: the main diagonal as one strided view, and for a tall 2-d matrix with
    # wrap=True the diagonals that restart every width + 1 rows
    n = self.dim()
    if n < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = self.size(0), self.size(1)
    if n > 2 and any(self.size(i) != height for i in range(1, n)):
        raise RuntimeError("all dimensions of input must be of equal length")
    stride = sum(self.stride(i) for i in range(n))
    size = min(height, width)
    offset = self.storage_offset()
    B.door("fill_.Scalar", B.door("as_strided", self, [size], [stride], offset), fill_value)
    if wrap and n == 2 and height > width + 1:
        step = width + 1
        wrap_size = (self.numel() + step - 1) // step - size
        B.door("fill_.Scalar", B.door("as_strided", self, [wrap_size], [stride], offset + self.stride(0) * step),
               fill_value)
    return self


# Pinned (page-locked) host memory serves an accelerator's copies; upstream without one refuses
# to pin (a CPU-only build, as here: at::getAccelerator(true)). Programs probe for it this way.
NO_PINNING = "Cannot access accelerator device when none is available."


@impl("is_pinned")
def is_pinned(self, device=None):
    return False


@impl("pin_memory")
def pin_memory(self, device=None):
    raise RuntimeError(NO_PINNING)


def refuse_pinned_factories(impls, schemas):
    """Every implementation of a factory with a `pin_memory` argument refuses `pin_memory=True`
    for a result in host memory (empty, zeros, full, arange, the windows, new_*, *_like, ...)
    before it runs; on another device (meta) upstream ignores the flag, and so do `to`/`_to_copy`."""
    for op, fn in list(impls.items()):
        schema = schemas.get(op)
        if schema is None or op.partition(".")[0] in ("to", "_to_copy", "from_file"):  # (from_file: its own words)
            continue
        names = [a.name for a in schema.args]
        if "pin_memory" in names:
            like = bool(schema.args) and schema.args[0].base_type == "Tensor"  # new_*, *_like: self's device
            impls[op] = _refusing_pinned(fn, names.index("pin_memory"), names.index("device") if "device" in names
                                         else None, like)


def _refusing_pinned(fn, pin, dev, like):
    def run(*args, **kwargs):
        if len(args) > pin and args[pin]:
            device = args[dev] if dev is not None and len(args) > dev else None
            if device is None:
                device = args[0].device if like else "cpu"
            if str(device).startswith("cpu"):
                raise RuntimeError(NO_PINNING)
        return fn(*args, **kwargs)

    run.__name__ = getattr(fn, "__name__", "factory")
    run.__wrapped__ = fn
    return run


@impl("is_floating_point")
def is_floating_point(self):
    return B.dtype_of(self).is_floating_point


@impl("is_complex")
def is_complex(self):
    return B.dtype_of(self).is_complex


@impl("promote_types")
def promote_types(type1, type2):
    return B.promote_types(type1, type2)


def _tn(d):
    from ..elementwise.arithmetic import _type_name

    return _type_name(d)


@impl("result_type.Tensor")
def result_type_tensor(tensor, other):
    return B.result_type(tensor, other)


@impl("result_type.Scalar")
def result_type_scalar(tensor, other):
    return B.result_type(tensor, other)


@impl("result_type.Scalar_Tensor")
def result_type_scalar_tensor(scalar, tensor):
    return B.result_type(scalar, tensor)


@impl("result_type.Scalar_Scalar")
def result_type_scalars(scalar1, scalar2):
    return B.result_type(_num(scalar1), _num(scalar2))


@impl("type_as")
def type_as(self, other):
    # upstream: self.to(other.options())
    return B.call("to.dtype_layout", self, B.dtype_of(other), device=B.device_of(other))


@impl("is_signed")
def is_signed(self):
    return self.dtype.is_signed
