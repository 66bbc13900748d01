"""Argument checks, result dtypes and edge values that the differential fuzzer (tools/fuzz_ops.py)
found ours answering differently from upstream: out= dtypes upstream demands, the order of its
checks (a dim wrapped before the dtypes are looked at), index dtypes, binary search on unsorted
sequences, single-element norms, upstream's in-place compositions. Deterministic inputs only.
Run on whichever torch runs this file; writes each case's outcome as JSON.

    python tests/programs/argument_checks_cases.py OUT.json

tests/test_argument_checks.py runs it on ours and on upstream and compares.
"""

import sys
import warnings

import torch
import torch.nn.functional as F
from case_outcomes import write_outcomes

warnings.simplefilter("ignore")
A = torch.ops.aten
x = torch.arange(12.).reshape(3, 4)
i = torch.tensor([[0, 2, 1], [2, 0, 1]])
nan, inf = float("nan"), float("inf")
seq = torch.tensor([[3, -1, 4, 1, 5, -9, 2], [6, 5, 3, 5, 8, -9, 7]], dtype=torch.int32)  # unsorted
vals = torch.tensor([[3, 6, -2, 0, 5], [1, 9, -9, 4, 2]])

CASES = {
    # reductions over nothing / a single element
    "all_dims_empty": lambda: A.all.dims(torch.tensor([[1, 0, 2]]), [], True),
    "any_dims_empty": lambda: A.any.dims(torch.tensor([[1, 0, 2]]), [], False),
    "norm_single_1e30_bf16": lambda: torch.linalg.vector_norm(torch.tensor(1e30, dtype=torch.bfloat16), 3),
    "norm_single_neg_p": lambda: torch.norm(torch.tensor(0.99, dtype=torch.bfloat16), -2147483648, dtype=torch.bfloat16),
    "norm_kept_1e20": lambda: torch.linalg.vector_norm(torch.tensor([[1e20], [3.0]]), 2, 1),
    "norm_ord0_single": lambda: torch.linalg.vector_norm(torch.tensor([[0.0], [3.0]]), 0, 1, True),
    "norm_int_input": lambda: torch.linalg.vector_norm(torch.ones(3, dtype=torch.int64)),
    "norm_dtype_int": lambda: torch.linalg.vector_norm(x, 2, dtype=torch.int8),
    "norm_dtype_narrowing": lambda: torch.linalg.vector_norm(x.double(), dtype=torch.float32),
    "norm_dtype_complex": lambda: torch.linalg.vector_norm(x, dtype=torch.complex64),
    "norm_dim_before_dtype": lambda: A.norm.ScalarOpt_dim_dtype(torch.ones(2).double(), 3, [-2], True, dtype=torch.float16),
    "nanmean_int": lambda: torch.nanmean(torch.ones(3, dtype=torch.int32)),
    "nanmean_dtype": lambda: A.nanmean(torch.tensor(1., dtype=torch.float64), [0], False, dtype=torch.uint8),
    # result dtypes
    "xlogy_scalar_self_bf16": lambda: torch.xlogy(-2, torch.tensor(3., dtype=torch.bfloat16)),
    "xlogy_denormal_other": lambda: torch.xlogy(torch.tensor(-2.26, dtype=torch.float64), 1e-310),
    "xlog1py_bool_other": lambda: torch.special.xlog1py(torch.tensor([1.], dtype=torch.bfloat16), True),
    "logaddexp_bf16_u8": lambda: torch.logaddexp(torch.tensor([1.], dtype=torch.bfloat16), torch.tensor([0], dtype=torch.uint8)),
    "logaddexp2_bf16_u8": lambda: torch.logaddexp2(torch.tensor([1.], dtype=torch.bfloat16), torch.tensor([0], dtype=torch.uint8)),
    "bce_logits_f16_target": lambda: F.binary_cross_entropy_with_logits(torch.tensor([0.3, 0.2]), torch.tensor([1., 0.], dtype=torch.float16)),
    "bce_logits_pos_weight": lambda: F.binary_cross_entropy_with_logits(x, x / 12, pos_weight=torch.tensor([1., 2., 3., 4.])),
    "randint_dtype_none": lambda: str(A.randint.low(-2, 2, [0], dtype=None).dtype),
    "randint_default": lambda: str(torch.randint(-2, 2, (0,)).dtype),
    "native_dropout_empty": lambda: A.native_dropout(torch.empty(0, 2, dtype=torch.bfloat16), 0.5, None),
    # edge values
    "where_0dim": lambda: torch.where(torch.tensor(1.0)),
    "rfftfreq_negative_n": lambda: torch.fft.rfftfreq(-1, 1e-310, dtype=torch.float16),
    "threshold_nan": lambda: torch.threshold(torch.tensor([nan, 1.0, -5.0]), -1.663, inf),
    "diagflat_meta": lambda: str(torch.diagflat(torch.empty(0, device="meta", dtype=torch.float64), 1).device),
    "linspace_out_resized": lambda: torch.linspace(0, 1, 3, out=torch.empty(3, 2, 1, dtype=torch.float16)),
    "resize_as_same_size": lambda: torch.arange(6, dtype=torch.int8)[::2].clone().resize_as_(torch.empty(3, dtype=torch.int8)),
    "unique_consecutive_no_counts": lambda: A.unique_consecutive(torch.tensor([[4, 0], [0, 1]], dtype=torch.uint8), True, False, None),
    "log_sigmoid_grad_at_0": lambda: _grad(F.logsigmoid, torch.tensor([0., 1., -30.])),
    "bce_grad_at_0": lambda: _grad(lambda t: F.binary_cross_entropy_with_logits(t, torch.full((3,), 0.3)), torch.tensor([0., 1., -3.])),
    "log_sigmoid_int": lambda: F.logsigmoid(torch.ones(2, dtype=torch.int64)),
    "log_sigmoid_forward_buffer": lambda: A.log_sigmoid_forward(torch.tensor([1.53, -2.0, 0.0], dtype=torch.bfloat16)),
    "trapz_empty_int8": lambda: torch.trapz(torch.ones(0, dtype=torch.int8), dx=nan),
    "trapz_empty_int16_x": lambda: torch.trapz(torch.ones(0, 3, dtype=torch.int16), torch.ones(0, 3, dtype=torch.int16), dim=0),
    # binary search as upstream's (on sequences that are not sorted, too)
    "searchsorted_unsorted": lambda: torch.searchsorted(seq, vals.to(torch.int32)),
    "searchsorted_right_promote": lambda: torch.searchsorted(seq, vals.double(), right=True),
    "searchsorted_1d": lambda: torch.searchsorted(seq[0], vals),
    "searchsorted_sorter": lambda: torch.searchsorted(seq[0], vals, sorter=torch.argsort(seq[0], stable=True), side="right"),
    "searchsorted_scalar": lambda: torch.searchsorted(seq[0], 2.5),
    "searchsorted_nan": lambda: torch.searchsorted(torch.tensor([1., nan, 3.]), torch.tensor([nan, 2.])),
    "searchsorted_side": lambda: A.searchsorted.Scalar(torch.ones(3, 4, 1, dtype=torch.int16), False, side="trunc"),
    "searchsorted_opposites": lambda: torch.searchsorted(torch.ones(3), torch.ones(3), side="left", right=True),
    "searchsorted_sorter_dtype": lambda: torch.searchsorted(torch.ones(3), torch.ones(3), sorter=torch.zeros(3, dtype=torch.int32)),
    "searchsorted_scalar_2d": lambda: torch.searchsorted(torch.ones(2, 3), 1.0),
    "searchsorted_dims": lambda: torch.searchsorted(torch.ones(2, 3), torch.ones(3, 3)),
    "bucketize_2d": lambda: A.bucketize.Tensor(torch.ones(3, 2, 4, dtype=torch.int32), torch.ones(3, 2, 4, dtype=torch.int32)),
    "bucketize_strided": lambda: torch.bucketize(0, torch.tensor([-3., -1., -0.5, 0.2, 1., 2.])[::2]),
    # out= dtypes upstream demands
    "signbit_out": lambda: torch.signbit(torch.tensor([1, -2], dtype=torch.int8), out=torch.empty(2, dtype=torch.float64)),
    "isneginf_out": lambda: torch.isneginf(x, out=torch.empty(3, 4)),
    "any_out_bf16": lambda: torch.any(torch.ones(3, 4, dtype=torch.int64), out=torch.empty(3, 4, dtype=torch.bfloat16)),
    "all_out_before_dim": lambda: torch.all(x, 9, out=torch.empty(3, 4)),
    "any_u8_out": lambda: A.any.all_out(torch.ones(3, dtype=torch.uint8), out=torch.empty(0, dtype=torch.uint8)),
    "argmin_out": lambda: torch.argmin(torch.ones(1, 2, 3), out=torch.empty(1, 2, 3)),
    "isin_out": lambda: torch.isin(torch.tensor(1), torch.tensor([1, 2]), out=torch.empty((), dtype=torch.float64)),
    "nonzero_static_out": lambda: A.nonzero_static.out(torch.ones(1, 2, dtype=torch.uint8), size=1, fill_value=5,
                                                       out=torch.empty(1, 2, dtype=torch.uint8)),
    "nan_to_num_out": lambda: torch.nan_to_num(torch.ones(4).bfloat16(), 0.0, None, 1.4, out=torch.empty(4).half()),
    "aminmax_out": lambda: torch.aminmax(torch.ones(3), out=(torch.empty(0, dtype=torch.int64), torch.empty(0))),
    "cumprod_out_casts": lambda: torch.cumprod(x, 0, out=torch.empty(3, dtype=torch.int64)),
    "cumsum_out_dtype": lambda: torch.cumsum(torch.ones(3), 0, dtype=torch.float64, out=torch.empty(3)),
    "cumsum_inplace_dtype": lambda: A.cumsum_(torch.ones(1), -1, dtype=torch.int8),
    "cumprod_inplace_dim_first": lambda: A.cumprod_(torch.ones(3, 3, dtype=torch.bool), 9, dtype=torch.int16),
    "fft_out_real": lambda: torch.fft.fft(x, out=torch.empty(3, 4)),
    "hfft_out_complex": lambda: torch.fft.hfft(x, out=torch.empty(3, 4, dtype=torch.complex64)),
    "fft_out_complex128": lambda: torch.fft.fft(x, out=torch.empty(3, 4, dtype=torch.complex128)),
    "fft2_dim_first": lambda: A.fft_fft2.out(torch.ones(3, dtype=torch.int8), [-1], [3], "none",
                                             out=torch.empty(3, dtype=torch.int8)),
    "logsumexp_out_int": lambda: torch.logsumexp(x, 9, out=torch.empty(3, dtype=torch.int64)),
    "cummax_out_indices": lambda: torch.cummax(x, 9, out=(torch.empty(3, 4), torch.empty(3, 4))),
    "cummax_out_values": lambda: torch.cummax(x, 9, out=(torch.empty(3, 4, dtype=torch.float64), torch.empty(3, 4, dtype=torch.int64))),
    "logcumsumexp_out": lambda: torch.logcumsumexp(x, 9, out=torch.empty(3, 4, dtype=torch.float64)),
    "floor_out_dtype": lambda: torch.floor(x.double(), out=torch.empty(3, 4)),
    "abs_out_u8": lambda: torch.abs(torch.ones(2, dtype=torch.uint8), out=torch.empty(2, dtype=torch.float64)),
    "clamp_min_out_dtype": lambda: torch.clamp_min(x.bfloat16(), 0.5, out=torch.empty(3, 4, dtype=torch.float64)),
    "clamp_tensor_out_promotes": lambda: torch.clamp(x, torch.zeros(4, dtype=torch.float64), out=torch.empty(3, 4, dtype=torch.float64)),
    "gelu_out_dtype": lambda: A.gelu.out(x.double(), out=torch.empty(3, 4)),
    "sin_out_promotes": lambda: torch.sin(x, out=torch.empty(3, 4, dtype=torch.float64)),
    "out_expanded": lambda: torch.cos(x, out=torch.empty(3, 1).expand(3, 4)),
    "out_alias_broadcast": lambda: (lambda a: torch.atan2(a, torch.ones(2, 2, 3), out=a))(torch.ones(3)),
    "out_alias_same_shape": lambda: (lambda a: torch.add(a, 1, out=a))(torch.ones(3)),
    "quantile_out_dtype": lambda: torch.quantile(x, 0.5, 9, out=torch.empty(3, dtype=torch.float64)),
    # checks and their order
    "lerp_end_dtype": lambda: A.lerp.Scalar(torch.ones(3).half(), torch.ones(3, dtype=torch.int8), -2.8),
    "lerp_weight_dtype": lambda: A.lerp.Tensor(torch.ones(3).half(), torch.ones(3).half(), torch.ones(3)),
    "bernoulli_p_range": lambda: torch.bernoulli(torch.full((2,), -1., dtype=torch.float64)),
    "bernoulli_out_p_range": lambda: torch.bernoulli(torch.full((2,), 1e30, dtype=torch.float64), out=torch.empty(2, dtype=torch.float64)),
    "outer_3d": lambda: torch.outer(torch.ones(3, 3, 2), torch.ones(1)),
    "ger_0d": lambda: torch.ger(torch.tensor(1.), torch.ones(2)),
    "replication_pad1d_1d": lambda: A.replication_pad1d(torch.ones(2).bfloat16(), [1, 2]),
    "reflection_pad1d_too_big": lambda: A.reflection_pad1d(torch.ones(2, 3), [3, 1]),
    "replication_pad1d_too_small": lambda: A.replication_pad1d(torch.ones(2, 3), [-2, -1]),
    "reflection_pad1d_pad_len": lambda: A.reflection_pad1d(torch.ones(2, 3), [1]),
    "replication_pad2d_zero": lambda: A.replication_pad2d(torch.ones(2, 0, 3), [1, 1, 1, 1]),
    "replication_pad2d_batch0": lambda: list(A.replication_pad2d(torch.ones(0, 2, 3, 4), [1, 1, 1, 1]).shape),
    "reflection_pad3d": lambda: A.reflection_pad3d(torch.arange(120.).reshape(2, 3, 4, 5), [1, 1, 1, 1, 1, 1]),
    "isclose_rtol": lambda: torch.isclose(torch.ones(1, 1), torch.ones(1, 1), -1.2, -2.9),
    "isclose_atol": lambda: torch.isclose(torch.ones(1, 1), torch.ones(1, 1), 1.2, -2.9),
    "isclose_dtypes": lambda: torch.isclose(torch.ones(1), torch.ones(1, dtype=torch.float64)),
    "allclose_rtol": lambda: torch.allclose(torch.ones(1, 1), torch.ones(1, 1), -1.2, 2.9),
    "split_0d": lambda: torch.split(torch.tensor(1.), 1),
    "split_sizes_0d": lambda: A.split_with_sizes(torch.tensor(1.), []),
    "tensor_split_0d": lambda: torch.tensor_split(torch.tensor(1.), 2),
    "tensor_split_zero_sections": lambda: torch.tensor_split(torch.ones(3), 0),
    "unflatten_empty": lambda: A.unflatten.int(torch.tensor(1.), -1, []),
    "narrow_negative_length": lambda: torch.narrow(torch.ones(1), 1, 2, -2),
    "inplace_broadcast_bigger": lambda: A.lt_.Tensor(torch.tensor(1.), torch.ones(2)),
    "copy_broadcast_mismatch": lambda: A.copy(torch.ones(3), torch.ones(1, 1, 4, dtype=torch.float16)),
    "addbmm_ranks": lambda: torch.addbmm(torch.tensor(1.), torch.ones(3), torch.tensor(1)),
    "gather_dim_first": lambda: torch.gather(x, 3, torch.ones(3, 3)),
    "unfold_dim_first": lambda: torch.ones(1).unfold(3, -1, -2),
    "scatter_reduce_dim_first": lambda: torch.scatter_reduce(x, -4, i, x, "none"),
    "binary_0d_meta": lambda: str((torch.tensor(1.) + torch.tensor(2., device="meta")).device),
}


def _grad(f, at):
    t = at.clone().requires_grad_()
    f(t).sum().backward()
    return t.grad


for _dt in (torch.int64, torch.int32, torch.float32):
    _n = str(_dt).replace("torch.", "")
    CASES.update({
        f"scatter_{_n}": lambda d=_dt: torch.scatter(x, 1, i.to(d), torch.ones(2, 3)),
        f"scatter_add_{_n}": lambda d=_dt: torch.scatter_add(x, 0, i.to(d), torch.ones(2, 3)),
        f"scatter_value_{_n}": lambda d=_dt: torch.scatter(x, 1, i.to(d), 5.0),
        f"index_add_{_n}": lambda d=_dt: torch.index_add(x, 0, torch.tensor([0, 2]).to(d), torch.ones(2, 4)),
        f"index_fill_{_n}": lambda d=_dt: torch.index_fill(x, 1, torch.tensor([0, 2]).to(d), 7.0),
        f"take_{_n}": lambda d=_dt: torch.take(x, torch.tensor([0, 5]).to(d)),
        f"put_{_n}": lambda d=_dt: torch.put(x, torch.tensor([0, 5]).to(d), torch.tensor([9., 8.])),
    })
CASES.update({
    "scatter_out_of_bounds": lambda: torch.scatter(x, 1, torch.tensor([[0, 4]]), torch.ones(1, 2)),
    "scatter_negative_index": lambda: torch.scatter(x, 1, torch.tensor([[0, -1]]), torch.ones(1, 2)),
    "scatter_index_too_big": lambda: torch.scatter(x, 1, torch.tensor([[0, 1, 2, 3, 0]]), torch.ones(1, 5)),
    "scatter_src_too_small": lambda: torch.scatter(x, 1, torch.tensor([[0, 1]]), torch.ones(1, 1)),
    "scatter_src_dtype": lambda: torch.scatter(x, 1, torch.tensor([[0, 1]]), torch.ones(1, 2, dtype=torch.float64)),
    "scatter_index_rank": lambda: torch.scatter(x, 1, torch.tensor([0, 1]), torch.ones(2)),
    "scatter_empty_index": lambda: torch.scatter(x, 1, torch.ones(0, dtype=torch.float32), torch.ones(2)),
    "scatter_0d": lambda: torch.scatter(torch.tensor(3.), 0, torch.tensor(0), torch.tensor(5.)),
    "index_add_count": lambda: torch.index_add(x, 0, torch.tensor([0]), torch.ones(2, 4)),
    "index_add_dtype": lambda: torch.index_add(x, 0, torch.tensor([0, 1]), torch.ones(2, 4, dtype=torch.float64)),
    "index_add_2d_index": lambda: torch.index_add(x, 0, torch.tensor([[0, 1]]), torch.ones(2, 4)),
    "index_add_0d_self": lambda: torch.index_add(torch.tensor(2.), 0, torch.tensor([0]), torch.tensor([1.])),
    "index_fill_2d_index": lambda: torch.index_fill(x, 1, torch.tensor([[0, 1]]), 1.0),
    "index_fill_0d": lambda: torch.index_fill(torch.tensor(2.), 0, torch.tensor([0]), 1.0),
    "put_count": lambda: torch.put(x, torch.tensor([0, 1]), torch.tensor([1.])),
    "put_dtype": lambda: torch.put(x, torch.tensor([0, 1]), torch.tensor([1., 2.], dtype=torch.float64)),
})

# A bool tensor whose bytes are not 0/1 (a view of uint8 storage): every byte other than 0 reads
# as true, and results hold 0/1 (upstream's kernels load bool as a byte and test it).
_bytes = torch.tensor([0, 1, 2, 255, 4, 0, 3, 1] * 3, dtype=torch.uint8)
_b, _t = _bytes.view(torch.bool), torch.ones(24)
CASES.update({
    "bool_bytes_float": lambda: _b.float(),
    "bool_bytes_long": lambda: _b.long(),
    "bool_bytes_sum": lambda: _b.sum(),
    "bool_bytes_not": lambda: (~_b).view(torch.uint8),
    "bool_bytes_logical_not": lambda: _b.logical_not(),
    "bool_bytes_and": lambda: (_b & _b.roll(1)).view(torch.uint8),
    "bool_bytes_xor": lambda: (_b ^ _b.roll(1)).view(torch.uint8),
    "bool_bytes_where": lambda: torch.where(_b, _t, -_t),
    "bool_bytes_masked_fill": lambda: _t.masked_fill(_b, 0),
    "bool_bytes_eq": lambda: _b == _b.roll(1),
    "bool_bytes_nonzero": lambda: _b.nonzero().flatten(),
    "bool_bytes_index": lambda: _t[_b],
    "bool_bytes_add": lambda: (_b + _b).view(torch.uint8),
    "bool_bytes_max": lambda: _b.max().view(torch.uint8),
    "bool_bytes_contiguous": lambda: _b[::2].contiguous().view(torch.uint8),
    "bool_bytes_cumsum": lambda: _b.cumsum(0),
    "bool_bytes_strided_eq": lambda: _b[::2] == _b[1::2],
    # variance of equal values is 0 however large they are (the mean is summed exactly)
    "var_equal_huge": lambda: torch.var(torch.full((16,), 1e30, dtype=torch.float64)),
    "std_equal_huge": lambda: torch.std(torch.full((5, 3), -3e200, dtype=torch.float64)),
})


def _error_type(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001  (the type is the outcome)
        return type(e).__name__
    return "no error"


# Invalid arguments that upstream refuses with a RuntimeError and our Python compositions first
# met as a builtin accident (a division by zero, an unpacking, an index): the type is compared
# (the messages are upstream's C++ checks, which ours does not all repeat).
CASES.update({
    "accident_avg_pool1d_padding": lambda: _error_type(lambda: A.avg_pool1d(torch.ones(4, 2, 4), [0], [4], [5, 2])),
    "accident_max_pool2d_0d": lambda: _error_type(lambda: A.max_pool2d(torch.tensor(1.), [-1, 1], [0, 3], [3, 1])),
    "accident_lu_unpack_1d": lambda: _error_type(lambda: torch.lu_unpack(torch.ones(3), torch.ones(3))),
    "accident_col2im_dilation": lambda: _error_type(lambda: A.col2im(torch.ones(1), [-1, 3], [1, 1], [], [-2, -1], [2, -2])),
    "accident_range_nan": lambda: _error_type(lambda: A.range.out(nan, True, out=torch.empty(4, dtype=torch.int8))),
})

# The conjugate transposes conjugate (ours has no conjugate bit: the result is a copy).
_z = torch.tensor([[1 + 2j, 3 - 1j, 0.5j], [2, -1j, 1 + 1j]])
CASES.update({
    "mH_complex": lambda: _z.mH,
    "H_complex": lambda: _z.H,
    "adjoint_complex_batched": lambda: torch.stack([_z, 2 * _z]).adjoint(),
    "mH_0d": lambda: torch.tensor(1 + 1j).mH,
    "mT_0d": lambda: torch.tensor(2.0).mT,
    "H_3d": lambda: torch.stack([_z, _z]).H,
    "mH_1d": lambda: _z[0].mH,
    "adjoint_1d": lambda: _z[0].adjoint(),
    "mH_real": lambda: x.mH,
})


def _seeded(f):
    torch.manual_seed(7)
    return f()


def _generator():
    return torch.Generator().manual_seed(11)


def _renormed(rows, indices, max_norm, p):
    w = torch.tensor(rows)
    torch.embedding_renorm_(w, indices, max_norm, p)
    return w


# out= forms of factories: out's dtype and device fill a resized out (no deprecation warning);
# the generated `*_like`/window forms demand the functional's dtype, which is out's
CASES.update({
    "zeros_out_resized": lambda: torch.zeros(4, out=torch.empty(2, 3)),
    "ones_out_int32": lambda: torch.ones(3, 2, out=torch.empty(2, dtype=torch.int32)),
    "full_out_int64": lambda: torch.full((2,), 2.5, out=torch.empty(2, dtype=torch.int64)),
    "eye_out": lambda: torch.eye(3, out=torch.empty(1)),
    "eye_m_out_negative": lambda: torch.eye(-1, 2, out=torch.empty(1)),
    "rand_out_float64": lambda: _seeded(lambda: torch.rand(3, out=torch.empty(3, dtype=torch.float64))),
    "randn_generator_out": lambda: torch.randn(4, generator=_generator(), out=torch.empty(0)),
    "randint_out_int16": lambda: _seeded(lambda: torch.randint(5, (4,), out=torch.empty(0, dtype=torch.int16))),
    "randperm_out": lambda: _seeded(lambda: torch.randperm(6, out=torch.empty(6, dtype=torch.int64))),
    "fftfreq_out": lambda: torch.fft.fftfreq(5, 0.5, out=torch.empty(5, dtype=torch.float64)),
    "linspace_tensor_out": lambda: torch.linspace(torch.tensor(0.), 1., 5, out=torch.empty(5)),
    "zeros_like_out": lambda: A.zeros_like.out(torch.ones(2, dtype=torch.int64), out=torch.empty(2)),
    "full_like_out_bool": lambda: A.full_like.out(x, 1, out=torch.empty(3, 4, dtype=torch.bool)),
    "new_ones_out_int8": lambda: A.new_ones.out(x, [2], out=torch.empty(2, dtype=torch.int8)),
    "hann_window_out_float64": lambda: A.hann_window.out(4, out=torch.empty(4, dtype=torch.float64)),
    "rfftfreq_zero": lambda: torch.fft.rfftfreq(0),
    "fftfreq_zero": lambda: torch.fft.fftfreq(0),
    # the generator overloads of the `*_like` random factories
    "rand_like_generator": lambda: A.rand_like.generator(x, generator=_generator()),
    "randn_like_generator": lambda: A.randn_like.generator(x, generator=_generator(), dtype=torch.float64),
    "randint_like_generator": lambda: A.randint_like.generator(x, 10, generator=_generator()),
    "randint_like_low_generator": lambda: A.randint_like.low_generator_dtype(x, -3, 3, generator=_generator()),
    "randint_like_tensor_high": lambda: _seeded(lambda: torch.randint_like(x, torch.tensor(4))),
    "randint_like_tensor_high_1d": lambda: torch.randint_like(x, torch.tensor([4])),
    # bernoulli with a probability tensor draws in p's type; a float p fills a fresh tensor
    "bernoulli_p": lambda: _seeded(lambda: A.bernoulli.p(torch.ones(8), 0.5)),
    "bernoulli_p_out_of_range": lambda: A.bernoulli.p(torch.ones(2), 1.5),
    "bernoulli_tensor_into_int": lambda: _seeded(lambda: torch.empty(8, dtype=torch.int64).bernoulli_(
        torch.full((8,), 0.5, dtype=torch.float64))),
    "bernoulli_tensor_broadcast": lambda: _seeded(lambda: torch.empty(2, 4).bernoulli_(torch.tensor([0.1, 0.9, 0.5, 0.3]))),
    "bernoulli_tensor_int_p": lambda: _error_type(lambda: torch.empty(2).bernoulli_(torch.ones(2, dtype=torch.int64))),
    "bernoulli_functional_tensor": lambda: _seeded(lambda: A.bernoulli.Tensor(torch.zeros(4), torch.full((4,), 0.7))),
    # nextafter promotes its operands like any binary operator, floating types only
    "nextafter_mixed": lambda: torch.nextafter(torch.tensor([1., 2.]), torch.tensor([3.], dtype=torch.float64)),
    "nextafter_half_bf16": lambda: torch.nextafter(torch.tensor([1., 2.], dtype=torch.float16),
                                                   torch.tensor([3.], dtype=torch.bfloat16)),
    "nextafter_int": lambda: torch.nextafter(torch.tensor([1, 2]), torch.tensor([3])),
    # embedding_renorm_: distinct rows in sorted order, scaled by max_norm / (norm + 1e-7)
    "embedding_renorm": lambda: _renormed([[3., 4.], [1., 0.], [6., 8.]], torch.tensor([[2, 0], [2, 2]]), 1.0, 2.0),
    "embedding_renorm_p1": lambda: A.embedding_renorm(torch.tensor([[3., 4.], [1., 0.]]), torch.tensor([0]), 0.5, 1.0),
    "embedding_renorm_3d": lambda: torch.embedding_renorm_(torch.ones(2, 2, 2), torch.tensor([0]), 1.0, 2.0),
    "embedding_renorm_float_indices": lambda: torch.embedding_renorm_(torch.ones(3, 2), torch.tensor([1.]), 1.0, 2.0),
    "embedding_bool_indices": lambda: torch.embedding(torch.ones(3, 2), torch.tensor([True])),
    "embedding_bf16_indices": lambda: torch.embedding(torch.ones(3, 2), torch.tensor([1.], dtype=torch.bfloat16)),
    # runtime assertions export graphs carry
    "assert_async_msg": lambda: A._assert_async.msg(torch.tensor(0), "boom"),
    "assert_async_two": lambda: A._assert_async(torch.tensor([1, 1])),
    "assert_async_zero": lambda: A._assert_async(torch.tensor(0.)),
    "assert_scalar": lambda: A._assert_scalar(0, "bad"),
    "functional_assert_scalar": lambda: A._functional_assert_scalar(1, "x", torch.ones(2)),
    "constrain_range_order": lambda: A.sym_constrain_range(5, min=6, max=3),
    "constrain_range_outside": lambda: A.sym_constrain_range(5, min=6),
    "constrain_range_for_size_max": lambda: A.sym_constrain_range_for_size(5, max=2),
    "constrain_range_for_size_negative": lambda: A.sym_constrain_range_for_size(-1),
    "make_dep_token": lambda: list(A._make_dep_token().shape),
    "nonzero_numpy": lambda: A.nonzero_numpy(torch.tensor([[0, 1], [1, 1]])),
    "nonzero_numpy_0d": lambda: A.nonzero_numpy(torch.tensor(3)),
    "slice_inverse": lambda: A.slice_inverse(x * 2, x[:, 1:3], 1, 1, 3, 1),
    # the out_dtype overloads have CUDA kernels only: CPU calls refuse (upstream's decomposition
    # for the operator would bind out_dtype to beta)
    "baddbmm_dtype_cpu": lambda: _error_type(lambda: A.baddbmm.dtype(torch.ones(1, 2, 2), torch.ones(1, 2, 2),
                                                                      torch.ones(1, 2, 2), torch.float32)),
    "mm_dtype_out_cpu": lambda: _error_type(lambda: A.mm.dtype_out(torch.ones(2, 2), torch.ones(2, 2), torch.float32,
                                                                    out=torch.empty(2, 2))),
})

# unique along a dimension: slices sorted lexicographically (or kept in order), grouped where a
# slice differs from the one before
_rows = torch.tensor([[3, 1, 2], [1, 2, 0], [3, 1, 2], [0, 5, 5]])
CASES.update({
    "unique_dim0": lambda: torch.unique(_rows, dim=0, return_inverse=True, return_counts=True),
    "unique_dim1": lambda: torch.unique(_rows, dim=1, return_inverse=True, return_counts=True),
    "unique_dim_float": lambda: A.unique_dim(_rows.float(), 0),
    "unique_dim_bool": lambda: torch.unique(torch.tensor([[True, False], [True, False]]), dim=0),
    "unique_dim_nan_rows": lambda: A.unique_dim(torch.tensor([[nan, 1.], [nan, 1.]]), 0, True, True, True),
    "unique_dim_consecutive": lambda: A.unique_dim_consecutive(torch.tensor([[1, 1], [1, 1], [2, 0], [1, 1]]), 0, True, True),
    "unique_consecutive_dim1": lambda: torch.unique_consecutive(_rows, dim=1, return_counts=True),
    "unique_consecutive_1d_dim0": lambda: torch.unique_consecutive(torch.tensor([1, 1, 2]), dim=0, return_inverse=True),
    "unique_dim_0d": lambda: A.unique_dim(torch.tensor(3.), 0),
    "unique_dim_out_of_range": lambda: A.unique_dim(_rows, 2),
    "unique_dim_empty_selected": lambda: A.unique_dim(torch.ones(0, 3), 0),
    "unique_dim_empty_other": lambda: A.unique_dim(torch.ones(0, 3), 1),
    "unique_dim_two_empty": lambda: A.unique_dim(torch.ones(0, 0), 1),
    "unique_dim_complex": lambda: A.unique_dim(torch.ones(2, 2, dtype=torch.complex64), 1),
    # set_'s functional forms, and its refusal of another dtype (upstream's functional form reads
    # the other dtype's bytes as its own instead: ours refuses there too)
    "set_source_tensor": lambda: A.set.source_Tensor(torch.ones(2), x),
    "set_empty": lambda: A.set(torch.ones(2)),
    "set_source_storage": lambda: A.set.source_Storage(torch.ones(2), x.untyped_storage()),
    "set_source_storage_offset": lambda: A.set.source_Storage_storage_offset(torch.ones(2), x.untyped_storage(), 1,
                                                                            [2, 2], [2, 1]),
    "set__other_dtype": lambda: torch.ones(2, dtype=torch.int64).set_(x),
})

CASES.update({
    # repeats' dtype is dispatched on before its rank is checked; the dim wrapped before the count
    "repeat_interleave_float_repeats": lambda: torch.repeat_interleave(torch.tensor([[1.]])),
    "repeat_interleave_2d_repeats": lambda: torch.repeat_interleave(torch.tensor([[1]])),
    "repeat_interleave_bool_repeats": lambda: torch.repeat_interleave(torch.tensor([True, False])),
    "repeat_interleave_dim_before_count": lambda: torch.repeat_interleave(x, -3, dim=-3),
    # sparse-result products on strided tensors
    "sspaddmm_dense": lambda: torch.sspaddmm(x[:, :3], x[:, :3], x[:3]),
    "smm_dense": lambda: torch.smm(x[:, :3], x[:3]),
})


def _nonzero_into(out):
    r = torch.nonzero(torch.tensor([0, 1, 1]), out=out)
    return r, out, r is out


CASES.update({
    # subtraction refuses any bool operand, a number True included (upstream's sub_check)
    "sub_bool_tensor": lambda: torch.tensor([1, 2]) - torch.tensor([True, False]),
    "sub_bool_self_number": lambda: torch.tensor([True]) - 1,
    "sub_number_true": lambda: torch.tensor([1, 2]) - True,
    "rsub_true": lambda: torch.rsub(torch.tensor([1, 2]), True),
    "sub_two_bools": lambda: torch.tensor([True]) - torch.tensor([True]),
    # torch.nonzero(out=) writes into out (it was ignored)
    "nonzero_out": lambda: _nonzero_into(torch.empty(0, dtype=torch.int64)),
    "nonzero_out_half": lambda: _nonzero_into(torch.empty(0, dtype=torch.float16)),
    "nonzero_out_as_tuple": lambda: torch.nonzero(torch.ones(2), out=torch.empty(0, dtype=torch.int64), as_tuple=True),
    # argument checks in upstream's order and words
    "meshgrid_dtypes": lambda: torch.meshgrid(torch.ones(2), torch.ones(2, dtype=torch.float64), indexing="ij"),
    "meshgrid_dtypes_before_dims": lambda: torch.meshgrid(torch.ones(2, 2), torch.ones(2, dtype=torch.float64),
                                                          indexing="ij"),
    "cdist_1d_x1": lambda: torch.cdist(torch.ones(3), torch.ones(2, 3)),
    "cdist_1d_x2": lambda: torch.cdist(torch.ones(2, 3), torch.ones(3)),
    "cdist_columns": lambda: torch.cdist(torch.ones(2, 3), torch.ones(2, 4)),
    "cdist_int": lambda: torch.cdist(torch.ones(2, 3, dtype=torch.int64), torch.ones(2, 3, dtype=torch.int64)),
    "cdist_negative_p": lambda: torch.cdist(torch.ones(2, 3), torch.ones(2, 3), p=-1),
    "kl_div_int_input": lambda: A.kl_div(torch.ones(3, dtype=torch.int64), torch.ones(3)),
    "kl_div_int_target": lambda: A.kl_div(torch.ones(3), torch.ones(3, dtype=torch.int64)),
    "squeeze_dims_repeated": lambda: A.squeeze.dims(torch.ones(1, 2), [1, 1]),
    "squeeze_dims_repeated_wrapped": lambda: A.squeeze.dims(torch.ones(1, 2), [0, -2]),
    "avg_pool1d_1d": lambda: A.avg_pool1d(torch.ones(4), [1]),
    "avg_pool1d_4d": lambda: A.avg_pool1d(torch.ones(1, 1, 1, 4), [1]),
    "argsort_stable_out_int16": lambda: torch.argsort(torch.ones(3), stable=True, out=torch.empty(3, dtype=torch.int16)),
    "float_power_out_float": lambda: torch.float_power(torch.ones(3), 2., out=torch.empty(3)),
    "float_power_out_complex64": lambda: torch.float_power(torch.ones(3), 2., out=torch.empty(3, dtype=torch.complex64)),
    "frexp_out_float_exponent": lambda: torch.frexp(torch.ones(3), out=(torch.empty(3), torch.empty(3))),
    "frexp_out_double_mantissa": lambda: torch.frexp(torch.ones(3), out=(torch.empty(3, dtype=torch.float64),
                                                                         torch.empty(3, dtype=torch.int32))),
})

CASES.update({
    # bitwise_not dispatches over integral types; neg refuses bool, in place as well
    "bitwise_not_double": lambda: torch.ones(2, dtype=torch.float64).bitwise_not(),
    "bitwise_not__empty_float": lambda: torch.ones(0, 3).bitwise_not_(),
    "bitwise_not_int_in_place": lambda: torch.tensor([5]).bitwise_not_(),
    "neg__bool": lambda: torch.tensor([True]).neg_(),
})

# activations whose upstream kernels dispatch over floating types refuse other dtypes by the
# kernel's name; hardtanh's own checks
for _act in ("silu", "hardsigmoid", "hardswish", "hardshrink", "softshrink", "mish", "gelu", "glu", "threshold",
             "hardtanh", "relu6"):
    for _dt in (torch.int32, torch.bool, torch.uint8):
        def _call(act=_act, dt=_dt):
            t = torch.ones(4, dtype=dt)
            if act == "threshold":
                return A.threshold(t, 0, 0)
            return getattr(A, act)(t)
        CASES[f"activation_{_act}_{str(_dt)[6:]}"] = _call
CASES["prelu_int"] = lambda: A.prelu(torch.ones(4, dtype=torch.int32), torch.ones(1, dtype=torch.int32))
CASES["hardtanh_uint8_negative"] = lambda: F.hardtanh(torch.ones(2, dtype=torch.uint8), -1., 6.)
CASES["hardtanh_uint8"] = lambda: F.hardtanh(torch.ones(2, dtype=torch.uint8), 0., 6.)

# nll_loss: the target's dtype is checked after the ranks, before the sizes and the weight
CASES.update({
    "nll_target_dtype_before_size_1d": lambda: A.nll_loss_forward(torch.ones(3), torch.ones(3), None, 1, -100),
    "nll_target_dtype_before_mismatch": lambda: A.nll_loss_forward(torch.ones(3, 2), torch.ones(4), None, 1, -100),
    "nll_target_dtype_before_weight": lambda: A.nll_loss_forward(torch.ones(3, 2), torch.ones(3), torch.ones(5), 1, -100),
    "nll_loss_int32_target": lambda: A.nll_loss(torch.ones(3, dtype=torch.int8), torch.ones(3, dtype=torch.int32),
                                                torch.ones(3), 1, -100),
    "nll_1d_size_long_target": lambda: A.nll_loss_forward(torch.ones(3), torch.ones(3, dtype=torch.int64), None, 1, -100),
})

# avg_pool2d's meta checks in upstream's order (sizes read before the shape is checked)
_x4 = torch.arange(32.).reshape(1, 2, 4, 4)
CASES.update({
    "avg_pool2d_2d_input": lambda: A.avg_pool2d(torch.ones(3, 1), [3, 2], [-1, 2], [0], False, False, 1),
    "avg_pool2d_zero_divisor": lambda: A.avg_pool2d(_x4, [2, 2], [], [0], False, True, 0),
    "avg_pool2d_zero_kernel": lambda: A.avg_pool2d(_x4, [0, 2]),
    "avg_pool2d_zero_stride": lambda: A.avg_pool2d(_x4, [2, 2], [0, 1]),
    "avg_pool2d_large_pad": lambda: A.avg_pool2d(_x4, [2, 2], [1, 1], [2, 0]),
    "avg_pool2d_too_small": lambda: A.avg_pool2d(_x4, [5, 5]),
    "avg_pool2d_overflow": lambda: A.avg_pool2d(_x4, [2**33]),
    "avg_pool2d_three_sizes": lambda: A.avg_pool2d(_x4, [2, 2, 2]),
    "avg_pool2d_empty_plane": lambda: A.avg_pool2d(torch.ones(2, 0, 4, 4), [2]),
    "avg_pool2d_empty_batch": lambda: A.avg_pool2d(torch.ones(0, 2, 4, 4), [2]),
    "avg_pool2d_divisor": lambda: A.avg_pool2d(_x4, [2], [1], [1], False, False, 3),
    "avg_pool2d_int32": lambda: A.avg_pool2d(_x4.int(), [2]),
    "avg_pool2d_int64": lambda: F.avg_pool2d(torch.arange(16).reshape(1, 1, 4, 4), 2),
    "avg_pool2d_stride_none": lambda: F.avg_pool2d(_x4, 2, None),
    "max_pool2d_stride_none": lambda: F.max_pool2d(_x4, 2, None, return_indices=True),
    "max_pool1d_stride_none": lambda: F.max_pool1d(_x4[0], 2, None),
})

# LAPACK-backed operators: the meta step's checks (shape before dtype where upstream's meta
# checks the shape first), then the kernel's dtype dispatch (NotImplementedError naming it),
# which most kernels skip on an empty input; lu_factor's zero pivot a RuntimeError
_L = torch.linalg


def _mat(dtype, shape):
    n = shape[-1]
    if len(shape) >= 2 and shape[-2] == n:
        return (torch.eye(n) * 2 + 1).expand(shape).to(dtype).contiguous()
    return torch.ones(shape).to(dtype)


_LAPACK_OPS = {
    "lu_factor": lambda A: _L.lu_factor(A), "lu": lambda A: _L.lu(A), "geqrf": torch.geqrf,
    "qr": lambda A: _L.qr(A), "eigh": lambda A: _L.eigh(A), "svd": lambda A: _L.svd(A),
    "torch_svd": lambda A: torch.svd(A), "cholesky": lambda A: _L.cholesky(A),
    "cholesky_legacy": lambda A: torch.cholesky(A), "cholesky_inverse": torch.cholesky_inverse,
    "solve_triangular": lambda A: _L.solve_triangular(A, A, upper=True),
    "triangular_solve": lambda A: torch.triangular_solve(A, A), "det": lambda A: _L.det(A),
    "solve": lambda A: _L.solve(A, A), "matrix_exp": lambda A: _L.matrix_exp(A),
    "matrix_rank": lambda A: _L.matrix_rank(A), "cholesky_solve": lambda A: torch.cholesky_solve(A, A),
    "householder_product": lambda A: _L.householder_product(A, A[..., 0]),
    "ormqr": lambda A: torch.ormqr(A, A[..., 0], A), "logdet": torch.logdet,
    "lu_solve": lambda A: _L.lu_solve(A, torch.ones(A.shape[:-1], dtype=torch.int32), A),
}
for _name, _f in _LAPACK_OPS.items():
    for _dt in (torch.int8, torch.float16, torch.bfloat16):
        for _shape in ((2, 2), (2, 0, 0), (2, 3), (3,)):
            if _name in ("householder_product", "ormqr", "lu_solve") and len(_shape) < 2:
                continue
            if _name == "matrix_exp" and _dt != torch.int8 and len(_shape) >= 2 and _shape[-1] == _shape[-2]:
                continue  # upstream's float16/bfloat16 matrix_exp overflows (inf/NaN); ours refuses them
            CASES[f"lapack_{_name}_{str(_dt)[6:]}_{'x'.join(map(str, _shape))}"] = (
                lambda f=_f, dt=_dt, shape=_shape: f(_mat(dt, shape)))
CASES.update({
    "lu_factor_singular": lambda: _L.lu_factor(torch.ones(2, 3)),
    "lu_factor_ex_singular_batch": lambda: _L.lu_factor_ex(torch.ones(1, 2, 2), check_errors=True),
    "solve_ex_singular": lambda: _L.solve_ex(torch.zeros(2, 2), torch.ones(2, 1), check_errors=True),
    "inv_ex_singular_batch": lambda: _L.inv_ex(torch.zeros(1, 2, 2), check_errors=True),
    "cholesky_ex_not_pd": lambda: _L.cholesky_ex(-torch.eye(2), check_errors=True),
    "svd_empty_full": lambda: _L.svd(torch.empty(3, 0, dtype=torch.float16)),
    "lu_empty_int": lambda: _L.lu(torch.empty(3, 0, dtype=torch.int8)),
    "lu_solve_left_false_empty": lambda: _L.lu_solve(torch.empty(0, 0), torch.empty(0, dtype=torch.int32),
                                                     torch.empty(3, 0), left=False),
    "ormqr_tau_size": lambda: torch.ormqr(torch.ones(3, 2), torch.ones(3), torch.ones(3, 3)),
    "ormqr_tau_dtype": lambda: torch.ormqr(torch.ones(3, 2), torch.ones(2, dtype=torch.float64), torch.ones(3, 3)),
    "ormqr_batch": lambda: torch.ormqr(torch.ones(2, 3, 2), torch.ones(3, 2), torch.ones(2, 3, 3)),
    "lu_no_pivot_int": lambda: _L.lu(torch.ones(2, 2, dtype=torch.int16), pivot=False),
})


# random fills: the dtype dispatch before the range, the range checks on empty tensors too, the
# bounds named by C++ type; histc's bin count before its dtype; block_diag of nothing
CASES.update({
    "uniform_int_reversed": lambda: torch.empty(2, dtype=torch.int32).uniform_(2.0, 0.0),
    "uniform_bool_empty": lambda: torch.empty(0, dtype=torch.bool).uniform_(2.0, 0.0),
    "uniform_reversed_message": lambda: torch.empty(2).uniform_(2.0, 0.0),
    "randint_like_bool_from": lambda: torch.randint_like(torch.empty(0), -1, 0, dtype=torch.bool),
    "randint_like_uint8_to": lambda: torch.randint_like(torch.empty(2), 1, 300, dtype=torch.uint8),
    "randint_like_empty_range": lambda: torch.randint_like(torch.empty(0, dtype=torch.float16), 0),
    "random_int8_to_empty": lambda: torch.empty(0, dtype=torch.int8).random_(1, 300),
    "bernoulli_int_p": lambda: torch.bernoulli(torch.full((2,), 5, dtype=torch.int32)),
    "histc_bins_before_dtype": lambda: torch.histc(torch.ones(3, dtype=torch.int8), -3),
    "histc_int_dtype": lambda: torch.histc(torch.ones(3, dtype=torch.int8), 3),
    "block_diag_nothing": lambda: torch.block_diag(),
})


# torch.from_file: the bytes of a file (both interpreters write the same one), its checks
_ff_path = __import__("os").path.join(__import__("tempfile").gettempdir(), "torchnative_from_file_case.bin")
with open(_ff_path, "wb") as _fh:
    _fh.write(bytes(range(16)))


def _from_file_shared_write():
    torch.from_file(_ff_path, True, 2, dtype=torch.uint8)[0] = 9  # reaches the file
    torch.from_file(_ff_path, False, 2, dtype=torch.uint8)[1] = 7  # stays private
    with open(_ff_path, "rb") as fh:
        data = list(fh.read(2))
    with open(_ff_path, "wb") as fh:
        fh.write(bytes(range(16)))
    return data


CASES.update({
    "from_file_int32": lambda: torch.from_file(_ff_path, False, 4, dtype=torch.int32),
    "from_file_default_dtype": lambda: torch.from_file(_ff_path, size=2),
    "from_file_too_small": lambda: torch.from_file(_ff_path, False, 20, dtype=torch.uint8).shape,
    "from_file_nothing_opened": lambda: torch.from_file("/nonexistent/torchnative", False, 0),
    "from_file_missing": lambda: torch.from_file("/nonexistent/torchnative", False, 3),
    "from_file_pinned": lambda: torch.from_file(_ff_path, False, 2, pin_memory=True),
    "from_file_shared_write": _from_file_shared_write,
    "set_functional_reinterprets": lambda: A.set.source_Tensor(torch.zeros(2, dtype=torch.int32), torch.tensor([1.5, 2.5])),
    "set_functional_out_of_bounds": lambda: A.set.source_Tensor(torch.zeros(2, dtype=torch.float64),
                                                                torch.tensor([1.5, 2.5, 3.5, 4.5])[1:3]),
})


# Chebyshev polynomials of a huge degree in float32: the degree rounded to float, the
# trigonometric form in float (glibc's acosf/cosf), int64 wrap-around at x = +-1
_S = torch.special
CASES.update({
    "chebyshev_t_bool_2pow31": lambda: _S.chebyshev_polynomial_t(torch.tensor([True, False]), 2147483648),
    "chebyshev_u_1001": lambda: _S.chebyshev_polynomial_u(torch.tensor([0.3, -0.7, 0.01]), 1001),
    "shifted_w_2pow62": lambda: _S.shifted_chebyshev_polynomial_w(torch.tensor([0.3, 0.7]), 4611686018427387904),
    "shifted_v_bool_odd_degree": lambda: _S.shifted_chebyshev_polynomial_v(torch.tensor([True, False]), 2147483647),
    "chebyshev_v_wraps": lambda: _S.chebyshev_polynomial_v(torch.tensor([-1.0, 1.0]), 2**62),
    "chebyshev_t_overflow_nan": lambda: _S.chebyshev_polynomial_t(torch.tensor([1.5, -3.0]), 1001),
    "chebyshev_t_float64_2pow40": lambda: _S.chebyshev_polynomial_t(torch.tensor([0.3, -0.2], dtype=torch.float64),
                                                                    2**40 + 7),
})


# norms with a dtype check it before the dims; amax/amin of an empty tensor over every dim;
# batch_norm's parameter sizes (a weight of the wrong size was broadcast before); avg_pool1d's
# argument lengths
_x3 = torch.arange(24.).reshape(2, 3, 4)
CASES.update({
    "norm_dtype_before_dim": lambda: A.norm.ScalarOpt_dim_dtype(_x3.double(), 0.274, [-4], False, dtype=torch.int8),
    "norm_dim_before_narrowing": lambda: A.norm.ScalarOpt_dim_dtype(_x3.double(), 1.4, [5], False, dtype=torch.float16),
    "vector_norm_narrowing_before_dim": lambda: A.linalg_vector_norm(_x3.double(), 1.4, [5], False, dtype=torch.float16),
    "norm_dtype_all_dims": lambda: A.norm.ScalarOpt_dtype(_x3, 3, dtype=torch.float64),
    "vector_norm_int_dtype_before_dim": lambda: A.linalg_vector_norm(torch.tensor(2.), -2, [4], False,
                                                                     dtype=torch.int16),
    "amax_empty_every_dim": lambda: torch.amax(torch.empty(0, 2)),
    "amin_empty_dim_1": lambda: torch.amin(torch.empty(0, 2), 1),
    "batch_norm_weight_size": lambda: A.batch_norm(torch.randn(4, 2, 3), torch.ones(24), None, None, None, True,
                                                   0.1, 1e-5, False),
    "batch_norm_1d_weight": lambda: A.batch_norm(torch.randn(4), torch.ones(4), None, None, None, True, 0.1, 1e-5,
                                                 False),
    "batch_norm_1d_running_mean": lambda: A.batch_norm(torch.randn(4), None, None, torch.ones(4), torch.ones(4),
                                                       False, 0.1, 1e-5, False),
    "native_batch_norm_1d": lambda: A.native_batch_norm(torch.randn(4), None, None, None, None, True, 0.1, 1e-5),
    "avg_pool1d_empty_padding": lambda: A.avg_pool1d(torch.ones(1, 3, 4), [3], [1], []),
    "avg_pool1d_two_strides": lambda: A.avg_pool1d(torch.ones(1, 3, 4), [3], [1, 1], [0]),
    "avg_pool1d_stride_none": lambda: F.avg_pool1d(torch.arange(8.).reshape(1, 2, 4), 2, None),
})


# bool means: upstream's scatter kernel dispatch refuses them (its floor division, with no index);
# index_reduce's dispatch has no bool at all
_b4 = torch.zeros(4, dtype=torch.bool)
CASES.update({
    "scatter_reduce_bool_mean": lambda: _b4.scatter_reduce(0, torch.tensor([1, 1]), torch.ones(2, dtype=torch.bool),
                                                           "mean"),
    "scatter_reduce_bool_mean_no_index": lambda: _b4.scatter_reduce(0, torch.zeros(0, dtype=torch.long),
                                                                    torch.ones(0, dtype=torch.bool), "mean"),
    "scatter_reduce_bool_mean_before_bounds": lambda: _b4.scatter_reduce(0, torch.tensor([9]),
                                                                         torch.ones(1, dtype=torch.bool), "mean"),
    "index_reduce_bool_amax": lambda: _b4.index_reduce(0, torch.tensor([1]), torch.ones(1, dtype=torch.bool), "amax"),
    "index_reduce_bool_before_bounds": lambda: _b4.index_reduce(0, torch.tensor([7]), torch.ones(1, dtype=torch.bool),
                                                                "prod"),
})


# fuzzer-found check orders (seed 32, 2026-12-08): roll's shifts against its dims, negative split
# sizes, range's bounds checked before an integer type truncates them, the meta normal_'s dtype,
# huber's NaN delta, the structured losses' reduction, logaddexp's broadcast before its dtype,
# isin of a bool scalar
CASES.update({
    "roll_0d_shifts_without_dims": lambda: torch.roll(torch.tensor(1.0), [1, 2, 0]),
    "roll_shifts_without_dims": lambda: torch.roll(torch.arange(3), [1, 2]),
    "roll_shifts_dims_count": lambda: torch.roll(torch.arange(3), [1, 2], [0]),
    "roll_no_shifts": lambda: torch.roll(torch.ones(3), []),
    "split_with_sizes_negative": lambda: A.unsafe_split_with_sizes(torch.zeros(1, 1, 2), [1, -2, 2]),
    "split_sizes_negative_summing": lambda: torch.split(torch.zeros(3), [-1, 4]),
    "range_int_bounds_before_truncation": lambda: torch.range(0.2, 0.1, 1, dtype=torch.int64),
    "range_out_int8_bounds": lambda: torch.range(0.811, -0.202, out=torch.empty(3, dtype=torch.int8)),
    "randn_meta_uint8": lambda: torch.randn(1, dtype=torch.uint8, device="meta"),
    "randn_like_meta_bool": lambda: torch.randn_like(torch.ones(2), dtype=torch.bool, device="meta"),
    "huber_loss_nan_delta": lambda: A.huber_loss(torch.ones(1, 3), torch.ones(1, 3), 0, float("nan")),
    # upstream's message is an internal assertion naming its build's source path: the type only
    "smooth_l1_loss_reduction_3": lambda: _error_type(lambda: A.smooth_l1_loss(torch.ones(1, 3), torch.ones(1, 3), 3,
                                                                               1.0)),
    "mse_loss_reduction_minus_3": lambda: _error_type(lambda: A.mse_loss(torch.ones(1, 3), torch.ones(1, 3), -3)),
    "logaddexp_broadcast_before_dtype": lambda: torch.logaddexp(torch.ones(2, 4, dtype=torch.long),
                                                                torch.ones(4, 1, 3, dtype=torch.int32)),
    "logaddexp2_broadcast_before_bool": lambda: torch.logaddexp2(torch.ones(2, 2, dtype=torch.bool),
                                                                 torch.ones(3, dtype=torch.bool)),
    "isin_bool_scalar": lambda: torch.isin(torch.ones(3, 2), True),
})


# rms_norm's ValueError for too few dims and its comma-less shape; batch_norm's running statistics
# both or neither (a ValueError first); pinv with atol/rtol floats reads size(-2) first
CASES.update({
    "rms_norm_fewer_dims": lambda: A.rms_norm(torch.ones(1), [-1, 1], None, None),
    "rms_norm_fewer_dims_empty": lambda: A.rms_norm(torch.ones(0, 2), [-3, 1, 5], None, None),
    "rms_norm_shape_message": lambda: A.rms_norm(torch.ones(2, 5), [3, 4], None, None),
    "native_batch_norm_running_pair": lambda: A.native_batch_norm(torch.ones(2, 4, 1), torch.ones(4), None, None,
                                                                  torch.ones(4), True, 0.1, 1e-5),
    "native_batch_norm_pair_before_eval": lambda: A.native_batch_norm(torch.ones(2, 4, 1), None, None, torch.ones(4),
                                                                      None, False, 0.1, 1e-5),
    "native_batch_norm_pair_before_dim": lambda: A.native_batch_norm(torch.ones(2), None, None, None, torch.ones(3),
                                                                     True, 0.1, 1e-5),
    "batch_norm_training_pair": lambda: A.batch_norm(torch.ones(2, 4, 1), None, None, torch.ones(4), None, True, 0.1,
                                                     1e-5, False),
    "pinv_atol_1d": lambda: torch.linalg.pinv(torch.ones(3), atol=0.1),
    "pinv_atol_0d": lambda: torch.linalg.pinv(torch.tensor(1.0), atol=0.1),
})


# scaled_dot_product_attention validates its inputs first (upstream's validate_sdpa_input): one
# dtype, one device type, 2 dims, a mask of bool, float or the query's dtype (an int64 or float16
# mask of a float32 query was applied before)
_q3 = torch.ones(2, 3, 4)
CASES.update({
    "sdpa_dtypes": lambda: F.scaled_dot_product_attention(_q3.half(), torch.ones(2, dtype=torch.bool), _q3.half()),
    "sdpa_dims": lambda: F.scaled_dot_product_attention(torch.ones(2).double(), torch.ones(2).double(),
                                                        torch.ones(2, 2, 2).double()),
    "sdpa_device_types": lambda: F.scaled_dot_product_attention(_q3, _q3.to("meta"), _q3),
    "sdpa_mask_int64": lambda: F.scaled_dot_product_attention(_q3, _q3, _q3, attn_mask=torch.ones(3, 3).long()),
    "sdpa_mask_float16": lambda: F.scaled_dot_product_attention(_q3, _q3, _q3, attn_mask=torch.ones(3, 3).half()),
})


# embedding_bag.padding_idx reads weight.size(0) first, checks padding_idx's range and wraps a
# negative one (the operator took -1 for "no padding": the last row was summed)
_ebw = torch.arange(6.).reshape(3, 2)
CASES.update({
    "embedding_bag_0d_weight_padding": lambda: A.embedding_bag.padding_idx(torch.tensor(1.0), torch.ones(2).long(),
                                                                           torch.tensor([0]), False, 7, False, None,
                                                                           False, 0),
    "embedding_bag_padding_idx_range": lambda: A.embedding_bag.padding_idx(_ebw, torch.ones(2).long(), torch.tensor([0]),
                                                                           False, 1, False, None, False, -4),
    "embedding_bag_padding_idx_last_row": lambda: A.embedding_bag.padding_idx(_ebw, torch.tensor([2, 1]),
                                                                              torch.tensor([0]), False, 0, False, None,
                                                                              False, -1),
})


# slow_conv3d reads weight.size(1), then input.size(1), before its 5-d check; then its group count
_k111 = [1, 1, 1]
CASES.update({
    "slow_conv3d_0d_weight": lambda: A.slow_conv3d(torch.ones(1, 1, 2), torch.tensor(1.0), _k111, None, _k111, [0] * 3),
    "slow_conv3d_1d_weight": lambda: A.slow_conv3d_forward(torch.ones(3), torch.ones(3), _k111, None, _k111, [0] * 3),
    "slow_conv3d_0d_input": lambda: A.slow_conv3d(torch.tensor(1.0), torch.ones(2, 3), _k111, None, _k111, [0] * 3),
    "slow_conv3d_groups_zero": lambda: A.slow_conv3d(torch.ones(1, 1, 4, 4, 4), torch.ones(2, 3), _k111, None, _k111,
                                                     [0] * 3),
})


# a NaN dropout probability; argmax/argmin of bools; cdist's direct kernel in float16/bfloat16;
# floor/ceil/round/trunc of bools (upstream's integral shortcut excludes bool); randperm of bools
CASES.update({
    "dropout_nan_p": lambda: A.dropout(torch.ones(3), float("nan"), True),
    "dropout_nan_p_eval": lambda: A.dropout_(torch.ones(3), float("nan"), False),
    "feature_dropout_nan_p": lambda: A.feature_dropout(torch.ones(2, 3), float("nan"), True),
    "argmin_bool": lambda: torch.argmin(torch.ones(3, dtype=torch.bool)),
    "argmax_bool_dim": lambda: torch.argmax(torch.ones(2, 3, dtype=torch.bool), 1, True),
    "cdist_half": lambda: torch.cdist(torch.ones(2, 3).half(), torch.ones(2, 3).half()),
    "cdist_bfloat16_p1_many_rows": lambda: torch.cdist(torch.ones(30, 3).bfloat16(), torch.ones(2, 3).bfloat16(), p=1),
    "trunc_bool": lambda: torch.trunc(torch.ones(3, dtype=torch.bool)),
    "floor_bool_inplace": lambda: torch.ones(2, dtype=torch.bool).floor_(),
    "randperm_bool": lambda: torch.randperm(3, dtype=torch.bool),
})


# a reduction's out= of another dtype than dtype= (nansum and nanmean in nansum's words)
_r50 = torch.arange(50.) / 7
CASES.update({
    "sum_out_dtype_mismatch": lambda: torch.sum(_r50, 0, dtype=torch.float32, out=torch.empty(0, dtype=torch.float64)),
    "nansum_out_dtype_mismatch": lambda: torch.nansum(_r50, 0, dtype=torch.float32,
                                                      out=torch.empty(0, dtype=torch.float64)),
    "nanmean_out_dtype_mismatch": lambda: torch.nanmean(torch.ones(1, 4, 4).bfloat16(), dtype=torch.bfloat16,
                                                        out=torch.empty(0, dtype=torch.float64)),
    "nansum_int_out_int8": lambda: torch.nansum(torch.tensor([100, 100, 100], dtype=torch.int32), 0,
                                                out=torch.empty(0, dtype=torch.int8)),
})

if __name__ == "__main__":
    write_outcomes(CASES, sys.argv[1])
