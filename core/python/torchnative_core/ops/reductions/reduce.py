"""Reductions: output shapes and dtypes (upstream's reduction meta), then the kernel; and the
reductions upstream composes of others (nansum, nanmean, aminmax, count_nonzero, trace,
sum_to_size, _is_all_true/_is_any_true).
"""

from __future__ import annotations

from .. import base as B
from .. import impl
from ..elementwise.arithmetic import _type_name


D = B.door



def norm_dims(dim, ndim):
    """Upstream's dim list: None or [] means every dim; negatives wrap; duplicates refused."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(ndim))
    if isinstance(dim, int):
        dim = [dim]
    out = []
    for d in dim:
        w = B.wrap_dim(d, ndim)
        if w in out:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        out.append(w)
    return sorted(out)


def reduced_shape(sizes, dims, keepdim):
    if keepdim:
        return [1 if i in dims else s for i, s in enumerate(sizes)]
    return [s for i, s in enumerate(sizes) if i not in dims]


def _reduce(kernel, self, dims, keepdim, out_dtype, *extra_before, extra_after=()):
    sizes = list(self._tn_sizes)
    out = B.empty(reduced_shape(sizes, dims, keepdim), out_dtype, B.device_of(self))
    B.launch(kernel, (self, *extra_before, dims, keepdim, *extra_after), (out,))
    return out


def _sum_dtype(d, dtype):
    if dtype is not None:
        return dtype
    return B.I64 if (not d.is_floating_point and not d.is_complex) else d


@impl("sum.dim_IntList")
def sum_dim(self, dim, keepdim=False, dtype=None):
    d = B.dtype_of(self)
    out_dtype = _sum_dtype(d, dtype)
    x = self if dtype is None or d is dtype else B.call("_to_copy", self, dtype)
    return _reduce("sum.dim_IntList", x, norm_dims(dim, len(self._tn_sizes)), keepdim, out_dtype, extra_after=(None,))


@impl("sum")
def sum_all(self, dtype=None):
    return sum_dim(self, None, False, dtype)


@impl("mean.dim")
def mean_dim(self, dim, keepdim=False, dtype=None):
    d = dtype or B.dtype_of(self)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
            f"Got: {_type_name(d)}"
        )
    dims = norm_dims(dim, len(self._tn_sizes))
    n = 1
    for i in dims:
        n *= self._tn_sizes[i] if i < len(self._tn_sizes) else 1  # a 0-dim tensor counts one
    # upstream: sum_out(result, ...) then result.div_(n)
    s = sum_dim(self, dims, keepdim, dtype)
    return D("div_.Tensor", s, B.C._tn_scalar_to_tensor(n))


@impl("mean")
def mean_all(self, dtype=None):
    return mean_dim(self, None, False, dtype)


@impl("prod.dim_int")
def prod_dim(self, dim, keepdim=False, dtype=None):
    d = B.dtype_of(self)
    x = self if dtype is None or d is dtype else B.call("_to_copy", self, dtype)
    wd = B.wrap_dim(dim, len(self._tn_sizes))
    out = B.empty(reduced_shape(list(self._tn_sizes), [wd], keepdim), _sum_dtype(d, dtype), B.device_of(self))
    B.launch("prod.dim_int", (x, wd, keepdim, None), (out,))
    return out


@impl("prod")
def prod_all(self, dtype=None):
    d = B.dtype_of(self)
    x = self if dtype is None or d is dtype else B.call("_to_copy", self, dtype)
    out = B.empty([], _sum_dtype(d, dtype), B.device_of(self))
    B.launch("prod", (x, None), (out,))
    return out


def _check_nonempty(self, name, dims, dim=()):
    # upstream's zero_numel_check_dims: every dim of an empty tensor reduced is refused as a whole
    if not dim and self._tn_sizes and not B.numel(list(self._tn_sizes)):
        raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                           "reduction dim with the 'dim' argument.")
    for i in dims:
        if i < len(self._tn_sizes) and self._tn_sizes[i] == 0:  # a 0-dim tensor's dim 0 is itself
            raise IndexError(
                f"{name}(): Expected reduction dim {i} to have non-zero size."
            )


@impl("amax")
def amax(self, dim=(), keepdim=False):
    dims = norm_dims(dim, len(self._tn_sizes))
    _check_nonempty(self, "amax", dims, dim)
    return _reduce("amax", self, dims, keepdim, B.dtype_of(self))


@impl("amin")
def amin(self, dim=(), keepdim=False):
    dims = norm_dims(dim, len(self._tn_sizes))
    _check_nonempty(self, "amin", dims, dim)
    return _reduce("amin", self, dims, keepdim, B.dtype_of(self))


def _max_min_dim(kernel, self, dim, keepdim):
    nd = len(self._tn_sizes)
    d = B.wrap_dim(dim, nd)
    if nd and self._tn_sizes[d] == 0:
        raise IndexError(f"{kernel.split('.')[0]}(): Expected reduction dim {d} to have non-zero size.")
    shape = reduced_shape(list(self._tn_sizes), [d] if nd else [], keepdim)
    values = B.empty(shape, B.dtype_of(self), B.device_of(self))
    indices = B.empty(shape, B.I64, B.device_of(self))
    B.launch(kernel, (self, d, keepdim), (values, indices))
    from torch.return_types import max as max_t, min as min_t

    return (max_t if kernel.startswith("max") else min_t)((values, indices))


@impl("max.dim")
def max_dim(self, dim, keepdim=False):
    return _max_min_dim("max.dim", self, dim, keepdim)


@impl("min.dim")
def min_dim(self, dim, keepdim=False):
    return _max_min_dim("min.dim", self, dim, keepdim)


def _full_reduce(kernel, self):
    if B.numel(self._tn_sizes) == 0:
        raise RuntimeError(
            f"{kernel}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument."
        )
    out = B.empty([], B.dtype_of(self), B.device_of(self))
    B.launch(kernel, (self,), (out,))
    return out


@impl("max")
def max_all(self):
    return _full_reduce("max", self)


@impl("min")
def min_all(self):
    return _full_reduce("min", self)


@impl("max.other")
def max_other(self, other):
    return D("maximum", self, other)


@impl("min.other")
def min_other(self, other):
    return D("minimum", self, other)


def _arg(kernel, self, dim, keepdim):
    nd = len(self._tn_sizes)
    if dim is None:
        if B.numel(self._tn_sizes) == 0:
            raise RuntimeError(f"{kernel}(): Expected reduction dim to be specified for input.numel() == 0.")
        shape = [1] * nd if keepdim else []
        d = None
    else:
        d = B.wrap_dim(dim, nd)
        if nd and self._tn_sizes[d] == 0:
            raise IndexError(f"{kernel}(): Expected reduction dim {d} to have non-zero size.")
        shape = reduced_shape(list(self._tn_sizes), [d] if nd else [], keepdim)
    out = B.empty(shape, B.I64, B.device_of(self))
    B.launch(kernel, (self, d, keepdim), (out,))
    return out


def _no_bool_arg(name, self):
    if B.dtype_of(self) is B.BOOL:
        raise RuntimeError(f"{name}(): does not support bool input")


@impl("argmax")
def argmax(self, dim=None, keepdim=False):
    _no_bool_arg("argmax", self)
    return _arg("argmax", self, dim, keepdim)


@impl("argmin")
def argmin(self, dim=None, keepdim=False):
    _no_bool_arg("argmin", self)
    return _arg("argmin", self, dim, keepdim)


def _var_std(kernel, self, dim, correction, keepdim, with_mean=False):
    d = B.dtype_of(self)
    if not (d.is_floating_point or d.is_complex):
        who = kernel.split(".")[0] if with_mean else "std and var"
        raise RuntimeError(f"{who} only support floating point and complex dtypes")
    dims = norm_dims(dim, len(self._tn_sizes))
    shape = reduced_shape(list(self._tn_sizes), dims, keepdim)
    outs = tuple(B.empty(shape, d, B.device_of(self)) for _ in range(2 if with_mean else 1))
    B.launch(kernel, (self, dims, correction, keepdim), outs)
    return outs if with_mean else outs[0]


@impl("var.correction")
def var(self, dim=None, correction=None, keepdim=False):
    return _var_std("var.correction", self, dim, correction, keepdim)


@impl("std.correction")
def std(self, dim=None, correction=None, keepdim=False):
    return _var_std("std.correction", self, dim, correction, keepdim)


def _spread_and_mean(op, spread, self, dim, correction, keepdim):
    """One Welford kernel where the device has it; elsewhere the spread and the mean apart."""
    if B.C._tn_has_kernel(op, self._tn_device_key):
        return _var_std(op, self, dim, correction, keepdim, with_mean=True)
    return _var_std(spread, self, dim, correction, keepdim), B.door("mean.dim", self, dim, keepdim, None)


@impl("var_mean.correction")
def var_mean(self, dim=None, correction=None, keepdim=False):
    return _spread_and_mean("var_mean.correction", "var.correction", self, dim, correction, keepdim)


@impl("std_mean.correction")
def std_mean(self, dim=None, correction=None, keepdim=False):
    return _spread_and_mean("std_mean.correction", "std.correction", self, dim, correction, keepdim)


def _unbiased_overloads(name):
    """`name(self, unbiased)` and `name.dim(self, dim, unbiased, keepdim)`: the old spellings of
    `name.correction`, correction 1 when unbiased else 0 (upstream's composites)."""

    def full(self, unbiased=True):
        return D(f"{name}.correction", self, None, 1 if unbiased else 0, False)

    def by_dim(self, dim, unbiased=True, keepdim=False):
        return D(f"{name}.correction", self, dim, 1 if unbiased else 0, keepdim)

    impl(name)(full)
    impl(f"{name}.dim")(by_dim)


for _name in ("var", "std", "var_mean", "std_mean"):
    _unbiased_overloads(_name)


def _bool_out(self):
    return B.dtype_of(self) if B.dtype_of(self)._tn_name == "uint8" else B.BOOL


def _truth(self):
    """Each element's truth value, in all/any's result dtype (uint8 stays uint8: 0 or 1)."""
    t = B.call("_to_copy", self, B.BOOL)
    return t if _bool_out(self) is B.BOOL else B.call("_to_copy", t, _bool_out(self))


@impl("all.dims")
def all_dims(self, dim=None, keepdim=False):
    if dim is not None and not len(dim):  # an empty list reduces nothing: each element's truth value
        return _truth(self)
    return _reduce("all.dims", self, norm_dims(dim, len(self._tn_sizes)), keepdim, _bool_out(self))


@impl("any.dims")
def any_dims(self, dim=None, keepdim=False):
    if dim is not None and not len(dim):
        return _truth(self)
    return _reduce("any.dims", self, norm_dims(dim, len(self._tn_sizes)), keepdim, _bool_out(self))


@impl("all.dim")
def all_dim(self, dim, keepdim=False):
    return all_dims(self, [dim], keepdim)


@impl("any.dim")
def any_dim(self, dim, keepdim=False):
    return any_dims(self, [dim], keepdim)


@impl("all")
def all_all(self):
    return all_dims(self, None, False)


@impl("any")
def any_all(self):
    return any_dims(self, None, False)


def _scan(kernel, self, dim, dtype):
    d = B.dtype_of(self)
    out_dtype = _sum_dtype(d, dtype)
    if out_dtype is B.BOOL and B.numel(self._tn_sizes):
        raise NotImplementedError(f"\"{kernel}_out_cpu\" not implemented for 'Bool'")
    x = self if d is out_dtype else B.call("_to_copy", self, out_dtype)
    wd = B.wrap_dim(dim, len(self._tn_sizes))
    out = B.empty(self._tn_sizes, out_dtype, B.device_of(self))
    if B.numel(self._tn_sizes):
        B.launch(kernel, (x, wd, None), (out,))
    return out


@impl("cumsum")
def cumsum(self, dim, dtype=None):
    return _scan("cumsum", self, dim, dtype)


@impl("cumprod")
def cumprod(self, dim, dtype=None):
    return _scan("cumprod", self, dim, dtype)


def _scan_out(name):
    def run(self, dim, dtype=None, out=None):
        # meta_func_cum_ops: with an out tensor the scan runs in dtype, else in out's dtype, and
        # out must then hold exactly that dtype
        from ..forms.out_variants import write_out

        return write_out(out, _scan(name, self, dim, dtype or B.dtype_of(out)), exact=True)

    return run


impl("cumsum.out")(_scan_out("cumsum"))
impl("cumprod.out")(_scan_out("cumprod"))


@impl("logsumexp")
def logsumexp(self, dim, keepdim=False):
    d = B.dtype_of(self)
    x = self if (d.is_floating_point or d.is_complex) else B.call("_to_copy", self, B.default_dtype())
    dims = norm_dims(dim, len(self._tn_sizes))
    return _reduce("logsumexp", x, dims, keepdim, B.dtype_of(x))


@impl("count_nonzero")
def count_nonzero(self, dim=None):
    return D("sum.dim_IntList", D("ne.Scalar", self, 0), [] if dim is None else [dim], False, None)


@impl("count_nonzero.dim_IntList")
def count_nonzero_dims(self, dim):
    return D("sum.dim_IntList", D("ne.Scalar", self, 0), list(dim), False, None)


@impl("nansum")
def nansum(self, dim=None, keepdim=False, dtype=None):
    clean = D("where.self", D("isnan", self), B.call("zeros_like", self), self)
    return D("sum.dim_IntList", clean, dim, keepdim, dtype)


@impl("nanmean")
def nanmean(self, dim=None, keepdim=False, dtype=None):
    d = B.dtype_of(self)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got "
                           f"{B.scalar_type_name(d)}")
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"nanmean(): could not infer output dtype. Optional dtype must be either a floating point or "
                           f"complex dtype. Got: {B.scalar_type_name(dtype)}")
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


@impl("trace")
def trace(self):
    if len(self._tn_sizes) != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " + str(len(self._tn_sizes)))
    return D("sum", D("diagonal", self, 0, 0, 1), None)


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


@impl("_is_all_true")
def _is_all_true(self):
    return self.all()


@impl("_is_any_true")
def _is_any_true(self):
    return self.any()
