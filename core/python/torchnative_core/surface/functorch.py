"""`torch._C._functorch` queries with no transform active: torchnative has no functorch
interpreters yet, so the dynamic layer stack is a real, empty stack and no tensor is ever a
functorch wrapper. The transforms themselves (vmap, grad, jvp, functionalize) stay refusing
placeholders."""

from __future__ import annotations

_state = {"inplace_requires_grad": False, "single_level_autograd_function": False}


def is_functorch_wrapped_tensor(tensor):
    return False


def is_batchedtensor(tensor):
    return False


def is_legacy_batchedtensor(tensor):
    return False


def is_gradtrackingtensor(tensor):
    return False


def is_functionaltensor(tensor):
    return False


def get_unwrapped(tensor):
    raise RuntimeError("get_unwrapped: expected a functorch wrapped tensor")


def maybe_get_level(tensor):
    return -1


def maybe_get_bdim(tensor):
    return -1


def maybe_current_level():
    return None


def current_level():
    raise RuntimeError("current_level: no functorch transform is active")


def count_jvp_interpreters():
    return 0


def get_dynamic_layer_stack_depth():
    return 0


def get_interpreter_stack():
    return []


def peek_interpreter_stack():
    return None


def unwrap_if_dead(tensor):
    return tensor


def set_inplace_requires_grad_allowed(allowed):
    _state["inplace_requires_grad"] = bool(allowed)


def get_inplace_requires_grad_allowed():
    return _state["inplace_requires_grad"]


def set_single_level_autograd_function_allowed(allowed):
    _state["single_level_autograd_function"] = bool(allowed)


def get_single_level_autograd_function_allowed():
    return _state["single_level_autograd_function"]


class _DisableFuncTorch:
    """Turns functorch transforms off while inside; torchnative runs none, so there is nothing to
    set aside (upstream uses it around RNG state changes in torch.testing)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def install(C) -> None:
    from .placeholders import module_for

    _DisableFuncTorch.__module__ = "torch._C"
    C._DisableFuncTorch = _DisableFuncTorch

    mod = module_for(C, "torch._C._functorch")
    for fn in (is_functorch_wrapped_tensor, is_batchedtensor, is_legacy_batchedtensor, is_gradtrackingtensor,
               is_functionaltensor, get_unwrapped, maybe_get_level, maybe_get_bdim, maybe_current_level,
               current_level, count_jvp_interpreters, get_dynamic_layer_stack_depth, get_interpreter_stack,
               peek_interpreter_stack, unwrap_if_dead, set_inplace_requires_grad_allowed,
               get_inplace_requires_grad_allowed, set_single_level_autograd_function_allowed,
               get_single_level_autograd_function_allowed):
        fn.__module__ = "torch._C._functorch"
        setattr(mod, fn.__name__, fn)
