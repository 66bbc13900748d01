"""Functionalization on the core: upstream's FunctionalTensorWrapper, its Functionalize dispatch
key and the `torch._functionalize_*` entry points its Python (FunctionalTensorMode, AOTAutograd,
`torch.export`'s `run_decompositions`) drives. tensor.py holds the wrappers and their shared
storage, step.py the door step; `install` puts upstream's names on `torch._C`."""

from __future__ import annotations

from ..ops import base as B
from . import step
from . import tensor as F

_tls = step._REAPPLY


def _inner(t):
    """A FunctionalTensor (the Python subclass upstream wraps around a wrapper) or a wrapper."""
    return t.elem if not F.is_functional(t) and hasattr(t, "elem") else t


def _state(t):
    w = F.state(_inner(t))
    if w is None:
        raise RuntimeError("expected a functional tensor (torch._to_functional_tensor)")
    return w


def _to_functional_tensor(t):
    if F.is_functional(t):
        raise RuntimeError("tensor is already a functional tensor")
    return F.make(t)


def _from_functional_tensor(t):
    return F.unwrap(_inner(t)) if F.is_functional(_inner(t)) else t


def _is_functional_tensor(t):
    return F.is_functional(t)


def _is_functional_tensor_base(t):
    return F.is_functional(t) and not F.state(t).metas


def _sync(t):
    if F.is_functional(_inner(t)):
        F.sync(_inner(t))


def _functionalize_sync(t):
    F.sync(_inner(t))


def _functionalize_replace(t, other):
    F.replace(_inner(t), other)


def _functionalize_commit_update(t):
    F.commit_update(_inner(t))


def _functionalize_mark_mutation_hidden_from_autograd(t):
    _state(t).storage.mutations_hidden += 1


def _functionalize_has_data_mutation(t):
    return _state(t).storage.generation > 0


def _functionalize_has_metadata_mutation(t):
    return _state(t).metadata_mutated


def _functionalize_was_storage_changed(t):
    return _state(t).storage_changed


def _functionalize_mark_storage_changed(t):
    w = _state(t)
    w.storage_changed = True
    w.storage.storage_changes += 1


def _functionalize_are_all_mutations_under_no_grad_or_inference_mode(t):
    s = _state(t).storage
    return s.mutations_no_grad == s.mutations


def _functionalize_are_all_mutations_hidden_from_autograd(t):
    s = _state(t).storage
    return s.mutations_hidden == s.mutations


def _functionalize_is_symbolic(t):
    return False


def _functionalize_get_storage_size(t, before):
    s = _state(t).storage
    return s.nbytes_before if before else F._nbytes(s.base)


def _functionalize_was_inductor_storage_resized(t):
    return False


def _functionalize_inductor_storage_resized_counter(t):
    return 0


def _functionalize_mutation_counter(t):
    return _state(t).storage.mutations


def _functionalize_storage_changed_counter(t):
    return _state(t).storage.storage_changes


def _functionalize_is_multi_output_view(t):
    metas = _state(t).metas
    return bool(metas) and metas[-1].multi


def _functionalize_apply_view_metas(tensor, base):
    out = base
    for m in _state(tensor).metas:
        out = m.forward(out)
    return out


def _functionalize_unsafe_set(dst, src):
    # Upstream points dst's storage at src's without touching dst's geometry (the aliasing
    # return_and_correct_aliasing restores for wrapper subclasses); ours are meta storages, so
    # one too small for dst's geometry (a view grown by expand) is first grown.
    need = dst.untyped_storage().nbytes()
    if src.untyped_storage().nbytes() < need:
        src.untyped_storage().resize_(need)
    dst._tn_set_storage_from(src, list(dst.shape), list(dst.stride()), dst.storage_offset())


def _functionalize_enable_reapply_views(reapply_views=False):
    old = _tls["on"]
    _tls["on"] = bool(reapply_views)
    return old


def _functionalization_reapply_views_tls():
    return _tls["on"]


def _enable_functionalization(*, reapply_views=False):
    _tls["on"] = bool(reapply_views)
    B.C._tn_set_functionalize_tls(True)


def _disable_functionalization():
    _tls["on"] = False
    B.C._tn_set_functionalize_tls(False)


def _freeze_functional_tensor(t):
    _state(t).storage.frozen = True


def _mirror_autograd_meta_to(src, dst):
    dst._tn_requires_grad = bool(src.requires_grad)


def _view_meta_class(op):
    cls = _VIEW_META_CLASSES.get(op)
    if cls is None:
        cls = _VIEW_META_CLASSES[op] = type(op.replace(".", "_") + "_ViewMeta", (step.ViewMeta,), {"__slots__": ()})
    return cls


_VIEW_META_CLASSES: dict = {}


def get_view_meta_sequence(t):
    """`torch._C._functionalization.get_view_meta_sequence`: the wrapper's views, each an
    instance of a class named for its operator (`view_ViewMeta`), as upstream's."""
    return [_view_meta_class(m.op)(m.op, m.args, m.out_index, m.multi) for m in _state(t).metas]


def apply_view_meta_sequence(base, sequence):
    out = base
    for m in sequence:
        out = m.forward(out)
    return out


# --- torch.func.functionalize (torch._C._functorch) ----------------------------------------------

def _func_increment_nesting(reapply_views):
    """A functionalize transform level: until it is popped, factories' results are wrapped too
    (the Functionalize key in the thread's include set, as upstream's dynamic layer puts it)."""
    from ..functorch import levels

    level = levels.push("functionalize")
    levels.layer(level).saved = (B.C._tn_set_functionalize_tls(True), _tls["on"])
    _tls["on"] = bool(reapply_views)
    return level


def _func_decrement_nesting():
    from ..functorch import levels

    entry = levels.stack()[-1] if levels.stack() else None
    levels.pop("functionalize")
    tls, reapply = entry.saved
    B.C._tn_set_functionalize_tls(tls)
    _tls["on"] = reapply


def _wrap_functional_tensor(t, level):
    return F.make(t)


def _assert_wrapped_functional(unwrapped, wrapped):
    if not F.is_functional(wrapped) or F.unwrap(wrapped) is not unwrapped:
        raise RuntimeError("functionalize: expected the wrapped tensor to be a functional wrapper of the input")


def _propagate_functional_input_mutation(unwrapped, wrapped):
    """An input the function mutated gets the new value (upstream's: resized, restrided, then
    copied into)."""
    F.sync(wrapped)
    inner = F.unwrap(wrapped)
    if inner is unwrapped:
        return
    if unwrapped.untyped_storage().nbytes() != inner.untyped_storage().nbytes() and unwrapped.numel() == 0:
        unwrapped.resize_(inner.shape)
    if unwrapped.shape != inner.shape:
        unwrapped.as_strided_(inner.shape, inner.stride())
    unwrapped.copy_(inner)


_FUNCTORCH = (_func_increment_nesting, _func_decrement_nesting, _wrap_functional_tensor, _assert_wrapped_functional,
              _propagate_functional_input_mutation)


_VARIABLE_FUNCTIONS = (
    _to_functional_tensor, _from_functional_tensor, _is_functional_tensor, _is_functional_tensor_base, _sync,
    _functionalize_sync, _functionalize_replace, _functionalize_commit_update,
    _functionalize_mark_mutation_hidden_from_autograd, _functionalize_has_data_mutation,
    _functionalize_has_metadata_mutation, _functionalize_was_storage_changed, _functionalize_mark_storage_changed,
    _functionalize_are_all_mutations_under_no_grad_or_inference_mode,
    _functionalize_are_all_mutations_hidden_from_autograd, _functionalize_is_symbolic,
    _functionalize_get_storage_size, _functionalize_was_inductor_storage_resized,
    _functionalize_inductor_storage_resized_counter, _functionalize_mutation_counter,
    _functionalize_storage_changed_counter, _functionalize_is_multi_output_view, _functionalize_apply_view_metas,
    _functionalize_unsafe_set, _functionalize_enable_reapply_views, _enable_functionalization,
    _disable_functionalization, _freeze_functional_tensor, _mirror_autograd_meta_to)


def install(C, VF) -> None:
    from ..surface.placeholders import module_for

    C._tn_install_functionalize(step.handle)
    for fn in _VARIABLE_FUNCTIONS:
        fn.__module__ = "torch._C._VariableFunctions"
        setattr(type(VF), fn.__name__, staticmethod(fn))
    _functionalization_reapply_views_tls.__module__ = "torch._C"
    C._functionalization_reapply_views_tls = _functionalization_reapply_views_tls
    functorch = module_for(C, "torch._C._functorch")
    for fn in _FUNCTORCH:
        fn.__module__ = "torch._C._functorch"
        setattr(functorch, fn.__name__, fn)
    mod = module_for(C, "torch._C._functionalization")
    for fn in (get_view_meta_sequence, apply_view_meta_sequence):
        fn.__module__ = "torch._C._functionalization"
        setattr(mod, fn.__name__, fn)
