"""`torch._C._functorch`: the transform stack and batched tensors of torchnative_core.functorch.

vmap, grad and jvp are real (functorch/); a grad or jvp transform wraps no tensor (its graph is
the core's one autograd graph), so no tensor is a GradTrackingTensor. Upstream's Python
interpreter objects (pyfunctorch) stay off: `peek_interpreter_stack` answers None, so
`autograd.Function` takes its plain path (functorch/functions.py handles it there).
functionalize's entry points are with the functional wrappers (torchnative_core/functionalize)."""

from __future__ import annotations

from ..functorch import batched as _batched
from ..functorch import forward as _forward
from ..functorch import grad as _grad
from ..functorch import levels as _levels

_state = {"inplace_requires_grad": False, "single_level_autograd_function": False}


def is_functorch_wrapped_tensor(tensor):
    return _batched.info(tensor) is not None


def is_batchedtensor(tensor):
    return _batched.info(tensor) is not None


def is_legacy_batchedtensor(tensor):
    return False


def is_gradtrackingtensor(tensor):
    return False


def is_functionaltensor(tensor):
    from ..functionalize import tensor as functional

    return functional.is_functional(tensor)


def _unwrap_functional_tensor(tensor, reapply_views=False):
    from ..functionalize import tensor as functional

    functional.sync(tensor)
    return functional.unwrap(tensor)


def get_unwrapped(tensor):
    i = _batched.info(tensor)
    if i is None:
        raise RuntimeError("get_unwrapped: expected a functorch wrapped tensor")
    return i[0]


def maybe_get_level(tensor):
    i = _batched.info(tensor)
    return i[2] if i else -1


def maybe_get_bdim(tensor):
    i = _batched.info(tensor)
    return i[1] if i else -1


def maybe_current_level():
    s = _levels.stack()
    return s[-1].level if s else None


def current_level():
    s = _levels.stack()
    if not s:
        raise RuntimeError("current_level: no functorch transform is active")
    return s[-1].level


def _vmap_increment_nesting(batch_size, randomness):
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {randomness}")
    return _levels.push("vmap", int(batch_size), randomness)


def _vmap_decrement_nesting():
    return _levels.pop("vmap")


def _grad_increment_nesting():
    return _grad.increment_nesting()


def _grad_decrement_nesting():
    return _grad.decrement_nesting()


def _wrap_for_grad(tensor, level):
    return _grad.wrap_for_grad(tensor, level)


def _unwrap_for_grad(tensor, level):
    return _grad.unwrap_for_grad(tensor, level)


def _add_batch_dim(tensor, batch_dim, level):
    return _batched.add_batch_dim(tensor, batch_dim, level)


def _remove_batch_dim(tensor, level, batch_size, out_dim):
    return _batched.remove_batch_dim(tensor, level, batch_size, out_dim)


def _unwrap_batched(tensor, level):
    return _batched.unwrap_batched(tensor, level)


def _jvp_increment_nesting():
    return _forward.jvp_increment_nesting()


def _jvp_decrement_nesting():
    return _forward.jvp_decrement_nesting()


def count_jvp_interpreters():
    return sum(1 for e in _levels.stack() if e.kind == "jvp")


def get_dynamic_layer_stack_depth():
    return len(_levels.stack())


def pop_dynamic_layer_stack_and_undo_to_depth(depth):
    _levels.undo_to_depth(depth)


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


def _exit_dual_level(level):
    _forward.exit_dual_level(level)


def install(C) -> None:
    from .placeholders import module_for

    _DisableFuncTorch.__module__ = "torch._C"
    C._DisableFuncTorch = _DisableFuncTorch
    from ..functorch import legacy

    for name, fn in (("_enter_dual_level", _forward.enter_dual_level), ("_exit_dual_level", _exit_dual_level),
                     ("_vmapmode_increment_nesting", legacy.increment_nesting),
                     ("_vmapmode_decrement_nesting", legacy.decrement_nesting),
                     ("_set_fwd_grad_enabled", _forward.set_fwd_grad_enabled),
                     ("_is_fwd_grad_enabled", _forward.is_fwd_grad_enabled)):
        setattr(C, name, fn)

    mod = module_for(C, "torch._C._functorch")
    for fn in (is_functorch_wrapped_tensor, is_batchedtensor, is_legacy_batchedtensor, is_gradtrackingtensor,
               is_functionaltensor, get_unwrapped, maybe_get_level, maybe_get_bdim, maybe_current_level,
               current_level, count_jvp_interpreters, get_dynamic_layer_stack_depth, get_interpreter_stack,
               pop_dynamic_layer_stack_and_undo_to_depth,
               peek_interpreter_stack, unwrap_if_dead, set_inplace_requires_grad_allowed,
               get_inplace_requires_grad_allowed, set_single_level_autograd_function_allowed,
               get_single_level_autograd_function_allowed, _vmap_increment_nesting, _vmap_decrement_nesting,
               _grad_increment_nesting, _grad_decrement_nesting, _wrap_for_grad, _unwrap_for_grad,
               _add_batch_dim, _remove_batch_dim, _unwrap_batched, _unwrap_functional_tensor, _jvp_increment_nesting, _jvp_decrement_nesting):
        fn.__module__ = "torch._C._functorch"
        setattr(mod, fn.__name__, fn)
