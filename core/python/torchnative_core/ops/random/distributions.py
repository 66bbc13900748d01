"""The samplers behind torch.distributions' Poisson, Binomial, Gamma, Beta and Dirichlet:
poisson, binomial, _standard_gamma, _sample_dirichlet — upstream's CPU kernels (rejection
samplers in aten/src/ATen/native/Distributions.cpp) drawing from the CPU generator element by
element in the input's order, so seeded draws are bit-identical (torchnative-rng's
`distributions`). Other devices draw on the host, as upstream's CPU generator would."""

from __future__ import annotations

import warnings

from ...surface import types as T
from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import impl
from .sampling import _gen

D = B.door
F16, BF16 = T.BY_NAME["float16"], T.BY_NAME["bfloat16"]
# std::numeric_limits<T>::min() and std::nexttoward(T(1), 0) of float and double
_BOUNDS = {"float32": (2.0 ** -126, 1.0 - 2.0 ** -24), "float64": (2.0 ** -1022, 1.0 - 2.0 ** -53)}


def _dense_host(t, dtype=None):
    """`t` as a contiguous CPU tensor (of `dtype` when given)."""
    if t._tn_device_key != "cpu":
        t = B.call("_to_copy", t, dtype=dtype or B.dtype_of(t), device=B.CPU)
    elif dtype is not None and B.dtype_of(t) is not dtype:
        t = B.call("_to_copy", t, dtype=dtype)
    return t if t._tn_is_contiguous() else D("clone", t, CONTIGUOUS_FORMAT)


def _not_implemented(kernel, t):
    return NotImplementedError(f"\"{kernel}\" not implemented for '{B.scalar_type_name(B.dtype_of(t))}'")


def _draw(kind, like, sizes, dtype, generator, *inputs):
    """One draw per element into a new tensor on `like`'s device."""
    out = B.empty(list(sizes), dtype, B.device_of(like))
    if not B.numel(sizes) or like._tn_device_key == "meta":
        return out
    host = out if out._tn_device_key == "cpu" else B.empty(list(sizes), dtype, B.CPU)
    B.C._tn_rng_sample(_gen(generator), kind, host, *inputs)
    if host is not out:
        D("copy_", out, host, False)
    return out


@impl("poisson")
def poisson(self, generator=None):
    if B.dtype_of(self) not in (B.F32, B.F64, F16, BF16):
        raise _not_implemented("poisson_cpu", self)
    return _draw("poisson", self, self._tn_sizes, B.dtype_of(self), generator, _dense_host(self))


@impl("binomial")
def binomial(count, prob, generator=None):
    for name, t in (("count", count), ("prob", prob)):
        if not B.dtype_of(t).is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{B.scalar_type_name(B.dtype_of(t))}")
    sizes = B.broadcast_shapes(list(count._tn_sizes), list(prob._tn_sizes))
    if B.dtype_of(prob) is not B.dtype_of(count):  # TensorIterator's common-dtype check
        raise RuntimeError(f"Found dtype {B.scalar_type_name(B.dtype_of(prob))} but expected "
                           f"{B.scalar_type_name(B.dtype_of(count))}")
    if B.dtype_of(count) not in (B.F32, B.F64):
        raise _not_implemented("binomial_cpu", count)
    if list(sizes) != list(count._tn_sizes):
        # upstream's output is zeros(count.sizes()), which the iterator resizes to the broadcast
        warnings.warn(f"An output with one or more elements was resized since it had shape {list(count._tn_sizes)}, "
                      f"which does not match the required output shape {list(sizes)}. This behavior is deprecated, "
                      "and in a future PyTorch release outputs will not be resized unless they have zero elements. "
                      "You can explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
                      "t.resize_(0).", UserWarning, stacklevel=2)
    c, p = (_dense_host(D("expand", t, list(sizes))) for t in (count, prob))
    return _draw("binomial", count, sizes, B.dtype_of(count), generator, c, p)


@impl("_standard_gamma")
def standard_gamma(self, generator=None):
    if B.dtype_of(self) not in (B.F32, B.F64):
        raise _not_implemented("gamma_cpu", self)
    return _draw("gamma", self, self._tn_sizes, B.dtype_of(self), generator, _dense_host(self))


@impl("_sample_dirichlet")
def sample_dirichlet(self, generator=None):
    """Gamma draws in double, normalised over the last dim, cast back and kept inside
    [smallest normal, largest value below 1] as upstream's `_s_dirichlet_cpu` does."""
    dt = B.dtype_of(self)
    if dt not in (B.F32, B.F64):
        raise _not_implemented("dirichlet", self)
    gamma = _draw("dirichlet_gamma", self, self._tn_sizes, B.F64, generator, _dense_host(self))
    total = D("sum.dim_IntList", gamma, [-1], True) if self._tn_sizes else gamma
    ratio = B.call("_to_copy", D("div.Tensor", gamma, total), dtype=dt)
    tiny, below_one = _BOUNDS[dt._tn_name]
    # std::min(max_val, std::max(min_val, r)): NaN ratios become the smallest normal
    low = D("where.ScalarSelf", D("isnan", ratio), tiny, D("clamp_min", ratio, tiny))
    return D("clamp_max", low, below_one)


@impl("_standard_gamma_grad")
def standard_gamma_grad(self, output):
    """The backward of _standard_gamma (d sample / d concentration), elementwise in double."""
    sizes = B.broadcast_shapes(list(self._tn_sizes), list(output._tn_sizes))
    if B.dtype_of(output) is not B.dtype_of(self):
        raise RuntimeError(f"Found dtype {B.scalar_type_name(B.dtype_of(output))} but expected "
                           f"{B.scalar_type_name(B.dtype_of(self))}")
    if B.dtype_of(self) not in (B.F32, B.F64):
        raise _not_implemented("_standard_gamma_grad_cpu", self)
    out = B.empty(list(sizes), B.dtype_of(self), B.device_of(self))
    if B.numel(sizes) and self._tn_device_key != "meta":
        a, x = (_dense_host(D("expand", t, list(sizes))) for t in (self, output))
        host = out if out._tn_device_key == "cpu" else B.empty(list(sizes), B.dtype_of(self), B.CPU)
        B.C._tn_standard_gamma_grad(host, a, x)
        if host is not out:
            D("copy_", out, host, False)
    return out
