"""The `torch._C` functions that upstream's fake and meta tensor machinery calls
(torch._subclasses.fake_tensor, meta_utils): FakeTensorMode itself is upstream's Python, consulted
at the door as an infra mode; a fake tensor is a meta tensor of a FakeTensor class."""

from __future__ import annotations

_lift = {"cpu_only": False}  # FakeTensorMode's only-lift-CPU-tensors switch


def _ensureCUDADeviceGuardSet():
    # Upstream installs a stand-in CUDA device guard so fake CUDA tensors can be made on a
    # machine without CUDA; torchnative's device guards are per backend and need none.
    return None


def _set_throw_on_mutable_data_ptr(tensor):
    # FakeTensor marks its storage so that asking for a data pointer raises. A fake tensor's
    # storage here is a meta storage, which never reaches a kernel; nothing more to mark.
    return None


def _set_warn_deprecated_on_mutable_data_ptr(tensor):
    return None


def _only_lift_cpu_tensors():
    return _lift["cpu_only"]


def _set_only_lift_cpu_tensors(value):
    _lift["cpu_only"] = bool(value)


def _set_conj(tensor, value):
    # torchnative has no conjugate or negative views (no complex dtypes yet): the bits are
    # always off, and MetaConverter copies them off.
    if value:
        raise RuntimeError("torchnative: conjugate views are not supported (no complex dtypes yet)")


def _set_neg(tensor, value):
    if value:
        raise RuntimeError("torchnative: negative views are not supported (no complex dtypes yet)")


# upstream's at::native::ConvBackend, in its order (aten/src/ATen/native/ConvUtils.h)
_CONV_BACKENDS = ("CudaDepthwise2d", "CudaDepthwise3d", "Cudnn", "CudnnTranspose", "Empty", "Miopen",
                  "MiopenDepthwise", "MiopenTranspose", "Mkldnn", "MkldnnTranspose", "MkldnnEmpty", "NnpackSpatial",
                  "Overrideable", "Slow2d", "Slow3d", "SlowDilated2d", "SlowDilated3d", "SlowTranspose2d",
                  "SlowTranspose3d", "Winograd3x3Depthwise", "Xnnpack2d", "Mps", "MpsTranspose")


def _select_conv_backend(input, weight, bias=None, stride=None, padding=None, dilation=None, transposed=False,
                         output_padding=None, groups=1, bias_sizes=None):
    """Which convolution algorithm runs, in upstream's vocabulary: torchnative's cpu kernels are
    direct (im2col + GEMM) ones, upstream's Slow* family, chosen by dimension and transposition."""
    import torch

    B = torch._C._ConvBackend
    if input.numel() == 0 or weight.numel() == 0:
        return B.Empty
    dims = input.dim() - 2
    if transposed:
        return B.SlowTranspose3d if dims == 3 else B.SlowTranspose2d
    dilated = dilation is not None and any(d != 1 for d in dilation)
    if dims == 3:
        return B.SlowDilated3d if dilated else B.Slow3d
    return B.SlowDilated2d if dilated else B.Slow2d


def _conv_determine_backend_memory_format(input, weight, backend):
    # torchnative's convolution kernels write contiguous outputs whatever the operands' layout
    # (upstream's oneDNN path writes channels_last for channels_last operands; a known layout
    # difference, values agree), so fake tensors get the strides the real run gives.
    import torch

    return torch.contiguous_format


def install(C) -> None:
    import enum

    conv_backend = enum.IntEnum("_ConvBackend", list(_CONV_BACKENDS), start=0, module="torch._C")
    C._ConvBackend = conv_backend
    for fn in (_set_conj, _set_neg, _select_conv_backend, _conv_determine_backend_memory_format,
               _ensureCUDADeviceGuardSet, _set_throw_on_mutable_data_ptr, _set_warn_deprecated_on_mutable_data_ptr,
               _only_lift_cpu_tensors, _set_only_lift_cpu_tensors):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
