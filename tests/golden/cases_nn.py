"""nn forward passes.  Two flavours per module:
  *_seeded  -- modules built after torch.manual_seed(0) (done by the runner), so the weights
               come from upstream's init (kaiming_uniform_/uniform_/normal_): needs our RNG
               to match bit for bit;
  *_arange  -- weights written deterministically from torch.arange, so the case tests the
               forward math alone, independent of RNG.
Modules are in eval mode where train/eval differ."""
from .registry import F, case, nn, torch


def _ramp(*shape, scale=0.1, offset=0.0):
    """Deterministic, sign-varying values: ((arange % 11) - 5) * scale + offset."""
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float32) % 11 - 5) * scale + offset).view(*shape)


def _fill(module, scale=0.05):
    """Overwrite every parameter of a module with _ramp values (no RNG)."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(_ramp(*p.shape, scale=scale, offset=0.01 * i))
    return module


@case(exact=True)
def init_weights_seeded():
    """Default inits are RNG draws (kaiming_uniform_, uniform_, xavier_uniform_, normal_):
    bit-identical to upstream or the RNG/init port is wrong."""
    lin, conv = nn.Linear(5, 3), nn.Conv2d(2, 3, 3)
    mha, emb = nn.MultiheadAttention(4, 2), nn.Embedding(3, 2)
    return lin.weight, lin.bias, conv.weight, conv.bias, mha.in_proj_weight, emb.weight


@case
def linear_seeded():
    lin = nn.Linear(5, 3)
    return lin(_ramp(4, 5))


@case
def linear_arange():
    lin = _fill(nn.Linear(6, 4))
    return lin(_ramp(2, 3, 6)), F.linear(_ramp(2, 6), _ramp(3, 6), None)


@case
def linear_no_bias_seeded():
    lin = nn.Linear(4, 2, bias=False)
    return lin(_ramp(3, 4)), lin.bias is None


@case
def conv2d_seeded():
    conv = nn.Conv2d(2, 3, 3, padding=1)
    return conv(_ramp(1, 2, 5, 5))


@case
def conv2d_arange():
    conv = _fill(nn.Conv2d(3, 4, 3, stride=2, padding=1))
    return conv(_ramp(2, 3, 7, 7)), conv(_ramp(1, 3, 4, 4)).shape


@case
def conv2d_groups_dilation_arange():
    conv = _fill(nn.Conv2d(4, 4, 3, groups=2, dilation=2, bias=False))
    return conv(_ramp(1, 4, 8, 8))


@case
def conv1d_arange():
    conv = _fill(nn.Conv1d(2, 3, 3, padding="same"))
    return conv(_ramp(2, 2, 6))


@case
def layernorm_seeded_default_affine():
    ln = nn.LayerNorm(6)
    return ln(_ramp(2, 3, 6, scale=0.7))


@case
def layernorm_arange():
    ln = _fill(nn.LayerNorm((3, 4)))
    return ln(_ramp(2, 3, 4, scale=0.3)), F.layer_norm(_ramp(2, 5), (5,), eps=1e-3)


@case
def batchnorm2d_eval_arange():
    bn = _fill(nn.BatchNorm2d(3))
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor([0.1, -0.2, 0.3]))
        bn.running_var.copy_(torch.tensor([1.5, 0.5, 2.0]))
    bn.eval()
    return bn(_ramp(2, 3, 4, 4))


@case
def batchnorm2d_train_updates_running_stats():
    bn = nn.BatchNorm2d(2)
    y = bn(_ramp(3, 2, 2, 2, scale=0.4))
    return y, bn.running_mean, bn.running_var, bn.num_batches_tracked


@case(exact=True)
def embedding_seeded():
    emb = nn.Embedding(10, 4)
    return emb(torch.tensor([[1, 3], [9, 0]])), emb.weight


@case(exact=True)
def embedding_arange_padding_idx():
    emb = nn.Embedding(6, 3, padding_idx=0)
    with torch.no_grad():
        emb.weight.copy_(torch.arange(18.0).view(6, 3))
    return emb(torch.tensor([0, 5, 2, 2])), F.embedding(torch.tensor([1]), torch.eye(3))


@case
def activations():
    x = _ramp(3, 7, scale=0.6)
    return (nn.ReLU()(x), nn.GELU()(x), nn.GELU(approximate="tanh")(x), nn.SiLU()(x),
            nn.Tanh()(x), nn.Sigmoid()(x), nn.LeakyReLU(0.1)(x), nn.ELU()(x), F.relu6(x * 3),
            F.softplus(x), F.mish(x), F.hardswish(x))


@case
def softmax_logsoftmax():
    x = _ramp(2, 3, 5, scale=0.9)
    return (nn.Softmax(dim=-1)(x), nn.Softmax(dim=1)(x), F.log_softmax(x, 0),
            torch.softmax(x * 50, -1))


@case
def softmax_with_neg_inf():
    x = torch.tensor([[0.0, -float("inf"), 1.0], [-float("inf"), -float("inf"), 2.0]])
    return torch.softmax(x, -1)


@case(exact=True)
def dropout_eval_is_identity():
    d = nn.Dropout(0.5)
    d.eval()
    x = _ramp(4, 4)
    return d(x), F.dropout(x, 0.3, training=False)


@case(exact=True)
def dropout_train_seeded():
    return F.dropout(torch.ones(4, 5), 0.5, training=True)


@case
def mha_seeded_eval():
    mha = nn.MultiheadAttention(8, 2, batch_first=True)
    mha.eval()
    x = _ramp(2, 3, 8, scale=0.2)
    out, w = mha(x, x, x)
    return out, w


@case
def mha_arange_with_mask():
    mha = _fill(nn.MultiheadAttention(4, 2), scale=0.03)
    mha.eval()
    q = _ramp(3, 1, 4, scale=0.3)
    kv = _ramp(5, 1, 4, scale=0.2, offset=0.1)
    mask = torch.tensor([[False, False, True, False, True]] * 3)
    out, w = mha(q, kv, kv, attn_mask=mask, average_attn_weights=False)
    return out, w


@case
def sdpa_causal():
    q, k = _ramp(1, 2, 4, 8, scale=0.1), _ramp(1, 2, 4, 8, scale=0.2)
    v = _ramp(1, 2, 4, 8, offset=0.3)
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


@case
def sequential_mlp_seeded():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2), nn.Softmax(-1))
    return model(_ramp(3, 4))


@case
def module_state_dict_shapes():
    m = nn.Sequential(nn.Linear(3, 2), nn.LayerNorm(2))
    return {k: v.shape for k, v in m.state_dict().items()}, sum(p.numel() for p in m.parameters())


@case
def pooling():
    x = _ramp(1, 2, 4, 4)
    return (F.max_pool2d(x, 2), F.avg_pool2d(x, 2), F.adaptive_avg_pool2d(x, 1),
            nn.MaxPool2d(3, 1, 1)(x))


@case
def losses():
    logits = _ramp(4, 3, scale=0.5)
    target = torch.tensor([0, 2, 1, 2])
    return (F.cross_entropy(logits, target), F.mse_loss(logits, torch.zeros(4, 3)),
            F.nll_loss(F.log_softmax(logits, 1), target),
            F.binary_cross_entropy_with_logits(logits, torch.ones(4, 3)))


@case
def linear_backward_grads():
    lin = _fill(nn.Linear(3, 2))
    lin(_ramp(4, 3)).pow(2).sum().backward()
    return lin.weight.grad, lin.bias.grad


@case
def mha_inference_fast_path():
    # under no_grad, eval and batch_first, upstream takes torch._native_multi_head_attention
    mha = nn.MultiheadAttention(8, 2, batch_first=True).eval()
    x = _ramp(2, 3, 8, scale=0.2)
    pad = torch.tensor([[False, False, True], [False, False, False]])
    with torch.no_grad():
        out, w = mha(x, x, x)
        out2, _ = mha(x, x, x, key_padding_mask=pad, need_weights=False)
    return out, w, out2


# --- edge cases that only OpInfo's later samples reached -----------------------------------

@case
def prelu_0dim_input_keeps_its_shape():
    return torch.nn.functional.prelu(torch.tensor(-2.0), torch.tensor([0.25]))


@case
def prelu_dtype_mismatch():
    return torch.nn.functional.prelu(torch.ones(3), torch.ones(1, dtype=torch.float64))


@case
def pad_circular_negative_wraps_the_cropped_tensor():
    x = torch.arange(48.0).reshape(1, 3, 4, 4)
    return (torch.nn.functional.pad(x, (-1, 1, -2, 1), mode="circular"),
            torch.nn.functional.pad(x, (2, -1, -3, 3), mode="circular"))


@case
def pad_circular_wrapping_twice():
    return torch.nn.functional.pad(torch.ones(1, 2, 4), (5, 0), mode="circular")


@case
def pad_reflect_unsupported_size():
    return torch.nn.functional.pad(torch.ones(1, 3, 4, 4), (1, 1), mode="reflect")


@case
def group_norm_empty_batch():
    return torch.native_group_norm(torch.ones(0, 2), torch.ones(2), torch.ones(2), 0, 2, 1, 1, 1e-5)


@case
def batch_norm_empty_input():
    return torch.nn.functional.batch_norm(torch.ones(0), torch.ones(0), torch.ones(0), None, None, training=True)


@case
def sdpa_3d_query_4d_key_value_takes_the_math_path():
    g = torch.Generator().manual_seed(5)
    q, k = torch.randn(4, 3, 8, generator=g), torch.randn(4, 4, 6, 8, generator=g)
    return (torch.nn.functional.scaled_dot_product_attention(q, k, k, is_causal=True),
            torch.nn.functional.scaled_dot_product_attention(q, q, q))


@case(exact=True)
def integer_conv_and_max_pool():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(-50, 50, (2, 4, 7, 6), generator=g)
    w = torch.randint(-9, 9, (6, 2, 3, 2), generator=g)
    b = torch.randint(-5, 5, (6,), generator=g)
    return (F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
            F.conv1d(x[:, :, 0], w[:, :, 0], b, padding=2, groups=2),
            F.conv2d(x.to(torch.int8), w.to(torch.int8), groups=2),
            F.max_pool2d(-torch.arange(1, 17).reshape(1, 1, 4, 4), 2, return_indices=True),
            F.max_pool2d(x.to(torch.uint8), (3, 2), stride=(2, 1), padding=1, dilation=(1, 2), ceil_mode=True,
                         return_indices=True))


@case(exact=True)
def max_unpool_places_values_at_their_indices():
    g = torch.Generator().manual_seed(4)
    y, i = F.max_pool2d(torch.randn(2, 3, 8, 8, generator=g), 2, return_indices=True)
    i3 = torch.tensor([0, 3, 9, 14, 20, 31, 40, 63, 1, 2, 4, 8, 16, 32, 33, 62]).reshape(1, 2, 2, 2, 2)
    return (F.max_unpool2d(y, i, 2), F.max_unpool2d(y, i, 2, output_size=(9, 9)),
            F.max_unpool3d(torch.randn(1, 2, 2, 2, 2, generator=g), i3, 2),
            # distinct indices: with a repeated one, which value upstream keeps varies from run to run
            torch.ops.aten.max_unpool2d(torch.tensor([[[1.0, 2.0]]]), torch.tensor([[[3, 0]]]), [2, 2]))


@case
def max_unpool_index_out_of_range():
    return torch.ops.aten.max_unpool2d(torch.ones(1, 1, 2), torch.tensor([[[0, 9]]]), [2, 2])


@case
def soft_margin_loss_reduction_codes():
    # (other codes: upstream returns the unreduced loss's first element; ours refuses, see
    # tests/test_nn_layer_ops.py)
    x = torch.tensor([[0.5, -1.0], [2.0, 0.0]], dtype=torch.float64)
    t = torch.tensor([[1.0, -1.0], [-1.0, 1.0]], dtype=torch.float64)
    return [torch.ops.aten.soft_margin_loss.default(x, t, r) for r in (0, 1, 2)]


@case
def huber_loss_keeps_the_input_dtype():
    # computed in the common dtype, stored in the input's (upstream's empty_like(input) output)
    x = torch.tensor([[0.5, -1.0], [2.0, 0.25]])
    t = torch.tensor([3.0, -0.5], dtype=torch.float64)
    return [torch.ops.aten.huber_loss.default(x, t, r, 1.0) for r in (0, 1, 2)]


@case
def huber_loss_refuses_an_unsafe_store():
    return F.huber_loss(torch.ones(3, dtype=torch.bfloat16), torch.ones(3))


@case
def native_dropout_training_forms():
    # train=None trains; p=0 still draws (the generator advances); p=1 scales by 0, not 1/0
    x = torch.randn(4, 5)
    out = [torch.native_dropout(x, 0.3, None), torch.native_dropout(x, 0.0, True),
           torch.native_dropout(x, 1.0, True), torch.native_dropout(x.double(), 0.3, True),
           torch.native_dropout(x, 0.3, False)]
    return out, torch.rand(3)
