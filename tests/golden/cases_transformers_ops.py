"""Operators transformers' models reach beyond the basics (issue 5): one_hot, histc and
_grouped_mm (the mixture-of-experts path), type_as, the comparison aliases; values and the
exception types of their checks; isin, concat, take_along_dim (beam search), topk's order of ties; Tensor.to with a leading None device (nn.Module.to(dtype) passes one)."""
from .registry import F, case, nn, torch


def _mats(rows=7, k=8, n=4, groups=3):
    a = torch.arange(rows * k, dtype=torch.float32).reshape(rows, k).sin()
    b = torch.arange(groups * k * n, dtype=torch.float32).reshape(groups, k, n).cos()
    return a, b


@case(exact=True)
def one_hot_values():
    x = torch.tensor([[0, 3], [2, 1]])
    return F.one_hot(x), F.one_hot(x, 6), F.one_hot(torch.zeros(0, dtype=torch.long), 3).shape


@case
def one_hot_negative_class():
    return F.one_hot(torch.tensor([-1, 2]))


@case
def one_hot_class_too_large():
    return F.one_hot(torch.tensor([1, 7]), 4)


@case
def one_hot_not_long():
    return F.one_hot(torch.tensor([1.0]))


@case(exact=True)
def histc_values():
    x = torch.tensor([0.0, 1, 1, 3, 2, 3, 5, -1, float("nan"), 2.9999])
    r = torch.arange(997, dtype=torch.float64).sin()
    return (torch.histc(x, bins=4, min=0, max=3), torch.histc(x[:8], bins=5), torch.histc(r, bins=13),
            torch.histc(r.float(), bins=7, min=-0.5, max=0.75), torch.histc(torch.ones(4), bins=3))


@case
def histc_bad_range():
    return torch.histc(torch.ones(3), bins=3, min=2, max=1)


@case
def histc_integer_input():
    return torch.histc(torch.tensor([1, 2]), bins=3)


@case
def grouped_mm_2d_3d():
    a, b = _mats()
    return torch._grouped_mm(a, b, offs=torch.tensor([2, 2, 6], dtype=torch.int32))[:6]


@case
def grouped_mm_3d_3d():
    _, b = _mats()
    return torch._grouped_mm(b, b.transpose(1, 2))


@case
def grouped_mm_offsets_not_int32():
    a, b = _mats()
    return torch._grouped_mm(a, b, offs=torch.tensor([2, 2, 6]))


@case
def grouped_mm_float64():
    a, b = _mats()
    return torch._grouped_mm(a.double(), b.double(), offs=torch.tensor([2, 2, 6], dtype=torch.int32))


@case
def grouped_mm_unaligned_strides():
    a, b = _mats(k=5)
    return torch._grouped_mm(a, b, offs=torch.tensor([2, 2, 6], dtype=torch.int32))


@case(exact=True)
def type_as_and_comparison_aliases():
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 2.0, 2.0])
    c = a.clone()
    c.greater_(2)
    return (torch.ones(2, dtype=torch.int32).type_as(a.double()), torch.greater(a, 2), a.greater_equal(b),
            a.less(b), a.less_equal(2), torch.not_equal(a, b), c)


@case(exact=True)
def to_with_none_device_and_module_to_dtype():
    t = torch.ones(2)
    lin = nn.Linear(2, 2)
    lin.to(torch.float16)
    return t.to(None, torch.bfloat16), t.to(None, torch.float64, False), t.to(None), lin.weight, lin.bias


@case(exact=True)
def isin_and_concat():
    a, b = torch.tensor([[1, 2, 3], [4, 5, 6]]), torch.tensor([2, 6, 9])
    nan = torch.tensor([float("nan"), 1.0])
    return (torch.isin(a, b), torch.isin(a, b, invert=True), torch.isin(a, torch.tensor([2.0, 6.5])), torch.isin(2, b),
            torch.isin(a, 2), torch.isin(a, 2, invert=True), torch.isin(nan, torch.tensor([float("nan")])),
            torch.isin(a, torch.tensor([])), torch.concat([a, a], 1), torch.concatenate([a, a]))


@case
def isin_bool_refused():
    return torch.isin(torch.tensor([True]), torch.tensor([1]))


@case(exact=True)
def take_along_dim_values():
    x, i = torch.arange(12.0).reshape(3, 4), torch.tensor([[0, 3], [1, 1], [2, 0]])
    return (torch.take_along_dim(x, i, 1), torch.take_along_dim(x, i, -1), torch.take_along_dim(x, torch.tensor([[2, 0, 1, 1]]), 0),
            torch.take_along_dim(x, torch.tensor([[1]]), 1), torch.take_along_dim(x, torch.tensor([5, 0, 11])))


@case
def take_along_dim_int32_indices():
    return torch.take_along_dim(torch.ones(3, 4), torch.tensor([[0], [1], [2]], dtype=torch.int32), 1)


@case
def take_along_dim_rank_mismatch():
    return torch.take_along_dim(torch.ones(3, 4), torch.tensor([1]), 1)


@case(exact=True)
def topk_tie_order():
    """Which of several equal values topk returns follows upstream's libstdc++ selection (a MoE
    router whose gate starts at zero ties every expert: afmoe)."""
    x = torch.tensor([3.0, 1, 3, float("nan"), 2, 3, 1, 1, float("nan"), 0] * 7)
    return (torch.topk(torch.zeros(2, 4), 2, dim=-1), torch.topk(torch.zeros(200), 3), torch.topk(torch.zeros(200), 5),
            torch.topk(torch.zeros(40), 5), torch.topk(torch.zeros(300), 2, largest=False), torch.topk(x, 6),
            torch.topk(x, 6, largest=False), torch.topk(x, 6, sorted=False),
            torch.topk(torch.zeros(3, 5, dtype=torch.int64), 2, dim=0))
