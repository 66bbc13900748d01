"""Batching rules: how one operator runs on a batch at one vmap level.

Each rule takes the door's arguments (schema order) and the level and batch size being handled,
runs the operator on the unwrapped values (`front`: batch dimension first) through the door
and wraps the result at the same level. What no rule covers falls to `default`: a composite
operator decomposes on the batched tensors (as upstream's CompositeImplicitAutograd kernels run
above the batching key), a pointwise one broadcasts, a view is rebuilt from sample 0's geometry,
and anything else runs once per sample (upstream's for-loop fallback) and is stacked."""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

from ..ops import base as B
from . import batched as BT
from .batched import D

RULES: dict = {}

_FACTS: dict = {}


class Facts:
    __slots__ = ("composite", "pointwise", "inplace", "view", "out", "mutates", "dynamic", "lists")


def facts(op) -> Facts:
    f = _FACTS.get(op)
    if f is None:
        import torch

        from ..binding.schema import all_schemas
        from ..ops.door.modes import overload_packet

        schema = all_schemas().get(op)
        f = Facts()
        f.composite = bool(schema is not None and schema.extra.get("composite_implicit"))
        try:
            tags = overload_packet(op).tags
        except (AttributeError, RuntimeError):
            tags = ()
        f.pointwise = torch.Tag.pointwise in tags
        # output shape depends on the data; upstream batches linalg_lstsq nonetheless
        f.dynamic = torch.Tag.dynamic_output_shape in tags and not f.composite and op != "linalg_lstsq"
        args = schema.args if schema is not None else []
        rets = schema.returns if schema is not None else []
        f.out = any(a.kwarg_only and "!" in a.type for a in args)
        f.inplace = bool(args) and "!" in args[0].type and not f.out
        f.view = any("(a" in r.type and "!" not in r.type for r in rets)
        # upstream's loop fallback stacks tensors only and refuses a list among the returns; its
        # rules cover the list-only ones (split/unbind copies) and those taking lists, which ours
        # runs through this loop: refused here are tuples holding a list (histogramdd)
        f.lists = len(rets) > 1 and any(r.type.startswith("Tensor") and "[]" in r.type for r in rets)
        # arguments besides self written in place (batch norm's running statistics)
        f.mutates = [i for i, a in enumerate(args) if i and "!" in a.type and not a.kwarg_only]
        _FACTS[op] = f
    return f


def unwrap(a, level):
    """(value, bdim) when `a` is batched at `level`, else (a, None)."""
    if isinstance(a, B.C.TensorBase):
        i = a.__dict__.get(BT.KEY)
        if i is not None and i[2] == level:
            return i[0], i[1]
    return a, None


def front(value, bdim):
    return value if bdim == 0 else D("movedim.int", value, bdim, 0)


def moved(a, level, size):
    """`a` with its batch first; an unbatched tensor expanded (a view) to the batch."""
    v, bd = unwrap(a, level)
    if bd is not None:
        return front(v, bd)
    return D("expand", D("unsqueeze", a, 0), [size] + list(a._tn_sizes), False)


def same_kind(out, items):
    """`items` in the container kind of `out` (list, tuple, torch.return_types)."""
    if isinstance(out, list):
        return list(items)
    if type(out) is tuple:
        return tuple(items)
    return type(out)(list(items))


def wrap(out, level, bdim=0):
    if isinstance(out, B.C.TensorBase):
        return BT.make(out, bdim, level)
    if isinstance(out, (tuple, list)):
        return same_kind(out, (wrap(o, level, bdim) for o in out))
    return out


def batched_others(args, level, skip=1) -> bool:
    """Whether a tensor argument after the first `skip` is batched at `level`."""
    for a in args[skip:]:
        if isinstance(a, (list, tuple)):
            if any(unwrap(x, level)[1] is not None for x in a):
                return True
        elif unwrap(a, level)[1] is not None:
            return True
    return False


def shift(d, rank):
    """A logical dimension as a dimension of the batch-first value."""
    return B.wrap_dim(d, rank) + 1


def marked(e):
    """An error the batching rules raise where a per-sample loop could still run the operator:
    met inside a composite's implementation, the composite runs per sample instead (the user's
    own calls see a plain RuntimeError, as upstream's)."""
    e._tn_vmap_fallback = True
    return e


def _inplace_error(op):
    name = op.partition(".")[0]
    return marked(RuntimeError(
        f"vmap: {name}(self, *extra_args) is not possible because there exists a Tensor `other` in extra_args "
        "that has more elements than `self`. This happened due to `other` being vmapped over but `self` not being "
        f"vmapped over in a vmap. Please try to use out-of-place operators instead of {name}. If said operator "
        "is being called inside the PyTorch framework, please file a bug report instead."
    ))


def _no_rule(op):
    return marked(RuntimeError(
        f"Batching rule not implemented for aten::{op}; the fallback path doesn't work on out= or view ops."
    ))


# --- the fallback ---------------------------------------------------------------------------------

def _sample(a, level, b):
    if isinstance(a, (list, tuple)) and any(isinstance(x, B.C.TensorBase) for x in a):
        return type(a)(_sample(x, level, b) for x in a)
    v, bd = unwrap(a, level)
    return a if bd is None else D("select.int", v, bd, b)


def _stack(results, op):
    r0 = results[0]
    if isinstance(r0, B.C.TensorBase):
        shapes = {tuple(r._tn_sizes) for r in results}
        if len(shapes) > 1:
            raise RuntimeError(
                f"vmap: aten::{op} returned results of different shapes for different samples "
                f"({sorted(shapes)}); an operator whose output shape depends on the data cannot be vmapped "
                "(upstream refuses these too)"
            )
        return D("stack", list(results), 0)
    if isinstance(r0, (tuple, list)):
        return same_kind(r0, (_stack([r[i] for r in results], op) for i in range(len(r0))))
    if r0 is None:
        return None
    raise RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
        f"support that yet (aten::{op} returns a Python value per sample), please shout over at "
        "https://github.com/pytorch/functorch/issues/257 ."
    )


def loop(op, args, kwargs, level, size, same_randomness=False):
    """Runs the operator once per sample and stacks the results along a new batch dimension 0."""
    f = facts(op)
    if f.out:
        raise _no_rule(op)
    if f.inplace and unwrap(args[0], level)[1] is None and batched_others(args, level):
        raise _inplace_error(op)
    if f.view and not f.inplace:
        raise _no_rule(op)
    if f.lists and not f.inplace:
        raise marked(RuntimeError(f"Batching rule not implemented for aten::{op}. We could not generate a fallback."))
    if f.dynamic:
        raise marked(RuntimeError(
            "vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
            f"aten::{op.partition('.')[0]}. Please file an issue at https://github.com/pytorch/pytorch/issues if "
            "you need this feature."))
    for i in f.mutates:
        if i < len(args) and isinstance(args[i], B.C.TensorBase) and unwrap(args[i], level)[1] is None:
            raise _inplace_error(op)  # upstream: a batch written into an unbatched argument
    gen = state = None
    if same_randomness:
        gen = B.C.default_generator
        state = gen.get_state()
    results = []
    for b in range(size):
        if gen is not None:
            gen.set_state(state)
        a_b = [_sample(a, level, b) for a in args]
        kw_b = {k: _sample(v, level, b) for k, v in kwargs.items()}
        results.append(D(op, *a_b, **kw_b))
    if f.inplace:
        return args[0]
    return wrap(_stack(results, op), level)


# --- the default: composite, pointwise, view, loop ------------------------------------------------

def default(op, args, kwargs, level, size):
    f = facts(op)
    if f.composite:
        try:
            return B.C._tn_call_impl(op, *args, **kwargs)
        except RuntimeError as e:
            # the core's implementation took the batched tensor as data, wrote a batch into an
            # unbatched tensor, or read a value: per sample then
            if not (getattr(e, "_tn_vmap_fallback", False) or "vmap: internal" in str(e)):
                raise
    if f.pointwise:
        return pointwise(op, args, kwargs, level, size)
    if f.view and not f.inplace:
        return view_generic(op, args, kwargs, level, size)
    return loop(op, args, kwargs, level, size)


def _scalar_like(x):
    return isinstance(x, (bool, int, float, complex)) or isinstance(x, B.C.TensorBase)


def pointwise(op, args, kwargs, level, size):
    """Elementwise operators broadcast: each batched operand gets its batch first and ones up to
    the largest logical rank, so that the batch lines up across operands."""
    TB = B.C.TensorBase
    rank = 0
    for a in args:
        if isinstance(a, TB):
            rank = max(rank, len(a._tn_sizes))
    new = []
    zero_dim = False
    for a in args:
        if isinstance(a, TB):
            r = len(a._tn_sizes)
            zero_dim = zero_dim or r == 0
            v, bd = unwrap(a, level)
            if bd is not None:
                a = front(v, bd)
                for _ in range(rank - r):
                    a = D("unsqueeze", a, 1)
        new.append(a)
    inplace = facts(op).inplace
    if inplace and unwrap(args[0], level)[1] is None:
        # upstream's in-place kernel meets the batched operand: a broadcast error first
        shape = list(args[0]._tn_sizes)
        full = B.broadcast_shapes(*[a._tn_sizes for a in new if isinstance(a, TB)])
        if list(full) != shape:
            raise marked(RuntimeError(f"output with shape {shape} doesn't match the broadcast shape {list(full)}"))
        raise _inplace_error(op)
    if zero_dim and not inplace:
        # a zero-dim operand promotes as a lower tier than a dimensioned one; its batched value
        # is dimensioned, so compute in the logical operands' common dtype
        want = B.result_type(*[a for a in args if _scalar_like(a)])
        have = B.result_type(*[a for a in new if _scalar_like(a)])
        if want is not have:
            new = [D("_to_copy", a, want, None, None, None, False, None) if isinstance(a, TB) and B.dtype_of(a) is not want
                   else a for a in new]
    out = D(op, *new, **kwargs)
    if inplace:
        return args[0]
    return wrap(out, level)


def view_generic(op, args, kwargs, level, size):
    """A view operator without its own rule: run it on sample 0 alone (metadata only) and give the
    result the batch's strides. Strided views are affine in the offset of what they view, so
    sample b's view is sample 0's moved by b batch strides."""
    if batched_others(args, level):
        raise _no_rule(op)
    real, levels = BT.canonical(args[0])
    k = len(levels)
    rs, rst = real._tn_sizes, real._tn_strides
    sample = real._tn_as_strided(rs[k:], rst[k:], real.storage_offset())
    was = B.C.is_grad_enabled()
    B.C._set_grad_enabled(False)
    try:
        r0 = D(op, sample, *args[1:], **kwargs)
    finally:
        B.C._set_grad_enabled(was)
    differentiable = was and real._tn_requires_grad
    placed = [(lv, i) for i, lv in enumerate(levels)]

    def batch(o):
        sizes, strides = rs[:k] + list(o._tn_sizes), rst[:k] + list(o._tn_strides)
        if o._tn_dtype_code != real._tn_dtype_code:  # view_as_real/complex, view(dtype)
            old, new = B.dtype_of(real).itemsize, B.dtype_of(o).itemsize
            strides = [st * old // new for st in rst[:k]] + list(o._tn_strides)
            p = real._tn_reinterpret(o._tn_dtype_code, sizes, strides, o.storage_offset())
            return BT.rebuild(p, placed)
        if differentiable:
            p = D("as_strided", real, sizes, strides, o.storage_offset())
        else:
            p = real._tn_as_strided(sizes, strides, o.storage_offset())
        return BT.rebuild(p, placed)

    if isinstance(r0, (list, tuple)):
        return same_kind(r0, (batch(o) for o in r0))
    return batch(r0)


# --- views ------------------------------------------------------------------------------------

def rule(*names):
    def deco(fn):
        for n in names:
            RULES[n] = fn
        return fn
    return deco


def _self_only(fn):
    """A rule for operators where only `self` may be batched; otherwise the fallback decides."""
    def wrapped(op, args, kwargs, level, size):
        v, bd = unwrap(args[0], level)
        if bd is None or batched_others(args, level):
            return default(op, args, kwargs, level, size)
        return fn(op, args, kwargs, level, size, front(v, bd), len(args[0]._tn_sizes))
    wrapped.__name__ = fn.__name__
    return wrapped


@rule("view", "_unsafe_view", "reshape", "view_copy")
@_self_only
def _view(op, args, kwargs, level, size, p, r):
    return wrap(D(op, p, [size] + list(args[1])), level)


@rule("expand")
@_self_only
def _expand(op, args, kwargs, level, size, p, r):
    shape = list(args[1])
    for _ in range(len(shape) - r):
        p = D("unsqueeze", p, 1)
    return wrap(D(op, p, [size] + shape, *args[2:]), level)


@rule("transpose.int")
@_self_only
def _transpose(op, args, kwargs, level, size, p, r):
    return wrap(D(op, p, shift(args[1], r), shift(args[2], r)), level)


@rule("permute")
@_self_only
def _permute(op, args, kwargs, level, size, p, r):
    return wrap(D(op, p, [0] + [shift(d, r) for d in args[1]]), level)


@rule("unsqueeze")
@_self_only
def _unsqueeze(op, args, kwargs, level, size, p, r):
    return wrap(D(op, p, B.wrap_dim(args[1], r + 1) + 1), level)


@rule("squeeze")
@_self_only
def _squeeze(op, args, kwargs, level, size, p, r):
    dims = [i + 1 for i, s in enumerate(args[0]._tn_sizes) if s == 1]
    return wrap(D("squeeze.dims", p, dims), level)


@rule("squeeze.dim", "select.int", "slice.Tensor", "unfold", "narrow", "split.Tensor", "split_with_sizes",
      "unbind.int", "chunk", "unsafe_split.Tensor", "unsafe_chunk", "index_select", "cumsum", "cumprod",
      "logcumsumexp", "_softmax", "_log_softmax", "softmax.int", "log_softmax.int", "prod.dim_int", "max.dim",
      "min.dim", "sort", "sort.stable", "topk", "kthvalue", "median.dim", "nanmedian.dim", "mode", "all.dim",
      "any.dim", "cummax", "cummin", "glu", "flip", "diff", "narrow_copy", "select_copy.int", "_safe_softmax")
@_self_only
def _dim_at(op, args, kwargs, level, size, p, r):
    if r == 0 and facts(op).view:
        return view_generic(op, args, kwargs, level, size)
    pos = _arg_position(op, "dim", "dimension", "dims")
    new = list(args)
    d = args[pos]
    scalar = r == 0
    if scalar:
        p = D("unsqueeze", p, 1)
    new[0] = p
    new[pos] = [shift(x, r) for x in d] if isinstance(d, (list, tuple)) else shift(d, r)
    out = D(op, *new, **kwargs)
    if scalar:
        out = _squeeze_last(out)
    return wrap(out, level)


_POSITIONS: dict = {}


def _arg_position(op, *names):
    """Where the schema of `op` puts the first argument named one of `names` (the door passes
    arguments in schema order), or None."""
    key = (op, names)
    if key not in _POSITIONS:
        from ..binding.schema import all_schemas

        args = [a.name for a in all_schemas()[op].args]
        _POSITIONS[key] = next((args.index(n) for n in names if n in args), None)
    return _POSITIONS[key]


def _squeeze_last(out):
    if isinstance(out, B.C.TensorBase):
        return D("squeeze.dim", out, -1) if len(out._tn_sizes) == 2 else out
    if isinstance(out, (tuple, list)):
        return same_kind(out, (_squeeze_last(o) for o in out))
    return out


@rule("constant_pad_nd")
@_self_only
def _constant_pad(op, args, kwargs, level, size, p, r):
    if len(args[1]) // 2 > r:
        return loop(op, args, kwargs, level, size)  # the per-sample call raises upstream's error
    return wrap(D(op, p, *args[1:]), level)


@rule("diagonal")
@_self_only
def _diagonal(op, args, kwargs, level, size, p, r):
    return wrap(D(op, p, args[1], shift(args[2], r), shift(args[3], r)), level)


@rule("t")
@_self_only
def _t(op, args, kwargs, level, size, p, r):
    return wrap(D("transpose.int", p, 1, 2) if r == 2 else D("alias", p), level)


@rule("alias", "detach", "lift_fresh", "fill_.Scalar", "zero_", "zeros_like", "ones_like", "empty_like",
      "full_like", "_conj", "resolve_conj", "resolve_neg")
def _same_layout(op, args, kwargs, level, size):
    """Operators that treat every element alike: run on the value, keep the batch where it is."""
    v, bd = unwrap(args[0], level)
    if bd is None or batched_others(args, level):
        return default(op, args, kwargs, level, size)
    out = D(op, v, *args[1:], **kwargs)
    if facts(op).inplace:
        return args[0]
    return wrap(out, level, bd)


@rule("clone", "_to_copy")
@_self_only
def _copy_front(op, args, kwargs, level, size, p, r):
    # batch first, so that a contiguous copy is contiguous logically too
    return wrap(D(op, p, *args[1:], **kwargs), level)


@rule("new_zeros", "new_ones", "new_empty", "new_full")
@_self_only
def _new(op, args, kwargs, level, size, p, r):
    return wrap(D(op, p, [size] + list(args[1]), *args[2:], **kwargs), level)


@rule("copy_")
def _copy_(op, args, kwargs, level, size):
    return pointwise(op, args, kwargs, level, size)


# --- reductions -------------------------------------------------------------------------------

def _flat(a, level):
    v, bd = unwrap(a, level)
    return D("reshape", front(v, bd), [v._tn_sizes[bd], -1])


def _dims_reduce(op, args, kwargs, level, size, p, r):
    pos = _arg_position(op, "dim")
    d = args[pos]
    new = list(args)
    if r == 0:
        p = D("unsqueeze", p, 1)
        keep = _keepdim(op, args)
        dims = [1]
    elif d is None or (isinstance(d, (list, tuple)) and len(d) == 0):
        dims = list(range(1, r + 1))
        keep = None
    else:
        dims = [shift(x, r) for x in (d if isinstance(d, (list, tuple)) else [d])]
        keep = None
    new[0] = p
    new[pos] = dims
    out = D(op, *new, **kwargs)
    if r == 0 and keep:
        out = _squeeze_last(out)
    return wrap(out, level)


def _keepdim(op, args):
    pos = _arg_position(op, "keepdim")
    return pos is not None and pos < len(args) and args[pos] is True


for _op in ("sum.dim_IntList", "mean.dim", "nansum", "amax", "amin", "var.correction", "std.correction",
            "var_mean.correction", "std_mean.correction", "logsumexp", "linalg_vector_norm", "norm.ScalarOpt_dim",
            "norm.ScalarOpt_dim_dtype", "count_nonzero.dim_IntList", "nanmean", "all.dims", "any.dims"):
    RULES[_op] = _self_only(_dims_reduce)


def _full(target, build):
    def full(op, args, kwargs, level, size):
        if unwrap(args[0], level)[1] is None or batched_others(args, level):
            return loop(op, args, kwargs, level, size)
        return wrap(D(target, _flat(args[0], level), *build(args)), level)
    return full


RULES.update({
    "sum": _full("sum.dim_IntList", lambda a: ([1], False, a[1] if len(a) > 1 else None)),
    "mean": _full("mean.dim", lambda a: ([1], False, a[1] if len(a) > 1 else None)),
    "prod": _full("prod.dim_int", lambda a: (1, False, a[1] if len(a) > 1 else None)),
    "max": _full("amax", lambda a: ([1], False)),
    "min": _full("amin", lambda a: ([1], False)),
    "all": _full("all.dim", lambda a: (1, False)),
    "any": _full("any.dim", lambda a: (1, False)),
    "norm.Scalar": _full("norm.ScalarOpt_dim", lambda a: (a[1], [1], False)),
    "var": _full("var.correction", lambda a: ([1], 1 if (len(a) < 2 or a[1]) else 0, False)),
    "std": _full("std.correction", lambda a: ([1], 1 if (len(a) < 2 or a[1]) else 0, False)),
})


@rule("argmax", "argmin")
def _arg_reduce(op, args, kwargs, level, size):
    if unwrap(args[0], level)[1] is None or batched_others(args, level):
        return loop(op, args, kwargs, level, size)
    if len(args) < 2 or args[1] is None:
        return wrap(D(op, _flat(args[0], level), 1, False), level)
    return RULES["cumsum"](op, args, kwargs, level, size)  # the one-dimension rule


# --- several batched operands -----------------------------------------------------------------

@rule("cat", "stack")
def _cat(op, args, kwargs, level, size):
    tensors, dim = args[0], args[1] if len(args) > 1 else 0
    if op == "cat":
        # upstream's legacy rule: 1-D empty tensors are skipped (a KV cache starts as one)
        kept = [t for t in tensors if list(t._tn_sizes) != [0]]
        tensors = kept or tensors[:1]
    rank = max(len(t._tn_sizes) for t in tensors)
    new = [moved(t, level, size) for t in tensors]
    d = B.wrap_dim(dim, rank + (op == "stack")) + 1
    return wrap(D(op, new, d), level)


def _matmul_phys(a, b, level):
    """Logical matmul of `a` and `b` on their values (upstream's broadcasting matmul)."""
    va, ba = unwrap(a, level)
    vb, bb = unwrap(b, level)
    ra, rb = len(a._tn_sizes), len(b._tn_sizes)
    if ra == 0 or rb == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {ra}D and {rb}D")
    pa = front(va, ba) if ba is not None else a
    pb = front(vb, bb) if bb is not None else b
    if ra == 1:
        pa = D("unsqueeze", pa, -2)
    if rb == 1:
        pb = D("unsqueeze", pb, -1)
    nbatch = max(ra, rb, 2) - 2
    if ba is not None:
        for _ in range(nbatch - (max(ra, 2) - 2)):
            pa = D("unsqueeze", pa, 1)
    if bb is not None:
        for _ in range(nbatch - (max(rb, 2) - 2)):
            pb = D("unsqueeze", pb, 1)
    out = D("matmul", pa, pb)
    if rb == 1:
        out = D("squeeze.dim", out, -1)
    if ra == 1:
        out = D("squeeze.dim", out, -1 if rb == 1 else -2)
    return out


_MAT_RANKS = {"mm": (2, 2), "bmm": (3, 3), "mv": (2, 1), "dot": (1, 1), "vdot": (1, 1)}


@rule("matmul", "mm", "bmm", "mv", "dot")
def _matmul(op, args, kwargs, level, size):
    a, b = args[0], args[1]
    want = _MAT_RANKS.get(op)
    if want is not None:
        ra, rb = len(a._tn_sizes), len(b._tn_sizes)
        if (ra, rb) != want:
            return loop(op, args, kwargs, level, size)  # the per-sample call raises upstream's error
        if B.dtype_of(a) is not B.dtype_of(b):
            return loop(op, args, kwargs, level, size)
    return wrap(_matmul_phys(a, b, level), level)


def _beta_alpha(out, self, beta, alpha):
    if alpha != 1:
        out = D("mul.Scalar", out, alpha)
    if beta == 0:
        return out  # upstream ignores self then (its NaNs included)
    scaled = self if beta == 1 else D("mul.Scalar", self, beta)
    return D("add.Tensor", scaled, out, 1)


@rule("addmm", "addmv", "baddbmm")
def _addmm(op, args, kwargs, level, size):
    self, m1, m2 = args[0], args[1], args[2]
    beta = args[3] if len(args) > 3 else 1
    alpha = args[4] if len(args) > 4 else 1
    prod = D({"addmm": "mm", "addmv": "mv", "baddbmm": "bmm"}[op], m1, m2)
    return _beta_alpha(prod, self, beta, alpha)


@rule("addbmm")
def _addbmm(op, args, kwargs, level, size):
    self, b1, b2 = args[0], args[1], args[2]
    prod = D("sum.dim_IntList", D("bmm", b1, b2), [0], False, None)
    return _beta_alpha(prod, self, args[3] if len(args) > 3 else 1, args[4] if len(args) > 4 else 1)


@rule("linear")
def _linear(op, args, kwargs, level, size):
    x, w = args[0], args[1]
    bias = args[2] if len(args) > 2 else None
    vx, bx = unwrap(x, level)
    if bx is not None and unwrap(w, level)[1] is None and unwrap(bias, level)[1] is None:
        return wrap(D("linear", front(vx, bx), w, bias), level)
    out = D("matmul", x, D("t", w) if len(w._tn_sizes) == 2 else w)
    return out if bias is None else D("add.Tensor", out, bias, 1)


@rule("convolution", "_convolution")
def _convolution(op, args, kwargs, level, size):
    x, w, bias = args[0], args[1], args[2]
    transposed, groups = args[6], args[8]
    vx, bx = unwrap(x, level)
    _, bw = unwrap(w, level)
    _, bb = unwrap(bias, level)
    if len(x._tn_sizes) != len(w._tn_sizes) or (transposed and (bw is not None or bb is not None)):
        return loop(op, args, kwargs, level, size)
    if bw is None and bb is None:
        p = D("flatten.using_ints", front(vx, bx), 0, 1)
        out = D(op, p, w, bias, *args[3:])
        return wrap(D("unflatten.int", out, 0, [size, x._tn_sizes[0]]), level)
    # per-sample weights: the batch joins the channels and each sample is its own group
    px = moved(x, level, size)  # [B, N, C, *spatial]
    n = px._tn_sizes[1]
    px = D("reshape", D("movedim.int", px, 0, 1), [n, -1] + list(px._tn_sizes[3:]))
    pw = moved(w, level, size)  # [B, O, C/g, *kernel]
    o = pw._tn_sizes[1]
    pw = D("flatten.using_ints", pw, 0, 1)
    pb = None if bias is None else D("flatten.using_ints", moved(bias, level, size), 0, 1)
    out = D(op, px, pw, pb, *args[3:8], groups * size, *args[9:])
    out = D("reshape", out, [n, size, o] + list(out._tn_sizes[2:]))
    return wrap(D("movedim.int", out, 1, 0), level)


@rule("embedding")
def _embedding(op, args, kwargs, level, size):
    w, idx = args[0], args[1]
    vw, bw = unwrap(w, level)
    if bw is None:
        vi, bi = unwrap(idx, level)
        return wrap(D(op, w, front(vi, bi), *args[2:]), level)
    if len(args) > 2 and args[2] not in (None, -1):
        return loop(op, args, kwargs, level, size)  # padding_idx shapes the weight's gradient
    pw = front(vw, bw)
    pi = moved(idx, level, size)
    ar = D("reshape", D("arange", size, B.I64, None, B.device_of(pw), None), [size] + [1] * len(idx._tn_sizes))
    return wrap(D("index.Tensor", pw, [ar, pi]), level)


def _is_mask(i):
    return isinstance(i, B.C.TensorBase) and B.dtype_of(i) in (B.BOOL, B.T.BY_NAME["uint8"])


def _mask_error():
    return RuntimeError(
        "vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over "
        "indexing with a boolean mask."
    )


def _masks_as_positions(indices, level):
    """A boolean mask index becomes the positions it selects, one long index per dimension it
    covers (as upstream's indexing expands it); a batched mask selects a different number of
    elements per sample, which upstream refuses."""
    out = []
    for i in indices:
        if not _is_mask(i):
            out.append(i)
            continue
        if unwrap(i, level)[1] is not None or BT.info(i) is not None:
            raise _mask_error()
        nz = D("nonzero", i)
        out.extend(D("select.int", nz, 1, j) for j in range(len(i._tn_sizes)))
    return out


@rule("index_put_", "index_put", "_index_put_impl_")
def _index_put(op, args, kwargs, level, size):
    if any(_is_mask(i) and BT.info(i) is not None for i in args[1]):
        raise _mask_error()
    return loop(op, args, kwargs, level, size)


@rule("index.Tensor", "_unsafe_index.Tensor")
def _index(op, args, kwargs, level, size):
    self, indices = args[0], _masks_as_positions(list(args[1]), level)
    pos = [k for k, i in enumerate(indices) if i is not None]
    if not pos:
        return default(op, args, kwargs, level, size)
    adjacent = pos == list(range(pos[0], pos[-1] + 1))
    adv = max(len(indices[k]._tn_sizes) for k in pos)
    if not any(unwrap(i, level)[1] is not None for i in indices if i is not None):
        vs, bs = unwrap(self, level)
        out = D(op, front(vs, bs), [None] + indices)
        return wrap(out, level, 0 if adjacent else adv)
    p = moved(self, level, size)
    phys = []
    for i in indices:
        if i is not None and unwrap(i, level)[1] is not None:
            q = moved(i, level, size)
            for _ in range(adv - len(i._tn_sizes)):
                q = D("unsqueeze", q, 1)
            i = q
        phys.append(i)
    ar = D("reshape", D("arange", size, B.I64, None, B.device_of(p), None), [size] + [1] * adv)
    out = D(op, p, [ar] + phys)
    if adjacent and pos[0] > 0:
        # the batch index made the advanced indices non-adjacent: their dimensions came first
        rest = len(out._tn_sizes) - 1 - adv
        perm = [0] + [1 + adv + j for j in range(pos[0])] + list(range(1, 1 + adv)) \
            + [1 + adv + j for j in range(pos[0], rest)]
        out = D("permute", out, perm)
    return wrap(out, level)


def _all_batched_dim(dim_pos):
    """Operators over one dimension of several same-rank tensors (gather, scatter, the softmax
    backwards): every tensor gets the batch first, expanded where it had none."""
    def rule_fn(op, args, kwargs, level, size):
        TB = B.C.TensorBase
        r = len(args[0]._tn_sizes)
        if r == 0:
            return loop(op, args, kwargs, level, size)
        new = [moved(a, level, size) if isinstance(a, TB) else a for a in args]
        new[dim_pos] = shift(args[dim_pos], r)
        return wrap(D(op, *new, **kwargs), level)
    return rule_fn


for _op, _pos in (("gather", 1), ("scatter.src", 1), ("scatter.value", 1), ("scatter_add", 1),
                  ("_softmax_backward_data", 2), ("_log_softmax_backward_data", 2)):
    RULES[_op] = _all_batched_dim(_pos)


@rule("native_layer_norm")
def _layer_norm(op, args, kwargs, level, size):
    x, shape, w, bias, eps = args
    vx, bx = unwrap(x, level)
    plain_affine = unwrap(w, level)[1] is None and unwrap(bias, level)[1] is None
    if plain_affine:
        return wrap(D(op, front(vx, bx), shape, w, bias, eps), level)
    if bx is None:
        out, mean, rstd = D(op, x, shape, None, None, eps)
    else:
        out, mean, rstd = wrap(D(op, front(vx, bx), shape, None, None, eps), level)
    if w is not None:
        out = D("mul.Tensor", out, w)
    if bias is not None:
        out = D("add.Tensor", out, bias, 1)
    return out, mean, rstd


def _fold(full_rank):
    """Operators with a leading batch dimension N of their own (pooling, upsampling): the vmap
    batch folds into N, or is N when the logical input has none."""
    def rule_fn(op, args, kwargs, level, size):
        x = args[0]
        v, bd = unwrap(x, level)
        if bd is None or batched_others(args, level):
            return loop(op, args, kwargs, level, size)
        p = front(v, bd)
        r = len(x._tn_sizes)
        if r == full_rank - 1:
            return wrap(D(op, p, *args[1:], **kwargs), level)
        if r != full_rank:
            return loop(op, args, kwargs, level, size)
        n = x._tn_sizes[0]
        out = D(op, D("flatten.using_ints", p, 0, 1), *args[1:], **kwargs)

        def unfold(o):
            return D("unflatten.int", o, 0, [size, n]) if isinstance(o, B.C.TensorBase) else o
        out = same_kind(out, (unfold(o) for o in out)) if isinstance(out, tuple) else unfold(out)
        return wrap(out, level)
    return rule_fn


for _op, _rank in (("max_pool1d_with_indices", 3), ("max_pool2d_with_indices", 4), ("max_pool3d_with_indices", 5),
                   ("avg_pool1d", 3), ("avg_pool2d", 4), ("avg_pool3d", 5), ("_adaptive_avg_pool2d", 4),
                   ("_adaptive_avg_pool3d", 5), ("adaptive_max_pool2d", 4), ("adaptive_max_pool3d", 5),
                   ("upsample_nearest2d", 4), ("upsample_nearest2d.vec", 4), ("upsample_bilinear2d", 4),
                   ("upsample_bilinear2d.vec", 4), ("_upsample_nearest_exact2d", 4), ("max_pool2d", 4),
                   ("pixel_shuffle", 4), ("pixel_unshuffle", 4), ("reflection_pad1d", 3), ("reflection_pad2d", 4),
                   ("reflection_pad3d", 5), ("replication_pad1d", 3), ("replication_pad2d", 4),
                   ("replication_pad3d", 5)):
    RULES[_op] = _fold(_rank)


@rule("_scaled_dot_product_flash_attention_for_cpu")
def _flash_attention(op, args, kwargs, level, size):
    """The batch folds into the attention's own batch dimension."""
    q, k, v, mask = args[0], args[1], args[2], args[5] if len(args) > 5 else None
    if any(len(t._tn_sizes) != 4 for t in (q, k, v)) or unwrap(mask, level)[1] is not None:
        return loop(op, args, kwargs, level, size)
    n = q._tn_sizes[0]
    folded = [D("flatten.using_ints", moved(t, level, size), 0, 1) for t in (q, k, v)]
    if mask is not None and len(mask._tn_sizes) == 4 and mask._tn_sizes[0] != 1:
        mask = D("flatten.using_ints", moved(mask, level, size), 0, 1)
    rest = list(args[3:])
    if len(rest) > 2:
        rest[2] = mask
    out = D(op, *folded, *rest, **kwargs)
    return wrap(tuple(D("unflatten.int", o, 0, [size, n]) for o in out), level)


@rule("mse_loss")
def _mse_loss(op, args, kwargs, level, size):
    self, target = args[0], args[1]
    reduction = args[2] if len(args) > 2 else 1
    d = D("sub.Tensor", self, target, 1)
    sq = D("mul.Tensor", d, d)
    if reduction == 0:
        return sq
    return D("mean" if reduction == 1 else "sum", sq, None)


def _decomposed(op, args, kwargs, level, size):
    """Upstream's own Python decomposition, run on the batched tensors (upstream registers these
    same ones for its batching key: torch/_functorch/predispatch.py lazy_load_decompositions)."""
    from torch._decomp import decomposition_table

    from ..ops.door.modes import overload_packet

    from ..binding.schema import all_schemas

    pos, kw = [], dict(kwargs)
    for a, v in zip(all_schemas()[op].args, args):
        if a.kwarg_only:
            kw[a.name] = v
        else:
            pos.append(v)
    return decomposition_table[overload_packet(op)](*pos, **kw)


for _op in ("mse_loss_backward", "smooth_l1_loss_backward", "huber_loss_backward", "nll_loss_forward",
            "nll_loss2d_forward", "nll_loss_backward", "nll_loss2d_backward", "addr"):
    RULES[_op] = _decomposed


def item_error():
    return marked(RuntimeError(
        "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
        "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
        "inside PyTorch internals, please file a bug report."
    ))


def data_dependent_error():
    return marked(RuntimeError(
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
        "support that yet, please shout over at https://github.com/pytorch/functorch/issues/257 ."
    ))


@rule("_local_scalar_dense")
def _item(op, args, kwargs, level, size):
    raise item_error()


@rule("is_nonzero", "equal")
def _data_dependent(op, args, kwargs, level, size):
    raise data_dependent_error()


@rule("_make_dual", "_unpack_dual", "_add_batch_dim", "_remove_batch_dim")
def _on_logical(op, args, kwargs, level, size):
    """Forward mode (forward.py) and the legacy vmap's wrapping (legacy.py) work on the logical
    tensors themselves."""
    from . import forward, legacy

    fn = {"_make_dual": forward.make_dual, "_unpack_dual": forward.unpack_dual,
          "_add_batch_dim": legacy.add_batch_dim, "_remove_batch_dim": legacy.remove_batch_dim}[op]
    return fn(*args, **kwargs)


@rule("as_strided_copy")
def _as_strided_copy(op, args, kwargs, level, size):
    return D("clone", D("as_strided", *args), CONTIGUOUS_FORMAT)


@rule("resize_")
def _resize_(op, args, kwargs, level, size):
    self = args[0]
    v, bd = unwrap(self, level)
    if bd != 0 or BT.info(v) is not None:
        return loop(op, args, kwargs, level, size)
    D(op, v, [size] + list(args[1]), *args[2:])
    self._tn_set_geometry(list(v._tn_sizes[1:]), list(v._tn_strides[1:]), v.storage_offset())
    return self
