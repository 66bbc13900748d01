"""mydev's kernels: one function per operator overload, called as `fn(args, outs)`.

`args` are the operator's schema arguments in order, already broadcast and cast by the core's
meta step; `outs` are the outputs the core allocated on mydev, which the kernel fills. A dtype the
kernel cannot compute is refused by name (`as_numpy(t, op)` does it for dtypes numpy lacks).
"""

from __future__ import annotations

import numpy as np

from .memory import as_numpy


def fill(args, outs):  # fill_.Scalar(Tensor self, Scalar value)
    as_numpy(outs[0], "fill_")[...] = args[1]


def copy(args, outs):  # copy_(Tensor self, Tensor src, bool non_blocking)
    as_numpy(outs[0], "copy_")[...] = as_numpy(args[1], "copy_")


def add(args, outs):  # add.Tensor(Tensor self, Tensor other, Scalar alpha)
    a, b, alpha = as_numpy(args[0], "add"), as_numpy(args[1], "add"), args[2]
    np.add(a, b * alpha if alpha != 1 else b, out=as_numpy(outs[0], "add"))


def mul(args, outs):  # mul.Tensor(Tensor self, Tensor other)
    np.multiply(as_numpy(args[0], "mul"), as_numpy(args[1], "mul"), out=as_numpy(outs[0], "mul"))


KERNELS = {"fill_.Scalar": fill, "copy_": copy, "add.Tensor": add, "mul.Tensor": mul}
