"""TorchDispatchMode bookkeeping beyond the mode stack (which lives in Rust, at the door):
infra-mode slots (FAKE/PROXY/FUNCTIONAL) and the flags torch.utils._python_dispatch keeps in
sync with C++. Infra modes are recorded here; the door consults only the user mode stack, so
FakeTensorMode and friends do not intercept operators yet (docs/STATUS.md)."""

from __future__ import annotations

_infra: dict = {}
_flags = {"mode_without_ignore_compile_internals": False, "meta_in_tls": False}


def _get_dispatch_mode(key):
    return _infra.get(key)


def _set_dispatch_mode(mode):
    _infra[mode._mode_key] = mode


def _unset_dispatch_mode(key):
    return _infra.pop(key, None)


def _meta_in_tls_dispatch_include():
    return _flags["meta_in_tls"]


def _set_meta_in_tls_dispatch_include(value):
    _flags["meta_in_tls"] = bool(value)


def _functionality_to_backend_keys(key):
    return [key]


def set_is_in_mode_without_ignore_compile_internals(value):
    _flags["mode_without_ignore_compile_internals"] = bool(value)


def get_is_in_mode_without_ignore_compile_internals():
    return _flags["mode_without_ignore_compile_internals"]


class _DisableTorchDispatch:
    """Python dispatch off while inside (upstream: a context manager over the
    DisableTorchDispatch guard): the TorchDispatchMode stack is set aside and restored."""

    def __enter__(self):
        import torch

        C = torch._C
        self._saved = [C._pop_torch_dispatch_stack() for _ in range(C._len_torch_dispatch_stack())]
        return self

    def __exit__(self, *exc):
        import torch

        for mode in reversed(self._saved):
            torch._C._push_on_torch_dispatch_stack(mode)
        return False


def install(C) -> None:
    from .placeholders import module_for

    _DisableTorchDispatch.__module__ = "torch._C"
    C._DisableTorchDispatch = _DisableTorchDispatch

    for fn in (_get_dispatch_mode, _set_dispatch_mode, _unset_dispatch_mode, _meta_in_tls_dispatch_include,
               _set_meta_in_tls_dispatch_include, _functionality_to_backend_keys):
        fn.__module__ = "torch._C"
        setattr(C, fn.__name__, fn)
    guards = module_for(C, "torch._C._dynamo.guards")
    for fn in (set_is_in_mode_without_ignore_compile_internals, get_is_in_mode_without_ignore_compile_internals):
        fn.__module__ = "torch._C._dynamo.guards"
        setattr(guards, fn.__name__, fn)
