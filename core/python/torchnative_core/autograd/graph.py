"""The autograd graph: nodes, edges, saved tensors and per-tensor autograd metadata.

A node is what `tensor.grad_fn` returns. Its class is named as upstream names it
(`AddBackward0`, from derivatives.yaml via the generated table) and lives in `torch._C._functions`,
so `isinstance(fn, torch.autograd.graph.Node)` holds. A node keeps one edge per differentiable
input, `(next_node, input_nr)`, and metadata (shape, dtype, device) per forward output, which the
engine uses to check and reduce incoming gradients, as upstream's `validate_outputs` does.

Per-tensor metadata (grad_fn, output_nr, grad, hooks, the leaf's grad accumulator) lives in the
tensor's `__dict__` under `_tn_*` names; `requires_grad` is the native flag the door checks.
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections import OrderedDict

from ..ops import base as B


RELEASED = (
    "Trying to backward through the graph a second time (or directly access saved tensors after they have "
    "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
    "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or "
    "if you need to access saved tensors after calling backward."
)


# --- per-tensor metadata ---------------------------------------------------------------------

# A tensor's history is one edge `(grad_fn, output_nr)` held by the tensor itself
# (TensorBase._tn_edge, None where none was recorded), shared by every node that takes the
# tensor as an input.
_NO_EDGE = (None, 0)


def grad_fn_of(t):
    return t._tn_grad_fn


def output_nr_of(t):
    return t._tn_output_nr


def set_history(t, node, nr):
    t._tn_set_edge(node, nr)
    t._tn_requires_grad = True


def clear_history(t):
    t._tn_clear_edge()


def grad_accumulator(t):
    """The leaf's AccumulateGrad node, one per leaf for as long as someone holds it (weakly
    cached, as upstream caches it)."""
    ref = t.__dict__.get("_tn_grad_acc")
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t.__dict__["_tn_grad_acc"] = weakref.ref(acc)
    return acc


def gradient_edge(t):
    """Where a gradient for `t` goes: its grad_fn slot, a leaf's accumulator, or nowhere."""
    edge = t._tn_edge
    if edge is not None:
        return edge
    if t._tn_requires_grad:
        return (grad_accumulator(t), 0)  # not cached on the accumulator: that would be a cycle
    return _NO_EDGE


# Devices as small ints in metadata: a flat tuple of ints (dtype code, device code, *sizes) is
# untracked by the garbage collector at its first pass, so a node's metadata never reaches the
# older generations, whose full collections otherwise grow with the number of nodes recorded.
_DEVICE_CODE: dict = {}  # (device key, index), or a torch.device for fake tensors -> code
_DEVICE_BY_CODE: list = []


def tensor_meta(t):
    """(dtype code, device code, *sizes) of `t`; `meta_parts` gives the torch objects back."""
    key = t._tn_device_key
    # a fake or wrapper tensor on meta storage stands for another device (ops/base.device_of)
    k = (key, t._tn_device_index) if key != "meta" else B.device_of(t)
    code = _DEVICE_CODE.get(k)
    if code is None:
        code = _DEVICE_CODE[k] = len(_DEVICE_BY_CODE)
        _DEVICE_BY_CODE.append(B.device_of(t))
    return (t._tn_dtype_code, code, *t._tn_sizes)


def meta_parts(m):
    """A `tensor_meta` as (sizes, torch.dtype, torch.device)."""
    return (m[2:], B.T.BY_CODE[m[0]], _DEVICE_BY_CODE[m[1]])


# --- saved tensors ----------------------------------------------------------------------------

class SavedTensorHooks:
    """torch.autograd.graph.saved_tensors_hooks: a thread-local stack of (pack, unpack) pairs
    applied when a tensor is saved for backward, and a switch that forbids them."""

    _local = threading.local()

    @classmethod
    def stack(cls):
        st = getattr(cls._local, "stack", None)
        if st is None:
            st = cls._local.stack = []
        return st

    @classmethod
    def disabled_message(cls):
        return getattr(cls._local, "disabled", None)

    @classmethod
    def set_disabled(cls, message):
        cls._local.disabled = message


def _pack(t):
    """Runs the innermost saved-tensor pack hook on `t`: (packed, unpack hook), or None when the
    thread's stack is empty. What the pack hook itself computes is not packed again."""
    hooks = getattr(SavedTensorHooks._local, "stack", None)
    if not hooks:
        return None
    pack, unpack_hook = hooks[-1]
    saved_stack = hooks[:]
    hooks.clear()
    try:
        return pack(t), unpack_hook
    finally:
        hooks[:] = saved_stack


class SavedTensor(sys.modules["torch._C"]._TnSavedTensor):
    """A tensor saved for backward, with the version it had when saved. An output of the node
    itself is kept as a detached alias (no reference cycle through grad_fn) and gets the node
    back as grad_fn when unpacked, so double backward can flow through it. Under
    saved_tensors_hooks the pack hook's result is kept instead, and unpacked by its pair.
    Fields and constructor are native (core/src/saved.rs): `SavedTensor(t, is_output=False,
    output_nr=0)`."""

    __slots__ = ()

    def register_hooks(self, pack_hook, unpack_hook):
        """Upstream's SavedTensor.register_hooks: pack now, unpack at backward."""
        if self.unpack_hook is not None:
            raise RuntimeError("SavedTensor hooks have already been set")
        if self.data is None:
            raise RuntimeError(RELEASED)
        self.packed, self.unpack_hook = pack_hook(self.data), unpack_hook
        self.data = None

    def unpack(self, node=None):
        if self.unpack_hook is not None:
            if self.packed is None:
                raise RuntimeError(RELEASED)
            t = self.unpack_hook(self.packed)
            if self.is_output and self.requires_grad and node is not None and grad_fn_of(t) is None:
                t = t._tn_alias()
                set_history(t, node, self.output_nr)
            return t
        t = self.data
        if t is None:
            raise RuntimeError(RELEASED)
        if t._version != self.version:
            raise RuntimeError(_version_message(t, node if self.is_output else grad_fn_of(t),
                                                self.output_nr if self.is_output else output_nr_of(t),
                                                self.version))
        if self.is_output and self.requires_grad and node is not None:
            out = t._tn_alias()
            set_history(out, node, self.output_nr)
            return out
        return t


def _version_message(t, fn, nr, expected):
    d = B.dtype_of(t)
    tname = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor", "bfloat16": "BFloat16Tensor",
             "int64": "LongTensor", "int32": "IntTensor", "bool": "BoolTensor"}.get(str(d).replace("torch.", ""), "Tensor")
    where = f", which is output {nr} of {fn.name()}," if fn is not None else ""
    return (
        "one of the variables needed for gradient computation has been modified by an inplace operation: "
        f"[torch.{tname} {list(t._tn_sizes)}]{where} is at version {t._version}; expected version {expected} instead. "
        "Hint: enable anomaly detection to find the operation that failed to compute its gradient, with "
        "torch.autograd.set_detect_anomaly(True)."
    )


# --- nodes --------------------------------------------------------------------------------------

class NodeBase(sys.modules["torch._C"]._TnNode):
    """What the engine needs from a node; built-in nodes and custom Functions share it. The
    native base (core/src/graph.rs) holds the edges, output metadata, sequence number, saved
    values and formula; this class's `__dict__` holds the rest (hooks, metadata)."""

    # upstream's Node API ------------------------------------------------------------------
    def name(self):
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple(self._tn_edges)

    @property
    def metadata(self):
        md = self.__dict__.get("_tn_metadata")
        if md is None:
            md = self.__dict__["_tn_metadata"] = {}
        return md

    @property
    def _input_metadata(self):
        return [_InputMetadata(*meta_parts(m)) if m is not None else None for m in self._tn_out_meta or ()]

    def _sequence_nr(self):
        return self._tn_seq

    def register_hook(self, fn):
        from torch.utils.hooks import RemovableHandle

        hooks = self.__dict__.setdefault("_tn_post_hooks", OrderedDict())
        self._tn_hooked = True
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn):
        from torch.utils.hooks import RemovableHandle

        hooks = self.__dict__.setdefault("_tn_pre_hooks", OrderedDict())
        self._tn_hooked = True
        handle = RemovableHandle(hooks)
        hooks[handle.id] = fn
        return handle

    def _register_hook_dict(self, tensor):
        """Tensor hooks (`tensor.register_hook`) of a non-leaf: a dict read at backward time."""
        self.__dict__.setdefault("_tn_tensor_hooks", []).append((output_nr_of(tensor), tensor._backward_hooks))
        self._tn_hooked = True

    def __call__(self, *grads):
        return self._tn_apply(list(grads))

    # engine protocol ----------------------------------------------------------------------
    def _tn_apply(self, grads):
        raise NotImplementedError

    def _tn_release(self):
        pass


class _InputMetadata:
    def __init__(self, shape, dtype, device):
        self.shape, self.dtype, self.device = shape, dtype, device
        self.is_nested_tensor = False
        self.is_cpp_nested_tensor = False


_NOT_SAVED = object()


class Node(NodeBase):
    """A built-in backward node: a formula applied to saved values."""

    def __init__(self, formula=None):
        self._tn_f = formula

    def _tn_apply(self, grads):
        return self._tn_f.backward(self, grads)

    def _tn_release(self):
        self._tn_release_saved()

    def __getattr__(self, name):
        # upstream exposes saved values as `_saved_<name>`
        if name.startswith("_saved_"):
            v = self._tn_saved_get(name[len("_saved_"):], _NOT_SAVED)
            if v is not _NOT_SAVED:
                return v.unpack(self) if isinstance(v, SavedTensor) else v
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


class AccumulateGrad(NodeBase):
    """The sink of a leaf tensor: adds the incoming gradient into `variable.grad`."""

    def __init__(self, variable):
        self.variable = variable
        self._tn_init([], [tensor_meta(variable)])
        self._tn_seq = 2**62  # upstream gives accumulators UINT64_MAX: they run as soon as ready

    def name(self):
        return "torch::autograd::AccumulateGrad"


_CLASSES: dict = {}


def node_class(name, functions_module=None, base=None):
    """The node class upstream calls `name`, created once and published in torch._C._functions.
    `base` gives a hand-written implementation the class derives from (first caller's wins)."""
    key = (name, base)
    cls = _CLASSES.get(key)
    if cls is None:
        cls = type(name, (base or Node,), {"__module__": "builtins"})
        _CLASSES[key] = cls
        if functions_module is not None and base is None:
            setattr(functions_module, name, cls)
    return cls


class NotImplementedNode(Node):
    """Recorded for operators whose derivative torchnative lacks: forward runs; backward refuses
    by name, as upstream's NotImplemented node does."""

    def __init__(self, op):
        self._tn_op = op

    def name(self):
        return "torch::autograd::NotImplemented"

    def _tn_apply(self, grads):
        raise NotImplementedError(
            f"the derivative for 'aten::{self._tn_op}' is not implemented in torchnative yet "
            "(its forward ran; backward through it needs a formula in torchnative_core/autograd/formulas)"
        )


class Error(Node):
    def __init__(self, msg):
        self._tn_msg = msg

    def _tn_apply(self, grads):
        raise RuntimeError(self._tn_msg)


class _PassThroughFunction:
    """Base of torch._C._functions' callable helpers: calling one on tensors returns aliases of
    them whose grad_fn is a node of this helper's making."""

    def _node(self):
        raise NotImplementedError

    def __call__(self, *inputs):
        node = self._node()
        edges = [gradient_edge(t) for t in inputs]
        node._tn_init(edges, [tensor_meta(t) for t in inputs])
        node._tn_saved = {}
        outs = []
        for i, t in enumerate(inputs):
            o = t._tn_alias()
            if t._tn_requires_grad:
                set_history(o, node, i)
            outs.append(o)
        return outs[0] if len(outs) == 1 else tuple(outs)


class UndefinedGradBackward(Node):
    def _tn_apply(self, grads):
        return [None] * len(self._tn_edges)


class DelayedErrorBackward(Node):
    def _tn_apply(self, grads):
        raise RuntimeError(self._tn_msg)


class UndefinedGrad(_PassThroughFunction):
    """The gradient flowing back through its output is undefined (gradcheck uses it)."""

    def _node(self):
        return UndefinedGradBackward()


class DelayedError(_PassThroughFunction):
    """Backward through its output raises `msg` (for operators whose derivative is missing)."""

    def __init__(self, msg, num_inputs=1):
        self.msg = msg

    def _node(self):
        n = DelayedErrorBackward()
        n._tn_msg = self.msg
        return n


def _view_geometry(view, base):
    return (list(view._tn_sizes), list(view._tn_strides), view.storage_offset() - base.storage_offset())


class CopySlices(Node):
    """An in-place operation on a view, seen from the base: the gradient of the base is the
    incoming gradient with the view's region replaced by what the in-place operation's node
    gives for its `self` (upstream's CopySlices, torch/csrc/autograd/functions/tensor.cpp)."""

    def __init__(self, base, view, fn):
        self._tn_base_geom = (list(base._tn_sizes), list(base._tn_strides))
        self._tn_view_geom = _view_geometry(view, base)
        self._tn_fn = fn
        edges = [gradient_edge(base)] + list(fn._tn_edges[1:])
        self._tn_init(edges, [tensor_meta(base)])
        self._tn_saved = {}

    def name(self):
        return "torch::autograd::CopySlices"

    def _tn_apply(self, grads):
        import torch

        g = grads[0]
        if g is None:
            return [None] * len(self._tn_edges)
        sizes, strides = self._tn_base_geom
        result = torch.empty_strided(sizes, strides, dtype=g.dtype, device=g.device)
        result.copy_(g)
        vs, vst, voff = self._tn_view_geom
        grad_slice = result.as_strided(vs, vst, voff)
        res = self._tn_fn._tn_apply([grad_slice.clone()])
        if res[0] is None:
            grad_slice.zero_()
        else:
            grad_slice.copy_(res[0])
        return [result] + list(res[1:])

    def _tn_release(self):
        self._tn_fn._tn_release()


class ViewOfBase(Node):
    """The history of a view after an in-place change: its gradient goes to the base's region
    (upstream names this node AsStridedBackward0)."""

    def __init__(self, base, view):
        self._tn_base_geom = (list(base._tn_sizes), list(base._tn_strides))
        self._tn_view_geom = _view_geometry(view, base)

    def _tn_apply(self, grads):
        import torch

        g = grads[0]
        if g is None:
            return [None] * len(self._tn_edges)
        sizes, strides = self._tn_base_geom
        z = torch.zeros(sizes, dtype=g.dtype, device=g.device).as_strided(sizes, strides, 0)
        vs, vst, voff = self._tn_view_geom
        z.as_strided(vs, vst, voff).copy_(g)
        return [z]


def rebase_view_history(view, node):
    """After in-place operation `node` wrote into `view`, the base's history becomes CopySlices
    and the view's history a view of the base's (upstream's rebase_history for views)."""
    base = view._base
    cs = CopySlices(base, view, node)
    set_history(base, cs, 0)
    vh = node_class("AsStridedBackward0", None, ViewOfBase)(base, view)
    vh._tn_init([(cs, 0)], [tensor_meta(view)])
    vh._tn_saved = {}
    set_history(view, vh, 0)
