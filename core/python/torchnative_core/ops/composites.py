"""Composite operators: written once, as compositions of other operators through the door, so
they run on every backend that implements the primitives (upstream's CompositeImplicitAutograd
and the CPU decompositions that have the same results)."""

from __future__ import annotations

from ..surface.types import CONTIGUOUS_FORMAT

import math

from . import base as B
from . import impl


D = B.door


def _num(x):
    return B.C._tn_scalar_to_tensor(x)


@impl("square")
def square(self):
    return D("pow.Tensor_Scalar", self, 2)


@impl("sgn")
def sgn(self):
    return D("sign", self)


@impl("broadcast_to")
def broadcast_to(self, size):
    return D("expand", self, list(size), False)


@impl("outer", "ger")
def outer(self, vec2):
    return D("mul.Tensor", D("unsqueeze", self, 1), vec2)


@impl("is_floating_point")
def is_floating_point(self):
    return B.dtype_of(self).is_floating_point


@impl("is_complex")
def is_complex(self):
    return B.dtype_of(self).is_complex


@impl("equal")
def equal(self, other):
    if list(self._tn_sizes) != list(other._tn_sizes):
        return False
    return bool(D("all", D("eq.Tensor", self, other)).item())


@impl("clamp_")
def clamp_(self, min=None, max=None):
    return D("copy_", self, D("clamp", self, min, max), False)


@impl("nan_to_num")
def nan_to_num(self, nan=None, posinf=None, neginf=None):
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("nan_to_num", (self, nan, posinf, neginf), (out,))
    return out


@impl("leaky_relu")
def leaky_relu(self, negative_slope=0.01):
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch("leaky_relu", (self, negative_slope), (out,))
    return out


@impl("fmax")
def fmax(self, other):
    # NaN-ignoring maximum: where one side is NaN take the other
    m = D("maximum", self, other)
    return D("where.self", D("isnan", self), D("where.self", D("isnan", other), m, other), D("where.self", D("isnan", other), self, m))


@impl("fmin")
def fmin(self, other):
    m = D("minimum", self, other)
    return D("where.self", D("isnan", self), D("where.self", D("isnan", other), m, other), D("where.self", D("isnan", other), self, m))


@impl("count_nonzero")
def count_nonzero(self, dim=None):
    return D("sum.dim_IntList", D("ne.Scalar", self, 0), [] if dim is None else [dim], False, None)


@impl("count_nonzero.dim_IntList")
def count_nonzero_dims(self, dim):
    return D("sum.dim_IntList", D("ne.Scalar", self, 0), list(dim), False, None)


@impl("argwhere")
def argwhere(self):
    return D("nonzero", self)


@impl("where")
def where_single(condition):
    idx = D("nonzero", condition)
    return [D("select.int", idx, 1, i) for i in range(len(condition._tn_sizes))]


@impl("hstack")
def hstack(tensors):
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    ts = [t if len(t._tn_sizes) else D("view", t, [1]) for t in tensors]
    return D("cat", ts, 0 if len(ts[0]._tn_sizes) == 1 else 1)


@impl("vstack", "row_stack")
def vstack(tensors):
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    ts = [D("view", t, [1, -1]) if len(t._tn_sizes) < 2 else t for t in tensors]
    return D("cat", ts, 0)


@impl("meshgrid.indexing")
def meshgrid(tensors, indexing="ij"):
    """Upstream's: "xy" swaps the first two inputs, builds the "ij" grids and swaps the first two
    outputs back (no transpose, so the grids are views with upstream's strides)."""
    ts = list(tensors)
    if not ts:
        raise RuntimeError("torch.meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    swap = indexing == "xy" and len(ts) >= 2
    if swap:
        ts[0], ts[1] = ts[1], ts[0]
    for t in ts:
        if len(t._tn_sizes) > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t}")
    shape = [B.numel(t._tn_sizes) for t in ts]
    out = []
    for i, t in enumerate(ts):
        view = [1] * len(ts)
        view[i] = -1
        out.append(D("expand", D("view", t, view), shape, False))
    if swap:
        out[0], out[1] = out[1], out[0]
    return out


_MESHGRID_WARNED = []


@impl("meshgrid")
def meshgrid_default(tensors):
    if not _MESHGRID_WARNED:  # upstream's TORCH_WARN_ONCE
        import warnings

        _MESHGRID_WARNED.append(True)
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=3)
    return meshgrid(tensors, "ij")


@impl("diagonal")
def diagonal(self, offset=0, dim1=0, dim2=1):
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    nd = len(sizes)
    d1, d2 = B.wrap_dim(dim1, nd), B.wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    off = self.storage_offset()
    if offset >= 0:
        n = max(min(sizes[d1], sizes[d2] - offset), 0)
        off += offset * strides[d2] if n else 0
    else:
        n = max(min(sizes[d1] + offset, sizes[d2]), 0)
        off -= offset * strides[d1] if n else 0
    keep = [i for i in range(nd) if i not in (d1, d2)]
    return self._tn_as_strided([sizes[i] for i in keep] + [n], [strides[i] for i in keep] + [strides[d1] + strides[d2]], off)


@impl("promote_types")
def promote_types(type1, type2):
    return B.promote_types(type1, type2)


@impl("bernoulli")
def bernoulli(self, generator=None):
    # upstream: a fresh tensor filled with bernoulli(self) element-wise probabilities
    u = D("rand_like", self, None, None, None, None, None, generator)
    return D("_to_copy", D("lt.Tensor", u, self), B.dtype_of(self), None, None, None, False, None)


@impl("baddbmm")
def baddbmm(self, batch1, batch2, beta=1, alpha=1):
    prod = D("bmm", batch1, batch2)
    d = B.dtype_of(prod)
    if not (d.is_floating_point or d.is_complex):
        beta, alpha = int(beta), int(alpha)  # upstream converts the scalars to the integer type
    if alpha != 1:
        prod = D("mul.Tensor", prod, _num(alpha))
    if beta == 0:
        return prod
    base = self if beta == 1 else D("mul.Tensor", self, _num(beta))
    return D("add.Tensor", prod, base, 1)


@impl("nansum")
def nansum(self, dim=None, keepdim=False, dtype=None):
    clean = D("where.self", D("isnan", self), D("zeros_like", self, None, None, None, None, None), self)
    return D("sum.dim_IntList", clean, dim, keepdim, dtype)


@impl("nanmean")
def nanmean(self, dim=None, keepdim=False, dtype=None):
    notnan = D("logical_not", D("isnan", self))
    return D("div.Tensor", nansum(self, dim, keepdim, dtype), D("sum.dim_IntList", notnan, dim, keepdim, None))


@impl("aminmax")
def aminmax(self, dim=None, keepdim=False):
    from torch.return_types import aminmax as t

    sizes = list(self._tn_sizes)
    if dim is None:
        if not B.numel(sizes):
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                               "identity.")
        dims = []
    else:  # upstream's meta function: zero_numel_check_dims with its own name
        d = B.wrap_dim(dim, len(sizes))
        if sizes and sizes[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = [d]
    return t((D("amin", self, dims, keepdim), D("amax", self, dims, keepdim)))


@impl("constant_pad_nd")
def constant_pad_nd(self, pad, value=0):
    sizes = list(self._tn_sizes)
    nd = len(sizes)
    if len(pad) % 2 or len(pad) // 2 > nd:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    new = list(sizes)
    src = self
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo < 0:
            src = D("slice.Tensor", src, d, -lo, None, 1)
        if hi < 0:
            src = D("slice.Tensor", src, d, 0, src._tn_sizes[d] + hi, 1)
        new[d] = sizes[d] + lo + hi
    out = D("full", new, value, B.dtype_of(self), None, B.device_of(self), None)
    dst = out
    for i in range(len(pad) // 2):
        d = nd - 1 - i
        lo = max(pad[2 * i], 0)
        dst = D("slice.Tensor", dst, d, lo, lo + src._tn_sizes[d], 1)
    D("copy_", dst, src, False)
    return out


@impl("pad")
def pad(self, pad, mode="constant", value=None):
    if mode != "constant":
        from .resample import pad_with_mode

        return pad_with_mode(self, list(pad), mode, value)
    return D("constant_pad_nd", self, list(pad), 0 if value is None else value)


@impl("linalg_vector_norm")
def vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    o = float(ord)
    if not B.numel(list(self._tn_sizes)) and (o < 0 or o == math.inf):  # upstream's meta function
        if not dim:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {o:g} norm on an empty tensor because the "
                               "operation does not have an identity")
        for dn in dim:
            if self._tn_sizes[B.wrap_dim(dn, len(self._tn_sizes))] == 0:
                raise RuntimeError(f"linalg.vector_norm cannot compute the {o:g} norm on the dimension {dn}because "
                                   "this dimension is empty and the operation does not have an identity")
    x = D("abs", self if dtype is None else D("_to_copy", self, dtype, None, None, None, False, None))
    dims = None if dim is None else list(dim)
    if ord == float("inf"):
        return D("amax", x, dims or [], keepdim)
    if ord == float("-inf"):
        return D("amin", x, dims or [], keepdim)
    if ord == 0:
        return D("sum.dim_IntList", D("_to_copy", D("ne.Scalar", x, 0), B.dtype_of(x), None, None, None, False, None), dims, keepdim, None)
    if ord == 1:
        return D("sum.dim_IntList", x, dims, keepdim, None)
    if ord == 2:
        return D("sqrt", D("sum.dim_IntList", D("mul.Tensor", x, x), dims, keepdim, None))
    return D("pow.Tensor_Scalar", D("sum.dim_IntList", D("pow.Tensor_Scalar", x, ord), dims, keepdim, None), 1.0 / ord)


@impl("flip")
def flip(self, dims):
    out = self
    for d in dims:
        d = B.wrap_dim(d, len(self._tn_sizes))
        n = self._tn_sizes[d]
        idx = D("arange.start_step", n - 1, -1, -1, B.I64, None, B.device_of(self), None)
        out = D("index_select", out, d, idx)
    return out if dims else D("clone", self, CONTIGUOUS_FORMAT)


def _tri(self, diagonal, upper):
    sizes = list(self._tn_sizes)
    if len(sizes) < 2:
        raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 dimensions")
    r, c = sizes[-2], sizes[-1]
    dev = B.device_of(self)
    rows = D("view", D("arange", r, B.I64, None, dev, None), [r, 1])
    cols = D("view", D("arange", c, B.I64, None, dev, None), [1, c])
    diff = D("sub.Tensor", cols, rows, 1)
    keep = D("ge.Scalar", diff, diagonal) if upper else D("le.Scalar", diff, diagonal)
    return D("where.self", keep, self, D("zeros_like", self, None, None, None, None, None))


@impl("tril")
def tril(self, diagonal=0):
    return _tri(self, diagonal, False)


@impl("triu")
def triu(self, diagonal=0):
    return _tri(self, diagonal, True)


@impl("take")
def take(self, index):
    """self as flat, indexed by `index` (negative indices count from the end, as upstream)."""
    n = B.numel(self._tn_sizes)
    flat = D("reshape", index, [-1])
    if B.numel(flat._tn_sizes):
        lo, hi = D("min", flat).item(), D("max", flat).item()
        for bad in (lo, hi):
            if bad < -n or bad >= n:
                raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
        flat = D("where.self", D("lt.Scalar", flat, 0), D("add.Scalar", flat, n, 1), flat)
    return D("view", D("index_select", D("reshape", self, [-1]), 0, flat), list(index._tn_sizes))


@impl("tensor_split.sections")
def tensor_split(self, sections, dim=0):
    d = B.wrap_dim(dim, len(self._tn_sizes))
    n = self._tn_sizes[d]
    q, r = divmod(n, sections)
    sizes = [q + 1] * r + [q] * (sections - r)
    return D("split_with_sizes", self, sizes, d)


@impl("tensor_split.indices")
def tensor_split_indices(self, indices, dim=0):
    # upstream: slice(start, index) per index, each start the previous index as given, so a
    # negative index counts from the end as slice reads it
    d = B.wrap_dim(dim, len(self._tn_sizes))
    bounds = [0] + list(indices) + [self._tn_sizes[d]]
    return [D("slice.Tensor", self, d, a, b, 1) for a, b in zip(bounds, bounds[1:])]


@impl("median")
def median(self):
    flat = D("reshape", self, [-1])
    n = B.numel(flat._tn_sizes)
    s = D("sort", flat, 0, False)[0]
    has_nan = bool(D("any", D("isnan", flat)).item()) if B.dtype_of(self).is_floating_point else False
    return D("select.int", s, 0, n - 1 if has_nan else (n - 1) // 2)


@impl("logspace")
def logspace(start, end, steps, base=10.0, dtype=None, layout=None, device=None, pin_memory=None):
    start, end = _integral_bounds(start, end, dtype or B.default_dtype())
    exps = D("linspace", start, end, steps, B.F64, None, device, None)
    out = D("pow.Scalar", base, exps)
    return D("_to_copy", out, dtype or B.default_dtype(), None, None, None, False, None)


def _integral_bounds(start, end, dtype):
    """upstream's linspace and logspace kernels convert start and end to an integral output type
    first (`Scalar::to<scalar_t>`: truncation), then step in double between those."""
    if dtype.is_floating_point or dtype.is_complex or isinstance(start, complex) or isinstance(end, complex):
        return start, end
    return int(start), int(end)


@impl("linspace.out")
def _linspace_out(start, end, steps, out):
    """upstream's LinspaceKernel: the first half counts up from start, the second half down
    from end, with step = (end - start) / (steps - 1) in the output's (or double's) type."""
    d = B.dtype_of(out)
    start, end = _integral_bounds(start, end, d)
    work = d if d.is_floating_point else B.F64
    dev = B.device_of(out)
    if steps == 1:
        return D("fill_.Scalar", out, start)
    if (d in _FUSED_DTYPES and list(out._tn_sizes) == [steps] and not isinstance(start, complex)
            and not isinstance(end, complex) and B.C._tn_has_kernel("linspace.out", out._tn_device_key)):
        B.launch("linspace.out", (start, end, steps), (out,))  # upstream's rounding, bit for bit
        out._tn_bump_version()
        return out
    step = (float(end) - float(start)) / (steps - 1)
    idx = D("arange", steps, work, None, dev, None)
    lo = D("add.Tensor", D("mul.Tensor", idx, _num(step)), _num(float(start)), 1)
    rev = D("sub.Tensor", _num(float(steps - 1)), idx, 1)
    hi = D("sub.Tensor", _num(float(end)), D("mul.Tensor", rev, _num(step)), 1)
    half = steps // 2
    val = D("where.self", D("lt.Scalar", idx, half), lo, hi)
    return D("copy_", out, val, False)


@impl("view.dtype")
def view_dtype(self, dtype):
    """Reinterpret the bytes (TensorConversions.cpp view_dtype): a size change scales the last
    dimension, which must be contiguous, and every other stride and the offset."""
    old = B.dtype_of(self)
    sizes, strides, off = list(self._tn_sizes), list(self._tn_strides), self.storage_offset()
    a, b = old.itemsize, dtype.itemsize
    if a != b:
        if not sizes:
            raise RuntimeError(
                "self.dim() cannot be 0 to view " + _tn(old) + " as " + _tn(dtype) + " (different element sizes)")
        if strides[-1] != 1:
            raise RuntimeError("self.stride(-1) must be 1 to view " + _tn(old) + " as " + _tn(dtype)
                               + " (different element sizes), but got " + str(strides[-1]))
        if b < a:
            r = a // b
            sizes[-1] *= r
            strides = [st * r for st in strides[:-1]] + [1]
            off *= r
        else:
            r = b // a
            if sizes[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} to view {_tn(old)} as {_tn(dtype)} "
                                   f"(different element sizes), but got {sizes[-1]}")
            if off % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} to view {_tn(old)} as "
                                   f"{_tn(dtype)} (different element sizes), but got {off}")
            for st in strides[:-1]:
                if st % r:
                    raise RuntimeError(f"self.stride(i) must be divisible by {r} to view {_tn(old)} as {_tn(dtype)} "
                                       f"(different element sizes), but got {st}")
            sizes[-1] //= r
            strides = [st // r for st in strides[:-1]] + [1]
            off //= r
    return self._tn_reinterpret(dtype._tn_code, sizes, strides, off)


def _tn(d):
    from .elementwise import _type_name

    return _type_name(d)


@impl("result_type.Tensor")
def result_type_tensor(tensor, other):
    return B.result_type(tensor, other)


@impl("result_type.Scalar")
def result_type_scalar(tensor, other):
    return B.result_type(tensor, other)


@impl("result_type.Scalar_Tensor")
def result_type_scalar_tensor(scalar, tensor):
    return B.result_type(scalar, tensor)


@impl("result_type.Scalar_Scalar")
def result_type_scalars(scalar1, scalar2):
    return B.result_type(_num(scalar1), _num(scalar2))


@impl("isclose")
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if B.dtype_of(self) is not B.dtype_of(other):
        raise RuntimeError(f"{B.dtype_of(self)} did not match {B.dtype_of(other)}")
    close = D("eq.Tensor", self, other)
    if equal_nan:
        close = D("logical_or", close, D("logical_and", D("isnan", self), D("isnan", other)))
    d = B.dtype_of(self)
    if d is B.BOOL or not (d.is_floating_point or d.is_complex):
        if rtol == 0 and atol == 0:
            return close
        a, b = D("_to_copy", self, B.default_dtype(), None, None, None, False, None), D("_to_copy", other, B.default_dtype(), None, None, None, False, None)
    else:
        a, b = self, other
    diff = D("abs", D("sub.Tensor", a, b, 1))
    tol = D("add.Tensor", D("mul.Tensor", D("abs", b), _num(rtol)), _num(atol), 1)
    within = D("logical_and", D("isfinite", diff), D("le.Tensor", diff, tol))
    return D("logical_or", close, within)


@impl("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(D("all", isclose(self, other, rtol, atol, equal_nan)).item())


@impl("clamp.Tensor")
def clamp_tensor(self, min=None, max=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    ops = [self] + [t for t in (min, max) if t is not None]
    common = B.result_type(*ops)
    shape = B.broadcast_shapes(*[t._tn_sizes for t in ops])
    cast = lambda t: None if t is None else B.expand_to(D("_to_copy", t, common, None, None, None, False, None) if B.dtype_of(t) is not common else t, shape)  # noqa: E731
    out = B.empty(shape, common, B.device_of(self))
    if B.numel(shape):
        B.launch("clamp.Tensor", (cast(self), cast(min), cast(max)), (out,))
    return out


@impl("lerp.Scalar")
def lerp_scalar(self, end, weight):
    out = _fused("lerp.Scalar", (self, end), weight)
    if out is not None:
        return out
    diff = D("sub.Tensor", end, self, 1)
    if abs(weight) < 0.5:
        return D("add.Tensor", self, D("mul.Tensor", diff, _num(weight)), 1)
    return D("sub.Tensor", end, D("mul.Tensor", diff, _num(1 - weight)), 1)


@impl("isposinf")
def isposinf(self):
    return D("logical_and", D("isinf", self), D("gt.Scalar", self, 0))


@impl("isneginf")
def isneginf(self):
    return D("logical_and", D("isinf", self), D("lt.Scalar", self, 0))


@impl("remainder_.Scalar")
def remainder_scalar_(self, other):
    return D("copy_", self, D("remainder.Scalar", self, other), False)


@impl("remainder_.Tensor")
def remainder_tensor_(self, other):
    return D("copy_", self, D("remainder.Tensor", self, other), False)


def _kernel_unary(name):
    def fn(self, *params):
        out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
        if B.numel(self._tn_sizes):
            B.launch(name, (self, *params), (out,))
        return out

    return fn


impl("elu")(_kernel_unary("elu"))
impl("hardtanh")(_kernel_unary("hardtanh"))
impl("softplus")(_kernel_unary("softplus"))


@impl("roll")
def roll(self, shifts, dims=()):
    if not dims:
        flat = D("reshape", self, [-1])
        return D("view", roll(flat, shifts, [0]), list(self._tn_sizes))
    out = self
    for s, d in zip(shifts, dims):
        d = B.wrap_dim(d, len(self._tn_sizes))
        n = self._tn_sizes[d]
        if n == 0:
            continue
        s %= n
        if s:
            out = D("cat", [D("slice.Tensor", out, d, n - s, n, 1), D("slice.Tensor", out, d, 0, n - s, 1)], d)
    return out if out is not self else D("clone", self, CONTIGUOUS_FORMAT)


@impl("vdot")
def vdot(self, other):
    return D("dot", self, other)


@impl("broadcast_tensors")
def broadcast_tensors(tensors):
    shape = B.broadcast_shapes(*[t._tn_sizes for t in tensors])
    return [D("expand", t, shape, False) for t in tensors]


_FUSED_DTYPES = (B.F32, B.F64)


NO_SCALAR = object()  # _fused's `scalar` for a kernel of tensors only (lerp.Tensor)


def _fused(op, tensors, scalar, inplace=False):
    """One kernel for a pointwise operator of several float32/float64 operands of one dtype on one
    device (the cpu backend's `pointwise.rs`: upstream's rounding, fused multiply-adds included),
    or None where it does not apply and the caller composes. In place, `self` is written directly
    when it has the broadcast shape and no other operand shares its storage."""
    first = tensors[0]
    dt = B.dtype_of(first)
    if dt not in _FUSED_DTYPES:
        return None
    key, index = first._tn_device_key, first._tn_device_index
    for t in tensors[1:]:
        if B.dtype_of(t) is not dt or t._tn_device_key != key or t._tn_device_index != index:
            return None
    if not B.C._tn_has_kernel(op, key):
        return None
    shape = B.broadcast_shapes(*[t._tn_sizes for t in tensors])
    if inplace:
        if list(shape) != list(first._tn_sizes) or any(t._tn_storage_id == first._tn_storage_id for t in tensors[1:]):
            return None
        out = first
    else:
        out = B.empty(shape, dt, B.device_of(first))
    if B.numel(shape):
        expanded = [B.expand_to(t, shape) for t in tensors]
        B.launch(op, tuple(expanded) if scalar is NO_SCALAR else (*expanded, scalar), (out,))
    if inplace:
        out._tn_bump_version()
    return out


@impl("addcmul")
def addcmul(self, tensor1, tensor2, value=1):
    out = _fused("addcmul", (self, tensor1, tensor2), value)
    if out is not None:
        return out
    return D("add.Tensor", self, D("mul.Tensor", D("mul.Tensor", tensor1, tensor2), _num(value)), 1)


@impl("addcdiv")
def addcdiv(self, tensor1, tensor2, value=1):
    out = _fused("addcdiv", (self, tensor1, tensor2), value)
    if out is not None:
        return out
    return D("add.Tensor", self, D("mul.Tensor", D("div.Tensor", tensor1, tensor2), _num(value)), 1)


def _fused_inplace(op, self, tensors, scalar, derived):
    """`op` (addcmul_, addcdiv_, lerp_.Scalar) writing into self with one kernel outside autograd;
    otherwise `derived()`: the functional result copied into self (ops/inplace.py's rule)."""
    every = (self, *tensors)
    if not (B.C.is_grad_enabled() and any(t._tn_requires_grad for t in every)):
        out = _fused(op, every, scalar, inplace=True)
        if out is not None:
            return out
    return derived()


def _copied(op, functional):
    from .inplace import _make

    return _make(op, functional)


_ADDCMUL_, _ADDCDIV_, _LERP_ = _copied("addcmul_", "addcmul"), _copied("addcdiv_", "addcdiv"), _copied("lerp_.Scalar", "lerp.Scalar")


@impl("addcmul_")
def addcmul_(self, tensor1, tensor2, value=1):
    return _fused_inplace("addcmul_", self, (tensor1, tensor2), value, lambda: _ADDCMUL_(self, tensor1, tensor2, value))


@impl("addcdiv_")
def addcdiv_(self, tensor1, tensor2, value=1):
    return _fused_inplace("addcdiv_", self, (tensor1, tensor2), value, lambda: _ADDCDIV_(self, tensor1, tensor2, value))


@impl("lerp_.Scalar")
def lerp_scalar_(self, end, weight):
    return _fused_inplace("lerp_.Scalar", self, (end,), weight, lambda: _LERP_(self, end, weight))


@impl("repeat")
def repeat(self, repeats):
    sizes = list(self._tn_sizes)
    if len(repeats) < len(sizes):
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
        )
    pad = len(repeats) - len(sizes)
    sizes = [1] * pad + sizes
    # upstream multiplies in int64 (wrapping) and refuses the result's sizes before anything runs
    target = [(r * s + 2**63) % 2**64 - 2**63 for r, s in zip(repeats, sizes)]
    if any(t < 0 for t in target):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(target)}: {target}")
    if B.numel(target) * B.dtype_of(self).itemsize >= 2**63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={target}")
    x = D("view", D("contiguous", self, None), sizes)
    # interleave a broadcast dim before each dim, expand it to the repeat count, then merge
    x = D("view", x, [v for s in sizes for v in (1, s)])
    x = D("expand", x, [v for r, s in zip(repeats, sizes) for v in (r, s)], False)
    # upstream's repeat always returns a new contiguous tensor; a reshape of the expanded view can
    # stay a view with zero strides (a repeated size-1 dimension), so it is materialised
    return D("contiguous", D("reshape", x, [r * s for r, s in zip(repeats, sizes)]), None)


@impl("tile")
def tile(self, dims):
    dims = list(dims)
    if len(dims) < len(self._tn_sizes):
        dims = [1] * (len(self._tn_sizes) - len(dims)) + dims
    return D("repeat", self, dims)


# --- scatter family through index_put_ (a full coordinate index per element of `index`) ------

def _coords(index, dim):
    """For scatter-like ops: the index tuple addressing self at (index along dim, position
    elsewhere) for every element of `index`."""
    nd = len(index._tn_sizes)
    dev = B.device_of(index)
    out = []
    for d in range(nd):
        if d == dim:
            out.append(index)
        else:
            shape = [1] * nd
            shape[d] = index._tn_sizes[d]
            ar = D("view", D("arange", index._tn_sizes[d], B.I64, None, dev, None), shape)
            out.append(D("expand", ar, list(index._tn_sizes), False))
    return out


def _src_for(index, src):
    sl = src
    for d, n in enumerate(index._tn_sizes):
        sl = D("slice.Tensor", sl, d, 0, n, 1)
    return sl


def _scatter_0dim(op, self, dim, index, src):
    """A 0-dim self scatters as a 1-element vector (a view, so `self` is updated)."""
    x, idx, s = _as_1d(self, index, src)
    D(op, x, dim, idx, s)
    return self


@impl("scatter_.src")
def scatter_src_(self, dim, index, src):
    if not self._tn_sizes:
        return _scatter_0dim("scatter_.src", self, dim, index, src)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    return D("index_put_", self, _coords(index, d), _src_for(index, src), False)


@impl("scatter.src")
def scatter_src(self, dim, index, src):
    return scatter_src_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, src)


@impl("scatter_.value")
def scatter_value_(self, dim, index, value):
    if not self._tn_sizes:
        return _scatter_0dim("scatter_.value", self, dim, index, value)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    vals = D("full", list(index._tn_sizes), value, B.dtype_of(self), None, B.device_of(self), None)
    return D("index_put_", self, _coords(index, d), vals, False)


@impl("scatter.value")
def scatter_value(self, dim, index, value):
    return scatter_value_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, value)


@impl("scatter_add_")
def scatter_add_(self, dim, index, src):
    if not self._tn_sizes:
        return _scatter_0dim("scatter_add_", self, dim, index, src)
    d = B.wrap_dim(dim, len(self._tn_sizes))
    return D("index_put_", self, _coords(index, d), _src_for(index, src), True)


@impl("scatter_add")
def scatter_add(self, dim, index, src):
    return scatter_add_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, src)


@impl("index_add_")
def index_add_(self, dim, index, source, alpha=1):
    return D("copy_", self, D("index_add", self, dim, index, source, alpha), False)


def _as_1d(self, *rest):
    """A 0-dim tensor as a 1-element vector (upstream treats its dim 0 so), with the others."""
    return [D("reshape", t, [1]) if isinstance(t, B.C.TensorBase) and not t._tn_sizes else t for t in (self, *rest)]


@impl("index_add")
def index_add(self, dim, index, source, alpha=1):
    if not self._tn_sizes:
        x, src = _as_1d(self, source)
        return D("reshape", D("index_add", x, dim, index, src, alpha), [])
    d = B.wrap_dim(dim, len(self._tn_sizes))
    moved = D("movedim.int", D("clone", self, CONTIGUOUS_FORMAT), d, 0)
    src = D("movedim.int", source if alpha == 1 else D("mul.Tensor", source, _num(alpha)), d, 0)
    out = D("index_put_", D("clone", moved, CONTIGUOUS_FORMAT), [index], src, True)
    return D("movedim.int", out, 0, d)


@impl("index_fill_.int_Scalar")
def index_fill_(self, dim, index, value):
    d = B.wrap_dim(dim, len(self._tn_sizes))
    view = D("movedim.int", self, d, 0)
    D("index_put_", view, [index], D("scalar_tensor", value, B.dtype_of(self), None, B.device_of(self), None), False)
    return self


@impl("index_fill.int_Scalar")
def index_fill(self, dim, index, value):
    if not self._tn_sizes:  # a 0-dim tensor: index [0] fills it, an empty index leaves it
        B.wrap_dim(dim, 0)
        hit = B.numel(index._tn_sizes) > 0
        return D("full_like", self, value, None, None, None, None, None) if hit else D("clone", self, CONTIGUOUS_FORMAT)
    return index_fill_(D("clone", self, CONTIGUOUS_FORMAT), dim, index, value)


# --- order statistics via sort ---------------------------------------------------------------

@impl("median.dim")
def median_dim(self, dim, keepdim=False):
    from torch.return_types import median as t

    if not self._tn_sizes:  # a 0-dim tensor is its own median, at index 0
        B.wrap_dim(dim, 0)
        return t((D("clone", self, CONTIGUOUS_FORMAT), D("zeros", [], B.I64, None, B.device_of(self), None)))
    d = B.wrap_dim(dim, len(self._tn_sizes))
    n = self._tn_sizes[d]
    values, idx = D("sort.stable", self, True, d, False)
    k = (n - 1) // 2
    v, i = D("select.int", values, d, k), D("select.int", idx, d, k)
    if keepdim:
        v, i = D("unsqueeze", v, d), D("unsqueeze", i, d)
    return t((v, i))


@impl("kthvalue")
def kthvalue(self, k, dim=-1, keepdim=False):
    from torch.return_types import kthvalue as t

    d = B.wrap_dim(dim, len(self._tn_sizes))
    if k < 1 or k > (self._tn_sizes[d] if self._tn_sizes else 1):
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    if not self._tn_sizes:  # a 0-dim tensor is its own k=1 value, at index 0
        return t((D("clone", self, CONTIGUOUS_FORMAT), D("zeros", [], B.I64, None, B.device_of(self), None)))
    from .select import kthvalue_lines  # upstream's quickselect tie order, not a stable sort's

    v, i = kthvalue_lines(self, k, d)
    if keepdim:
        v, i = D("unsqueeze", v, d), D("unsqueeze", i, d)
    return t((v, i))


# --- pooling -----------------------------------------------------------------------------------

@impl("avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override is not None or not B.dtype_of(self).is_floating_point:
        from .nn_extra import avg_pool2d_any

        return avg_pool2d_any(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    two = lambda v: list(v) * 2 if len(v) == 1 else list(v)  # noqa: E731
    k = two(kernel_size)
    s = two(stride) if stride else list(k)
    p = two(padding)
    unbatched = len(self._tn_sizes) == 3
    x = D("unsqueeze", self, 0) if unbatched else self
    c = x._tn_sizes[1]
    w = D("full", [c, 1, k[0], k[1]], 1.0 / (k[0] * k[1]), B.dtype_of(self), None, B.device_of(self), None)
    out = D("convolution", x, w, None, s, p, [1, 1], False, [0, 0], c)
    return D("squeeze.dim", out, 0) if unbatched else out


@impl("adaptive_avg_pool2d")
def adaptive_avg_pool2d_composite(self, output_size):
    # upstream (AdaptiveAveragePooling.cpp): a global pool is a mean, anything else the kernel
    if list(output_size) in ([1, 1], [1]):
        return D("mean.dim", self, [-1, -2], True, None)
    return D("_adaptive_avg_pool2d", self, list(output_size))


@impl("_adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    oh, ow = (list(output_size) * 2)[:2] if len(output_size) == 1 else list(output_size)
    h, w = self._tn_sizes[-2:]
    if h % oh or w % ow:
        from .resample import adaptive_avg_pool2d_any

        return adaptive_avg_pool2d_any(self, [oh, ow])
    return avg_pool2d(self, [h // oh, w // ow], [h // oh, w // ow], [0, 0])


@impl("trace")
def trace(self):
    if len(self._tn_sizes) != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(len(self._tn_sizes)))
    return D("sum", D("diagonal", self, 0, 0, 1), None)


@impl("norm.Scalar")
def norm_scalar(self, p=2):
    return D("linalg_vector_norm", self, p, None, False, None)


@impl("norm.ScalarOpt_dim")
def norm_dim(self, p, dim, keepdim=False):
    return D("linalg_vector_norm", self, 2 if p is None else p, dim, keepdim, None)


@impl("sum_to_size")
def sum_to_size(self, size):
    """at::sum_to: sum away the leading dimensions, then keep-dim sums where `size` has a 1."""
    size = list(size)
    sizes = list(self._tn_sizes)
    if not size:
        return D("sum", self, None)  # at::sum_to: an empty shape is the full sum (bool sums to int64)
    if not _expandable_to(size, sizes):
        raise RuntimeError(f"size {{{', '.join(map(str, size))}}} is not expandable to size {{{', '.join(map(str, sizes))}}}.")
    lead = len(sizes) - len(size)
    dims = sum_to_dims(size, sizes)
    if not dims:
        return self
    out = D("sum.dim_IntList", self, dims, True, None)
    return D("view", out, size) if lead else out


def sum_to_dims(size, sizes):
    """The dimensions at::sum_to sums to bring `sizes` to `size`: the leading ones, and those
    `size` keeps as 1 where `sizes` does not."""
    lead = len(sizes) - len(size)
    return list(range(lead)) + [lead + i for i, n in enumerate(size) if n == 1 and sizes[lead + i] != 1]


def _expandable_to(size, target):
    if len(size) > len(target):
        return False
    for a, b in zip(reversed(size), reversed(target)):
        if a != b and a != 1:
            return False
    return True


# --- repeat_interleave (upstream: Repeat.cpp / TensorShape.cpp) ----------------------------------

@impl("repeat_interleave.Tensor")
def repeat_interleave_indices(repeats, output_size=None):
    """The index i repeated repeats[i] times: [0, 0, 1, 2, 2, 2] for [2, 1, 3]."""
    if len(repeats._tn_sizes) != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    d = B.dtype_of(repeats)
    if d.is_floating_point or d.is_complex or d is B.BOOL:
        raise RuntimeError("repeats has to be Long or Int tensor")
    counts = [int(v) for v in repeats.tolist()]
    if any(c < 0 for c in counts):
        raise RuntimeError("repeats can not be negative")
    total = sum(counts)
    if output_size is not None and output_size != total:
        raise RuntimeError("allocated size does not match required size")
    from .factories import from_python_values

    flat = [i for i, c in enumerate(counts) for _ in range(c)]
    return from_python_values(flat, [total], d)


@impl("repeat_interleave.self_Tensor")
def repeat_interleave_tensor(self, repeats, dim=None, output_size=None):
    x = self if dim is not None else D("reshape", self, [-1])
    d = B.wrap_dim(dim if dim is not None else 0, len(x._tn_sizes))
    if len(repeats._tn_sizes) == 0 or (len(repeats._tn_sizes) == 1 and repeats._tn_sizes[0] == 1):
        repeats = D("expand", D("reshape", repeats, [1]), [x._tn_sizes[d] if x._tn_sizes else 1], False)
    elif repeats._tn_sizes[0] != (x._tn_sizes[d] if x._tn_sizes else 1):
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{repeats._tn_sizes[0]} and input.size({d}) = {x._tn_sizes[d]}")
    return D("index_select", x, d, D("repeat_interleave.Tensor", repeats, output_size))


@impl("repeat_interleave.self_int")
def repeat_interleave_int(self, repeats, dim=None, output_size=None):
    """Each slice along `dim` repeated `repeats` times: unsqueeze after dim, expand, copy, flatten."""
    if repeats < 0:
        raise RuntimeError("Repeats can not be negative")
    x = self if dim is not None else D("reshape", self, [-1])
    d = B.wrap_dim(dim if dim is not None else 0, len(x._tn_sizes))
    if not x._tn_sizes:
        x = D("reshape", x, [1])
    u = D("unsqueeze", x, d + 1)
    shape = list(u._tn_sizes)
    shape[d + 1] = repeats
    if output_size is not None and output_size != x._tn_sizes[d] * repeats:
        raise RuntimeError("allocated size does not match required size")
    e = D("contiguous", D("expand", u, shape, False), None)
    return D("flatten.using_ints", e, d, d + 1)


@impl("type_as")
def type_as(self, other):
    # upstream: self.to(other.options())
    return D("to.dtype_layout", self, B.dtype_of(other), None, B.device_of(other), None, False, False, None)


@impl("one_hot")
def one_hot(self, num_classes=-1):
    # upstream's aten/src/ATen/native/Onehot.cpp, checks in its order and words
    if B.dtype_of(self) is not B.I64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    sizes, dev = list(self._tn_sizes), B.device_of(self)
    if not B.numel(sizes):
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return B.empty(sizes + [num_classes], B.dtype_of(self), dev)
    if D("min", self).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = D("max", self).item() + 1
    elif D("max", self).item() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    out = D("full", sizes + [num_classes], 0, B.dtype_of(self), None, dev, None)
    return D("scatter_.value", out, -1, D("unsqueeze", self, -1), 1)


# Comparison aliases: upstream's CompositeImplicit greater(self, other) is at::gt(self, other), and so on.
for _alias, _op in (("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
                    ("not_equal", "ne")):
    for _suffix in ("", "_"):
        for _kind in (".Tensor", ".Scalar"):
            impl(_alias + _suffix + _kind)((lambda target: lambda self, other: D(target, self, other))(_op + _suffix + _kind))


@impl("concat", "concatenate")
def concat(tensors, dim=0):
    return D("cat", tensors, dim)


def _isin_dtype_check(*tensors):
    for t in tensors:
        d = B.dtype_of(t)
        if d is B.BOOL or d.is_complex:
            from .elementwise import _type_name

            raise RuntimeError(f"Unsupported input type encountered for isin(): {_type_name(d)}")


@impl("isin.Tensor_Tensor")
def isin(elements, test_elements, assume_unique=False, invert=False):
    # upstream's default CPU kernel: elements compared with every test element in the common dtype
    _isin_dtype_check(elements, test_elements)
    flat = D("reshape", test_elements, [-1])
    hit = D("any.dim", D("eq.Tensor", D("unsqueeze", elements, -1), flat), -1, False)
    return D("logical_not", hit) if invert else hit


@impl("isin.Scalar_Tensor")
def isin_scalar_tensor(element, test_elements, assume_unique=False, invert=False):
    return isin(_num(element), test_elements, assume_unique, invert)


@impl("isin.Tensor_Scalar")
def isin_tensor_scalar(elements, test_element, assume_unique=False, invert=False):
    _isin_dtype_check(elements)
    return D("ne.Scalar" if invert else "eq.Scalar", elements, test_element)


@impl("take_along_dim")
def take_along_dim(self, indices, dim=None):
    # upstream's TensorAdvancedIndexing.cpp: gather after broadcasting all but `dim`
    if dim is None:
        return D("gather", D("reshape", self, [-1]), 0, D("reshape", indices, [-1]), False)
    if len(self._tn_sizes) != len(indices._tn_sizes):
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           f"but got {len(self._tn_sizes)} dimensions for input, and {len(indices._tn_sizes)} "
                           "dimensions for indices")
    if B.dtype_of(indices) is not B.I64:
        from .elementwise import _type_name

        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got {_type_name(B.dtype_of(indices))}")
    d = B.wrap_dim(dim, len(self._tn_sizes))
    self_sizes, idx_sizes = list(self._tn_sizes), list(indices._tn_sizes)
    self_sizes[d] = indices._tn_sizes[d]
    idx_b = D("broadcast_to", indices, B.broadcast_shapes(self_sizes, indices._tn_sizes))
    idx_sizes[d] = self._tn_sizes[d]
    self_b = D("broadcast_to", self, B.broadcast_shapes(idx_sizes, self._tn_sizes))
    # upstream wraps the indices along `dim` modulo its size (any value, not only -size..-1);
    # the flattened form above does not
    size = self_b._tn_sizes[d]
    if size:
        idx_b = D("remainder.Scalar", idx_b, size)
    return D("gather", self_b, d, idx_b, False)
