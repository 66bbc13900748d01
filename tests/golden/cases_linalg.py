"""matmul / mm / bmm / addmm / mv / dot / outer / einsum."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


def _a(*shape, scale=8.0):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float32) % 7 - 3).view(*shape) / scale


@exact
def mm_small_exact():
    a = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    return a @ a, torch.mm(a, torch.eye(2))


@case
def mm():
    return torch.mm(_a(3, 5), _a(5, 4)), _a(4, 6) @ _a(6, 2)


@case
def mm_random():
    return torch.randn(16, 32) @ torch.randn(32, 8)


@exact
def mm_int():
    a = torch.arange(6).view(2, 3)
    return a @ a.T, torch.mm(a.T, a)


@case
def mm_transposed_inputs():
    a = _a(5, 3)
    return a.t() @ a, a @ a.t(), a.T.contiguous() @ a


@case
def matmul_broadcast_batch():
    return _a(2, 3, 4) @ _a(4, 5), _a(3, 4) @ _a(2, 4, 2), _a(2, 1, 3, 4) @ _a(3, 4, 2)


@case
def matmul_vector_cases():
    v = _a(4)
    return v @ v, _a(3, 4) @ v, v @ _a(4, 2), torch.matmul(_a(2, 3, 4), v)


@case
def bmm():
    return torch.bmm(_a(2, 3, 4), _a(2, 4, 5))


@case
def addmm():
    return (torch.addmm(_a(3, 2), _a(3, 4), _a(4, 2)),
            torch.addmm(_a(2), _a(3, 4), _a(4, 2), beta=0.5, alpha=2))


@case
def addmm_beta_zero_ignores_nan():
    bias = torch.full((2, 2), float("nan"))
    return torch.addmm(bias, _a(2, 3), _a(3, 2), beta=0)


@case
def mv_dot_outer():
    return (torch.mv(_a(3, 4), _a(4)), torch.dot(_a(5), _a(5)), torch.outer(_a(3), _a(2)),
            torch.vdot(_a(3), _a(3)))


@case
def einsum():
    return (torch.einsum("ij,jk->ik", _a(2, 3), _a(3, 2)), torch.einsum("bij->bji", _a(2, 3, 4)),
            torch.einsum("i,i->", _a(4), _a(4)))


@case
def matmul_float64_float16():
    return _a(3, 4).double() @ _a(4, 2).double(), _a(3, 4).half() @ _a(4, 2).half()


@case
def matmul_bfloat16():
    return _a(4, 8).bfloat16() @ _a(8, 3).bfloat16()


@case
def matmul_empty_inner():
    return torch.zeros(2, 0) @ torch.zeros(0, 3)


@case
def baddbmm_tensordot():
    return (torch.baddbmm(_a(2, 3, 2), _a(2, 3, 4), _a(2, 4, 2)),
            torch.tensordot(_a(2, 3, 4), _a(3, 4, 2), dims=2))


@case
def matmul_empty_inner_dim():
    # a batch folded into rows with k == 0 (upstream spells the row count out; a -1 is ambiguous)
    return (torch.ones(2, 3, 0) @ torch.ones(0, 4), torch.ones(2, 0, 3) @ torch.ones(3, 4),
            torch.nn.functional.linear(torch.ones(2, 3, 0), torch.ones(4, 0), torch.arange(4.0)))


@case
def eigvals_without_vectors():
    # no gradient asked: linalg.eigvals takes the values-only kernel (_linalg_eigvals)
    a = torch.tensor([[4.0, 1.0, 0.5], [2.0, 3.0, 0.0], [0.5, 0.0, 1.0]], dtype=torch.float64)
    # (as real pairs: the golden encoding has no complex numbers)
    return (torch.view_as_real(torch.linalg.eigvals(a)),
            torch.view_as_real(torch.linalg.eigvals(torch.triu(_a(4, 4).double()))))
