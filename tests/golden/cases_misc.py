"""In-place ops, repr text, .item(), .tolist(), numpy interop, misc Tensor API."""
from functools import partial

from .registry import F, case, np, torch

exact = partial(case, exact=True)


@exact
def inplace_arith_same_object():
    x = torch.ones(3)
    y = x.add_(2)
    x.mul_(torch.tensor([1.0, 2.0, 3.0])).sub_(1).div_(2)
    return x, y is x


@exact
def inplace_int_ops():
    x = torch.tensor([5, -6, 7])
    x += 1
    x *= 2
    x //= 3
    x %= 5
    return x


@exact
def inplace_float_into_int_raises():
    x = torch.tensor([1, 2])
    x += 1.5
    return x


@exact
def inplace_result_dtype_kept():
    x = torch.zeros(2, dtype=torch.float16)
    x += torch.tensor([1.0, 2.0], dtype=torch.float64)
    return x


@exact
def inplace_fill_zero_copy():
    x = torch.empty(2, 3)
    x.fill_(4.0)
    y = torch.zeros(3)
    y.copy_(torch.tensor([1, 2, 3]))
    z = torch.ones(2, 2).zero_()
    return x, y, z


@exact
def copy_broadcasts_and_casts():
    x = torch.zeros(2, 3, dtype=torch.int32)
    x.copy_(torch.tensor([1.7, -2.2, 3.9]))
    return x


@exact
def inplace_clamp_abs_neg():
    x = torch.tensor([-3.0, 0.5, 4.0])
    x.clamp_(-1, 1).abs_()
    y = torch.tensor([1, -2]).neg_()
    return x, y


@exact
def inplace_on_noncontiguous_view():
    x = torch.arange(12.0).view(3, 4)
    x.t()[1].mul_(10)
    x[:, ::2].add_(0.5)
    return x


@exact
def masked_fill_inplace():
    x = torch.arange(5.0)
    x.masked_fill_(x > 2, -1.0)
    return x


@exact
def index_add_and_fill():
    x = torch.zeros(4)
    x.index_add_(0, torch.tensor([0, 2, 0]), torch.tensor([1.0, 2.0, 3.0]))
    y = torch.zeros(4).index_fill_(0, torch.tensor([1, 3]), 9.0)
    return x, y


# repr is part of the API users see; the whole string must match upstream.
@exact
def repr_float():
    return repr(torch.tensor([1.0, 2.5, -3.0]))


@exact
def repr_int_2d():
    return repr(torch.arange(6).view(2, 3))


@exact
def repr_dtypes():
    return [repr(torch.tensor([1, 2], dtype=d)) for d in (
        torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int32, torch.uint8,
        torch.bool)]


@exact
def repr_scalar_and_empty():
    return (repr(torch.tensor(3.25)), repr(torch.tensor([])), repr(torch.zeros(0, 2)),
            repr(torch.tensor(7)))


@exact
def repr_sci_and_precision():
    return (repr(torch.tensor([1e-8, 1.0, 1e8])), repr(torch.tensor([0.1234567, 123.456])),
            repr(torch.tensor([1e20])))


@exact
def repr_nan_inf():
    return repr(torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5]))


@exact
def repr_large_summarised():
    return repr(torch.arange(2000)), repr(torch.arange(1200.0).view(40, 30))


@exact
def repr_requires_grad_and_grad_fn():
    x = torch.ones(2, requires_grad=True)
    return repr(x), repr(x * 2), str(torch.tensor([1.5]))


@exact
def repr_rand_values():
    return repr(torch.rand(3, 3)), repr(torch.randn(2, dtype=torch.float64))


@exact
def repr_size_dtype_device():
    return (repr(torch.zeros(2, 3).shape), repr(torch.float32), str(torch.zeros(1).device),
            repr(torch.device("cpu")))


@exact
def item_types():
    return (torch.tensor(2.5).item(), torch.tensor(3).item(), torch.tensor(True).item(),
            torch.tensor([7], dtype=torch.int8).item(), torch.tensor(0.1).item(),
            torch.tensor(0.1, dtype=torch.float64).item(),
            torch.tensor(1.5, dtype=torch.float16).item())


@exact
def python_conversions():
    x = torch.tensor(3.7)
    return (float(x), int(x), bool(x), int(torch.tensor(-3.7)), bool(torch.tensor(0)),
            torch.tensor(4).__index__())


@exact
def tolist():
    return (torch.arange(6).view(2, 3).tolist(), torch.tensor([0.1, 2.5]).tolist(),
            torch.tensor(5).tolist(), torch.tensor([True, False]).tolist(),
            torch.zeros(2, 0).tolist(), torch.arange(6.0).view(3, 2).t().tolist())


@exact
def numpy_roundtrip_dtypes():
    out = {}
    for d in ("float32", "float64", "float16", "int8", "int16", "int32", "int64", "uint8", "bool"):
        a = np.arange(4).astype(d)
        t = torch.from_numpy(a)
        out[d] = (t, t.numpy().dtype.name)
    return out


@exact
def from_numpy_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(a)
    a[0, 1] = 42.0
    t[1, 2] = -1.0
    return t, a.tolist()


@exact
def numpy_shares_memory():
    t = torch.zeros(4, dtype=torch.int64)
    a = t.numpy()
    a[2] = 9
    t[0] = 3
    return t, a


@exact
def from_numpy_noncontiguous():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)[:, ::2]
    t = torch.from_numpy(a)
    return t, t.stride(), t.is_contiguous()


@exact
def numpy_of_view():
    t = torch.arange(12.0).view(3, 4).t()
    return t.numpy(), t.numpy().strides


@exact
def as_tensor_and_tensor_copy_semantics():
    a = np.array([1.0, 2.0])
    shared = torch.as_tensor(a)
    copied = torch.tensor(a)
    a[0] = 5.0
    return shared, copied, shared.dtype


@exact
def numpy_requires_grad_raises():
    return torch.ones(2, requires_grad=True).numpy()


@exact
def bool_of_multi_element_raises():
    return bool(torch.tensor([1, 2]))


@exact
def len_iter_contains():
    x = torch.arange(6).view(3, 2)
    return len(x), [r for r in x], 3 in x, 10 in x


@exact
def is_tensor_numel_type():
    x = torch.zeros(2, 2)
    return (torch.is_tensor(x), torch.numel(x), x.type(), x.long().type(),
            isinstance(x, torch.Tensor))


@exact
def requires_grad_flags():
    w = torch.ones(2, requires_grad=True)
    y = w * 3
    with torch.no_grad():
        z = w * 3
    return y.requires_grad, y.is_leaf, z.requires_grad, w.is_leaf, y.grad_fn is not None


@exact
def simple_backward():
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()
    return w.grad


@case
def custom_op_runs_and_its_aliasing_check_holds():
    @torch.library.custom_op("tn_golden::twice", mutates_args=())
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    x = torch.ones(3)
    return (twice(x), torch._C._any_output_is_alias_to_input_or_output(([x],), {}, (x[:1],)),
            torch._C._any_output_is_alias_to_input_or_output((x,), {}, (x.clone(),)))


@case
def custom_op_returning_its_input_is_refused():
    @torch.library.custom_op("tn_golden::same", mutates_args=())
    def same(x: torch.Tensor) -> torch.Tensor:
        return x

    return same(torch.ones(3))


@case
def upstream_decompositions_run_where_the_core_has_no_implementation():
    g = torch.Generator().manual_seed(9)
    x = torch.randn(5, 4, generator=g)
    return (torch._chunk_cat([torch.randn(3, 5, generator=g), torch.randn(3, 2, generator=g)], 1, 2),
            torch.nn.functional.pdist(x), torch.nn.functional.pdist(x, p=1.5),
            torch.nn.functional.multi_margin_loss(x, torch.tensor([0, 3, 1, 2, 2])),
            torch.nn.functional.adaptive_max_pool3d(torch.randn(1, 2, 4, 4, 6, generator=g), (2, 2, 3), True))


@case
def upstream_decomposition_checks_hold():
    return torch._chunk_cat([torch.randn(3, 5), torch.randn(2, 2)], 1, 2)


@exact
def as_subclass_is_a_recorded_alias():
    class Sub(torch.Tensor):
        pass

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 2
    z = y.as_subclass(Sub)
    z.sum().backward()
    w = torch.ones(2).as_subclass(Sub)
    a = torch.ops.aten.alias(y)
    return (type(z).__name__, type(z.grad_fn).__name__, z.requires_grad, z._base is y, x.grad,
            type(w).__name__, w.requires_grad, a._base is y)


@exact
def as_subclass_refuses_a_non_tensor_class():
    return torch.ones(2).as_subclass(int)


@case
def special_functions_on_meta_tensors():
    m = torch.ones(3, device="meta")
    return [(r.shape, r.dtype, r.device.type) for r in (torch.special.i1e(m), torch.special.legendre_polynomial_p(m, 3),
                                                        torch.special.airy_ai(m))]


@case
def nuclear_norm_of_a_batch_and_cosine_similarity_of_mixed_dtypes():
    return (torch.nuclear_norm(torch.arange(24.0).reshape(2, 3, 4) % 5), F.cosine_similarity(
        torch.tensor([[1, 2, 3]]), torch.tensor([[1.0, 0.5, 2.0]]), 1), torch.ops.aten.narrow_copy(torch.ones(2, 3), 1, 1, 2))


@case
def binary_cross_entropy_broadcasts_squeezed_operands():
    A = torch.ops.aten
    return (A.binary_cross_entropy(torch.full((2, 1), 0.3), torch.tensor([0.2, 0.9])),
            A.binary_cross_entropy(torch.full((2, 3), 0.3), torch.tensor([0.2, 0.9, 0.1]), None, 0),
            torch.softmax(torch.ones(0, 3, dtype=torch.long), 1), torch.softmax(torch.tensor(2.0), -1),
            F.softmax(torch.ones(2, dtype=torch.long), 0, dtype=torch.float64))


@case
def batch_norm_update_stats_updates_the_running_statistics():
    x = torch.arange(24.0).reshape(2, 3, 4) % 7
    rm, rv = torch.zeros(3), torch.ones(3)
    out = torch.ops.aten.batch_norm_update_stats(x, rm, rv, 0.1)
    half = torch.ops.aten.batch_norm_update_stats(x.half(), torch.zeros(3), torch.ones(3), 0.1)
    return out, rm, rv, half, torch.ops.aten.batch_norm_update_stats(x, None, None, 0.1)


@case
def rrelu_with_noise_out_in_evaluation():
    A = torch.ops.aten
    return (A.rrelu_with_noise.out(torch.tensor([-1.0, 2.0]), torch.zeros(2), 0.1, 0.3, False, out=torch.empty(2)),
            A.rrelu_with_noise.default(torch.tensor([-1.0, 2.0]), torch.zeros(2), 0.3, 0.1, False))


@case
def diff_of_order_zero_ignores_the_dim():
    return torch.diff(torch.ones(1, 4), 0, 2), torch.diff(torch.arange(6.0).reshape(2, 3), 1, 1,
                                                           prepend=torch.zeros(2, 1))
