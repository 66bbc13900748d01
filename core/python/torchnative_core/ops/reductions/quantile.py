"""quantile and nanquantile as upstream composes them (Sorting.cpp: quantile_checks,
quantile_output_shape, quantile_compute): the reduced dimension sorted last, each q turned into
a fractional rank in the input's dtype, the values at the ranks below and above gathered and
interpolated with `lerp_`, so the same elements meet the same arithmetic."""

from __future__ import annotations

from .. import base as B
from .. import impl


_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _d(op, *args):
    return B.door(op, *args)


def _mode(interpolation):
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    return interpolation


def _checks(self, q):
    import torch

    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (torch.float32, torch.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if self.dtype != q.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if self.device != q.device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")


def _output_shape(dim, self, q, keepdim, wrapped):
    shape = []
    if dim is not None and self.dim() > 0:
        shape = list(self.shape)
        if keepdim:
            shape[wrapped] = 1
        else:
            del shape[wrapped]
    elif keepdim:
        shape = [1] * self.dim()
    if q.dim() > 0:
        shape.insert(0, q.numel())
    return shape


def _compute(self, q, dim, mode, ignore_nan, wrapped, out_shape):
    import torch

    if self.device.type == "cpu" and not bool(_d("all", _d("logical_and", _d("ge.Scalar", q, 0), _d("le.Scalar", q, 1)))):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        sorted_ = _d("sort", _d("flatten.using_ints", self, 0, -1), -1, False)[0]
    elif wrapped == self.dim() - 1:
        sorted_ = _d("sort", self, -1, False)[0]
    else:
        sorted_ = _d("sort", _d("transpose.int", _d("unsqueeze", self, -1), wrapped, -1), -1, False)[0]
    if q.dim() == 0:
        out_shape = [q.numel()] + out_shape
    # the sorted values viewed as out_shape without q, then the sorted length
    in_shape = list(out_shape[1:]) + [sorted_.shape[-1]]
    sorted_ = _d("view", sorted_, in_shape)
    if sorted_.shape[-1] > 2 ** 24:
        raise RuntimeError("quantile() input tensor is too large")
    if ignore_nan:
        valid = _d("sum.dim_IntList", _d("logical_not", _d("isnan", sorted_)), [-1], True, None)
        ranks = _d("mul.Tensor", q, _d("sub.Scalar", valid, 1, 1))
        ranks = _d("masked_fill.Scalar", ranks, _d("lt.Scalar", ranks, 0), 0)
    else:
        last = sorted_.shape[-1] - 1
        has_nan = _d("any.dim", _d("isnan", sorted_), -1, True)
        scaled, has_nan = _d("broadcast_tensors", [_d("mul.Scalar", q, last), has_nan])
        ranks = _d("masked_fill.Scalar", scaled, has_nan, last)
    if mode == "lower":
        ranks = _d("floor", ranks)
    elif mode == "higher":
        ranks = _d("ceil", ranks)
    elif mode == "nearest":
        ranks = _d("round", ranks)
    below = B.call("_to_copy", ranks, torch.int64)
    values = _d("gather", sorted_, -1, below, False)
    if mode in ("linear", "midpoint"):
        if mode == "midpoint":
            weights = B.call("full_like", ranks, 0.5, values.dtype)
        else:
            weights = _d("sub.Tensor", ranks, below, 1)
        above = B.call("_to_copy", _d("ceil", ranks), torch.int64)
        values = _d("lerp.Tensor", values, _d("gather", sorted_, -1, above, False), weights)
    if q.dim() == 0:
        return _d("squeeze.dim", values, -1)
    return _d("squeeze.dim", _d("transpose.int", _d("unsqueeze", values, 0), 0, -1), -1)


def _quantile(self, q, dim, keepdim, interpolation, ignore_nan):
    mode = _mode(interpolation)
    _checks(self, q)
    wrapped = B.wrap_dim(dim if dim is not None else 0, self.dim())
    return _compute(self, q, dim, mode, ignore_nan, wrapped, _output_shape(dim, self, q, keepdim, wrapped))


def _scalar_q(self, q):
    if not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    return B.call("scalar_tensor", q, self.dtype, device=self.device)


def _check_out(out, self, q):
    """quantile_out_impl: the input's checks, then out's, before the dim is wrapped."""
    _checks(self, q)
    if self.dtype != out.dtype:
        raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    if self.device != out.device:
        raise RuntimeError("quantile() out tensor must be on the same device as the input tensor")


def _out(out, result):
    from ..forms.out_variants import write_out

    return write_out(out, result)


for _name, _nan in (("quantile", False), ("nanquantile", True)):
    def _make(nan):
        def tensor_q(self, q, dim=None, keepdim=False, interpolation="linear"):
            return _quantile(self, q, dim, keepdim, interpolation, nan)

        def scalar_q(self, q, dim=None, keepdim=False, interpolation="linear"):
            return _quantile(self, _scalar_q(self, q), dim, keepdim, interpolation, nan)

        def tensor_q_out(self, q, dim=None, keepdim=False, interpolation="linear", out=None):
            _check_out(out, self, q)
            return _out(out, tensor_q(self, q, dim, keepdim, interpolation))

        def scalar_q_out(self, q, dim=None, keepdim=False, interpolation="linear", out=None):
            _check_out(out, self, _scalar_q(self, q))
            return _out(out, scalar_q(self, q, dim, keepdim, interpolation))

        return tensor_q, scalar_q, tensor_q_out, scalar_q_out

    _t, _s, _to, _so = _make(_nan)
    impl(_name)(_t)
    impl(f"{_name}.scalar")(_s)
    impl(f"{_name}.out")(_to)
    impl(f"{_name}.scalar_out")(_so)
