"""Indexing and index assignment: ints, slices, None, ..., boolean masks, index tensors."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)  # indexing moves values, never rounds them


def _x():
    return torch.arange(24).view(2, 3, 4)


@exact
def int_index():
    x = _x()
    return x[1], x[0, 2], x[-1, -1, -1], x[1][2][3], type(x[0, 0, 0].item()).__name__


@exact
def slice_none_ellipsis():
    x = _x()
    return (x[None].shape, x[:, None, 1].shape, x[..., 1], x[1, ...], x[..., None].shape,
            x[None, ..., None, 0].shape)


@exact
def negative_and_clamped_slices():
    x = torch.arange(6)
    return x[-4:-1], x[-100:100], x[4:100], x.flip(0)


@exact
def bool_mask_1d():
    x = torch.tensor([5, -1, 3, 0, -7])
    return x[x > 0], x[torch.tensor([True, False, True, False, False])]


@exact
def bool_mask_2d():
    x = _x()
    m = x % 3 == 0
    return x[m], x[0][m[0]], x[:, torch.tensor([True, False, True])].shape


@exact
def bool_scalar_index():
    x = torch.arange(3)
    return x[True].shape, x[False].shape


@exact
def index_tensor_long():
    x = _x()
    i = torch.tensor([1, 0, 1])
    return (x[i].shape, x[:, torch.tensor([2, 0])], x[0, :, torch.tensor([3, 1])],
            x[torch.tensor([-1])])


@exact
def index_tensor_advanced_pairs():
    x = _x()
    return (x[torch.tensor([0, 1]), torch.tensor([2, 0])],
            x[torch.tensor([[0], [1]]), torch.tensor([1, 2])])


@exact
def index_advanced_separated_by_slice():
    x = _x()
    return (x[torch.tensor([0, 1]), :, torch.tensor([1, 3])],
            x[:, torch.tensor([0, 2]), torch.tensor([1, 1])])


@exact
def index_list_of_ints():
    x = torch.arange(10)
    return x[[1, 3, 3]], x[[0, -1]]


@exact
def index_returns_copy_not_view():
    x = torch.arange(5)
    y = x[torch.tensor([0, 1])]
    y[0] = 99
    return x, y


@exact
def setitem_int_slice():
    x = torch.zeros(3, 4, dtype=torch.int64)
    x[1] = 5
    x[:, 2] = torch.tensor([7, 8, 9])
    x[0, ::2] = -1
    x[..., -1] = 3
    return x


@exact
def setitem_broadcast_and_cast():
    x = torch.zeros(2, 3)
    x[:] = torch.tensor([1, 2, 3])   # int64 source into float32: cast
    x[1] = 2.5
    return x


@exact
def setitem_mask():
    x = torch.arange(6.0)
    x[x > 2] = 0.0
    y = torch.arange(6)
    y[y % 2 == 0] = torch.tensor([10, 20, 30])
    return x, y


@exact
def setitem_index_tensor():
    x = torch.zeros(5, dtype=torch.int32)
    x[torch.tensor([0, 3])] = torch.tensor([4, 6], dtype=torch.int32)
    x[[1]] = 9
    return x


@exact
def setitem_none_ellipsis():
    x = torch.zeros(2, 2)
    x[None, ..., 0] = 1.0
    return x


@exact
def index_put_accumulate():
    x = torch.zeros(4)
    return x.index_put((torch.tensor([0, 0, 2]),), torch.tensor([1.0, 2.0, 3.0]), accumulate=True)


@exact
def gather_scatter():
    x = torch.tensor([[1, 2], [3, 4]])
    idx = torch.tensor([[0, 0], [1, 0]])
    return (torch.gather(x, 1, idx), torch.zeros(2, 2, dtype=torch.int64).scatter(0, idx, x),
            torch.zeros(3).scatter_add(0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0])))


@exact
def index_select_masked_select():
    x = _x()
    return (torch.index_select(x, 2, torch.tensor([0, 3])), torch.masked_select(x, x > 20),
            x.masked_fill(x < 3, -1)[0, 0], torch.take(x, torch.tensor([0, 23])))


@exact
def nonzero_argwhere():
    x = torch.tensor([[0, 1], [2, 0]])
    return x.nonzero(), torch.nonzero(x, as_tuple=True), torch.argwhere(x)


@exact
def index_int32_and_uint8_tensors():
    x = torch.arange(5)
    return (x[torch.tensor([1, 2], dtype=torch.int32)],
            x[torch.tensor([1, 0, 0, 1, 1], dtype=torch.uint8)])


@exact
def index_with_0dim_tensor():
    x = torch.arange(5)
    return x[torch.tensor(3)], x[torch.tensor(3)].shape


@exact
def empty_index():
    x = torch.arange(6).view(2, 3)
    return x[torch.tensor([], dtype=torch.long)].shape, x[1:1].shape, x[x > 100]


@case
def masked_select_zero_dim():
    x = torch.tensor(3.0)
    return (torch.masked_select(x, torch.tensor(True)), torch.masked_select(x, torch.tensor(False)),
            torch.masked_select(x, torch.tensor([True, False, True])))


@case
def gather_empty_index_of_any_integer_dtype():
    # upstream checks the index dtype only when there is something to gather
    src = torch.ones(3, 4)
    return tuple(torch.gather(src, 1, torch.zeros(0, 2, dtype=dt)).shape for dt in (torch.int16, torch.uint8, torch.int8))


# --- edge cases that only OpInfo's later samples reached -----------------------------------

@case(exact=True)
def gather_0dim_input_with_1d_index():
    return torch.gather(torch.tensor(3.0), 0, torch.tensor([0])), torch.gather(torch.tensor([3.0]), 0, torch.tensor(0))


@case(exact=True)
def take_along_dim_wraps_indices_modulo_the_size():
    x = torch.arange(25.0).reshape(5, 5)
    return torch.take_along_dim(x, torch.tensor([[-1, -5], [0, 4], [-6, 7], [3, 3], [2, -11]]), 1)


@case
def take_along_dim_flat_negative_index():
    return torch.take_along_dim(torch.arange(25.0).reshape(5, 5), torch.tensor([-1, 3]))


@case(exact=True)
def masked_scatter_broadcasts_self_to_the_mask():
    m = torch.tensor([[True, False], [True, True]])
    return torch.ones(2).masked_scatter(m, torch.arange(4.0))


@case
def masked_scatter_source_dtype_mismatch():
    return torch.ones(2, 2).masked_scatter(torch.ones(2, 2, dtype=torch.bool), torch.ones(4, dtype=torch.float64))


@case
def masked_scatter_too_few_source_elements():
    return torch.ones(2, 2).masked_scatter(torch.ones(2, 2, dtype=torch.bool), torch.ones(3))


@case(exact=True)
def index_add_repeated_rows_in_order():
    # the native kernel adds the slices in index order (upstream's index_add_cpu_ loop), so
    # float32 sums over repeated indices round as upstream's; alpha fused into each add
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 5, generator=g)
    src = torch.randn(40, 5, generator=g) * 1e3
    idx = torch.randint(0, 6, (40,), generator=g)
    src3 = torch.randn(2, 9, 3, generator=g, dtype=torch.float64)
    x3 = torch.randn(2, 4, 3, generator=g, dtype=torch.float64)
    i3 = torch.tensor([3, 0, 3, 1, 3, 2, 0, 0, 1], dtype=torch.int32)
    return (x.index_add(0, idx, src), x.index_add(0, idx, src, alpha=0.37), x3.index_add(1, i3, src3, alpha=-2.5),
            x.t().index_add(1, idx, src.t()), torch.zeros(6).index_add_(0, idx, src[:, 0]))


@case(exact=True)
def index_add_in_place_writes_through_views():
    # the kernel adds into self itself: a transposed or sliced self writes through to its base,
    # the version counter moves once, and a 1-d self keeps the slices added before a bad index
    g = torch.Generator().manual_seed(6)
    src = torch.randn(7, 4, generator=g)
    idx = torch.tensor([2, 0, 2, 4, 1, 0, 2])
    base = torch.randn(4, 5, generator=g)
    t = base.t()
    v0 = t._version
    t.index_add_(0, idx, src, alpha=1.5)
    rows = torch.randn(8, 4, generator=g, dtype=torch.float64)
    part = rows[2:6].index_add_(0, torch.tensor([3, 3, 0]), rows[:3] * 1e5)
    line = torch.zeros(5)
    try:
        line.index_add_(0, torch.tensor([1, 3, 9, 2]), torch.ones(4))
        err = None
    except (RuntimeError, IndexError) as e:
        err = (type(e).__name__, str(e))
    return base, t._version - v0, part, rows, line, err


@case
def index_add_out_of_range():
    out = []
    for f in (lambda: torch.zeros(3, 2).index_add_(1, torch.tensor([0, -3]), torch.ones(3, 2)),
              lambda: torch.zeros(3, 2).index_add(0, torch.tensor([0, 4, -9]), torch.ones(3, 2)),
              lambda: torch.zeros(3, 2, dtype=torch.int64).index_add(0, torch.tensor([-1]), torch.ones(1, 2, dtype=torch.int64)),
              lambda: torch.zeros(3).index_add_(0, torch.tensor([0, -1]), torch.ones(2))):
        try:
            out.append(f())
        except (RuntimeError, IndexError) as e:
            out.append((type(e).__name__, str(e)))
    return out


@case(exact=True)
def embedding_backward_accumulates_rows():
    g = torch.Generator().manual_seed(9)
    emb = torch.nn.Embedding(11, 6)
    with torch.no_grad():
        emb.weight.copy_(torch.randn(11, 6, generator=g))
    ids = torch.randint(0, 11, (4, 25), generator=g)
    (emb(ids) * torch.randn(4, 25, 6, generator=g)).sum().backward()
    pad = torch.nn.Embedding(11, 6, padding_idx=2)
    (pad(ids) ** 2).sum().backward()
    return emb.weight.grad, pad.weight.grad
