"""`torch._C._dynamo` pieces that `import torch._dynamo` needs (transformers and
TorchDispatchMode import it through torch._compile). Frame evaluation itself (PEP 523) needs
CPython internals that the stable ABI does not offer, so torch.compile is refused; these are the
plain data types and registries around it, which record what they are given."""

from __future__ import annotations

_registry = {"guard_error_hook": None, "code_strategies": {}, "skip_codes": set()}


class _FrameExecStrategy:
    def __init__(self, cur_action=None, recursive_action=None):
        from torch._C._dynamo.eval_frame import _FrameAction

        self.cur_action = _FrameAction.DEFAULT if cur_action is None else cur_action
        self.recursive_action = _FrameAction.DEFAULT if recursive_action is None else recursive_action


def set_guard_error_hook(hook):
    _registry["guard_error_hook"] = hook


def set_code_exec_strategy(code, strategy):
    _registry["code_strategies"][code] = strategy


def get_code_exec_strategy(code):
    return _registry["code_strategies"].get(code)


def set_eval_frame(callback):
    # No frame hook can be installed: report that none was active, as upstream does when off.
    return None


def set_skip_guard_eval_unsafe(value):
    return False


class NullStackValue:
    """The marker dynamo's bytecode debugger shows for a NULL stack slot."""

    def __repr__(self):
        return "<NULL>"


_compiled_autograd = {"compiler": None, "dynamic": False}


def set_autograd_compiler(compiler, dynamic):
    """Compiled autograd's compiler slot; torchnative's engine never calls it (there is no graph
    compiler to hand the backward to), but torch.func sets it aside around its backward passes."""
    prior = (_compiled_autograd["compiler"], _compiled_autograd["dynamic"])
    _compiled_autograd["compiler"], _compiled_autograd["dynamic"] = compiler, dynamic
    return prior


def install(C) -> None:
    from .placeholders import module_for

    ca = module_for(C, "torch._C._dynamo.compiled_autograd")
    set_autograd_compiler.__module__ = "torch._C._dynamo.compiled_autograd"
    ca.set_autograd_compiler = set_autograd_compiler

    ef = module_for(C, "torch._C._dynamo.eval_frame")
    for obj in (_FrameExecStrategy, set_guard_error_hook, set_code_exec_strategy, get_code_exec_strategy,
                set_eval_frame, set_skip_guard_eval_unsafe):
        obj.__module__ = "torch._C._dynamo.eval_frame"
        setattr(ef, obj.__name__, obj)
    NullStackValue.__module__ = "torch._C._dynamo.eval_frame"
    ef.NullStackValue = NullStackValue
    ef.NULL_STACK_VALUE = NullStackValue()
    ef.py_opcode_caches = []
