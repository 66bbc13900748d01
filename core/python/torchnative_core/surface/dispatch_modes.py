"""TorchDispatchMode bookkeeping beyond the mode stack and the infra-mode slots (both live in
Rust, at the door, where they are consulted): the flags torch.utils._python_dispatch and
FakeTensorMode keep in sync with C++ (the guards, _DisableTorchDispatch among them, are with
the dispatch-key sets in dispatch_keys.py)."""

from __future__ import annotations

_flags = {"mode_without_ignore_compile_internals": False}


# Upstream's python_arg_parser.cpp list: operators whose Tensor arguments accept Python numbers.
_NUMBERS_AS_TENSORS = frozenset(
    f"{base}{suffix}" for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract", "true_divide",
                                   "floor_divide") for suffix in ("", "_", "_out")
) | {"to", "_to_copy", "copy_", "copy", "_conj"}


def _should_allow_numbers_as_tensors(name):
    return name in _NUMBERS_AS_TENSORS


def _meta_in_tls_dispatch_include():
    # Meta in the thread's include set (FakeTensorMode's kernel invocations; restored by
    # _PreserveDispatchKeyGuard, which is why it lives in the set, not in a flag).
    from torch._C import DispatchKey

    from .dispatch_keys import included

    return included(DispatchKey.Meta)


def _set_meta_in_tls_dispatch_include(value):
    from torch._C import DispatchKey

    from .dispatch_keys import set_included

    set_included(DispatchKey.Meta, value)


def _functionality_to_backend_keys(key):
    return [key]


def set_is_in_mode_without_ignore_compile_internals(value):
    _flags["mode_without_ignore_compile_internals"] = bool(value)


def get_is_in_mode_without_ignore_compile_internals():
    return _flags["mode_without_ignore_compile_internals"]


def install(C) -> None:
    from .placeholders import module_for

    for fn in (_should_allow_numbers_as_tensors, _meta_in_tls_dispatch_include,
               _set_meta_in_tls_dispatch_include, _functionality_to_backend_keys):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
    guards = module_for(C, "torch._C._dynamo.guards")
    for fn in (set_is_in_mode_without_ignore_compile_internals, get_is_in_mode_without_ignore_compile_internals):
        fn.__module__ = "torch._C._dynamo.guards"
        setattr(guards, fn.__name__, fn)
