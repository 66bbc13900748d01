"""The bilinear layer: y = x1^T W x2 + b over the last dimension, batch dimensions flattened
(upstream's Linear.cpp composes it the same way, with its checks in this order)."""

from __future__ import annotations

from .. import base as B
from .. import impl


@impl("bilinear")
def bilinear(input1, input2, weight, bias=None):
    import torch

    dts = [B.dtype_of(t) for t in (input1, input2, weight) + ((bias,) if bias is not None else ())]
    if len(set(dts)) != 1:
        names = [f"{n}: {B.cpp_type_name(d)}" for n, d in zip(("input1", "input2", "weight", "bias"), dts)]
        raise RuntimeError(f"All tensors must have the same dtype, got {', '.join(names)}")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and {input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.size(1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.size(1)}")
    if input2.shape[-1] != weight.size(2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.size(2)}")
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[0] if bias.dim() else 0} but expected {weight.shape[0]}")
    out_size = list(input1.shape[:-1]) + [weight.shape[0]]
    x1 = input1.reshape(-1, input1.shape[-1])
    x2 = input2.reshape(-1, input2.shape[-1])
    # (x1 W_o) . x2 for every output o: two matrix products, each rounded once as upstream's
    # _trilinear rounds its contractions
    o, i, j = weight.shape
    t = torch.mm(x1, weight.permute(1, 0, 2).reshape(i, o * j)).reshape(-1, o, j)
    out = torch.bmm(t, x2.unsqueeze(2)).reshape(out_size)
    return out + bias if bias is not None else out
