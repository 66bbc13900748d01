"""Group, instance and RMS normalisation, composed of other operators as upstream composes them
(instance_norm is batch_norm over a (1, N*C, ...) view; rms_norm upcasts half types). Written
with the public torch API: every call still enters through the door."""

from __future__ import annotations

from . import impl


@impl("native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    import torch

    x = input.reshape(N, group, (C // group) * HxW)  # explicit: N may be 0
    var, mean = torch.var_mean(x, dim=2, correction=0)
    rstd = (var + eps).rsqrt()
    out = ((x - mean.unsqueeze(2)) * rstd.unsqueeze(2)).reshape(input.shape)
    shape = [1, C] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean, rstd


@impl("group_norm")
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    import torch

    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(
            f"Expected number of channels in input to be divisible by num_groups, but got input of shape "
            f"{list(input.shape)} and num_groups={num_groups}"
        )
    for t, name in ((weight, "weight"), (bias, "bias")):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, but "
                               f"got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    hxw = input.numel() // max(n * c, 1)
    return torch.native_group_norm(input.contiguous(), weight, bias, n, c, hxw, num_groups, eps)[0]


@impl("instance_norm")
def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps, cudnn_enabled):
    import torch

    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    b, c = input.shape[0], input.shape[1]
    x = input.contiguous().view([1, b * c] + list(input.shape[2:]))
    rep = lambda t: t.repeat(b) if t is not None else None  # noqa: E731
    rm, rv = rep(running_mean), rep(running_var)
    out = torch.batch_norm(x, rep(weight), rep(bias), rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    with torch.no_grad():  # the running statistics are averaged back over the batch
        if running_mean is not None:
            running_mean.copy_(rm.view(b, c).mean(0))
        if running_var is not None:
            running_var.copy_(rv.view(b, c).mean(0))
    return out.view(input.shape)


@impl("rms_norm")
def rms_norm(input, normalized_shape, weight=None, eps=None):
    import torch

    k = len(normalized_shape)
    if list(input.shape[input.dim() - k:]) != list(normalized_shape):
        raise RuntimeError(
            f"Given normalized_shape={list(normalized_shape)}, expected input with shape [*, "
            + ", ".join(str(s) for s in normalized_shape) + f"], but got input of size{list(input.shape)}"
        )
    half = input.dtype in (torch.float16, torch.bfloat16)
    x = input.float() if half else input
    if eps is None:
        eps = torch.finfo(x.dtype).eps
    dims = list(range(input.dim() - k, input.dim()))
    out = (x * (x.pow(2).mean(dims, keepdim=True) + eps).rsqrt()).type_as(input)
    return out * weight if weight is not None else out
