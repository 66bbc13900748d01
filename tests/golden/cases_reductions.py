"""Reductions: sum/mean/prod/max/min/argmax/var/std/all/any, dims and keepdim."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


def _m():
    return torch.tensor([[1.0, -2.0, 3.5, 0.25], [4.0, 0.5, -1.0, 2.0], [-3.0, 6.0, 0.0, 1.5]])


@exact
def sum_all_dims():
    m = _m()
    return m.sum(), m.sum(0), m.sum(1), m.sum(-1, keepdim=True), m.sum((0, 1)), m.sum(dim=())


@exact
def sum_int_and_bool_dtype():
    i = torch.tensor([[1, 2], [3, 4]], dtype=torch.int8)
    b = torch.tensor([True, True, False])
    return i.sum(), i.sum(0).dtype, b.sum(), torch.tensor([200, 100], dtype=torch.uint8).sum()


@exact
def sum_with_dtype_arg():
    return (torch.tensor([1, 2], dtype=torch.int32).sum(dtype=torch.float64),
            torch.ones(3).sum(dtype=torch.int64))


@case
def sum_random_float32():
    return torch.randn(7, 33).sum(1), torch.randn(1000).sum()


@exact
def sum_empty():
    return torch.zeros(0).sum(), torch.zeros(0, 3).sum(0), torch.ones(0, dtype=torch.int64).prod()


@case
def mean():
    m = _m()
    return m.mean(), m.mean(0), m.mean(1, keepdim=True), m.double().mean((0, 1))


@exact
def mean_int_raises():
    return torch.tensor([1, 2]).mean()


@case
def prod():
    m = _m()
    return m.prod(), m.prod(0), m.prod(1, keepdim=True), torch.tensor([2, 3, -4]).prod()


@exact
def max_min_all():
    m = _m()
    return m.max(), m.min(), torch.tensor([[3, 9], [-1, 4]]).max()


@exact
def max_min_dim_values_indices():
    m = _m()
    return m.max(0), m.min(1), m.max(1, keepdim=True), torch.max(m, dim=-1).indices


@exact
def max_ties_first_index():
    t = torch.tensor([[1, 5, 5], [2, 2, 0]])
    return t.max(1), t.min(1), t.argmax(1), t.argmin(1), t.argmax()


@case
def max_with_nan():
    t = torch.tensor([1.0, float("nan"), 3.0])
    return t.max(), t.argmax(), t.min(0), torch.nanmean(t), torch.nansum(t)


@exact
def argmax_argmin():
    m = _m()
    return m.argmax(), m.argmin(), m.argmax(0), m.argmax(1, keepdim=True), m.argmin(dim=1)


@exact
def amax_amin_aminmax():
    m = _m()
    return m.amax(0), m.amin((0, 1)), torch.aminmax(m, dim=1)


@exact
def max_binary():
    return torch.max(torch.tensor([1, 5]), torch.tensor([3, 2]))


@case
def var_std():
    m = _m()
    return (m.var(), m.std(), m.var(0), m.std(1, keepdim=True), m.var(1, unbiased=False),
            m.std(correction=0))


@case
def var_mean_std_mean():
    m = _m()
    return torch.var_mean(m, 1), torch.std_mean(m, 0)


@case
def var_single_element():
    return torch.tensor([3.0]).var(), torch.tensor([3.0]).var(unbiased=False)


@exact
def all_any():
    b = torch.tensor([[True, False], [True, True]])
    i = torch.tensor([[0, 2], [1, 3]])
    return (b.all(), b.any(), b.all(0), b.any(1), i.all(), i.any(0), b.all(1, keepdim=True),
            torch.zeros(0).all())


@exact
def all_any_float():
    return (torch.tensor([0.0, 1.0]).all(), torch.tensor([0.0, -0.0]).any(),
            torch.tensor([float("nan")]).all())


@case
def logsumexp_norm():
    m = _m()
    return torch.logsumexp(m, 1), m.norm(), m.norm(dim=0), torch.linalg.vector_norm(m, ord=1)


@exact
def cumsum_cumprod_int():
    i = torch.tensor([[1, 2, 3], [4, 5, 6]])
    return i.cumsum(0), i.cumsum(1), i.cumprod(1), torch.tensor([True, True]).cumsum(0)


@case
def cumsum_float():
    return _m().cumsum(1), _m().cumprod(0)


@exact
def count_nonzero_unique():
    t = torch.tensor([3, 1, 0, 3, 2, 0])
    return torch.count_nonzero(t), torch.unique(t), torch.unique(t, return_counts=True), t.nonzero()


@exact
def sort_topk():
    t = torch.tensor([3.0, -1.0, 2.5, 7.0, 0.0])
    return torch.sort(t), torch.sort(t, descending=True), torch.topk(t, 2), torch.argsort(t)


@exact
def median_mode_kthvalue():
    t = torch.tensor([[3, 1, 2, 2], [5, 5, 0, 1]])
    return t.median(), t.median(1), torch.mode(t, 1), torch.kthvalue(t, 2, 1)


# --- edge cases that only OpInfo's later samples reached -----------------------------------

@case(exact=True)
def mode_long_line_index_follows_introsort():
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 6, (3000,), generator=g)
    y = torch.randint(-3, 3, (4, 50, 3), generator=g).float()
    return torch.mode(x), torch.mode(y, 1, keepdim=True), torch.mode(y.transpose(0, 2), 1)


@case
def mode_empty_dim():
    return torch.mode(torch.ones(0, 3), 0)


@case(exact=True)
def amax_aminmax_empty_dim_not_reduced():
    x = torch.ones(5, 0, 5)
    return torch.amax(x, 0), torch.amin(x, 2, keepdim=True), torch.aminmax(x, dim=0)


@case
def aminmax_all_of_empty():
    return torch.aminmax(torch.ones(5, 0, 5))


@case
def aminmax_over_empty_dim():
    return torch.aminmax(torch.ones(5, 0, 5), dim=1)


@case(exact=True)
def matrix_norms_of_empty_inputs():
    inf = float("inf")
    return (torch.linalg.norm(torch.ones(0, 0), inf), torch.linalg.matrix_norm(torch.ones(3, 0), 1),
            torch.linalg.matrix_norm(torch.ones(2, 0, 3), 1), torch.linalg.matrix_norm(torch.ones(0, 3), -1),
            torch.linalg.vector_norm(torch.ones(0, 3), inf, dim=1), torch.cdist(torch.ones(0, 5), torch.ones(4, 5), p=inf))


@case
def vector_norm_inf_over_empty_dim():
    return torch.linalg.vector_norm(torch.ones(0, 3), float("inf"), dim=0)


@case
def matrix_norm_minus_inf_of_empty():
    return torch.linalg.matrix_norm(torch.ones(0, 0), -float("inf"))


@case(exact=True)
def bincount_counts_and_weights():
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 7, (500,), generator=g)
    w = torch.randn(500, generator=g)
    return (torch.bincount(x), torch.bincount(x, w), torch.bincount(x, w.double()), torch.bincount(x.int(), minlength=10),
            torch.bincount(x.to(torch.uint8), w.half()), torch.bincount(torch.tensor([], dtype=torch.long), minlength=2))


@case
def bincount_negative_input():
    return torch.bincount(torch.tensor([0, -3]))


@case
def bincount_float_input():
    return torch.bincount(torch.tensor([0.0]))


@case(exact=True)
def var_mean_is_one_welford_pass():
    # upstream's std_var_mean_out: variance and mean from one Welford reduction in float64, so
    # the mean is not mean()'s float32 sum (and is NaN once the data meet an infinity)
    x = ((torch.arange(7000, dtype=torch.float32) * 0.37) % 5.3 - 2.1).view(7, 1000)
    inf = torch.tensor([float("inf"), float("inf"), 1.0])
    return (torch.var_mean(x), torch.var_mean(x, 1), torch.std_mean(x, 0, correction=0, keepdim=True),
            torch.var_mean(inf), torch.std_mean(x.double(), 1), torch.var_mean(torch.ones(0, 3), 0))


@exact
def any_all_over_no_dims_give_truth_values():
    # an empty dim list reduces nothing; uint8 keeps its dtype with 0/1, not the bytes
    x = torch.tensor([7, 0, 255], dtype=torch.uint8)
    f = torch.tensor([0.5, 0.0, -2.0])
    return (torch.ops.aten.any.dims(x, []), torch.ops.aten.all.dims(x, []),
            torch.ops.aten.any.dims(f, []), torch.ops.aten.all.dims(f, []))


@case(exact=True)
def scatter_reduce_every_reduction_bitwise():
    # upstream's order and arithmetic: per position in index order along dim, float16/bfloat16
    # accumulated in float32 and rounded once, a mean as the rounded sum over the rounded count,
    # NaN winning amax/amin; 1-d, a transposed self, dim 1
    torch.manual_seed(3)
    out = []
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for how in ("sum", "prod", "mean", "amax", "amin"):
            for inc in (True, False):
                src = torch.randn(700).to(dt)
                if how in ("amax", "amin"):
                    src[::97] = float("nan")
                out.append(torch.randn(40).to(dt).scatter_reduce(0, torch.randint(0, 37, (700,)), src, how,
                                                                  include_self=inc))
                base = torch.randn(20, 50).to(dt).t().contiguous().t()[:, :40]
                out.append(base.scatter_reduce(0, torch.randint(0, 20, (60, 40)), torch.randn(60, 40).to(dt), how,
                                               include_self=inc))
                out.append(torch.randn(4, 30).to(dt).scatter_reduce(1, torch.randint(0, 30, (4, 90)),
                                                                    torch.randn(4, 90).to(dt), how, include_self=inc))
    return out


@exact
def scatter_reduce_integer_mean_wraps():
    # upstream's integer mean is out.div_(count, "floor") with the sum and the count both tensors
    # of self's type: both wrap first (int8: 5 + 3 * 100 = 305 -> 49, and 300 ones -> 44)
    out = []
    for dt in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64):
        for inc in (True, False):
            a = torch.tensor([5, -3, 7, 0]).to(dt)
            src = torch.tensor([100, 100, 100, -7, 3, 120, 1, 1, 1]).to(dt)
            idx = torch.tensor([0, 0, 0, 1, 1, 1, 2, 2, 2])
            out.append(a.scatter_reduce(0, idx, src, "mean", include_self=inc))
            out.append(a.index_reduce(0, idx[:5], src[:5], "mean", include_self=inc))
            many = torch.full((300,), 3).to(dt)
            out.append(torch.zeros(2, dtype=dt).scatter_reduce(0, torch.zeros(300, dtype=torch.long), many, "mean",
                                                               include_self=inc))
    return out


@exact
def reductions_into_an_out_of_another_dtype():
    # sum/nansum/mean.out without dtype= compute in out's dtype (upstream's get_dtype_from_result):
    # a float32 sum into a float64 out accumulates in float64; an int64 sum into int8 wraps
    torch.manual_seed(5)
    x = torch.randn(300)
    out = []
    for f in (torch.sum, torch.nansum, torch.mean):
        out.append(f(x, 0, out=torch.empty(0, dtype=torch.float64)))
        out.append(f(x.reshape(3, 100), 1, out=torch.empty(0, dtype=torch.float64)))
    out.append(torch.sum(torch.tensor([100, 100, 100]), 0, out=torch.empty(0, dtype=torch.int8)))
    out.append(torch.nansum(torch.tensor([True, True]), 0, out=torch.empty(0, dtype=torch.bool)))
    out.append(torch.nanmean(x.reshape(3, 100), 1, out=torch.empty(0, dtype=torch.float64)))
    return out

