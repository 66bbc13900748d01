"""The Tensor members autograd owns (upstream: python_variable.cpp), installed on TensorBase."""

from __future__ import annotations

import weakref

from ..ops import base as B
from . import graph as G


def install(C):
    TB = C.TensorBase

    def _get_requires_grad(self):
        return self._tn_requires_grad

    def _set_requires_grad(self, v):
        if not isinstance(v, bool):
            raise TypeError("requires_grad must be a bool")
        if G.grad_fn_of(self) is not None:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        d = B.dtype_of(self)
        if v and self._tn_inference and not C.is_inference_mode_enabled():
            raise RuntimeError("Setting requires_grad=True on inference tensor outside InferenceMode is not allowed.")
        if v and not (d.is_floating_point or d.is_complex):
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._tn_requires_grad = v

    def requires_grad_(self, requires_grad=True):
        if G.grad_fn_of(self) is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                "in a subgraph that doesn't require differentiation use var_no_grad = var.detach()."
            )
        if requires_grad and not B.dtype_of(self).is_floating_point and not B.dtype_of(self).is_complex:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")  # upstream's wording here
        if G.grad_fn_of(self) is None:
            _set_requires_grad(self, bool(requires_grad))
        return self

    def _get_grad(self):
        if G.grad_fn_of(self) is not None and not self.__dict__.get("_tn_retains_grad") and self._tn_requires_grad:
            import warnings

            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
                "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
                "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf "
                "Tensor by mistake, make sure you access the leaf Tensor instead. See "
                "github.com/pytorch/pytorch/pull/30531 for more informations. (Triggered internally at "
                "/pytorch/build/aten/src/ATen/core/TensorBody.h:494.)",
                UserWarning,
                stacklevel=2,
            )
        return self.__dict__.get("_tn_grad")

    def _set_grad(self, g):
        if g is not None:
            if not isinstance(g, C.TensorBase):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type {type(g).__name__}")
            if B.dtype_of(g) is not B.dtype_of(self):
                raise TypeError("assigned grad has data of a different type")
            if list(g._tn_sizes) != list(self._tn_sizes):
                raise RuntimeError("assigned grad has data of a different size")
        self.__dict__["_tn_grad"] = g

    def retain_grad(self):
        if not self._tn_requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        fn = G.grad_fn_of(self)
        if fn is None or self.__dict__.get("_tn_retains_grad"):
            return
        fn.__dict__.setdefault("_tn_retain_grad", {})[G.output_nr_of(self)] = weakref.ref(self)
        fn._tn_hooked = True
        self.__dict__["_tn_retains_grad"] = True

    def detach_(self):
        # any view, recorded or not, of any dtype: upstream's VariableTypeManual detach_ checks
        # is_view(). The operator aten::detach_ (ops/shape/views.py) refuses only views with a
        # graph: export's decompositions call it on tensors that are views in ours, not upstream.
        return detach_inplace(self, any_view=True)

    def _hooks_prop(key):
        return property(lambda self: self.__dict__.get(key), lambda self, v: self.__dict__.__setitem__(key, v))

    grad = property(_get_grad, _set_grad)
    members = {
        "requires_grad": property(_get_requires_grad, _set_requires_grad),
        "requires_grad_": requires_grad_,
        "is_leaf": property(lambda self: G.grad_fn_of(self) is None),
        "grad_fn": property(G.grad_fn_of),
        "_grad_fn": property(G.grad_fn_of),
        "output_nr": property(G.output_nr_of),
        "grad": grad,
        "_grad": property(lambda self: self.__dict__.get("_tn_grad"), _set_grad),
        "retain_grad": retain_grad,
        "retains_grad": property(lambda self: bool(self.__dict__.get("_tn_retains_grad"))),
        "detach_": detach_,
        "_backward_hooks": _hooks_prop("_tn_backward_hooks"),
        "_post_accumulate_grad_hooks": _hooks_prop("_tn_post_acc_hooks"),
    }
    for name, v in members.items():
        setattr(TB, name, v)


def detach_inplace(t, any_view):
    """Tensor.detach_: refuses a view (`any_view`) or a view with history, else drops the history."""
    if t._base is not None and (any_view or G.grad_fn_of(t) is not None):
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
            "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
            "detach_() cannot be called on these gradients. To fix this error, please refer to the Optimizer.zero_grad() "
            "function in torch/optim/optimizer.py as the solution."
        )
    G.clear_history(t)
    t._tn_requires_grad = False
    return t
