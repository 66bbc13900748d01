"""Views: view/reshape/transpose/permute/slicing/select/expand/squeeze/unsqueeze/contiguous,
their metadata (stride, storage_offset, is_contiguous) and storage sharing with the base."""
from functools import partial

from .registry import case, torch

# Views move no arithmetic: everything here is bit-exact.
exact = partial(case, exact=True)


def _base():
    return torch.arange(24.0).view(2, 3, 4)


def _meta(t):
    return t.shape, t.stride(), t.storage_offset(), t.is_contiguous()


@exact
def view_shapes():
    x = torch.arange(12)
    return x.view(3, 4), x.view(-1, 6), x.view(2, 2, 3).shape, x.view(12, 1).stride()


@exact
def view_shares_storage():
    x = torch.arange(6.0)
    v = x.view(2, 3)
    v[1, 2] = 100.0
    return x, v.data_ptr() == x.data_ptr(), v._base is x


@exact
def reshape_view_or_copy():
    x = _base()
    r1 = x.reshape(6, 4)          # contiguous: a view
    t = x.transpose(0, 2)
    r2 = t.reshape(-1)            # not viewable: a copy
    r1[0, 0] = -1.0
    return x[0, 0, 0], r1.data_ptr() == x.data_ptr(), r2.data_ptr() == x.data_ptr(), r2


@exact
def transpose_meta():
    x = _base()
    t = x.transpose(0, 2)
    return t, _meta(t), _meta(x[0].t())


@exact
def transpose_mutation_visible():
    x = torch.zeros(2, 3)
    x.t()[2, 1] = 5.0
    return x


@exact
def permute_meta():
    x = _base()
    p = x.permute(2, 0, 1)
    return p, _meta(p), _meta(x.permute(-1, -2, -3))


@exact
def slicing_steps():
    x = torch.arange(10)
    return x[::2], x[1::3], x[2:8:2], x[-3:], x[:-7], x[5:2], _meta(x[1::3])


@exact
def slicing_2d_meta():
    x = _base()
    s = x[:, 1:, ::2]
    return s, _meta(s), _meta(x[1]), _meta(x[..., 3])


@exact
def slice_mutation_visible():
    x = torch.arange(10)
    x[::3] = 0
    y = torch.arange(10)
    s = y[2:5]
    s += 100
    return x, y


@exact
def select_meta():
    x = _base()
    s = x.select(1, 2)
    return s, _meta(s), x.select(0, -1).shape, _meta(x[1, 2])


@exact
def narrow_unbind():
    x = _base()
    return x.narrow(2, 1, 2), _meta(x.narrow(1, 1, 1)), x.unbind(0)


@exact
def expand_meta():
    x = torch.tensor([[1], [2], [3]])
    e = x.expand(3, 4)
    return e, _meta(e), _meta(x.expand(2, 3, 2)), torch.tensor(5).expand(2, 2), x.expand(-1, 2)


@exact
def expand_as_broadcast_to():
    x = torch.arange(3)
    return x.expand_as(torch.zeros(2, 3)), torch.broadcast_to(x, (2, 3)).stride()


@exact
def expand_shares_storage():
    x = torch.zeros(3, 1)
    e = x.expand(3, 4)
    x[1, 0] = 7.0
    return e


@exact
def squeeze_unsqueeze():
    x = torch.zeros(1, 3, 1, 2)
    return (x.squeeze().shape, x.squeeze(0).shape, x.squeeze(1).shape, x.squeeze(-2).shape,
            x.unsqueeze(0).shape, x.unsqueeze(-1).shape, _meta(x.unsqueeze(2)),
            x.squeeze((0, 2)).shape)


@exact
def unsqueeze_shares_storage():
    x = torch.arange(4.0)
    u = x.unsqueeze(0)
    u[0, 2] = -9.0
    return x, _meta(u)


@exact
def contiguous():
    x = _base()
    t = x.transpose(1, 2)
    c = t.contiguous()
    return (c, _meta(c), t.is_contiguous(), c.data_ptr() == t.data_ptr(),
            x.contiguous().data_ptr() == x.data_ptr())


@exact
def flatten_unflatten():
    x = _base()
    return x.flatten(), x.flatten(1), x.flatten(0, 1).shape, x.flatten().unflatten(0, (4, 6)).shape


@exact
def view_of_view_offsets():
    x = torch.arange(30.0).view(5, 6)
    v = x[1:, 2:][::2, 1]
    return v, _meta(v), v.data_ptr() - x.data_ptr() == v.storage_offset() * x.element_size()


@exact
def as_strided():
    x = torch.arange(9.0)
    a = torch.as_strided(x, (2, 2), (3, 1), 1)
    return a, _meta(a)


@exact
def movedim_swapaxes():
    x = _base()
    return x.movedim(0, -1).shape, x.swapaxes(0, 1).stride(), x.mT.shape


@exact
def diagonal_view():
    x = torch.arange(9.0).view(3, 3)
    d = x.diagonal()
    d.fill_(0.0)
    return x, _meta(d)


@exact
def view_dtype_reinterpret():
    x = torch.tensor([1.0, -2.0])
    return x.view(torch.int32), x.view(torch.uint8).shape


@exact
def clone_does_not_share():
    x = torch.arange(3.0)
    c = x.clone()
    c[0] = 9.0
    return x, c, c.data_ptr() == x.data_ptr()


@exact
def detach_shares_storage():
    x = torch.ones(3, requires_grad=True)
    d = x.detach()
    d[1] = 4.0
    return x.detach(), d.requires_grad, x.requires_grad


@exact
def t_view_version_counter():
    x = torch.zeros(3)
    v = x[1:]
    before = x._version
    v.add_(1)
    return x._version > before, v._version == x._version


@exact
def element_size_numel_nbytes():
    x = torch.zeros(2, 3, dtype=torch.float16)
    return x.element_size(), x.numel(), x.nbytes, x.dim(), x.ndim, len(x), x.size(1), x.size()


@exact
def untyped_storage_shared():
    x = torch.arange(4.0)
    v = x[2:]
    return (v.untyped_storage().data_ptr() == x.untyped_storage().data_ptr(),
            v.untyped_storage().nbytes(), x.is_set_to(x))


# --- complex tensors as pairs of reals (views: no kernel) ---------------------------------------

def _pairs():
    return torch.arange(12.0).view(2, 3, 2)


@exact
def view_as_complex_and_back():
    r = _pairs()
    c = torch.view_as_complex(r)
    back = torch.view_as_real(c)
    flat = [(z.real, z.imag) for z in c.reshape(-1).tolist()]  # complex numbers as pairs for the harness
    return (c.dtype, c.shape, c.stride(), flat, back, back.stride(), back.data_ptr() == r.data_ptr(),
            torch.view_as_complex(r.double()).dtype)


@exact
def complex_real_imag_views():
    c = torch.view_as_complex(_pairs())
    c.imag[0] = -1.0  # writes through to the pairs
    z = c[1, 2].item()
    return c.real, c.imag, c.real.stride(), c.imag.storage_offset(), torch.view_as_real(c), (z.real, z.imag)


@exact
def complex_view_of_a_slice():
    r = torch.arange(16.0).view(4, 2, 2)[1:]
    c = torch.view_as_complex(r)
    return c.shape, c.stride(), c.storage_offset(), c.real


@case
def view_as_complex_wrong_dtype():
    return torch.view_as_complex(torch.zeros(2, 2, dtype=torch.int64))


@case
def view_as_complex_last_dim_not_two():
    return torch.view_as_complex(torch.zeros(2, 3))


@case
def view_as_complex_strided_last_dim():
    return torch.view_as_complex(torch.zeros(2, 2).t())


@case
def view_as_real_of_real():
    return torch.view_as_real(torch.zeros(2))


@case
def imag_of_real():
    return torch.zeros(2).imag


@case(exact=True)
def meshgrid_xy_swaps_the_first_two_grids():
    a, b, c = torch.arange(3.0), torch.arange(4.0), torch.tensor(5.0)
    grids = torch.meshgrid(a, b, c, indexing="xy") + torch.meshgrid(a, c, indexing="xy")
    return grids, [g.stride() for g in grids]


@case(exact=True)
def diff_order_zero_is_a_copy_ignoring_prepend():
    x = torch.arange(6.0).reshape(2, 3)
    r = torch.diff(x, 0, 0, torch.ones(1, 3))
    return r, r.data_ptr() == x.data_ptr()
