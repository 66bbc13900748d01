"""mydev's kernels: one function per operator overload, called as `fn(args, outs)`.

`args` are the operator's schema arguments in order, already broadcast and cast by the core's
meta step; `outs` are the outputs the core allocated on mydev, which the kernel fills.
"""

from __future__ import annotations

import numpy as np

from .memory import as_numpy


def fill(args, outs):  # fill_.Scalar(Tensor self, Scalar value)
    as_numpy(outs[0])[...] = args[1]


def copy(args, outs):  # copy_(Tensor self, Tensor src, bool non_blocking)
    as_numpy(outs[0])[...] = as_numpy(args[1])


def add(args, outs):  # add.Tensor(Tensor self, Tensor other, Scalar alpha)
    a, b, alpha = as_numpy(args[0]), as_numpy(args[1]), args[2]
    np.add(a, b * alpha if alpha != 1 else b, out=as_numpy(outs[0]))


def mul(args, outs):  # mul.Tensor(Tensor self, Tensor other)
    np.multiply(as_numpy(args[0]), as_numpy(args[1]), out=as_numpy(outs[0]))


KERNELS = {"fill_.Scalar": fill, "copy_": copy, "add.Tensor": add, "mul.Tensor": mul}
