"""Statistics composed as upstream composes them (Correlation.cpp): cov and corrcoef.
"""

from __future__ import annotations

from .. import base as B
from .. import impl

D = B.door


def _torch():
    import torch

    return torch


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
    c = B.call("cov", self)
    if c.dim() == 0:
        return c / c
    d = c.diagonal()
    stddev = torch.sqrt(d)
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)
