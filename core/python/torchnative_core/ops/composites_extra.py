"""Composite operators from the coverage report's list (issue 4), composed as upstream composes
them (aten/src/ATen/native: SoftMax.cpp, Itertools.cpp, Correlation.cpp, Integration.cpp,
TensorShape.cpp, Distance.cpp), so values round the same and autograd records the parts."""

from __future__ import annotations

from . import base as B
from . import impl

D = B.door


def _torch():
    import torch

    return torch


def _opmath(*ts):
    """bfloat16/float16 operands widened to float32, as upstream's CPU kernels compute them."""
    torch = _torch()
    return [t.float() if t.dtype in (torch.bfloat16, torch.float16) else t for t in ts]


@impl("_softmax_backward_data")
def softmax_backward_data(grad_output, output, dim, input_dtype):
    go, o = _opmath(grad_output, output)
    g = go * o
    out = g - o * g.sum(dim, keepdim=True)
    return out if out.dtype == input_dtype else out.to(input_dtype)


@impl("_log_softmax_backward_data")
def log_softmax_backward_data(grad_output, output, dim, input_dtype):
    from . import base as B

    sizes = list(output._tn_sizes)
    if (sizes and B.dtype_of(output) is B.F32 and B.dtype_of(grad_output) is B.F32 and input_dtype is B.F32
            and list(grad_output._tn_sizes) == sizes and B.wrap_dim(dim, len(sizes)) == len(sizes) - 1
            and output._tn_is_contiguous() and grad_output._tn_is_contiguous()
            and B.C._tn_has_kernel("_log_softmax_backward_data", output._tn_device_key)):
        # one kernel in upstream's vector order (the cpu backend's, on AVX2/AVX512 machines)
        out = B.empty(sizes, B.F32, B.device_of(output))
        try:
            B.launch("_log_softmax_backward_data", (grad_output, output, dim), (out,))
            return out
        except NotImplementedError:
            pass  # a machine without upstream's vector paths: the composite below
    go, o = _opmath(grad_output, output)
    out = go - o.exp() * go.sum(dim, keepdim=True)
    return out if out.dtype == input_dtype else out.to(input_dtype)


@impl("cartesian_prod")
def cartesian_prod(tensors):
    torch = _torch()
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = torch.meshgrid(*tensors, indexing="ij")
    return torch.stack([g.flatten() for g in grids], 1)


@impl("combinations")
def combinations(self, r=2, with_replacement=False):
    torch = _torch()
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(self.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return torch.empty([0], dtype=self.dtype)
    n = self.numel()
    grids = torch.meshgrid(*([self] * r), indexing="ij")
    rng = torch.arange(n, dtype=torch.int64)
    index_grids = torch.meshgrid(*([rng] * r), indexing="ij")
    mask = torch.full(index_grids[0].shape, True, dtype=torch.bool)
    for i in range(r - 1):
        mask = mask * ((index_grids[i] <= index_grids[i + 1]) if with_replacement else (index_grids[i] < index_grids[i + 1]))
    return torch.stack([g.masked_select(mask) for g in grids], 1)


@impl("cov")
def cov(self, correction=1, fweights=None, aweights=None):
    import warnings

    torch = _torch()
    if self.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an input with {self.dim()} dimensions")
    if self.dtype == torch.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = self.view(1, -1) if self.dim() < 2 else self
    num_obs = x.shape[1]
    w = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got fweights with {fweights.dim()} dimensions")
        if fweights.is_floating_point() or fweights.is_complex():
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with {str(fweights.dtype).replace('torch.', '').capitalize()} dtype")
        if fweights.numel() != num_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are observations in the input but got {fweights.numel()} != {num_obs}")
        if num_obs > 0 and bool((fweights.min() < 0).item()):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got aweights with {aweights.dim()} dimensions")
        if not aweights.is_floating_point():
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got aweights with {str(aweights.dtype).replace('torch.', '').capitalize()} dtype")
        if aweights.numel() != num_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are observations in the input but got {aweights.numel()} != {num_obs}")
        if num_obs > 0 and bool((aweights.min() < 0).item()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else torch.scalar_tensor(num_obs, dtype=torch.int64)
    if w is not None and not bool(w_sum.ne(0).item()):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor.le(0).item()):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.")
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = torch.mm(x, (x * w if w is not None else x).t())
    return torch.true_divide(c, norm_factor).squeeze()


@impl("corrcoef")
def corrcoef(self):
    torch = _torch()
    if self.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an input with {self.dim()} dimensions")
    c = D("cov", self, 1, None, None)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = torch.sqrt(d)
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


def _cumtrapz_dx(y, dx, dim):
    n = y.shape[dim]
    return (dx / 2.0 * (y.narrow(dim, 0, n - 1) + y.narrow(dim, 1, n - 1))).cumsum(dim)


@impl("cumulative_trapezoid.x")
def cumulative_trapezoid_x(y, x, dim=-1):
    torch = _torch()
    d = B.wrap_dim(dim, y.dim())
    if y.dtype == torch.bool or x.dtype == torch.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but bool is not supported")
    if x.dim() == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError("cumulative_trapezoid: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[d] = x.shape[0]
        xv = x.view(sizes)
    elif x.dim() < y.dim():
        xv = x.view([1] * (y.dim() - x.dim()) + list(x.shape))
    else:
        xv = x
    n = xv.shape[d]
    dx = xv.narrow(d, 1, n - 1) - xv.narrow(d, 0, n - 1)
    m = y.shape[d]
    return ((y.narrow(d, 0, m - 1) + y.narrow(d, 1, m - 1)) * dx).cumsum(d) / 2.0


@impl("cumulative_trapezoid.dx")
def cumulative_trapezoid_dx(y, dx=1, dim=-1):
    torch = _torch()
    if isinstance(dx, (bool, complex)):
        raise RuntimeError("cumulative_trapezoid: Currently, we only support dx as a real number.")
    d = B.wrap_dim(dim, y.dim())
    if y.dtype == torch.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not supported")
    return _cumtrapz_dx(y, float(dx), d)


@impl("diagonal_scatter")
def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
    out = self.clone()
    out.diagonal(offset, dim1, dim2).copy_(src)
    return out


@impl("select_scatter")
def select_scatter(self, src, dim, index):
    out = self.clone()
    out.select(dim, index).copy_(src)
    return out


@impl("slice_scatter")
def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
    out = self.clone()
    D("copy_", D("slice.Tensor", out, dim, start, end, step), src, False)
    return out


@impl("dist")
def dist(self, other, p=2):
    return D("norm.Scalar", self - other, p)


def _split_dims(self, name, need, dim):
    if self.dim() < need:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {need} dimension{'s' if need > 1 else ''}, "
                           f"but got a tensor with {self.dim()} dimensions!")
    return dim


def _split_int(self, sections, name, need, dim):
    _split_dims(self, name, need, dim)
    if sections == 0 or self.shape[dim] % sections != 0:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size of the dimension "
                           f"{self.shape[dim]} is not divisible by the split_size {sections}!")
    return D("tensor_split.sections", self, sections, dim)


for _name, _need, _dimfn in (("hsplit", 1, lambda t: 0 if t.dim() == 1 else 1), ("vsplit", 2, lambda t: 0),
                             ("dsplit", 3, lambda t: 2)):
    impl(_name + ".int")(lambda self, sections, n=_name, k=_need, f=_dimfn: _split_int(self, sections, n, k, f(self)))
    impl(_name + ".array")(lambda self, indices, n=_name, k=_need, f=_dimfn: D(
        "tensor_split.indices", self, list(indices), _split_dims(self, n, k, f(self) if self.dim() >= k else 0)))


@impl("conj_physical")
def conj_physical(self):
    if self.is_complex():
        return D("_conj_physical", self)
    return self
