"""`__torch_function__` machinery of `torch._C`: the mode stack, the enable/disable guards and
the `has_torch_function` probes (upstream: torch/csrc/utils/python_arg_parser.cpp,
torch/csrc/autograd/python_torch_functions_manual.cpp, torch/csrc/utils/disable_torch_function.cpp)."""

from __future__ import annotations

# The state and the mode stack live in core/src/torch_function.rs (per thread, read on every
# call); these names are bound to its functions by `install`.
mode_active = None  # () -> bool: a TorchFunctionMode sees calls now
_state = None  # () -> 0 enabled, 1 subclasses disabled, 2 all disabled
_set_state = None


def _relevant_args(args, kwargs):
    """The tensors among a call's arguments (top level and inside lists/tuples), the arguments
    upstream's parser hands to __torch_function__ overrides."""
    from torch._C import TensorBase

    out = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, TensorBase):
            out.append(a)
        elif isinstance(a, (list, tuple)):
            out.extend(x for x in a if isinstance(x, TensorBase))
    return out


def torch_function_args(args, kwargs):
    """`_relevant_args` plus the non-tensor arguments that carry a `__torch_function__`."""
    from torch._C import TensorBase

    out = []

    def visit(a):
        if isinstance(a, TensorBase) or (not isinstance(a, type) and hasattr(a, "__torch_function__")):
            out.append(a)

    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            for x in a:
                visit(x)
        else:
            visit(a)
    return out


def with_modes(fn):
    """`fn` as upstream binds it: while a TorchFunctionMode is active (`with torch.device(...)`,
    DeviceContext, user modes), the call goes to the mode's __torch_function__ with the returned
    wrapper as the public function, as upstream's C++ bindings do. Without a mode, `fn` runs
    directly (one thread-local lookup)."""
    import functools

    @functools.wraps(fn)
    def public(*args, **kwargs):
        if mode_active():
            from torch.overrides import handle_torch_function

            return handle_torch_function(public, _relevant_args(args, kwargs), *args, **kwargs)
        return fn(*args, **kwargs)

    return public


_DISPATCH_OVERRIDES: dict = {}


def overrides_torch_dispatch(cls) -> bool:
    """Whether a tensor class has a `__torch_dispatch__` of its own (not the disabled default
    torch.Tensor carries)."""
    hit = _DISPATCH_OVERRIDES.get(cls)
    if hit is None:
        import torch

        fn = getattr(cls, "__torch_dispatch__", None)
        hit = _DISPATCH_OVERRIDES[cls] = fn is not None and getattr(fn, "__func__", fn) is not torch._C._disabled_torch_dispatch_impl
    return hit


def install(C) -> None:
    TB = C.TensorBase

    def _disabled_torch_function_impl(func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        with DisableTorchFunctionSubclass():
            return func(*args, **kwargs)

    def _disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
        raise NotImplementedError("__torch_dispatch__ is disabled for this tensor")

    global mode_active, _state, _set_state
    mode_active, _state, _set_state = C._tn_tf_mode_active, C._tn_tf_state, C._tn_tf_set_state
    C._tn_tf_set_refs(_disabled_torch_function_impl)

    def _is_torch_function_enabled():
        return _state() == 0

    def _is_torch_function_all_disabled():
        return _state() == 2

    def _is_torch_function_mode_enabled():
        return mode_active()

    class DisableTorchFunctionSubclass:
        def __enter__(self):
            self._old = _state()
            if self._old == 0:
                _set_state(1)

        def __exit__(self, *exc):
            _set_state(self._old)

    class DisableTorchFunction:
        def __enter__(self):
            self._old = _state()
            _set_state(2)

        def __exit__(self, *exc):
            _set_state(self._old)

    class _EnableTorchFunction:
        def __enter__(self):
            self._old = _state()
            _set_state(0)

        def __exit__(self, *exc):
            _set_state(self._old)

    import enum

    # not in the stubs; torch.overrides and torch.testing read and restore the state with it
    _TorchFunctionState = enum.IntEnum("_TorchFunctionState", [("ENABLED", 0), ("SUBCLASSES_DISABLED", 1),
                                                               ("ALL_DISABLED", 2)])

    def _get_torch_function_state():
        return _TorchFunctionState(_state())

    def _set_torch_function_state(state):
        _set_state(int(state))

    C._get_torch_function_state = _get_torch_function_state
    C._set_torch_function_state = _set_torch_function_state
    for cls in (DisableTorchFunctionSubclass, DisableTorchFunction, _EnableTorchFunction, _TorchFunctionState):
        cls.__module__ = "torch._C"
        setattr(C, cls.__name__, cls)
    C._tn_tensor_class_ref = [None]

    def __init_subclass__(cls, **kwargs):
        # The door's Python-key step costs a Python call per operator, so it is switched on
        # only once a subclass overriding __torch_dispatch__ exists (FakeTensor, user wrappers).
        super(TB, cls).__init_subclass__(**kwargs)
        if overrides_torch_dispatch(cls):
            C._tn_enable_python_dispatch(cls)

    TB.__init_subclass__ = classmethod(__init_subclass__)
    for fn in (_disabled_torch_function_impl, _disabled_torch_dispatch_impl, _is_torch_function_enabled,
               _is_torch_function_all_disabled, _is_torch_function_mode_enabled):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
