"""Backward formulas: registration and the saved-value view a formula reads.

A formula is a Python function of the saved values and the incoming gradient(s) that returns one
gradient per differentiable input (the `inputs` of the operator's derivatives.yaml entry, a list
argument counting once per tensor). Formulas are compositions of `torch` operators, so they run
through the door on every backend and record their own graph when `create_graph=True`.

    @formula("mul.Tensor", save=("self", "other"))
    def _(s, g):
        return g * s.other, g * s.self
"""

from __future__ import annotations

from .graph import SavedTensor, meta_parts
from ..surface.types import BY_CODE

FORMULAS: dict = {}

_COMPLEX_CODES = (8, 9, 10)  # complex32, complex64, complex128
# Formulas written with upstream's conjugate convention for complex inputs (grad * conj(f'(z)),
# formulas/complex.py); any other formula meeting a complex gradient refuses by name rather than
# return the holomorphic derivative unconjugated.
COMPLEX_READY: set = {
    "add.Tensor", "add_.Tensor", "sub.Tensor", "sub_.Tensor", "rsub.Tensor", "rsub.Scalar", "add.Scalar", "add_.Scalar",
    "sub.Scalar", "sub_.Scalar", "clone", "alias", "lift_fresh", "mul.Tensor", "mul_.Tensor", "mul.Scalar",
    "mul_.Scalar", "div.Tensor", "div_.Tensor", "div.Scalar", "div_.Scalar", "neg", "neg_", "exp", "exp_", "log",
    "log_", "sqrt", "sqrt_", "rsqrt", "rsqrt_", "reciprocal", "reciprocal_", "pow.Tensor_Scalar", "pow_.Scalar",
    "sin", "cos", "tanh", "tanh_", "sigmoid", "sigmoid_", "abs", "where.self", "_to_copy", "mm", "bmm", "addmm",
    "addmm_", "dot", "sum", "sum.dim_IntList", "mean", "mean.dim", "view", "_unsafe_view", "squeeze", "squeeze.dim",
    "squeeze.dims", "squeeze_", "squeeze_.dim", "expand", "unsqueeze", "permute", "transpose.int", "transpose_", "t",
    "t_", "select.int", "slice.Tensor", "cat", "stack", "reshape", "flatten.using_ints", "copy_",
}


def cj(x):
    """conj(x) for a complex tensor or number, x itself otherwise (upstream's formulas conjugate
    the holomorphic derivative: grad_in = grad * conj(f'(z)))."""
    if isinstance(x, complex):
        return x.conjugate()
    if getattr(x, "_tn_dtype_code", None) in _COMPLEX_CODES:
        return x.conj()
    return x
# called with the overload's name when a formula is registered (record.py forgets its plan)
REGISTERED: list = []


class Formula:
    __slots__ = ("op", "fn", "save", "multi", "inputs", "node")

    def __init__(self, op, fn, save, multi, inputs, node):
        self.op, self.fn, self.save, self.multi, self.inputs, self.node = op, fn, save, multi, inputs, node

    def backward(self, node, grads):
        n = node._tn_num_edges()
        if all(g is None for g in grads):
            return [None] * n
        s = Saved(node)
        out = self.fn(s, grads) if self.multi else self.fn(s, grads[0])
        if not isinstance(out, (tuple, list)):
            out = (out,)
        flat = []
        for g in out:
            if isinstance(g, list):
                flat.extend(g)
            else:
                flat.append(g)
        if len(flat) != n:
            raise RuntimeError(f"torchnative: the formula of {self.op} returned {len(flat)} gradients for {n} inputs")
        if self.op not in COMPLEX_READY and any(
                getattr(x, "_tn_dtype_code", None) in _COMPLEX_CODES for x in (*grads, *flat)):
            raise NotImplementedError(
                f"the derivative of '{self.op}' for complex tensors is not implemented in torchnative yet "
                "(its real-valued formula would return the gradient without upstream's conjugation)")
        return flat


def formula(*ops, save=(), multi=False, inputs=None, node=None):
    """Registers `fn` as the backward of each operator overload in `ops`.

    save: the tensor arguments (by schema name) and outputs (`result`, or `result0`, `result1`
    for several) the formula reads; other tensor arguments are kept as metadata only.
    multi: the formula receives the list of output gradients (entries may be None).
    inputs, node: the differentiable inputs and node class name, for operators without a
    derivatives.yaml entry (upstream writes those nodes by hand).
    """

    def deco(fn):
        for op in ops:
            FORMULAS[op] = Formula(op, fn, tuple(save), multi, inputs, node)
            for listener in REGISTERED:
                listener(op)
        return fn

    return deco


_MISSING = object()


class Saved:
    """Attribute access to a node's saved values: tensors (unpacked with the version check),
    non-tensor arguments, and `<name>_meta` (sizes, dtype, device) for every tensor argument."""

    __slots__ = ("_node",)

    def __init__(self, node):
        object.__setattr__(self, "_node", node)

    def __getattr__(self, name):
        node = self._node
        v = node._tn_saved_get(name, _MISSING)
        if v is not _MISSING:
            if isinstance(v, SavedTensor):
                return v.unpack(node)
            if isinstance(v, list) and v and isinstance(v[0], SavedTensor):
                return [x.unpack(node) for x in v]
            return v
        if name.endswith("_sizes"):
            return list(node._tn_arg_meta(name[:-6])[2:])
        if name.endswith("_dtype"):
            return BY_CODE[node._tn_arg_meta(name[:-6])[0]]
        if name.endswith("_meta"):
            m = node._tn_arg_meta(name[:-5])
            return [meta_parts(x) if x is not None else None for x in m] if isinstance(m, list) else meta_parts(m)
        raise AttributeError(f"{type(node).__name__} saved no '{name}'")

    def needs(self, i):
        """Whether differentiable input `i` needs a gradient (upstream's needs_input_grad)."""
        return node_needs(self._node, i)


def node_needs(node, i):
    return node._tn_needs(i)
