"""`torch._C._FunctionBase`: the native half of `torch.autograd.Function`.

Upstream's Python (`torch/autograd/function.py`) supplies the context methods
(`save_for_backward` sets `to_save`, `mark_dirty` sets `dirty_tensors`, ...) and the backward
class (`BackwardCFunction.apply` calls the user's `backward`). This class runs `forward` with grad
mode off, connects the outputs to the graph with the context as their node, saves what was asked,
and, at backward time, checks what the user's `backward` returned, as upstream's
python_function.cpp does.
"""

from __future__ import annotations

from ..functorch import functions as _functions
from ..functorch import levels as _levels
from ..ops import base as B
from . import graph as G

C = None  # torch._C, set by install


class FunctionBase(G.NodeBase):
    def __init__(self, *args, **kwargs):
        pass

    @classmethod
    def apply(cls, *args, **kwargs):
        from torch.autograd.function import _is_setup_context_defined

        if _levels.stack():  # a functorch transform is active (functorch/functions.py)
            _functions.check(cls, _is_setup_context_defined(cls.setup_context))
            out = _functions.apply_batched(cls, args, kwargs)
            if out is not None:
                return out
        ctx = cls._backward_cls()
        grad_on = C.is_grad_enabled()
        is_tensor = [isinstance(a, C.TensorBase) for a in args]
        needs = tuple(t and grad_on and a._tn_requires_grad for a, t in zip(args, is_tensor))
        ctx.needs_input_grad = needs
        edges = [G.gradient_edge(a) if n else (None, 0) for a, n in zip(args, needs)]
        ctx._tn_is_tensor_input = is_tensor
        ctx._tn_init(edges, [])
        prev = C.is_grad_enabled()
        C._set_grad_enabled(False)
        try:
            if _is_setup_context_defined(cls.setup_context):
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            C._set_grad_enabled(prev)
        return _process_outputs(ctx, args, outputs, any(needs))

    # upstream's attributes ----------------------------------------------------------------
    @property
    def saved_tensors(self):
        saved = self.__dict__.get("_tn_saved_list")
        if saved is None:
            if self.__dict__.get("_tn_released"):
                raise RuntimeError(G.RELEASED)
            return ()
        return tuple(s.unpack(self) if s is not None else None for s in saved)

    saved_variables = saved_tensors

    @property
    def _raw_saved_tensors(self):
        return tuple(self.__dict__.get("_tn_saved_list") or ())

    @property
    def _materialize_non_diff_grads(self):
        return self.__dict__.get("_tn_materialize_non_diff", True)

    @_materialize_non_diff_grads.setter
    def _materialize_non_diff_grads(self, v):
        self.__dict__["_tn_materialize_non_diff"] = bool(v)

    # engine protocol ------------------------------------------------------------------------
    def _tn_apply(self, grads):
        if getattr(self, "materialize_grads", True):
            grads = [
                g if g is not None or m is None else _zeros(m)
                for g, m in zip(grads, self._tn_out_meta)
            ]
        res = self.apply(*grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = self._tn_num_edges()
        if len(res) != n:
            if len(res) > n and all(r is None for r in res[n:]):
                res = res[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients (expected {n}, got {len(res)})"
                )
        out = []
        for i, (r, is_t) in enumerate(zip(res, self._tn_is_tensor_input)):
            if not is_t and r is not None:
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position {i + 1}, but the "
                    "corresponding forward input was not a Variable"
                )
            out.append(r if self._tn_needs(i) else None)
        return out

    def _tn_release(self):
        if self.__dict__.get("_tn_saved_list") is not None:
            self.__dict__["_tn_saved_list"] = None
            self.__dict__["_tn_released"] = True


def _zeros(meta):
    shape, dtype, device = G.meta_parts(meta)
    return C._aten_dispatch("zeros", list(shape), dtype, None, device, None)


def _process_outputs(ctx, args, outputs, executable):
    single = not isinstance(outputs, tuple)
    outs = (outputs,) if single else outputs
    non_diff = {id(t) for t in (getattr(ctx, "non_differentiable", None) or ())}
    dirty = {id(t) for t in (getattr(ctx, "dirty_tensors", None) or ())}
    input_ids = {id(a) for a in args if isinstance(a, C.TensorBase)}
    result, meta = [], []
    for i, t in enumerate(outs):
        if not isinstance(t, C.TensorBase):
            result.append(t)
            meta.append(None)
            continue
        d = B.dtype_of(t)
        diff = executable and id(t) not in non_diff and (d.is_floating_point or d.is_complex)
        if id(t) in dirty and executable:
            if G.grad_fn_of(t) is None and t._tn_requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an in-place operation.")
        elif id(t) in input_ids and diff:
            t = t._tn_alias()  # an input returned as is: the output is a new view of it, as upstream
        if diff:
            G.set_history(t, ctx, i)
            meta.append(G.tensor_meta(t))
        else:
            if executable and id(t) in non_diff and G.grad_fn_of(t) is None:
                t._tn_requires_grad = False
            meta.append(None)
        result.append(t)
    ctx._tn_out_meta = meta
    to_save = getattr(ctx, "to_save", None)
    if to_save is not None:
        out_ids = {id(t): i for i, t in enumerate(result) if isinstance(t, C.TensorBase)}
        saved = []
        for t in to_save:
            if t is None:
                saved.append(None)
            elif not isinstance(t, C.TensorBase):
                raise TypeError("save_for_backward can only save variables, but argument 0 is not a Variable")
            elif id(t) in out_ids and G.grad_fn_of(t) is ctx:
                saved.append(G.SavedTensor(t, is_output=True, output_nr=out_ids[id(t)]))
            else:
                saved.append(G.SavedTensor(t))
        ctx._tn_saved_list = saved
        ctx.to_save = None
    return result[0] if single else tuple(result)
