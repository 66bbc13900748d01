"""The `torch._C` functions with behaviour that upstream's Python calls at import and at run
time: extension init, grad mode, default dtype, threads, warnings, torch-function state, and
backend discovery. Each answers as a CPU-only upstream build answers."""

from __future__ import annotations

import os
import threading

from . import types as T

_state = threading.local()


def _tls(name, default):
    v = getattr(_state, name, None)
    if v is None:
        v = default() if callable(default) else default
        setattr(_state, name, v)
    return v


class _Globals:
    default_dtype = T.BY_NAME["float32"]
    deterministic = False
    deterministic_warn_only = False
    matmul_precision = "highest"
    warn_always = False
    num_threads = os.cpu_count() or 1
    num_interop_threads = os.cpu_count() or 1


G = _Globals()


def install(C) -> None:
    fns = {}

    def export(fn):
        fns[fn.__name__] = fn
        return fn

    @export
    def _initExtension(shm_manager_path):
        import torch

        C._tn_set_tensor_class(torch.Tensor)
        C._tn_tensor_class_ref[0] = torch.Tensor
        for name, d in T.BY_NAME.items():
            setattr(torch, name, d)
        for table in (T.LAYOUTS, T.MEMORY_FORMATS, T.QSCHEMES):
            for name, v in table.items():
                setattr(torch, name, v)
        from .. import plugins
        from ..legacy_ctor import install_tensor_types

        install_tensor_types(torch)
        _set_default_storage(G.default_dtype)
        plugins.load_backends(C)

    # grad mode itself is native (the door reads it on every call): torch._C.is_grad_enabled

    from .placeholders import module_for

    # torch.onnx reads it at import (upstream: the torch version the exporter stamps in models)
    module_for(C, "torch._C._onnx").PRODUCER_VERSION = "2.13.0"
    from . import cpuinfo

    cpuinfo.install(C)

    # quantized engines: torchnative has none (c10::QEngine::NoQEngine is 0)
    _qengine = [0]

    @export
    def _supported_qengines():
        return [0]

    @export
    def _get_qengine():
        return _qengine[0]

    @export
    def _set_qengine(engine):
        if int(engine) not in _supported_qengines():
            raise RuntimeError("quantized engine " + str(engine) + " is not supported")
        _qengine[0] = int(engine)

    # fp32 precision per (backend, op) (torch.backends.*.fp32_precision): upstream's defaults on a
    # CPU build; no kernel of ours reads them (ours compute float32 in float32)
    _fp32 = {("cuda", "conv"): "tf32", ("cuda", "rnn"): "tf32"}

    @export
    def _get_fp32_precision_getter(backend, op):
        return _fp32.get((backend, op), "none")

    @export
    def _set_fp32_precision_setter(backend, op, value):
        if value not in ("none", "ieee", "tf32", "bf16"):
            raise RuntimeError(f"Invalid fp32 precision {value}")
        _fp32[(backend, op)] = value
        return value

    @export
    def _accelerator_getAccelerator():
        # no accelerator device is registered by a backend yet (what a CPU-only upstream build says)
        return None

    @export
    def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
        """Groups position i of every list by the (device, dtype) of tensorlistlist[0][i]
        (optimizers and clip_grad_norm_ use it to batch per device and dtype)."""
        groups = {}
        for i, t in enumerate(tensorlistlist[0]):
            if t is None:
                continue
            key = (t.device, t.dtype)
            lists, idx = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
            for j, tl in enumerate(tensorlistlist):
                lists[j].append(tl[i])
            if with_indices:
                idx.append(i)
        return groups
    # inference mode is native too (the door marks what it makes): torch._C.is_inference_mode_enabled

    @export
    def _get_default_dtype():
        return G.default_dtype

    def _set_default_storage(d):
        # torch.Storage follows the default dtype (upstream's set_default_storage_type)
        import torch

        name = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
                "bfloat16": "BFloat16Storage", "complex64": "ComplexFloatStorage",
                "complex128": "ComplexDoubleStorage"}.get(str(d).replace("torch.", ""))
        if name and hasattr(torch, name):
            torch.Storage = getattr(torch, name)

    @export
    def _set_default_dtype(d):
        if not d.is_floating_point and not d.is_complex:
            raise TypeError("only floating-point types are supported as the default type")
        G.default_dtype = d
        _set_default_storage(d)

    @export
    def get_default_dtype():
        return G.default_dtype

    @export
    def _set_deterministic_algorithms(mode, warn_only=False):
        G.deterministic, G.deterministic_warn_only = bool(mode), bool(warn_only)

    @export
    def _get_deterministic_algorithms():
        return G.deterministic

    @export
    def _get_deterministic_algorithms_warn_only():
        return G.deterministic_warn_only

    @export
    def _get_float32_matmul_precision():
        return G.matmul_precision

    @export
    def _set_float32_matmul_precision(p):
        G.matmul_precision = p

    @export
    def _set_warnAlways(b):
        G.warn_always = bool(b)

    @export
    def _get_warnAlways():
        return G.warn_always

    @export
    def get_num_threads():
        return G.num_threads

    @export
    def set_num_threads(n):
        # upstream's checks and messages (torch/csrc/Module.cpp), then every backend is told
        if not isinstance(n, int) or isinstance(n, bool):
            raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
        if n <= 0:
            raise RuntimeError("set_num_threads expects a positive integer")
        G.num_threads = n
        from .. import plugins

        plugins.set_num_threads(n)

    @export
    def get_num_interop_threads():
        return G.num_interop_threads

    @export
    def set_num_interop_threads(n):
        G.num_interop_threads = int(n)

    @export
    def _add_docstr(obj, doc):
        try:
            obj.__doc__ = doc
        except (AttributeError, TypeError):
            pass
        return obj

    @export
    def _dlpack_exchange_api():
        # Upstream returns a capsule of C function pointers for DLPack exchange; torchnative
        # does not offer that C interface (DLPack goes through __dlpack__ in Python).
        return None

    @export
    def _get_custom_class_python_wrapper(ns, name):
        # TorchScript custom classes: only the ones upstream's core registers itself exist
        # (as inert handles); user torch::class_ registrations are impossible without a JIT.
        if ns == "aten" and name in ("OpaqueObject",):
            from .placeholders import _refusing_class

            return _refusing_class("torch.classes.aten", name, {"methods": []})
        raise RuntimeError(f"Tried to instantiate class '{ns}.{name}', but it does not exist! Ensure that it is registered via torch::class_")

    @export
    def _autograd_init():
        # torch._C._autograd is built at _C import (torchnative_core.autograd); as upstream's
        # THPAutograd_initExtension, this learns torch.nn.Parameter, which `has_torch_function`
        # treats as a plain tensor.
        from torch.nn.parameter import Parameter

        C._tn_tf_set_parameter_class(Parameter)
        return True

    _opaque_types = {}

    @export
    def _register_opaque_type(cls, *args, **kwargs):
        _opaque_types[getattr(cls, "__qualname__", repr(cls))] = (cls, args, kwargs)

    @export
    def _is_opaque_type(t):
        return getattr(t, "__qualname__", repr(t)) in _opaque_types

    @export
    def _multiprocessing_init():
        # Upstream injects a prctl(PR_SET_PDEATHSIG) helper into torch.multiprocessing.
        import sys

        def _prctl_pr_set_pdeathsig(signal):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, int(signal), 0, 0, 0) != 0:  # PR_SET_PDEATHSIG == 1
                raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")

        sys.modules["torch.multiprocessing"]._prctl_pr_set_pdeathsig = _prctl_pr_set_pdeathsig
        return True

    # MTIA's Python module probes these unconditionally; upstream's CPU build answers so.
    @export
    def _mtia_isInBadFork():
        return False

    @export
    def _mtia_isBuilt():
        return False

    @export
    def _mtia_getDeviceCount():
        return 0

    _privateuse1 = ["privateuseone"]

    @export
    def _get_privateuse1_backend_name():
        return _privateuse1[0]

    @export
    def _rename_privateuse1_backend(name):
        _privateuse1[0] = name

    # autocast: real per-device state; torchnative runs no autocast casts yet, so enabling it
    # changes what these report but not how operators compute (recorded in docs/STATUS.md).
    _autocast = {"enabled": {}, "dtype": {"cpu": T.BY_NAME["bfloat16"], "cuda": T.BY_NAME["float16"]}, "nesting": 0}

    @export
    def is_autocast_enabled(device_type="cuda"):
        return _autocast["enabled"].get(device_type, False)

    @export
    def set_autocast_enabled(device_type, enabled=None):
        if enabled is None:
            device_type, enabled = "cuda", device_type
        _autocast["enabled"][device_type] = bool(enabled)

    @export
    def _is_any_autocast_enabled():
        return any(_autocast["enabled"].values())

    @export
    def get_autocast_dtype(device_type):
        return _autocast["dtype"].get(device_type, T.BY_NAME["float16"])

    @export
    def set_autocast_dtype(device_type, dtype):
        _autocast["dtype"][device_type] = dtype

    # The deprecated per-device spellings (upstream's autograd/init.cpp): each warns and forwards
    # to the device-generic function.
    _autocast["dtype"].update({"xla": T.BY_NAME["bfloat16"], "ipu": T.BY_NAME["float16"]})

    def _deprecated(name, device, kind):
        import warnings

        # kind -> (the device-generic function, its name, the argument the call passes on)
        target, generic, arg = {"is": (is_autocast_enabled, "is_autocast_enabled", ""),
                                "set": (set_autocast_enabled, "set_autocast_enabled", "enabled"),
                                "get_dtype": (get_autocast_dtype, "get_autocast_dtype", ""),
                                "set_dtype": (set_autocast_dtype, "set_autocast_dtype", "dtype")}[kind]
        message = (f"torch.{name}({arg}) is deprecated. Please use "
                   f"torch.{generic}('{device}'{', ' + arg if arg else ''}) instead.")

        def fn(*args):
            warnings.warn(message, DeprecationWarning, stacklevel=2)
            return target(device, *args)

        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = "torch._C"
        setattr(C, name, fn)

    for dev, spelled in (("cpu", "cpu"), ("ipu", "ipu"), ("xla", "xla")):
        _deprecated(f"is_autocast_{spelled}_enabled", dev, "is")
        _deprecated(f"set_autocast_{spelled}_enabled", dev, "set")
        _deprecated(f"get_autocast_{spelled}_dtype", dev, "get_dtype")
        _deprecated(f"set_autocast_{spelled}_dtype", dev, "set_dtype")
    _deprecated("get_autocast_gpu_dtype", "cuda", "get_dtype")
    _deprecated("set_autocast_gpu_dtype", "cuda", "set_dtype")

    @export
    def _is_autocast_available(device_type):
        return device_type == "cpu"

    @export
    def clear_autocast_cache():
        return None

    @export
    def autocast_increment_nesting():
        _autocast["nesting"] += 1
        return _autocast["nesting"]

    @export
    def autocast_decrement_nesting():
        _autocast["nesting"] -= 1
        return _autocast["nesting"]

    _autocast["cache"] = True

    @export
    def is_autocast_cache_enabled():
        return _autocast["cache"]

    @export
    def set_autocast_cache_enabled(enabled):
        _autocast["cache"] = bool(enabled)

    # The engine runs backward on the calling thread; this records the switch that
    # torch.autograd.set_multithreading_enabled turns (upstream: per-device worker threads).
    _engine = {"multithreading": True}

    @export
    def _is_multithreading_enabled():
        return _engine["multithreading"]

    @export
    def _set_multithreading_enabled(enabled):
        _engine["multithreading"] = bool(enabled)

    @export
    def _are_functorch_transforms_active():
        return False

    # torch.backends.mps probes these; a build without Metal answers False.
    @export
    def _mps_is_available():
        return False

    @export
    def _mps_is_on_macos_or_newer(major, minor):
        return False

    @export
    def _c10d_init():
        # torch._C._distributed_c10d is built at _C import from the stubs; its process groups
        # and stores are placeholders until the federated issue lands a real backend. The
        # names must exist: torch._dynamo imports torch.distributed.fsdp unconditionally.
        return True

    @export
    def _get_default_device():
        # The legacy default-tensor-type device: torchnative only has CPU default tensor types.
        return "cpu"

    @export
    def _init_names(names):
        # Upstream names its legacy storage classes here; torchnative has none to rename.
        return None

    @export
    def _log_api_usage_once(*args):
        return None

    @export
    def _log_api_usage_metadata(*args, **kwargs):
        return None

    @export
    def _tn_scalar_to_tensor(x):
        """A Python number as a 0-dim 'wrapped number' tensor (int64/float64/bool/complex128)."""
        from ..ops.factories import tensors as factories

        return factories.wrapped_number(x)

    import enum

    class _LinAlgError(RuntimeError):
        pass

    # Enums upstream binds for scaled_mm; not in the stubs. Member names from
    # aten/src/ATen/native/cuda/ScaledBlas (used only to build arguments).
    _ScalingType = enum.IntEnum("_ScalingType", ["TensorWise", "RowWise", "BlockWise1x16", "BlockWise1x32",
                                                 "BlockWise1x128", "BlockWise128x128"], start=0)
    _SwizzleType = enum.IntEnum("_SwizzleType", ["NO_SWIZZLE", "SWIZZLE_32_4_4"], start=0)
    for cls in (_LinAlgError, _ScalingType, _SwizzleType):
        cls.__module__ = "torch._C"
        setattr(C, cls.__name__, cls)

    # TensorBase is a PyO3 class whose metaclass is `type`; upstream's _TensorMeta only adds
    # C-level slots, so subclasses such as _ParameterMeta derive from `type` here.
    C._TensorMeta = type
    C._TensorBase = C.TensorBase  # the legacy alias upstream keeps

    for name, fn in fns.items():
        fn.__module__ = "torch._C"
        setattr(C, name, fn)
