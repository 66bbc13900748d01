"""Conjugation and phase for every dtype: conj, conj_physical, resolve_conj/resolve_neg, isreal,
angle (complex tensors get their own forms from complex/arithmetic, which wraps these).
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl
from ..elementwise.math import _float

D = B.door


@impl("conj")
def conj(self):
    if self.is_complex():  # upstream returns a lazily conjugated view (the conj bit), which we lack
        raise NotImplementedError("torchnative: conj of complex tensors (the conjugate bit) is not supported yet")
    return self


@impl("resolve_conj", "resolve_neg")
def resolve_conj(self):
    return self  # no tensor here ever carries the conjugate or negative bit


@impl("isreal")
def isreal(self):
    import torch

    return torch.ones_like(self, dtype=torch.bool)


@impl("angle")
def angle(self):
    import torch

    x = _float(self)
    return torch.where(x.isnan(), x, torch.where(x < 0, torch.full((), math.pi, dtype=x.dtype), torch.zeros((), dtype=x.dtype)))


@impl("conj_physical")
def conj_physical(self):
    if self.is_complex():
        return D("_conj_physical", self)
    return self
