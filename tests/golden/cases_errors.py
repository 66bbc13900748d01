"""Bad input: the exception TYPE must match upstream (messages are recorded, not compared).
Each case raises; the expected type is whatever upstream 2.13.0 raises."""
from .registry import F, case, nn, torch


@case
def add_shape_mismatch():
    return torch.ones(2, 3) + torch.ones(4)


@case
def mul_broadcast_mismatch():
    return torch.ones(2, 3) * torch.ones(3, 2)


@case
def mm_inner_mismatch():
    return torch.mm(torch.ones(2, 3), torch.ones(4, 2))


@case
def mm_not_2d():
    return torch.mm(torch.ones(3), torch.ones(3, 2))


@case
def matmul_dtype_mismatch():
    return torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)


@case
def bmm_batch_mismatch():
    return torch.bmm(torch.ones(2, 3, 4), torch.ones(3, 4, 5))


@case
def cat_shape_mismatch():
    return torch.cat([torch.ones(2, 3), torch.ones(2, 4)])


@case
def cat_dim_out_of_range():
    return torch.cat([torch.ones(2), torch.ones(2)], dim=1)


@case
def cat_empty_list():
    return torch.cat([])


@case
def stack_shape_mismatch():
    return torch.stack([torch.ones(2), torch.ones(3)])


@case
def index_out_of_range():
    return torch.arange(5)[5]


@case
def index_out_of_range_negative():
    return torch.zeros(2, 3)[0, -4]


@case
def index_tensor_out_of_range():
    return torch.arange(5)[torch.tensor([1, 7])]


@case
def too_many_indices():
    return torch.zeros(2, 3)[0, 0, 0]


@case
def index_tensor_float_dtype():
    return torch.arange(5)[torch.tensor([1.0, 2.0])]


@case
def index_select_wrong_index_dtype():
    return torch.index_select(torch.arange(5), 0, torch.tensor([1, 2], dtype=torch.int16))


@case  # not an error: upstream accepts int32 gather indices (kept to pin that down)
def gather_int32_index_is_accepted():
    return torch.gather(torch.ones(2, 2), 1, torch.tensor([[0, 1], [1, 0]], dtype=torch.int32))


@case
def bool_mask_wrong_shape():
    return torch.arange(4)[torch.tensor([True, False])]


@case
def negative_step_slice():
    return torch.arange(5)[::-1]


@case
def item_multi_element():
    return torch.tensor([1, 2]).item()


@case
def item_empty():
    return torch.tensor([]).item()


@case
def view_incompatible_shape():
    return torch.arange(6).view(4, 2)


@case
def view_non_contiguous():
    return torch.arange(6).view(2, 3).t().view(6)


@case
def view_two_inferred_dims():
    return torch.arange(6).view(-1, -1)


@case
def reshape_incompatible():
    return torch.arange(6).reshape(5)


@case
def transpose_dim_out_of_range():
    return torch.zeros(2, 3).transpose(0, 2)


@case
def permute_wrong_dims():
    return torch.zeros(2, 3).permute(0, 0)


@case
def expand_incompatible():
    return torch.zeros(2, 3).expand(4, 3)


@case
def squeeze_dim_out_of_range():
    return torch.zeros(2, 1).squeeze(3)


@case
def sum_dim_out_of_range():
    return torch.zeros(2, 3).sum(2)


@case
def max_empty():
    return torch.zeros(0).max()


@case
def argmax_empty_dim():
    return torch.zeros(0, 3).argmax(0)


@case
def split_bad_sizes():
    return torch.arange(5).split([2, 2])


@case
def chunk_zero():
    return torch.arange(5).chunk(0)


@case
def zeros_negative_size():
    return torch.zeros(-1)


@case
def arange_zero_step():
    return torch.arange(0, 5, 0)


@case
def tensor_bad_element_type():
    return torch.tensor(["a", "b"])


@case
def full_bad_fill_type():
    return torch.full((2,), "x")


@case
def bitwise_on_float():
    return torch.ones(2) & torch.ones(2)


@case
def where_condition_not_bool():
    return torch.where(torch.tensor([1.0, 0.0]), torch.ones(2), torch.zeros(2))


@case
def setitem_shape_mismatch():
    x = torch.zeros(2, 3)
    x[0] = torch.ones(4)
    return x


@case
def inplace_broadcast_output_shape():
    x = torch.zeros(3)
    x.add_(torch.ones(2, 3))
    return x


@case
def linear_shape_mismatch():
    lin = nn.Linear(4, 2)
    return lin(torch.ones(3, 5))


@case
def conv2d_channel_mismatch():
    return nn.Conv2d(3, 2, 3)(torch.ones(1, 2, 5, 5))


@case
def embedding_index_out_of_range():
    return nn.Embedding(4, 2)(torch.tensor([4]))


@case
def embedding_float_index():
    return nn.Embedding(4, 2)(torch.tensor([1.0]))


@case
def layernorm_shape_mismatch():
    return F.layer_norm(torch.ones(2, 5), (4,))


@case
def cross_entropy_target_out_of_range():
    return F.cross_entropy(torch.zeros(2, 3), torch.tensor([0, 3]))


@case
def randint_low_ge_high():
    return torch.randint(5, 5, (2,))


@case
def backward_on_non_scalar():
    x = torch.ones(2, requires_grad=True)
    (x * 2).backward()
    return x.grad


@case
def inplace_on_leaf_requiring_grad():
    x = torch.ones(2, requires_grad=True)
    x.add_(1)
    return x


@case
def unknown_dtype_attribute():
    return torch.float128


@case
def wrong_argument_type():
    return torch.sum(torch.ones(2), dim="x")


@case
def unexpected_keyword():
    return torch.ones(2).add(torch.ones(2), beta=2)


@case
def arange_int64_step_truncates_to_zero():
    return torch.arange(0.5, 3.7, 0.5, dtype=torch.int64)  # ValueError upstream


@case
def arange_bool():
    return torch.arange(3, dtype=torch.bool)


@case
def arange_bounds_inconsistent_before_truncation():
    return torch.arange(0.5, 0.2, 0.5, dtype=torch.int64)


@case
def detach_inplace_of_an_unrecorded_view():
    # upstream refuses detach_ on any view (is_view()), with or without a graph
    return torch.ones(4).view(2, 2).detach_()


@case
def detach_inplace_of_an_integer_slice():
    return torch.arange(4)[1:].detach_()


# torch.tensor's store of Python numbers (upstream's checked_convert): each overflow is one case,
# since a case records a single exception
@case
def tensor_int_overflows_int32():
    return torch.tensor([2**40], dtype=torch.int32)


@case
def tensor_int_overflows_uint8():
    return torch.tensor([-256], dtype=torch.uint8)


@case
def tensor_float_out_of_uint8():
    return torch.tensor([255.5], dtype=torch.uint8)


@case
def tensor_nan_into_an_integer_dtype():
    return torch.tensor([float("nan")], dtype=torch.int32)


@case
def tensor_int_beyond_int64():
    return torch.tensor([2**63])


@case
def ldexp_of_a_bool_exponent():
    return torch.ldexp(torch.ones(2), torch.tensor([True, False]))


# In-place and out= dtype rules (TensorIterator's cast check before the kernel's dtype dispatch;
# structured kernels' exact out dtype) and argument checks upstream makes, each found by the fuzzer
@case
def clamp_inplace_integer_with_float_bounds():
    return torch.tensor([3, 4]).clamp_(0.5, 2.5)


@case
def remainder_inplace_bool_by_float():
    return torch.tensor([True, False]).remainder_(torch.tensor([1.5, 2.0]))


@case
def gcd_inplace_cast_checked_before_dtype():
    return torch.tensor([3, 4], dtype=torch.int32).gcd_(torch.tensor([3.0, 4.0]))


@case
def div_inplace_integer_by_integer_scalar():
    return torch.ops.aten.div_.Scalar(torch.tensor([3, 4]), 2)


@case
def lerp_of_integers():
    return torch.lerp(torch.tensor([3, 4]), torch.tensor([3, 4]), 0.5)


@case
def logaddexp_of_integers():
    return torch.logaddexp(torch.tensor([3, 4]), torch.tensor([3, 4]))


@case
def huber_loss_of_integers():
    return F.huber_loss(torch.ones(2, dtype=torch.int16), torch.ones(2, dtype=torch.int16))


@case
def upsample_linear_of_integers():
    return torch.ops.aten.upsample_linear1d(torch.ones(1, 1, 3, dtype=torch.long), [6], False)


@case
def flip_with_a_repeated_dim():
    return torch.flip(torch.ones(2, 3), [1, -1])


@case
def rrelu_lower_above_upper():
    return F.rrelu(torch.ones(3), 0.5, 0.1)


@case
def cosine_similarity_negative_eps():
    return F.cosine_similarity(torch.ones(3), torch.ones(3), 0, -0.3)


@case
def slice_scatter_src_of_another_size():
    return torch.slice_scatter(torch.ones(3, 3), torch.ones(1, 1), 0, 0, 1)


@case
def linspace_of_one_dim_bounds():
    return torch.ops.aten.linspace.Tensor_Scalar(torch.ones(1), 2, 5)


@case
def binary_cross_entropy_target_out_of_range():
    return F.binary_cross_entropy(torch.full((2,), 0.5), torch.tensor([2.0, 0.5]))


@case
def glu_of_a_zero_dim_tensor():
    return F.glu(torch.tensor(1.0))


@case
def trapezoid_dim_out_of_range():
    return torch.trapz(torch.ones(3), dx=1.0, dim=4)


@case
def svdvals_driver_on_cpu():
    return torch.linalg.svdvals(torch.ones(2, 2), driver="gesvd")


@case
def lu_unpack_with_int64_pivots():
    return torch.lu_unpack(torch.ones(2, 2), torch.tensor([1, 2]))


@case
def addmv_of_zero_dim_operands():
    return torch.addmv(torch.tensor(1.0), torch.tensor(1.0), torch.tensor(1.0))


@case
def index_with_int8_indices():
    return torch.ops.aten.index.Tensor(torch.ones(2, 4), [torch.tensor([0], dtype=torch.int8)])


@case
def index_with_no_indices():
    return torch.ops.aten.index.Tensor(torch.ones(2, 4), [])


@case
def index_put_with_too_many_indices():
    return torch.ops.aten.index_put_(torch.ones(2, 4), [None, None, None], torch.tensor(1.0))


@case
def structured_out_of_another_dtype():
    return torch.tril(torch.ones(2, 2, dtype=torch.float64), out=torch.empty(2, 2))


@case
def matmul_out_of_another_dtype():
    return torch.matmul(torch.ones(2, 2), torch.ones(2, 2), out=torch.empty(2, 2, dtype=torch.float64))


@case
def amax_out_of_another_dtype():
    return torch.amax(torch.ones(2, 2), 0, out=torch.empty(2, dtype=torch.float64))


@case
def inplace_pointwise_decomposition_does_not_resize_self():
    return torch.ones(3, dtype=torch.float64).float_power_(torch.ones(4, 3, dtype=torch.float64))


@case
def linalg_cross_of_two_dtypes():
    return torch.linalg.cross(torch.ones(4, 3, dtype=torch.int32), torch.ones(4, 3))


@case
def linspace_bound_beyond_float32():
    return torch.linspace(-1e300, 5, 3)


@case
def trapezoid_x_with_one_value_per_other_sample_count():
    return torch.trapz(torch.ones(4, 1), torch.ones(1), dim=0)



@case
def out_dtype_checked_before_the_kernels_dtype_dispatch():
    # leaky_relu keeps one dtype: upstream's check_all_same_dtype fires before "leaky_relu_cpu"
    return torch.ops.aten.leaky_relu.out(torch.ones(3, dtype=torch.long), 0.01, out=torch.empty(3, dtype=torch.float64))


@case
def inplace_shape_checked_before_the_kernels_dtype_dispatch():
    return torch.tensor(1.0).gcd_(torch.ones(2, 3))


@case
def igamma_shapes_checked_before_its_dtype():
    return torch.igamma(torch.ones(4, dtype=torch.int16), torch.ones(3, dtype=torch.int16))


@case
def empty_tensor_of_a_dtype_the_kernel_does_not_take():
    # upstream's dtype dispatch refuses whatever the size
    return torch.bitwise_xor(torch.empty(0), torch.empty(0))


@case
def cosine_similarity_of_integers():
    return F.cosine_similarity(torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long), 3)


@case
def cat_with_a_zero_dim_tensor_after_others():
    return torch.cat([torch.ones(2), torch.ones(2), torch.tensor(1.0)], 3)


@case
def narrow_copy_dim_past_the_end():
    return torch.ops.aten.narrow_copy(torch.ones(2, 3), 2, 0, 1)


@case
def empty_permuted_layout_out_of_range():
    return torch.empty_permuted((2, 3), (0, 2))


@case
def matrix_rank_of_a_vector():
    return torch.linalg.matrix_rank(torch.ones(3))


@case
def avg_pool3d_of_a_matrix():
    return F.avg_pool3d(torch.ones(2, 3), 1)


@case
def stack_dim_wrapped_before_sizes_compared():
    return torch.stack([torch.ones(2), torch.ones(3)], 4)


@case
def softmax_of_integers():
    return torch.softmax(torch.ones(2, 3, dtype=torch.long), 0)


@case
def squeeze_scalar_dim_out_of_range():
    return torch.squeeze(torch.tensor(2.0), 1)


@case
def rot90_dim_out_of_range():
    return torch.rot90(torch.ones(2, 2, 1), 2, [1, 5])


@case
def fftshift_dim_out_of_range():
    return torch.fft.fftshift(torch.ones(4, 2, 1), [5])


@case
def slice_with_a_negative_step():
    return torch.ops.aten.slice_copy.Tensor(torch.ones(4, 4), 0, None, 2, 0)


@case
def binary_cross_entropy_target_of_another_dtype():
    return torch.ops.aten.binary_cross_entropy(torch.full((2,), 0.3), torch.full((2,), 0.5).double())


@case
def rms_norm_with_an_empty_normalized_shape():
    return torch.ops.aten.rms_norm(torch.ones(2, 3), [])


@case
def float_power_inplace_of_a_float32_base():
    return torch.ones(2).float_power_(2)


@case
def adaptive_avg_pool2d_of_a_vector():
    return torch.ops.aten._adaptive_avg_pool2d(torch.ones(3), [2, 1])


@case
def rrelu_with_noise_out_of_another_dtype():
    return torch.ops.aten.rrelu_with_noise.out(torch.tensor([-1.0, 2.0]), torch.zeros(2), 0.1, 0.3, False,
                                               out=torch.empty(2, dtype=torch.float64))


@case
def cholesky_of_integers():
    return torch.cholesky(torch.tensor([[2, 1], [1, 2]]))


@case
def median_of_bools():
    return torch.median(torch.tensor([True, False]), 0)


@case
def cumsum_into_bool():
    return torch.cumsum(torch.ones(3, dtype=torch.bool), 0, dtype=torch.bool)


@case
def addcdiv_of_integer_tensors():
    return torch.addcdiv(torch.ones(2), torch.tensor([1, 2]), torch.tensor([3, 4]))


@case
def diagonal_scatter_src_of_another_size():
    return torch.diagonal_scatter(torch.ones(3, 3), torch.ones(2), 0, 0, 1)


@case
def cat_out_cast_checked_before_shapes():
    return torch.cat([torch.ones(2), torch.ones(2, 2)], out=torch.empty(4, dtype=torch.int8))


@case
def column_stack_out_cast_checked_before_shapes():
    return torch.column_stack([torch.ones(2, 3), torch.ones(2, 3, 4)], out=torch.empty(4, dtype=torch.int8))
