"""Factories: tensor(), zeros/ones/full/empty, arange, linspace, eye, *_like, RNG."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)  # these values are exactly representable: no tolerance


@exact
def tensor_nested_int():
    return torch.tensor([[1, 2, 3], [4, 5, 6]])


@exact
def tensor_nested_float():
    return torch.tensor([[1.5, -2.0], [0.25, 3.0]])


@exact
def tensor_mixed_int_float():
    return torch.tensor([1, 2.5, 3])


@exact
def tensor_bool():
    return torch.tensor([True, False, True])


@exact
def tensor_mixed_bool_int():
    return torch.tensor([True, 2])


@exact
def tensor_scalar_0dim():
    t = torch.tensor(3.5)
    return t, t.dim(), t.shape


@exact
def tensor_empty_list():
    return torch.tensor([])


@exact
def tensor_with_dtype():
    return {str(d): torch.tensor([1, 0, 2], dtype=d) for d in (
        torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16,
        torch.int32, torch.int64, torch.uint8, torch.bool)}


@exact
def tensor_float64_precision():
    return torch.tensor([0.1, 1 / 3, 1e-300, 1e300], dtype=torch.float64)


@exact
def tensor_float32_rounding():
    return torch.tensor([0.1, 1 / 3, 16777217.0])  # rounds to float32


@exact
def tensor_large_int64():
    return torch.tensor([2 ** 62, -(2 ** 63)])


@case
def tensor_ragged_raises():
    return torch.tensor([[1, 2], [3]])


@exact
def tensor_from_tensor_list():
    return torch.tensor([torch.tensor(1.0), torch.tensor(2.0)])


@exact
def zeros_shapes():
    return torch.zeros(2, 3), torch.zeros((4,)), torch.zeros([]), torch.zeros(0, 3)


@exact
def ones_dtype():
    return torch.ones(2, 2, dtype=torch.int32), torch.ones(3, dtype=torch.bool)


@exact
def full_int_float_bool():
    return torch.full((2, 2), 7), torch.full((2,), 1.5), torch.full((2,), True)


@exact
def full_with_dtype():
    return torch.full((3,), -1, dtype=torch.uint8), torch.full((2,), 2.5, dtype=torch.float16)


@exact
def empty_shape_dtype():
    e = torch.empty(3, 4, dtype=torch.float64)
    return e.shape, e.dtype, e.is_contiguous(), e.stride()


@exact
def arange_int():
    return torch.arange(5), torch.arange(2, 10, 3), torch.arange(10, 0, -3)


@case
def arange_float():
    return torch.arange(0, 1, 0.1), torch.arange(1.0, -1.0, -0.25)


@exact
def arange_dtype_inference():
    return (torch.arange(3).dtype, torch.arange(3.0).dtype, torch.arange(0, 3, 1.0).dtype,
            torch.arange(3, dtype=torch.float64).dtype)


@exact
def arange_integer_dtype_float_bounds():
    # int64 truncates bounds and step before sizing (upstream's int64 branch of arange_out); the
    # other integer dtypes size from the bounds as given and step by the truncated step
    return (torch.arange(0, 10.0, 2.5, dtype=torch.int64), torch.arange(0.2, 5.9, 1.5, dtype=torch.int64),
            torch.arange(0, 10.0, 2.5, dtype=torch.int32), torch.arange(-1.5, 2.0, 0.7, dtype=torch.int32),
            torch.arange(-1.5, 2.0, 0.7, dtype=torch.uint8), torch.arange(0.9, 0.2, -1.5, dtype=torch.int64))


@exact
def arange_empty():
    return torch.arange(5, 5), torch.arange(0, -3, -1)


@case
def arange_wrong_sign_raises():
    return torch.arange(0, -3)


@case
def linspace():
    return torch.linspace(0, 1, 5), torch.linspace(-1, 1, 7), torch.linspace(3, -2, 11)


@exact
def linspace_edge():
    return torch.linspace(2, 2, 1), torch.linspace(0, 1, 0).shape, torch.linspace(0, 10, 2)


@exact
def linspace_int_dtype():
    return torch.linspace(0, 10, 4, dtype=torch.int64)


@case
def logspace():
    return torch.logspace(0, 2, 3)


@exact
def eye():
    return torch.eye(3), torch.eye(2, 4), torch.eye(3, dtype=torch.int64)


@exact
def like_factories():
    x = torch.arange(6, dtype=torch.int16).view(2, 3)
    return (torch.zeros_like(x), torch.ones_like(x), torch.full_like(x, 9),
            torch.empty_like(x).shape, torch.empty_like(x).dtype,
            torch.zeros_like(x, dtype=torch.float32))


@exact
def like_keeps_float_dtype():
    x = torch.zeros(2, dtype=torch.float64)
    return torch.ones_like(x), torch.full_like(x, 0.5), torch.rand_like(x).dtype


@exact
def default_dtype():
    return torch.get_default_dtype(), torch.tensor(1.0).dtype, torch.tensor(1).dtype


# RNG: must be bit-identical to upstream's mt19937/Philox-on-CPU streams.
@exact
def rand():
    return torch.rand(5)


@exact
def rand_2d_float64():
    return torch.rand(3, 4, dtype=torch.float64)


@exact
def randn():
    return torch.randn(7)


@exact
def randn_float64():
    return torch.randn(2, 3, dtype=torch.float64)


@exact
def randn_large_vectorised_path():
    return torch.randn(40)  # >= 16 elements takes upstream's vectorised normal path


@exact
def randint():
    return torch.randint(0, 10, (12,)), torch.randint(5, (2, 3))


@exact
def randint_dtype():
    return torch.randint(-5, 5, (6,), dtype=torch.int32)


@exact
def randperm():
    return torch.randperm(10)


@exact
def manual_seed_reproducible():
    torch.manual_seed(42)
    a = torch.rand(3)
    torch.manual_seed(42)
    return a, torch.rand(3)


@exact
def rng_stream_continues():
    return torch.rand(2), torch.randn(2), torch.randint(0, 100, (2,)), torch.rand(2)


@exact
def generator_object():
    g = torch.Generator().manual_seed(7)
    return torch.rand(3, generator=g), torch.randn(2, generator=g)


@exact
def normal_uniform_inplace():
    a = torch.empty(4).uniform_(-2, 2)
    b = torch.empty(4).normal_(1.0, 0.5)
    return a, b


@exact
def bernoulli_multinomial():
    return (torch.bernoulli(torch.full((6,), 0.5)),
            torch.multinomial(torch.tensor([0.1, 0.2, 0.7]), 4, replacement=True))


@case(exact=True)
def new_factories_follow_self():
    x = torch.zeros(2, 3, dtype=torch.float64)
    return (x.new_ones(2), x.new_zeros((1, 2)), x.new_full((2,), 7), x.new_empty((3, 0)).shape,
            x.new_tensor([1, 2]), torch.arange(3).new_ones(2))


@case(exact=True)
def linspace_logspace_integral_truncate_the_bounds_first():
    return (torch.linspace(4.3, -3, 50, dtype=torch.int64), torch.linspace(0, 10.5, 7, dtype=torch.int64),
            torch.logspace(0, 1.2, 5, dtype=torch.int64), torch.logspace(0.5, 3.3, 6, base=3, dtype=torch.int64))


@exact
def normal_with_tensor_mean_and_std():
    torch.manual_seed(7)
    m, sd = torch.arange(20.0).reshape(4, 5), torch.linspace(0.1, 2, 20).reshape(4, 5)
    return (torch.normal(m, sd), torch.normal(m[:1], sd), torch.normal(m, 2.0), torch.normal(1.5, sd),
            torch.normal(m[:1, :3], sd[:1, :3]), torch.normal(m.double(), 0.5))


@case
def normal_negative_std_tensor():
    return torch.normal(torch.zeros(3), -torch.ones(3))


@case
def normal_integer_mean():
    return torch.normal(torch.zeros(3, dtype=torch.long), 1.0)


@case
def uniform_on_integers():
    return torch.empty(3, dtype=torch.long).uniform_()


@exact
def cauchy_log_normal_geometric_draws():
    torch.manual_seed(3)
    out = []
    for dt in (torch.float32, torch.float64, torch.bfloat16):
        out += [torch.empty(20, dtype=dt).cauchy_(0.5, 2.0), torch.empty(4, 5, dtype=dt).t().cauchy_(),
                torch.empty(21, dtype=dt).log_normal_(0.1, 0.7), torch.empty(20, dtype=dt).geometric_(0.3)]
    out += [torch.empty(20, dtype=dt).geometric_(0.05) for dt in (torch.int64, torch.uint8)]
    # log_normal_ shares the generator's cached second normal sample with normal draws
    out.append(torch.cat([torch.empty(3).log_normal_(), torch.randn(3), torch.empty(2).log_normal_()]))
    return out


@case
def cauchy_on_integers():
    return torch.empty(3, dtype=torch.long).cauchy_()


@case
def geometric_p_out_of_range():
    return torch.empty(3).geometric_(1.0)


@exact
def like_factories_keep_a_permuted_layout():
    """preserve_format keeps a dense permuted tensor's strides (else the layout's order), and a
    random *_like fill draws in that memory order: VITS samples its prior with randn_like of a
    transposed tensor."""
    x = torch.empty(1, 37, 8).transpose(1, 2)
    y = torch.empty(4, 1, 3).expand(4, 5, 3)
    z = torch.empty(2, 3, 4, 5).permute(0, 2, 3, 1)
    strides = [f(t).stride() for t in (x, y, z)
               for f in (torch.empty_like, torch.zeros_like, torch.ones_like, torch.rand_like, torch.randn_like,
                         lambda t: torch.full_like(t, 2.0), lambda t: torch.randint_like(t, 5))]
    torch.manual_seed(5)
    drawn = torch.randn_like(x), torch.rand_like(x)
    return strides, torch.empty_like(z, memory_format=torch.contiguous_format).stride(), drawn


@case(exact=True)
def tensor_stores_python_numbers_as_upstream():
    # floats beyond a format's range are its infinities; negative ints wrap into uint8 while their
    # magnitude fits; floats truncate toward zero into integers
    return (torch.tensor([1e300, -1e300, 1e39], dtype=torch.float32), torch.tensor([7e4, -1e300], dtype=torch.float16),
            torch.tensor([1e300, -1e300], dtype=torch.bfloat16), torch.tensor([-1, -255, 255], dtype=torch.uint8),
            torch.tensor([3.7, -3.7, -0.5], dtype=torch.int32), torch.tensor([-(2**63), 2**63 - 1]),
            torch.view_as_real(torch.tensor([1e300 + 0j], dtype=torch.complex64)))
