"""Autograd: the graph recorded at the door, the engine upstream's `torch.autograd` calls, and
`torch.autograd.Function` support.

    graph.py     nodes, edges, saved tensors, per-tensor autograd metadata
    record.py    the door's autograd step (records a node per differentiable operator call)
    formula.py   how backward formulas are declared; formulas/ holds them, by family
    engine.py    torch._C._ImperativeEngine (run_backward)
    function.py  torch._C._FunctionBase (custom autograd.Function)
    tensor.py    the Tensor members autograd owns (grad, grad_fn, is_leaf, retain_grad, ...)
"""

from __future__ import annotations


def install(C):
    """Publishes autograd's _C names; returns the door's autograd handler."""
    from ..surface.placeholders import module_for
    from . import engine, formulas, function, graph, record, tensor  # noqa: F401  (formulas register by import)

    record.C = engine.C = function.C = C
    C._tn_install_record(graph.SavedTensor, graph.grad_accumulator, graph.tensor_meta, graph._DEVICE_CODE,
                         record.composed_rest)
    C._tn_install_saved(graph._pack)
    functions = module_for(C, "torch._C._functions")
    graph.AccumulateGrad.__module__ = "builtins"
    functions.AccumulateGrad = graph.AccumulateGrad
    for cls in (graph.UndefinedGrad, graph.DelayedError, graph.UndefinedGradBackward, graph.DelayedErrorBackward):
        cls.__module__ = "torch._C._functions"
        setattr(functions, cls.__name__, cls)
    for name in formulas.node_names():
        graph.node_class(name, functions)

    engine.ImperativeEngine.__module__ = "torch._C"
    engine.ImperativeEngine.__name__ = engine.ImperativeEngine.__qualname__ = "_ImperativeEngine"
    C._ImperativeEngine = engine.ImperativeEngine
    function.FunctionBase.__module__ = "torch._C"
    function.FunctionBase.__name__ = function.FunctionBase.__qualname__ = "_FunctionBase"
    C._FunctionBase = function.FunctionBase

    C._current_graph_task_id = engine.current_graph_task_id
    C.is_anomaly_enabled = lambda: engine.ANOMALY["enabled"]
    C.is_anomaly_check_nan_enabled = lambda: engine.ANOMALY["check_nan"]
    C.set_anomaly_enabled = C._set_anomaly_enabled = engine.set_anomaly_enabled
    C._current_autograd_node = engine.current_node
    C._will_engine_execute_node = lambda node: True
    C._increment_version = lambda t: t._tn_bump_version()
    C._autograd._unsafe_set_version_counter = _unsafe_set_version_counter
    _tls_objs: dict = {}
    C._stash_obj_in_tls = lambda key, obj: _tls_objs.__setitem__(key, obj)
    C._remove_obj_from_tls = lambda key: _tls_objs.pop(key, None)
    C._is_key_in_tls = lambda key: key in _tls_objs
    C._get_obj_in_tls = lambda key: _tls_objs[key]
    C._InferenceMode = _inference_mode_class(C)
    _install_saved_tensor_hooks(C._autograd, graph.SavedTensorHooks, C._tn_saved_hooks_depth)
    graph.SavedTensor.__module__ = "torch._C._autograd"
    C._autograd.SavedTensor = graph.SavedTensor
    C._autograd._make_saved_tensor = lambda tensor, is_output, is_inplace_on_view=False: graph.SavedTensor(tensor, is_output)
    C._autograd._get_sequence_nr = C._tn_next_seq

    # A view's creation meta (how upstream decides which in-place updates of views to refuse):
    # torchnative records none, so every view reports DEFAULT unless one was set (MetaConverter
    # copies it onto fake views).
    def _get_creation_meta(t):
        got = getattr(t, "__dict__", {}).get("_tn_creation_meta")
        return got if got is not None else C._autograd.CreationMeta.DEFAULT

    def _set_creation_meta(t, meta):
        t.__dict__["_tn_creation_meta"] = meta

    C._autograd._get_creation_meta = _get_creation_meta
    C._autograd._set_creation_meta = _set_creation_meta
    tensor.install(C)
    return record.handle


def _unsafe_set_version_counter(tensors, versions):
    """Each tensor's version counter set to the given value (a tuple each, or one and one)."""
    import torch

    from torch._C import _tn_set_version

    if isinstance(tensors, torch.Tensor):
        tensors, versions = (tensors,), (versions,)
    for t, v in zip(tensors, versions):
        _tn_set_version(t, int(v))


def _install_saved_tensor_hooks(A, H, depth):
    """torch._C._autograd's saved-tensor hook stack, as torch.autograd.graph uses it; `depth`
    keeps the native count that lets a saved tensor skip the stack while it is empty."""

    def _push_saved_tensors_default_hooks(pack_hook, unpack_hook):
        msg = H.disabled_message()
        if msg is not None:
            raise RuntimeError(msg)
        H.stack().append((pack_hook, unpack_hook))
        depth(1)

    def _pop_saved_tensors_default_hooks():
        H.stack().pop()
        depth(-1)

    def _top_saved_tensors_default_hooks(ignore_is_tracing=False):
        st = H.stack()
        return st[-1] if st else None

    def _saved_tensors_hooks_disable(message, fail_if_non_empty=True):
        if fail_if_non_empty and H.stack():
            raise RuntimeError(message)
        H.set_disabled(message)

    def _saved_tensors_hooks_enable():
        H.set_disabled(None)

    def _saved_tensors_hooks_get_disabled_error_message():
        return H.disabled_message()

    def _saved_tensors_hooks_set_tracing(is_tracing):
        return False

    for fn in (_push_saved_tensors_default_hooks, _pop_saved_tensors_default_hooks, _top_saved_tensors_default_hooks,
               _saved_tensors_hooks_disable, _saved_tensors_hooks_enable, _saved_tensors_hooks_get_disabled_error_message,
               _saved_tensors_hooks_set_tracing):
        fn.__module__ = "torch._C._autograd"
        setattr(A, fn.__name__, fn)


def _inference_mode_class(C):
    class _InferenceMode:
        """c10::InferenceMode: on entry grad mode is `not mode`, inference mode is `mode`."""

        def __init__(self, mode=True):
            self.mode = bool(mode)

        def __enter__(self):
            self.prev = (C.is_grad_enabled(), C.is_inference_mode_enabled())
            C._set_grad_enabled(not self.mode)
            C._set_inference_mode(self.mode)
            return self

        def __exit__(self, *exc):
            C._set_grad_enabled(self.prev[0])
            C._set_inference_mode(self.prev[1])
            return False

    _InferenceMode.__module__ = "torch._C"
    return _InferenceMode
