"""Window functions (bartlett, blackman, hamming, hann, kaiser), composed as upstream's
TensorFactories.cpp composes them: an arange scaled and folded in the window's dtype, one
element longer and cut back when `periodic`. Kaiser evaluates its kernel in the dtype's opmath
type (float32 for float16/bfloat16) and rounds once, as upstream's kaiser_window kernel does.
Float32 and float64 agree with upstream within an ulp (kaiser's i0 ratio); float16/bfloat16
bartlett and hamming can differ by an ulp where upstream rounds the scaling number to the type
first."""

from __future__ import annotations

import math
from .. import base as B
from .. import impl


def _d(op, *args):
    return B.door(op, *args)


def _checks(name, length, dtype, layout, device):
    if layout is not None and str(layout) != "torch.strided":
        raise RuntimeError(f"{name} is not implemented for sparse types, got: {layout}")
    if not (dtype.is_floating_point or dtype.is_complex):
        dev = device if device is not None else "cpu"
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype={B.cpp_type_name(dtype)}, "
                           f"device={dev}, layout=Strided (default), requires_grad=false (default), "
                           "pinned_memory=false, memory_format=(nullopt))")
    if length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got window_length={length}")


def _window(name, length, periodic, dtype, layout, device, body):
    dtype = dtype or B.default_dtype()
    _checks(name, length, dtype, layout, device)
    if length == 0:
        return B.empty([0], dtype, device)
    if length == 1:
        return B.call("ones", [1], dtype, device=device)
    n = length + 1 if periodic else length
    w = body(B.call("arange", n, dtype, device=device), n)
    return _d("narrow", w, 0, 0, n - 1) if periodic else w


def bartlett_window(window_length, periodic=True, dtype=None, layout=None, device=None, pin_memory=None):
    def body(w, n):
        _d("mul_.Scalar", w, 2.0 / (n - 1))
        first = ((n - 1) >> 1) + 1
        tail = _d("narrow", w, 0, first, n - first)
        _d("add_.Scalar", _d("mul_.Scalar", tail, -1), 2, 1)
        return w

    return _window("bartlett_window", window_length, periodic, dtype, layout, device, body)


def blackman_window(window_length, periodic=True, dtype=None, layout=None, device=None, pin_memory=None):
    def body(w, n):
        _d("mul_.Scalar", w, math.pi / (n - 1))
        a = _d("mul_.Scalar", _d("cos_", _d("mul.Scalar", w, 4)), 0.08)
        b = _d("mul_.Scalar", _d("cos_", _d("mul.Scalar", w, 2)), 0.5)
        return _d("add.Scalar", _d("sub.Tensor", a, b, 1), 0.42, 1)

    return _window("blackman_window", window_length, periodic, dtype, layout, device, body)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, dtype=None, layout=None, device=None,
                   pin_memory=None, name="hamming_window"):
    def body(w, n):
        _d("mul_.Scalar", w, math.pi * 2.0 / (n - 1))
        return _d("add_.Scalar", _d("mul_.Scalar", _d("cos_", w), -beta), alpha, 1)

    return _window(name, window_length, periodic, dtype, layout, device, body)


def hann_window(window_length, periodic=True, dtype=None, layout=None, device=None, pin_memory=None):
    return hamming_window(window_length, periodic, 0.5, 0.5, dtype, layout, device, name="hann_window")


def kaiser_window(window_length, periodic=True, beta=12.0, dtype=None, layout=None, device=None, pin_memory=None):
    def body(w, n):
        import torch

        half = w.dtype in (torch.float16, torch.bfloat16)
        x = B.call("_to_copy", w, torch.float32) if half else w
        alpha = (n - 1) / 2.0
        # beta * sqrt(|1 - ((a - alpha) / alpha)^2|), then i0(.) / i0(beta), in the opmath type
        r = _d("div.Scalar", _d("sub.Scalar", x, alpha, 1), alpha)
        r = _d("abs", _d("rsub.Scalar", _d("mul.Tensor", r, r), 1, 1))
        num = _d("i0", _d("mul.Scalar", _d("sqrt", r), beta))
        den = _d("i0", B.call("full", [], beta, x.dtype, device=x.device))
        out = _d("div.Tensor", num, den)
        return B.call("_to_copy", out, w.dtype) if half else out

    return _window("kaiser_window", window_length, periodic, dtype, layout, device, body)


def _register(name, fn, extra_overloads):
    """The overloads pass (length, [periodic, [params...]], dtype, layout, device, pin_memory)."""
    def plain(window_length, dtype=None, layout=None, device=None, pin_memory=None):
        return fn(window_length, True, dtype=dtype, layout=layout, device=device)

    def with_params(n_params):
        def run(window_length, periodic, *rest):
            params, opts = rest[:n_params], rest[n_params:]
            dtype, layout, device = (list(opts) + [None] * 3)[:3]
            return fn(window_length, periodic, *params, dtype=dtype, layout=layout, device=device)

        return run

    impl(name)(plain)
    impl(f"{name}.periodic")(with_params(0))
    for overload, n_params in extra_overloads:
        impl(f"{name}.{overload}")(with_params(n_params))


_register("bartlett_window", bartlett_window, ())


_register("blackman_window", blackman_window, ())


_register("hamming_window", hamming_window, (("periodic_alpha", 1), ("periodic_alpha_beta", 2)))


_register("hann_window", hann_window, ())


_register("kaiser_window", kaiser_window, (("beta", 1),))
