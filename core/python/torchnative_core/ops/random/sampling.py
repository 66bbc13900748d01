"""Random operators, bit-identical to upstream's CPU generator for the same seed: in-place fills
(uniform_, normal_, random_, bernoulli_, exponential_), the factories built on them (rand, randn,
randint, randint_like, randperm, *_like, normal), and dropout in training mode.
"""

from __future__ import annotations

import math
from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import impl
from ..elementwise.arithmetic import _type_name


D = B.door



def _gen(generator):
    g = generator if generator is not None else B.C.default_generator
    return g._tn_impl


def _fill(self, kind, generator, **params):
    """Runs the fill on a CPU tensor; other devices draw on the host and copy (the generator is
    the CPU one, as upstream's default for a CPU generator)."""
    d = B.dtype_of(self)
    if d.is_complex and kind in ("normal", "uniform"):
        # upstream draws into the real view; normal's variance is split between the parts
        from ..complex.views import view_as_real

        if kind == "normal":
            params = dict(params, b=params["b"] / math.sqrt(2))
        _fill(view_as_real(self), kind, generator, **params)
        self._tn_bump_version()
        return self
    if kind in ("normal", "exponential") and not d.is_floating_point:
        # upstream's checks: exponential_ and normal_ refuse the dtype only when there is
        # something to draw (uniform_ checks it before anything else, in uniform_)
        if kind == "exponential" and B.numel(self._tn_sizes):
            raise RuntimeError("Exponential distribution is a continuous probability distribution. dtype must be a "
                               f"floating point but you specified {_type_name(d)}")
        if kind == "normal" and B.numel(self._tn_sizes):
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{_type_name(d)}'")
    if kind in ("cauchy", "log_normal", "geometric") and B.numel(self._tn_sizes) and (
            d is B.BOOL or (kind == "log_normal" and not d.is_floating_point)):
        raise NotImplementedError(f"\"{kind}_cpu\" not implemented for '{_type_name(d)}'")
    if kind == "random_from_to" and self._tn_device_key == "cpu" and not B.numel(self._tn_sizes):
        B.C._tn_rng_fill(_gen(generator), self, kind, **params)  # its range checks: upstream's run on empty too
    if not B.numel(self._tn_sizes) or self._tn_device_key == "meta":
        return self  # nothing to draw: a meta tensor holds no data (upstream draws none either)
    if self._tn_device_key == "cpu":
        B.C._tn_rng_fill(_gen(generator), self, kind, **params)
    else:
        host = B.empty(self._tn_sizes, B.dtype_of(self), B.CPU)
        B.C._tn_rng_fill(_gen(generator), host, kind, **params)
        D("copy_", self, host, False)
    self._tn_bump_version()
    return self


def _check_float(self, name):
    d = B.dtype_of(self)
    if not d.is_floating_point:
        raise RuntimeError(f"{name} expects a floating point tensor, got {d}")


@impl("uniform_")
def uniform_(self, from_=0.0, to=1.0, generator=None):
    B.floating_kernel_only(self, "check_uniform_bounds", complex_ok=True)  # upstream's dispatch comes first
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={float(from_):g} > to={float(to):g}")
    return _fill(self, "uniform", generator, a=float(from_), b=float(to))


@impl("normal_")
def normal_(self, mean=0.0, std=1.0, generator=None):
    d = B.dtype_of(self)
    if self._tn_device_key == "meta" and not (d.is_floating_point or d.is_complex):
        # upstream's meta normal_ checks the dtype; on the cpu its kernel's dispatch refuses it
        raise RuntimeError(f"expected a floating-point or complex dtype, but got dtype={d}")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    return _fill(self, "normal", generator, a=float(mean), b=float(std))


@impl("normal_functional")
def normal_functional(self, mean=0.0, std=1.0, generator=None):
    return normal_(D("clone", self, None), mean, std, generator)


@impl("cauchy_")
def cauchy_(self, median=0.0, sigma=1.0, generator=None):
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={float(sigma):g}")
    d = B.dtype_of(self)
    if not d.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype must be a floating "
                           f"point but you specified {B.cpp_type_name(d)}")
    return _fill(self, "cauchy", generator, a=float(median), b=float(sigma))


@impl("log_normal_")
def log_normal_(self, mean=1.0, std=2.0, generator=None):
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={float(std):g}")
    return _fill(self, "log_normal", generator, a=float(mean), b=float(std))


@impl("geometric_")
def geometric_(self, p, generator=None):
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={float(p):g}")
    return _fill(self, "geometric", generator, a=float(p))


def _check_std_tensor(std):
    if B.numel(list(std._tn_sizes)) and not bool(B.door("all", B.door("ge.Scalar", std, 0))):
        raise RuntimeError("normal expects all elements of std >= 0.0")


# upstream's normal_out_impl (DistributionTemplates.h): standard normal draws into a contiguous
# output, then `mul_(std).add_(mean)` (or `add_(mean)` after drawing with a number std)
@impl("normal.Tensor_Tensor")
def normal_tensor_tensor(mean, std, generator=None):
    _check_std_tensor(std)
    out = B.empty(B.broadcast_shapes(list(mean._tn_sizes), list(std._tn_sizes)), B.dtype_of(mean), B.device_of(mean))
    normal_(out, 0.0, 1.0, generator)
    return B.door("add_.Tensor", B.door("mul_.Tensor", out, std), mean, 1)


@impl("normal.Tensor_float")
def normal_tensor_float(mean, std=1.0, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {float(std):g}")
    out = B.empty(list(mean._tn_sizes), B.dtype_of(mean), B.device_of(mean))
    normal_(out, 0.0, std, generator)
    return B.door("add_.Tensor", out, mean, 1)


@impl("normal.float_Tensor")
def normal_float_tensor(mean, std, generator=None):
    _check_std_tensor(std)
    out = B.empty(list(std._tn_sizes), B.dtype_of(std), B.device_of(std))
    normal_(out, 0.0, 1.0, generator)
    return B.door("add_.Scalar", B.door("mul_.Tensor", out, std), mean, 1)


@impl("exponential_")
def exponential_(self, lambd=1.0, generator=None):
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(self, "exponential", generator, a=float(lambd))


@impl("random_.from")
def random_from(self, from_, to=None, generator=None):
    return _fill(self, "random_from_to", generator, ia=int(from_), ib=None if to is None else int(to))


@impl("random_.to")
def random_to(self, to, generator=None):
    return _fill(self, "random_from_to", generator, ia=0, ib=int(to))


@impl("random_")
def random_(self, generator=None):
    return _fill(self, "random", generator)


@impl("bernoulli_.float")
def bernoulli_(self, p=0.5, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(self, "bernoulli", generator, a=float(p))


@impl("rand", "rand.names")
def rand(size, dtype=None, layout=None, device=None, pin_memory=None, names=None):
    return uniform_(B.empty(size, dtype or B.default_dtype(), device))


@impl("rand.generator")
def rand_generator(size, generator, dtype=None, layout=None, device=None, pin_memory=None):
    return uniform_(B.empty(size, dtype or B.default_dtype(), device), 0.0, 1.0, generator)


@impl("randn")
def randn(size, dtype=None, layout=None, device=None, pin_memory=None):
    return normal_(B.empty(size, dtype or B.default_dtype(), device))


@impl("randn.generator")
def randn_generator(size, generator, dtype=None, layout=None, device=None, pin_memory=None):
    return normal_(B.empty(size, dtype or B.default_dtype(), device), 0.0, 1.0, generator)


@impl("randint")
def randint(high, size, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(0, high, size, None, dtype, layout, device, pin_memory)


@impl("randint.generator")
def randint_generator(high, size, generator, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(0, high, size, generator, dtype, layout, device, pin_memory)


@impl("randint.low")
def randint_low(low, high, size, dtype=None, layout=None, device=None, pin_memory=None):
    return randint_low_generator(low, high, size, None, dtype, layout, device, pin_memory)


@impl("randint.low_generator")
def randint_low_generator(low, high, size, generator, dtype=None, layout=None, device=None, pin_memory=None):
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    # the schema's default dtype is int64; a dtype given as None is the default float dtype, as
    # upstream's TensorOptions without a dtype
    return random_from(B.empty(size, dtype or B.default_dtype(), device), low, high, generator)


@impl("rand_like")
def rand_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None, generator=None):
    from ..factories.tensors import like

    return uniform_(like(self, dtype, device, memory_format), 0.0, 1.0, generator)


@impl("randn_like")
def randn_like(self, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None, generator=None):
    from ..factories.tensors import like

    return normal_(like(self, dtype, device, memory_format), 0.0, 1.0, generator)


# the `generator` overloads take it before the TensorOptions, as their schemas order them
@impl("rand_like.generator")
def rand_like_generator(self, generator, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return rand_like(self, dtype, layout, device, pin_memory, memory_format, generator)


@impl("randn_like.generator")
def randn_like_generator(self, generator, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return randn_like(self, dtype, layout, device, pin_memory, memory_format, generator)


def _randperm(n, generator, dtype, device):
    if n < 0:
        raise RuntimeError(f"n must be non-negative, got{n}")
    from ..factories.tensors import from_python_values

    # upstream's check that every value of the permutation is representable in the dtype
    name, bits = {"float16": ("Half", 11), "bfloat16": ("BFloat16", 8), "float32": ("Float", 24),
                  "float64": ("Double", 53)}.get(str(dtype).removeprefix("torch."), (None, None))
    if bits is not None and n > 2**bits + 1:
        raise RuntimeError(f"n cannot be greater than {2**bits + 1} for {name} type.")
    # the result's allocation first: a size the allocator refuses raises upstream's RuntimeError
    # here, not an abort when the generator's own buffer cannot be had
    B.empty([n], dtype or B.I64, device if device is not None and device.type != "meta" else None)
    vals = _gen(generator).randperm(n)
    out = from_python_values(vals, [n], B.I64)
    return out if (dtype is None or dtype is B.I64) and device in (None, B.CPU) else B.call("_to_copy", out, dtype or B.I64, device=device)


def _randperm_dtype(dtype):
    if dtype is B.BOOL:  # upstream's kernel dispatch has no bool (float16 it takes)
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")


@impl("randperm")
def randperm(n, dtype=None, layout=None, device=None, pin_memory=None):
    _randperm_dtype(dtype)
    return _randperm(n, None, dtype, device)


@impl("randperm.generator")
def randperm_generator(n, generator, dtype=None, layout=None, device=None, pin_memory=None):
    _randperm_dtype(dtype)
    return _randperm(n, generator, dtype, device)


@impl("native_dropout")
def native_dropout(input, p, train):
    if not B.numel(input._tn_sizes):  # upstream's early return: the mask is empty_like(input)
        return input, B.call("empty_like", input)
    if train is not None and not train:  # train=None means training, as upstream's optional
        mask = B.call("ones_like", input, B.BOOL)
        return D("clone", input, CONTIGUOUS_FORMAT), mask
    # upstream (native_dropout_cpu in Dropout.cpp): mask = bernoulli_(1 - p) drawn in the input's
    # memory order even when p is 0 (the generator advances), then input * mask * scale with
    # scale 0 where p is 1 (not a division by zero)
    p1m = 1.0 - p
    noise = B.empty(input._tn_sizes, B.dtype_of(input), B.device_of(input))
    bernoulli_(noise, p1m)
    mask = D("ne.Scalar", noise, 0)
    out = D("mul.Tensor", input, noise)
    return D("mul_.Scalar", out, 0.0 if p1m == 0 else 1.0 / p1m), mask


@impl("dropout")
def dropout(input, p, train):
    if not 0 <= p <= 1:  # NaN too
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")  # as C++ prints a double
    if not train or p == 0:
        return input
    if p == 1:
        return D("mul.Tensor", input, B.call("zeros_like", input))
    # upstream's CPU path (_dropout_impl in Dropout.cpp): a bernoulli(1 - p) noise tensor scaled
    # by 1 / (1 - p), multiplied in, so autograd records MulBackward0 as upstream does
    noise = B.call("empty_like", input)
    D("bernoulli_.float", noise, 1 - p, None)
    D("div_.Scalar", noise, 1 - p)
    return D("mul.Tensor", input, noise)


@impl("multinomial")
def multinomial(self, num_samples, replacement=False, generator=None):
    nd = len(self._tn_sizes)
    if nd not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n_cat = self._tn_sizes[-1]
    if not replacement and num_samples > n_cat:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    probs = D("contiguous", self if self._tn_device_key == "cpu" else self.cpu(), None)
    from ..factories.tensors import from_python_values

    vals = B.C._tn_rng_multinomial(_gen(generator), probs, num_samples, replacement)
    shape = [num_samples] if nd == 1 else [self._tn_sizes[0], num_samples]
    return from_python_values(vals, shape, B.I64, None if self._tn_device_key == "cpu" else B.device_of(self))


@impl("bernoulli")
def bernoulli(self, generator=None):
    # upstream: a fresh tensor filled with bernoulli(self) element-wise probabilities, each
    # checked (NaN included) as its kernel checks it, after the dispatch on p's dtype
    B.floating_kernel_only(self, "bernoulli_tensor_cpu_p_")
    if B.numel(self._tn_sizes) and self._tn_device_key != "meta":
        inside = D("logical_and", D("ge.Scalar", self, 0), D("le.Scalar", self, 1))
        if not bool(D("all", inside)):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  (Could this error message be "
                               "improved?  If so, please report an enhancement request to PyTorch.)")
    u = rand_like(self, generator=generator)
    return B.call("_to_copy", D("lt.Tensor", u, self), B.dtype_of(self))


@impl("bernoulli_.Tensor")
def bernoulli_tensor_(self, p, generator=None):
    # upstream's CPU kernel draws one uniform per element of self, in p's floating type, against
    # p expanded to self's shape: the functional bernoulli's draws, cast into self
    B.floating_kernel_only(p, "bernoulli_tensor_cpu_p_")
    drawn = bernoulli(D("contiguous", D("expand", p, list(self._tn_sizes), False), None), generator)
    return D("copy_", self, drawn, False)


@impl("bernoulli.p")
def bernoulli_p(self, p, generator=None):
    # upstream: empty_like(self, contiguous) filled by bernoulli_(p)
    out = B.empty(self._tn_sizes, B.dtype_of(self), B.device_of(self))
    return bernoulli_(out, p, generator)


@impl("normal.float_float")
def normal_float_float(mean, std, size, generator=None, dtype=None, layout=None, device=None, pin_memory=None):
    import torch

    return torch.empty(size, dtype=dtype, device=device).normal_(mean, std, generator=generator)


def _randint_like(self, low, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None,
                  generator=None):
    import torch

    out = torch.empty_like(self, dtype=dtype, device=device,
                           memory_format=memory_format if memory_format is not None else torch.preserve_format)
    return out.random_(low, high, generator=generator)


def _scalar_high(high):
    if high.dim() != 0 or high._tn_device_key != "cpu":
        raise RuntimeError("high must be a scalar tensor and on CPU")
    return int(high.item())


@impl("randint_like")
def randint_like(self, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, 0, int(high), dtype, layout, device, pin_memory, memory_format)


@impl("randint_like.generator")
def randint_like_generator(self, high, generator, dtype=None, layout=None, device=None, pin_memory=None,
                           memory_format=None):
    return _randint_like(self, 0, int(high), dtype, layout, device, pin_memory, memory_format, generator)


@impl("randint_like.Tensor")
def randint_like_tensor(self, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, 0, _scalar_high(high), dtype, layout, device, pin_memory, memory_format)


@impl("randint_like.Tensor_generator")
def randint_like_tensor_generator(self, high, generator, dtype=None, layout=None, device=None, pin_memory=None,
                                  memory_format=None):
    return _randint_like(self, 0, _scalar_high(high), dtype, layout, device, pin_memory, memory_format, generator)


@impl("randint_like.low_dtype")
def randint_like_low(self, low, high, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None):
    return _randint_like(self, int(low), int(high), dtype, layout, device, pin_memory, memory_format)


@impl("randint_like.low_generator_dtype")
def randint_like_low_generator(self, low, high, generator, dtype=None, layout=None, device=None, pin_memory=None,
                               memory_format=None):
    return _randint_like(self, int(low), int(high), dtype, layout, device, pin_memory, memory_format, generator)
