"""cat / stack / split / chunk / where and friends."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


def _x():
    return torch.arange(12.0).view(3, 4)


@exact
def cat():
    x = _x()
    return (torch.cat([x, x]), torch.cat([x, x * 2], dim=1), torch.cat((x[:1], x[2:]), 0),
            torch.cat([x], -1))


@exact
def cat_promotes_dtype():
    return torch.cat([torch.tensor([1], dtype=torch.int32), torch.tensor([2.5])]), \
        torch.cat([torch.tensor([True]), torch.tensor([3], dtype=torch.uint8)])


@exact
def cat_skips_legacy_empty():
    return torch.cat([torch.tensor([]), torch.tensor([1.0, 2.0])])


@exact
def cat_noncontiguous_inputs():
    x = _x()
    return torch.cat([x.t(), x.t()[:, :1]], 1)


@exact
def stack():
    a, b = torch.tensor([1, 2]), torch.tensor([3, 4])
    return (torch.stack([a, b]), torch.stack([a, b], 1), torch.stack([a, b], -1).shape,
            torch.hstack([a, b]), torch.vstack([a, b]))


@exact
def split_sizes():
    x = torch.arange(10)
    return torch.split(x, 3), torch.split(x, [2, 5, 3]), _x().split(2, dim=1)


@exact
def split_are_views():
    x = torch.arange(6)
    parts = x.split(2)
    parts[1][0] = 100
    return x, parts[2].storage_offset()


@exact
def chunk():
    x = torch.arange(10)
    return x.chunk(3), x.chunk(4), torch.arange(5).chunk(5), _x().chunk(2, 1)


@exact
def tensor_split_unbind():
    x = torch.arange(7)
    return torch.tensor_split(x, 3), torch.tensor_split(x, [1, 4]), _x().unbind(1)


@exact
def where_ternary():
    x = _x()
    return torch.where(x > 5, x, -x), torch.where(x > 5, 1.0, 0.0), torch.where(x < 3, x, 7)


@exact
def where_promotion():
    c = torch.tensor([True, False])
    return torch.where(c, torch.tensor([1, 2]), torch.tensor([0.5, 1.5])), \
        torch.where(c, torch.tensor([1, 2], dtype=torch.int8), 3)


@exact
def where_single_arg():
    return torch.where(torch.tensor([[0, 1], [1, 1]]))


@exact
def flip_roll_repeat_tile():
    x = torch.arange(6).view(2, 3)
    return (x.flip(1), x.roll(1, 1), x.roll(2), x.repeat(2, 1), x.tile((1, 2)),
            x.repeat_interleave(2, dim=0))


@exact
def tril_triu():
    x = torch.arange(1, 10).view(3, 3)
    return x.tril(), x.triu(1), torch.tril(torch.ones(2, 3), -1)


@exact
def meshgrid_cartesian():
    return torch.meshgrid(torch.arange(2), torch.arange(3), indexing="ij")


@exact
def pad_constant():
    import torch.nn.functional as F
    return F.pad(torch.ones(2, 2), (1, 0, 0, 2), value=5.0)
