"""bfloat16/float16 operators that follow upstream's CPU kernels step by step.

`opmath.py` covers composites whose upstream kernel widens to float32, computes the whole
formula and rounds once. The operators here round at other points, and agreeing with upstream
to the last unit means rounding exactly where its kernel rounds:

- `addbmm` (LinearAlgebra.cpp, addbmm_impl_): one `addmm_` per batch into the result, so the
  result is rounded to the reduced dtype after every batch; each product is a float32 dot
  product, and beta*c + alpha*dot is formed in float32 before that rounding.
- `addr` (cpu/LinearAlgebraKernel.cpp, addr_kernel): `beta * self + alpha * vec1 * vec2` on the
  reduced type itself, beta and alpha converted to it, every operation rounded.
- `native_batch_norm` in training (Normalization.cpp, batch_norm_cpu_update_stats_template and
  cpu/batch_norm_kernel.cpp): float32 sums; for bfloat16 the mean and the variance sum are
  stored as bfloat16, the variance is that sum divided by n in bfloat16, and the running
  statistics are updated in bfloat16 arithmetic; for float16 (measured: upstream's results agree
  only this way) the variance sum stays float32 and the running statistics are updated in
  float32 and rounded once. invstd = 1/sqrt(var + eps) in double, stored in the parameters'
  dtype; the output is x * alpha + beta in float32 with alpha = invstd * weight and
  beta = bias - mean * alpha, rounded once.
- `adaptive_avg_pool3d`, `linalg_vector_norm` with a `dtype`, transposed `convolution` and
  `_scaled_dot_product_attention_math`: see each function.

Each was checked bit for bit against upstream on its OpInfo samples (tools/opinfo_agreement.py
record --dtypes reduced) and on larger random inputs before it was written here. `install` puts
each in front of the general implementation, which still serves every other dtype.
"""

from __future__ import annotations

from . import IMPLS


REDUCED_NAMES = ("float16", "bfloat16")


def _reduced(*tensors):
    """The reduced float dtype (torch dtype) every given tensor has, else None."""
    dts = {t.dtype for t in tensors if t is not None}
    if len(dts) == 1:
        dt = dts.pop()
        if str(dt).replace("torch.", "") in REDUCED_NAMES:
            return dt
    return None


def _f32(x):
    import torch

    return x.to(torch.float32)


def addbmm(general):
    def impl(self, batch1, batch2, beta=1, alpha=1):
        dt = _reduced(self, batch1, batch2)
        if dt is None or batch1.dim() != 3 or batch2.dim() != 3 or batch1.shape[0] != batch2.shape[0] \
                or batch1.shape[0] == 0 or batch1.shape[2] != batch2.shape[1] \
                or list(self.shape) not in ([batch1.shape[1], batch2.shape[2]], [1, batch2.shape[2]],
                                            [batch2.shape[2]], [batch1.shape[1], 1], [1, 1], [1], []):
            return general(self, batch1, batch2, beta, alpha)
        import torch

        out = self.expand(batch1.shape[1], batch2.shape[2])
        b, a = torch.tensor(float(beta), dtype=torch.float32), torch.tensor(float(alpha), dtype=torch.float32)
        first = True
        for i in range(batch1.shape[0]):
            prod = _f32(batch1[i]).mm(_f32(batch2[i])) * a
            if first and float(beta) == 0:
                acc = prod  # upstream's gemm ignores c (even NaN) when beta is 0
            else:
                acc = _f32(out) * b + prod
            out = acc.to(dt)
            if first:
                b, first = torch.tensor(1.0, dtype=torch.float32), False
        return out

    return impl


def addr(general):
    def impl(self, vec1, vec2, beta=1, alpha=1):
        dt = _reduced(self, vec1, vec2)
        if dt is None or vec1.dim() != 1 or vec2.dim() != 1:
            return general(self, vec1, vec2, beta, alpha)
        import torch

        # scalar_t beta_val = beta.to<scalar_t>(), alpha likewise; each operation rounds
        a = torch.tensor(float(alpha), dtype=dt)
        outer = (a * vec1)[:, None] * vec2[None, :]
        if float(beta) == 0:
            return outer
        shape = [vec1.shape[0], vec2.shape[0]]
        torch.broadcast_shapes(tuple(self.shape), tuple(shape))  # upstream's error for a wrong self
        return torch.tensor(float(beta), dtype=dt) * self.expand(shape) + outer

    return impl


def native_batch_norm(general):
    def impl(input, weight, bias, running_mean, running_var, training, momentum, eps):
        import torch

        dt = _reduced(input)
        sizes = list(input.shape)
        if dt is None or not training or len(sizes) < 2 or input.numel() // max(sizes[1], 1) <= 1:
            return general(input, weight, bias, running_mean, running_var, training, momentum, eps)
        params = [t for t in (weight, bias, running_mean, running_var) if t is not None]
        # param_t: the input's dtype, or float32 when a parameter has another dtype (is_mixed_type)
        pt = dt if all(t.dtype == dt for t in params) else torch.float32
        c = sizes[1]
        n = input.numel() // c
        dims = [0] + list(range(2, len(sizes)))
        shape = [1, c] + [1] * (len(sizes) - 2)
        x = _f32(input)
        mean_f = x.sum(dims) / n  # float32 sum and division (opmath_t)
        var_sum = ((x - mean_f.view(shape)) ** 2).sum(dims)
        mean = mean_f.to(pt)
        if pt == torch.bfloat16:
            # the variance sum stored as bfloat16, then _var_sum / n divides in bfloat16
            var_sum = var_sum.to(pt)
            var = var_sum / torch.tensor(n, dtype=pt)
        else:
            # float16 (measured: upstream's float16 results agree only with the sum kept in
            # float32 and divided there) and mixed-type parameters
            var = var_sum / n
        # InvStd<float>: 1 / std::sqrt(var + eps) with eps a double, then stored as param_t
        invstd = 1.0 / (var.to(torch.float64) + eps).sqrt()
        if eps == 0:
            invstd = torch.where(var == 0, 0.0, invstd)
        invstd = invstd.to(torch.float32).to(pt)
        alpha = _f32(invstd) * (_f32(weight) if weight is not None else 1.0)
        beta = (_f32(bias) if bias is not None else 0.0) - _f32(mean) * alpha
        out = (x * alpha.view(shape) + beta.view(shape)).to(dt)
        with torch.no_grad():
            if pt == torch.bfloat16:
                # momentum_ = param_t(momentum); bfloat16 products and sums, the unbiased variance
                # a bfloat16 quotient
                m = torch.tensor(momentum, dtype=pt)
                if running_mean is not None:
                    running_mean.copy_(m * mean + (1 - m) * running_mean)
                if running_var is not None:
                    unbiased = _f32(var_sum / torch.tensor(n - 1, dtype=pt))
                    running_var.copy_(_f32(m) * unbiased + _f32((1 - m) * running_var))
            else:
                # float16 (measured: 20 of 20 random cases) and float32 parameters: in float32
                # from the unrounded mean and variance sum, rounded once
                m = torch.tensor(momentum, dtype=torch.float32)
                if running_mean is not None:
                    running_mean.copy_(m * mean_f + (1 - m) * _f32(running_mean))
                if running_var is not None:
                    running_var.copy_(m * (var_sum / (n - 1)) + (1 - m) * _f32(running_var))
        return out, mean, invstd

    return impl


def adaptive_avg_pool3d(general):
    """AdaptiveAveragePooling3d.cpp (adaptive_avg_pool3d_out_frame): `scalar_t sum = 0; sum += val`
    over the window in (t, h, w) order, then `sum / kT / kH / kW`: for the reduced types every
    addition and every division rounds to the type. Gathered window position by window position,
    so each output still adds its own elements in upstream's order (adding an exact zero where a
    window is shorter leaves the sum unchanged)."""

    def impl(self, output_size):
        dt = _reduced(self)
        if dt is None or self.dim() not in (4, 5) or self.numel() == 0 or len(output_size) != 3:
            return general(self, output_size)
        import torch

        in_sizes = list(self.shape[-3:])
        outs = [o if o is not None else n for o, n in zip(output_size, in_sizes)]
        starts, lens = [], []
        for n, o in zip(in_sizes, outs):
            st = torch.tensor([(i * n) // o for i in range(o)])
            en = torch.tensor([-(-((i + 1) * n) // o) for i in range(o)])
            starts.append(st)
            lens.append(en - st)
        x = self.contiguous()
        acc = torch.zeros(list(self.shape[:-3]) + outs, dtype=dt)
        for a in range(int(lens[0].max())):
            for b in range(int(lens[1].max())):
                for c in range(int(lens[2].max())):
                    offs = (a, b, c)
                    g = x
                    valid = None
                    for k in range(3):
                        idx = torch.clamp(starts[k] + offs[k], max=in_sizes[k] - 1)
                        g = g.index_select(self.dim() - 3 + k, idx)
                        v = (offs[k] < lens[k]).view([-1 if j == k else 1 for j in range(3)])
                        valid = v if valid is None else valid & v
                    acc = acc + torch.where(valid, g, torch.zeros((), dtype=dt))
        for k in range(3):
            acc = acc / lens[k].to(dt).view([-1 if j == k else 1 for j in range(3)])
        return acc

    return impl


def linalg_vector_norm(general):
    """vector_norm(x, dtype=d): upstream converts x to d and computes the norm of that, so for a
    reduced x and d its own dtype the result is the plain float32-opmath norm (opmath.py), and for
    d = float32 a float32 result. `general` (the opmath wrapper) would otherwise see a float32
    input with a reduced `dtype` argument and narrow the input before the norm."""

    def impl(self, ord=2, dim=None, keepdim=False, dtype=None):
        if dtype is not None and _reduced(self) is not None:
            if dtype != self.dtype:
                self = self.to(dtype)
            dtype = None
        return general(self, ord, dim, keepdim, dtype)

    return impl


def _onednn_supports(dtype):
    """Whether upstream's oneDNN takes this reduced type here (mkldnn_bf16/fp16_device_check under
    ONEDNN_MAX_CPU_ISA: torchnative_core/cpu_capability.py)."""
    from .. import cpu_capability

    return cpu_capability.onednn_supports(str(dtype))


def _all_int64(*tensors):
    """slow_conv_transpose2d/3d dispatch Long among the integers (the others raise upstream's
    NotImplementedError, which the general implementation raises too)."""
    return {str(t.dtype) for t in tensors if t is not None} == {"torch.int64"}


def convolution(general):
    """Transposed convolution of a reduced type that upstream computes with its slow path
    (slow_conv_transpose2d/3d; 1-d as 2-d; groups one at a time, _convolution_nogroup): taken
    when oneDNN can't compute the type on this CPU (float16 without avx512_fp16; bfloat16 without
    avx512) or when an output padding is not smaller than its stride (is_output_padding_big).
    That path computes `columns = input^T weight` with a float gemm rounded to the type, then
    col2im/col2vol adds the columns into the zeroed output in the type, one kernel offset after
    another, and adds the bias after (rounded). oneDNN's path (float accumulation, rounded once)
    is what the general implementation already computes. int64 transposed convolutions take the
    slow path too (upstream's only one for them; exact, so any order agrees)."""

    def impl(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
        if not transposed and weight.dim() == input.dim() and input.dim() in (3, 4, 5) \
                and _all_integer(input, weight, bias) \
                and input.shape[1] == weight.shape[1] * groups and weight.shape[0] % groups == 0:
            return _conv_integer(input, weight, bias, stride, padding, dilation, groups)
        dt = _reduced(input, weight, bias)
        integral = transposed and _all_int64(input, weight, bias)
        if integral:
            dt = input.dtype  # the slow path is upstream's only one for integers (exact)
        nsp = weight.dim() - 2
        if dt is None or not transposed or input.dim() != nsp + 2 or nsp not in (1, 2, 3) \
                or input.shape[1] != weight.shape[0] or input.shape[1] % groups:
            return general(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
        ex = lambda v: list(v) * nsp if len(v) == 1 else list(v)  # noqa: E731
        stride, padding, dilation, output_padding = ex(stride), ex(padding), ex(dilation), ex(output_padding)
        big = any(op >= st for op, st in zip(output_padding, stride))
        outs = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                zip(input.shape[2:], stride, padding, dilation, weight.shape[2:], output_padding)]
        if (not integral and _onednn_supports(dt) and not big) or min(outs) <= 0 or input.numel() == 0:
            return general(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups)
        return _slow_conv_transpose(input, weight, bias, stride, padding, dilation, output_padding, groups, dt)

    return impl


def _all_integer(*tensors):
    """slow_conv2d and slow_conv3d (im2col/vol2col + gemm) dispatch every integer type but bool
    (measured upstream)."""
    dts = {t.dtype for t in tensors if t is not None}
    return len(dts) == 1 and str(next(iter(dts))) in (
        "torch.int64", "torch.int32", "torch.int16", "torch.int8", "torch.uint8")


def _conv_integer(x, w, bias, stride, padding, dilation, groups):
    """An integer 1-, 2- or 3-d convolution (upstream's slow_conv2d/slow_conv3d, 1-d as 2-d):
    exact, in int64, wrapped to the type at the end as the type's own modular arithmetic would
    give."""
    import itertools

    import torch

    nsp = w.dim() - 2
    sp = "dhw"[-nsp:]
    ex = lambda v: list(v) * nsp if len(v) == 1 else list(v)  # noqa: E731
    stride, padding, dilation = ex(stride), ex(padding), ex(dilation)
    dt = x.dtype
    xl = torch.nn.functional.pad(x.to(torch.int64), [p for q in reversed(padding) for p in (q, q)])
    n = x.shape[0]
    cout, cin_g, ks = w.shape[0], w.shape[1], list(w.shape[2:])
    sizes = list(xl.shape[2:])
    outs = [(s - d * (k - 1) - 1) // st + 1 for s, d, k, st in zip(sizes, dilation, ks, stride)]
    if min(outs) <= 0:
        raise RuntimeError("Calculated output size is too small")
    cout_g = cout // groups
    wl = w.to(torch.int64)
    parts = []
    for g in range(groups):
        xg = xl[:, g * cin_g:(g + 1) * cin_g]
        acc = torch.zeros([n, cout_g] + outs, dtype=torch.int64)
        for off in itertools.product(*[range(k) for k in ks]):
            sl = (slice(None), slice(None)) + tuple(
                slice(o * d, o * d + st * (m - 1) + 1, st) for o, d, st, m in zip(off, dilation, stride, outs))
            patch = xg[sl]                                                       # n, cin_g, *outs
            wk = wl[(slice(g * cout_g, (g + 1) * cout_g), slice(None)) + off]    # cout_g, cin_g
            acc = acc + torch.einsum(f"oc,nc{sp}->no{sp}", wk, patch)
        parts.append(acc)
    out = torch.cat(parts, 1) if groups > 1 else parts[0]
    if bias is not None:
        out = out + bias.to(torch.int64).view([1, -1] + [1] * nsp)
    return out.to(dt)


def _slow_conv_transpose(x, w, bias, stride, padding, dilation, output_padding, groups, dt):
    import itertools

    import torch

    nsp = w.dim() - 2
    n, cin = x.shape[0], x.shape[1]
    cout_g, ks, ins = w.shape[1], list(w.shape[2:]), list(x.shape[2:])
    outs = [(i - 1) * s - 2 * p + d * (k - 1) + op + 1
            for i, s, p, d, k, op in zip(ins, stride, padding, dilation, ks, output_padding)]
    # the output with room for every column position (those col2im drops land outside the crop)
    full = [p + o + d * (k - 1) + s * (i - 1) + 1 for p, o, d, k, s, i in zip(padding, outs, dilation, ks, stride, ins)]
    cin_g = cin // groups
    parts = []
    for g in range(groups):
        acc = (lambda t: t) if not dt.is_floating_point else _f32
        xg = acc(x[:, g * cin_g:(g + 1) * cin_g]).flatten(2)              # n, cin_g, P
        wg = acc(w[g * cin_g:(g + 1) * cin_g]).flatten(1)                 # cin_g, cout_g * K
        cols = wg.t().matmul(xg).to(dt).reshape([n, cout_g] + ks + ins)   # the gemm, rounded
        out = torch.zeros([n, cout_g] + full, dtype=dt)
        for off in itertools.product(*[range(k) for k in ks]):
            sl = (slice(None), slice(None)) + tuple(
                slice(o * d, o * d + s * (i - 1) + 1, s) for o, d, s, i in zip(off, dilation, stride, ins))
            out[sl] = out[sl] + cols[(slice(None), slice(None)) + off]
        out = out[(slice(None), slice(None)) + tuple(slice(p, p + o) for p, o in zip(padding, outs))]
        if bias is not None:
            out = out + bias[g * cout_g:(g + 1) * cout_g].view([1, cout_g] + [1] * nsp)
        parts.append(out)
    return torch.cat(parts, 1) if groups > 1 else parts[0].contiguous()


def sdpa_math(general):
    """_scaled_dot_product_attention_math (attention.cpp) keeps a float16/bfloat16 query, key and
    value "in high precision for accuracy": it converts them to float32, computes the whole
    composite there (dropout included, so its mask is drawn for a float32 tensor) and converts
    both results back once. The mask is not converted (a reduced mask promotes exactly)."""

    def impl(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None,
             enable_gqa=False):
        dt = _reduced(query, key, value)
        if dt is None:
            return general(query, key, value, attn_mask, dropout_p, is_causal, dropout_mask, scale, enable_gqa)
        out, attn = general(_f32(query), _f32(key), _f32(value), attn_mask, dropout_p, is_causal, dropout_mask,
                            scale, enable_gqa)
        return out.to(dt), attn.to(dt)

    return impl


KERNELS = {"_scaled_dot_product_attention_math": sdpa_math, "convolution": convolution, "linalg_vector_norm": linalg_vector_norm, "addbmm": addbmm, "addr": addr, "native_batch_norm": native_batch_norm,
           "adaptive_avg_pool3d": adaptive_avg_pool3d, "_adaptive_avg_pool3d": adaptive_avg_pool3d}


def install() -> None:
    for name, make in KERNELS.items():
        general = IMPLS[name]
        IMPLS[name] = make(general)
        IMPLS[name].__name__ = f"{name}_reduced"
