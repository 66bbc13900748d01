"""Scaled dot-product attention: the flash kernel where it applies (upstream's CPU choice), the
math path otherwise, grouped-query expansion, their backward forms, and _native_multi_head_attention.
"""

from __future__ import annotations

import math
from .. import base as B
from .. import impl


_door = B.door


@impl("_scaled_dot_product_flash_attention_for_cpu")
def sdpa_flash_cpu(query, key, value, dropout_p=0.0, is_causal=False, attn_mask=None, scale=None):
    if query._tn_device_key != "cpu":
        # the cpu kernel reads grouped key/value heads in place, as upstream's fused kernel does
        # (no copy of the cache per decode step); other backends' kernels take equal head counts
        key, value = gqa_expand(query, key), gqa_expand(query, value)
    else:
        hq, hk = query._tn_sizes[-3], key._tn_sizes[-3]
        if hk == 0 or hq % hk or value._tn_sizes[-3] != hk:
            raise RuntimeError(f"number of heads in key/value ({hk}) must divide the number of heads in query ({hq})")
    sizes = list(query._tn_sizes)
    lse_dtype = B.F32 if B.dtype_of(query)._tn_name != "float64" else B.dtype_of(query)
    if query._tn_device_key in ("cpu", "meta") and len(sizes) == 4 and value._tn_sizes[-1] == sizes[-1]:
        # upstream's layouts (sdp_utils / attention.cpp): the output is empty_like(query), so it
        # keeps a (batch, seq, heads, dim) query's layout and `.transpose(1, 2).contiguous()`
        # after it copies nothing; logsumexp is [B, L, H] memory seen as [B, H, L]
        out = B.empty(sizes, B.dtype_of(query), B.device_of(query))
        strides = B.C._tn_elementwise_strides(sizes, [query])  # empty_like's preserve_format
        if strides is not None:
            out._tn_set_geometry(sizes, strides, 0)
        bn, hn, ln = sizes[:3]
        lse = B.empty([bn, ln, hn], lse_dtype, B.device_of(query))
        lse._tn_set_geometry([bn, hn, ln], [ln * hn, 1, hn], 0)
    else:
        out = B.empty(sizes[:-1] + [value._tn_sizes[-1]], B.dtype_of(query), B.device_of(query))
        lse = B.empty(sizes[:-1], lse_dtype, B.device_of(query))
    B.launch("_scaled_dot_product_flash_attention_for_cpu", (query, key, value, dropout_p, is_causal, attn_mask, scale),
             (out, lse))
    return out, lse


@impl("_scaled_dot_product_flash_attention_for_cpu_backward")
def sdpa_flash_cpu_backward(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask=None,
                            scale=None):
    if dropout_p > 0.0:
        raise NotImplementedError("torchnative: the derivative of scaled_dot_product_attention with dropout is not "
                                  "implemented yet")
    operands = (grad_out, query, key, value, out, logsumexp) + ((attn_mask,) if attn_mask is not None else ())
    if query._tn_device_key != "cpu" or any(B.dtype_of(t) is not B.F32 for t in operands):
        # the cpu backend's kernel is float32; other dtypes and devices compose the gradient
        return tuple(sdpa_backward_math(grad_out, query, key, value, attn_mask, is_causal, scale))
    grads = tuple(B.empty(list(t._tn_sizes), B.F32, B.device_of(t)) for t in (query, key, value))
    B.launch("_scaled_dot_product_flash_attention_for_cpu_backward",
             (grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale), grads)
    return grads


def sdpa_backward_math(grad, query, key, value, attn_mask, is_causal, scale):
    """The gradients of attention `softmax(q k^T * scale + mask) v` (key/value heads serving
    several query heads, as the forward reads them) as a composition of operators: the backward
    of every dtype and device without a fused kernel, and the one that records a graph under
    `create_graph`."""
    import torch

    q, k0, v0 = query, key, value
    groups = q.shape[-3] // k0.shape[-3] if q.dim() >= 3 and k0.dim() >= 3 else 1
    k = k0.repeat_interleave(groups, -3) if groups > 1 else k0  # grouped-query attention
    v = v0.repeat_interleave(groups, -3) if groups > 1 else v0
    sc = scale if scale is not None else 1.0 / math.sqrt(q.shape[-1])
    a = q.matmul(k.transpose(-2, -1)) * sc
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        a = a.masked_fill(torch.ones(L, S, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    if attn_mask is not None:
        a = a + attn_mask
    p = a.softmax(-1)
    p = p.masked_fill(p != p, 0)  # rows masked entirely attend to nothing (the kernel outputs zeros)
    dv = p.transpose(-2, -1).matmul(grad)
    dp = grad.matmul(v.transpose(-2, -1))
    da = p * (dp - (dp * p).sum(-1, keepdim=True))
    dq = da.matmul(k) * sc
    dk = da.transpose(-2, -1).matmul(q) * sc
    if groups > 1:  # each key/value head's gradient is the sum over the query heads it served
        shape = list(k0.shape[:-3]) + [k0.shape[-3], groups] + list(k0.shape[-2:])
        dk, dv = dk.reshape(shape).sum(-3), dv.reshape(shape[:-1] + [v0.shape[-1]]).sum(-3)
    return dq, dk, dv


def gqa_expand(query, kv):
    """Grouped-query attention: each key/value head serves query_heads / kv_heads query heads
    (upstream's fused CPU kernel takes the smaller tensors as they are; ours sees them repeated)."""
    if len(kv._tn_sizes) < 3 or len(query._tn_sizes) < 3:
        return kv
    hq, hk = query._tn_sizes[-3], kv._tn_sizes[-3]
    if hq == hk:
        return kv
    if hk == 0 or hq % hk:
        raise RuntimeError(f"number of heads in key/value ({hk}) must divide the number of heads in query ({hq})")
    return _door("repeat_interleave.self_int", kv, hq // hk, -3, None)


def _bool_mask_to_float(attn_mask, dtype):
    # upstream's convert_boolean_attn_mask: where(mask, 0, -inf), its two scalars made in the
    # order (and with the options) its compiled code makes them, which export graphs show
    import torch

    dev = B.device_of(attn_mask)
    neg_inf = B.call("scalar_tensor", float("-inf"), dtype, device=dev)
    zero = _door("scalar_tensor", 0.0, dtype, torch.strided, dev, None)
    return _door("where.self", attn_mask, zero, neg_inf)


def _flash_applies(q, k, v, attn_mask, dropout_p, enable_gqa):
    """upstream's CPU backend choice (sdp_utils_cpp.cpp use_flash_attention_cpp): the fused kernel
    for 4-d dense inputs with matching batch sizes and heads (GQA when enabled), equal head sizes,
    non-empty sequences, unit last-dim strides, a 2-d or 4-d mask that broadcasts without needing
    a gradient, and no dropout; the math composite otherwise."""
    qs, ks, vs = q._tn_sizes, k._tn_sizes, v._tn_sizes
    if dropout_p > 0.0 or not (len(qs) == len(ks) == len(vs) == 4):
        return False
    if not (qs[0] == ks[0] == vs[0]):
        return False
    if enable_gqa:
        if ks[1] != vs[1] or not ks[1] or qs[1] % ks[1]:
            return False
    elif not (qs[1] == ks[1] == vs[1]):
        return False
    if not (qs[-1] == ks[-1] == vs[-1]) or not qs[-2] or not ks[-2]:
        return False
    if attn_mask is not None:
        ms = attn_mask._tn_sizes
        if attn_mask.requires_grad or len(ms) not in (2, 4) or ms[-2] not in (qs[2], 1) or ms[-1] not in (ks[2], 1):
            return False
        if len(ms) == 4 and (ms[0] not in (1, qs[0]) or ms[1] not in (1, qs[1])):
            return False
    return all(t._tn_strides[-1] == 1 for t in (q, k, v))


def _validate_sdpa_input(query, key, value, attn_mask):
    """upstream's validate_sdpa_input, in its order: one dtype, one device type, at least 2 dims,
    a mask of bool, float or the query's dtype."""
    q, k, v = (B.dtype_of(t) for t in (query, key, value))
    if not (q is k and k is v):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{B.cpp_type_name(q)} key.dtype: {B.cpp_type_name(k)} and value.dtype: "
                           f"{B.cpp_type_name(v)} instead.")
    devs = [t._tn_device_key for t in (query, key, value)]
    if len(set(devs)) > 1:
        raise RuntimeError("Expected query, key, and value to have the same device type, but got query.device: "
                           f"{devs[0]} key.device: {devs[1]} and value.device: {devs[2]} instead.")
    dims = [len(t._tn_sizes) for t in (query, key, value)]
    if min(dims) < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
                           f"{dims[0]} key.dim: {dims[1]} and value.dim: {dims[2]} instead.")
    if attn_mask is not None:
        m = B.dtype_of(attn_mask)
        if m is not B.BOOL and m is not B.F32 and m is not q:
            raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query dtype, but got "
                               f"attn_mask.dtype: {B.cpp_type_name(m)} and  query.dtype: {B.cpp_type_name(q)} "
                               "instead.")


@impl("scaled_dot_product_attention")
def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False):
    _validate_sdpa_input(query, key, value, attn_mask)
    if not _flash_applies(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _door("_scaled_dot_product_attention_math", query, key, value, attn_mask, dropout_p, is_causal, None,
                     scale, enable_gqa)[0]
    if attn_mask is not None and B.dtype_of(attn_mask) is B.BOOL:
        attn_mask = _bool_mask_to_float(attn_mask, B.dtype_of(query))
    return _door("_scaled_dot_product_flash_attention_for_cpu", query, key, value, dropout_p, is_causal, attn_mask, scale)[0]


@impl("_scaled_dot_product_attention_math")
def sdpa_math(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, dropout_mask=None, scale=None,
              enable_gqa=False):
    """upstream's composite (attention.cpp): q and k each scaled by sqrt(scale), matmul, mask,
    _safe_softmax, dropout, matmul."""
    if dropout_mask is not None:
        raise NotImplementedError("aten._scaled_dot_product_attention_math with dropout_mask is not implemented yet")
    neg = scale is not None and scale < 0
    e = query._tn_sizes[-1]
    factor = (abs(scale) if scale is not None else 1.0 / math.sqrt(e)) ** 0.5
    q = _door("mul.Scalar", query, -factor if neg else factor)
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
        L, S = query._tn_sizes[-2], key._tn_sizes[-2]
        ones = B.call("ones", [L, S], B.BOOL, device=B.device_of(query))
        attn_mask = _door("tril", ones, 0)
    if attn_mask is not None and B.dtype_of(attn_mask) is B.BOOL:
        attn_mask = _bool_mask_to_float(attn_mask, B.dtype_of(query))
    if enable_gqa:
        # key and value repeat each to the query's heads by their own factor (upstream's
        # pre_process_group_query_attention_input: they may differ, e.g. NeMo's diarization)
        hq, hk, hv = query._tn_sizes[-3], key._tn_sizes[-3], value._tn_sizes[-3]
        if hq != hk:
            key = _door("repeat_interleave.self_int", key, hq // hk, -3, None)
        if hq != hv:
            value = _door("repeat_interleave.self_int", value, hq // hv, -3, None)
    kt = _door("mul.Scalar", _door("transpose.int", key, -2, -1), factor)
    attn = _door("matmul", q, kt)
    if attn_mask is not None:
        attn = _door("add.Tensor", attn, attn_mask, 1)
    attn = _door("_safe_softmax", attn, -1, None)
    if dropout_p > 0.0:
        attn = _door("dropout", attn, dropout_p, True)
    return _door("matmul", attn, value), attn


@impl("_native_multi_head_attention")
def native_mha(query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight, proj_bias, mask=None,
               need_weights=True, average_attn_weights=True, mask_type=None):
    """nn.MultiheadAttention's inference fast path (batch_first), as a composition: project,
    split heads, scale q by 1/sqrt(head_dim), softmax(q k^T + mask) v, merge, project."""
    b, lq, _ = query._tn_sizes
    lk = key._tn_sizes[1]
    dh = embed_dim // num_head
    w_q, w_k, w_v = _door("split.Tensor", qkv_weight, embed_dim, 0)
    b_q, b_k, b_v = _door("split.Tensor", qkv_bias, embed_dim, 0)

    def heads(x, w, bias, length):
        y = _door("linear", x, w, bias)
        return _door("transpose.int", _door("view", y, [b, length, num_head, dh]), 1, 2)

    q = _door("div.Tensor", heads(query, w_q, b_q, lq), B.C._tn_scalar_to_tensor(float(dh) ** 0.5))
    k, v = heads(key, w_k, b_k, lk), heads(value, w_v, b_v, lk)
    scores = _door("matmul", q, _door("transpose.int", k, -2, -1))
    if mask is not None:
        m = mask
        if B.dtype_of(m) is B.BOOL:
            zero = B.call("zeros_like", m, B.dtype_of(scores))
            m = _door("masked_fill.Scalar", zero, m, float("-inf"))
        if mask_type == 1 and len(m._tn_sizes) == 2:  # key padding mask (B, Lk)
            m = _door("view", m, [b, 1, 1, lk])
        scores = _door("add.Tensor", scores, m, 1)
    attn = _door("softmax.int", scores, -1, None)
    out = _door("matmul", attn, v)
    out = _door("reshape", _door("transpose.int", out, 1, 2), [b, lq, embed_dim])
    out = _door("linear", out, proj_weight, proj_bias)
    if not need_weights:
        return out, B.empty([0], B.dtype_of(query), B.device_of(query))
    weights = _door("mean.dim", attn, [1], False, None) if average_attn_weights else attn
    return out, weights
