"""Autograd through upstream's own torch.autograd Python: graph structure (node class names as
upstream names them), gradients per operator family, hooks, custom Functions, the errors
upstream raises, double backward, and optimizer steps."""
from .registry import F, case, nn, torch


def _ramp(*shape, scale=0.1, offset=0.0):
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(n, dtype=torch.float32) % 11 - 5) * scale + offset).view(*shape)


def _leaf(*shape, scale=0.1, offset=0.0, dtype=None):
    t = _ramp(*shape, scale=scale, offset=offset)
    if dtype is not None:
        t = t.to(dtype)
    return t.requires_grad_()


def _names(t):
    """The graph under t as node class names, breadth first."""
    out, todo, seen = [], [t.grad_fn], set()
    while todo:
        n = todo.pop(0)
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(type(n).__name__)
        todo.extend(f for f, _ in n.next_functions)
    return out


# --- graph structure ------------------------------------------------------------------------

@case
def graph_node_names():
    x, w = _leaf(2, 3), _leaf(4, 3, offset=0.05)
    y = F.gelu(F.linear(x, w)).softmax(-1).sum()
    return _names(y), y.grad_fn.name(), x.is_leaf, y.is_leaf, y.requires_grad


@case
def graph_next_functions_accumulate_grad():
    x = _leaf(3)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    return type(acc).__name__, acc.name(), acc.variable is x, y.grad_fn.next_functions[1], y.output_nr


@case
def graph_views_and_shape_ops():
    x = _leaf(2, 3, 4)
    y = x.view(6, 4).t().unsqueeze(0).permute(2, 0, 1).reshape(-1).expand(2, 24)[:, 1:5].select(0, 1)
    y.sum().backward()
    return _names(y), x.grad


@case
def no_grad_and_enable_grad():
    x = _leaf(3)
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 2
    with torch.inference_mode():
        c = x * 2
    torch.set_grad_enabled(False)
    d = x * 2
    torch.set_grad_enabled(True)
    return a.requires_grad, b.requires_grad, c.requires_grad, d.requires_grad, torch.is_grad_enabled()


@case
def detach_and_data():
    x = _leaf(3)
    y = x * 3
    d = y.detach()
    z = (d * x).sum()
    z.backward()
    return d.requires_grad, d.is_leaf, x.grad, y.data.requires_grad


@case
def integer_outputs_do_not_require_grad():
    x = _leaf(2, 3)
    return x.argmax(1).requires_grad, (x > 0).requires_grad, x.max(1).indices.requires_grad, x.max(1).values.requires_grad


# --- gradients by family ------------------------------------------------------------------------

@case
def grads_elementwise():
    x = _leaf(2, 5, offset=0.03)
    p = _leaf(2, 5, scale=0.05, offset=1.2)
    y = (x.exp() + x.sin() * x.cos() - x.tanh() + x.sigmoid() * 2 + F.silu(x) + F.gelu(x) + F.gelu(x, approximate="tanh")
         + x.relu() + F.leaky_relu(x, 0.1) + x.abs() + x.pow(3) + p.log() + p.sqrt() + p.rsqrt() + 1 / p + x.erf()
         + p.pow(x) + x.clamp(-0.2, 0.2) + x.square() + F.elu(x) + x.neg() + p.log1p() + x.expm1())
    y.sum().backward()
    return x.grad, p.grad


@case
def grads_binary_broadcast():
    a, b = _leaf(3, 1, 4), _leaf(2, 4, offset=1.5)
    y = (a + b) * (a - b) / b + torch.maximum(a, b) - torch.minimum(a, b * 0.5) + torch.where(a > 0, a, b)
    y = y + torch.add(a, b, alpha=2) + torch.sub(a, b, alpha=3) + 2 - a + a * 3 + a / 4
    y.sum().backward()
    return a.grad, b.grad


@case
def grads_reductions():
    x = _leaf(3, 4, 5, offset=0.01)
    terms = [x.sum(), x.sum(1).pow(2).sum(), x.mean(), x.mean((0, 2), keepdim=True).exp().sum(), x.amax(1).sum(),
             x.max(2).values.sum(), x.min(), x.var(1).sum(), x.std(), torch.logsumexp(x, 2).sum(),
             x.norm(), torch.linalg.vector_norm(x, 3, dim=1).sum(), x.cumsum(1).pow(2).sum(), x.amin(-1).sum()]
    sum(terms).backward()
    return x.grad


@case
def grads_matmul_family():
    a, b = _leaf(3, 4), _leaf(4, 5, offset=0.02)
    c, d = _leaf(2, 3, 4), _leaf(2, 4, 2)
    v = _leaf(4, offset=0.3)
    bias = _leaf(5)
    y = (a @ b).sum() + torch.bmm(c, d).pow(2).sum() + (a @ v).sum() + v.dot(v) + torch.addmm(bias, a, b).sum()
    y = y + torch.matmul(c, b).sum() + torch.baddbmm(torch.ones(2, 3, 2), c, d, beta=0.5, alpha=2).sum()
    y.backward()
    return a.grad, b.grad, c.grad, d.grad, v.grad, bias.grad


@case
def grads_shape_and_indexing():
    x = _leaf(4, 5, offset=0.02)
    idx = torch.tensor([3, 0, 3])
    y = (x[1:3].sum() + x[:, 2].pow(2).sum() + x.index_select(0, idx).sum() * 2 + x.gather(1, torch.tensor([[0, 1], [4, 4], [2, 0], [1, 1]])).sum()
         + torch.cat([x, x * 2], 1).pow(2).sum() + torch.stack([x, x], 0).mean() + x.flip(0)[0].sum() * 3
         + x.t().contiguous().view(-1)[::3].sum() + x.tril().sum() + x.triu(1).pow(2).sum()
         + x[idx].pow(2).sum() + x[x > 0].sum() + x.masked_fill(x < 0, 0).sum() + x.repeat(2, 3).pow(2).sum()
         + x.roll(1, 0)[0].sum() + sum(p.pow(2).sum() * (i + 1) for i, p in enumerate(x.split(2, 1)))
         + sum(p.sum() * (i + 1) for i, p in enumerate(x.unbind(0))) + F.pad(x, (1, 2)).pow(2).sum()
         + x.expand(3, 4, 5).sum() + x.squeeze().unsqueeze(1).sum() + x.transpose(0, 1).flatten().cumsum(0).sum())
    y.backward()
    return x.grad


@case
def grads_index_put_and_scatter():
    x = _leaf(3, 4)
    v = _leaf(2, 4, offset=0.3)
    z = torch.zeros(3, 4)
    z = z.index_put((torch.tensor([0, 2]),), v)
    s = torch.zeros(3, 4).scatter(0, torch.tensor([[1, 0, 2, 1]]), x[:1])
    y = (z * x).sum() + s.pow(2).sum() + x.scatter_add(1, torch.tensor([[0], [1], [3]]), v[:, :1].expand(2, 1).repeat(2, 1)[:3]).sum()
    y.backward()
    return x.grad, v.grad


@case
def grads_embedding_and_softmax():
    emb = nn.Embedding(6, 4, padding_idx=0)
    with torch.no_grad():
        emb.weight.copy_(_ramp(6, 4))
    ids = torch.tensor([[1, 2, 0, 2], [5, 5, 1, 0]])
    h = emb(ids)
    y = h.softmax(-1)[..., 0].sum() + F.log_softmax(h, 1).pow(2).sum()
    y.backward()
    return emb.weight.grad


@case
def grads_layer_norm_and_batch_norm():
    ln = nn.LayerNorm(6)
    bn = nn.BatchNorm1d(3)
    with torch.no_grad():
        ln.weight.copy_(_ramp(6, offset=1.0))
        ln.bias.copy_(_ramp(6))
        bn.weight.copy_(_ramp(3, offset=1.0))
    x = _leaf(4, 3, 6, offset=0.02)
    y = ln(x).pow(2).sum() + bn(x).pow(3).sum()
    y.backward()
    return x.grad, ln.weight.grad, ln.bias.grad, bn.weight.grad, bn.bias.grad, bn.running_mean, bn.running_var


@case
def grads_conv_pool():
    conv = nn.Conv2d(2, 3, 3, padding=1, stride=2)
    conv2 = nn.Conv2d(3, 3, 2, groups=3, dilation=2, bias=False)
    conv1 = nn.Conv1d(2, 2, 3, padding=2)
    with torch.no_grad():
        conv.weight.copy_(_ramp(3, 2, 3, 3))
        conv.bias.copy_(_ramp(3))
        conv2.weight.copy_(_ramp(3, 1, 2, 2, offset=0.2))
        conv1.weight.copy_(_ramp(2, 2, 3, offset=0.1))
    x = _leaf(2, 2, 7, 7, offset=0.01)
    h = conv(x)
    y = conv2(F.max_pool2d(h, 2, 1)).pow(2).sum() + F.avg_pool2d(h, 2).sum() + F.adaptive_avg_pool2d(h, 1).pow(2).sum()
    y = y + conv1(x[:, :, 0]).pow(2).sum()
    y.backward()
    return x.grad, conv.weight.grad, conv.bias.grad, conv2.weight.grad, conv1.weight.grad, conv1.bias.grad


@case
def grads_losses():
    logits = _leaf(4, 5, scale=0.3)
    target = torch.tensor([1, 0, 4, 2])
    x = _leaf(4, 5, offset=0.2)
    img = _leaf(2, 3, 2, 2)
    y = (F.cross_entropy(logits, target) + F.cross_entropy(logits, target, reduction="sum") * 0.1
         + F.nll_loss(F.log_softmax(logits, 1), target, weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))
         + F.cross_entropy(logits, torch.tensor([1, -100, 4, 2])) + F.mse_loss(x, logits)
         + F.binary_cross_entropy_with_logits(x, torch.ones(4, 5) * 0.3) + F.l1_loss(x, logits * 0.5)
         + F.cross_entropy(img, torch.tensor([[[0, 1], [2, 2]], [[1, 1], [0, 2]]])))
    y.backward()
    return logits.grad, x.grad, img.grad


@case
def grads_attention():
    q, k, v = _leaf(1, 2, 4, 8), _leaf(1, 2, 4, 8, offset=0.1), _leaf(1, 2, 4, 8, offset=-0.1)
    mask = torch.tensor([[True, True, False, True]] * 4)
    y = (F.scaled_dot_product_attention(q, k, v).pow(2).sum() + F.scaled_dot_product_attention(q, k, v, is_causal=True).sum()
         + F.scaled_dot_product_attention(q, k, v, attn_mask=mask).pow(2).sum())
    y.backward()
    return q.grad, k.grad, v.grad


@case
def grads_attention_grouped_query():
    q, k, v = _leaf(1, 4, 5, 8), _leaf(1, 2, 5, 8, offset=0.1), _leaf(1, 2, 5, 8, offset=-0.1)
    y = F.scaled_dot_product_attention(q, k, v, enable_gqa=True, is_causal=True)
    y.pow(2).sum().backward()
    return y, q.grad, k.grad, v.grad, type(y.grad_fn).__name__


@case
def grads_attention_grouped_query_uneven_heads():
    # key and value with different head counts (NeMo's diarization encoder): each repeats by its own factor
    q, k, v = _leaf(2, 4, 5, 8), _leaf(2, 2, 5, 8, offset=0.1), _leaf(2, 4, 5, 8, offset=-0.1)
    y = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    y.pow(2).sum().backward()
    return y, q.grad, k.grad, v.grad


@case
def grads_dtype_casts():
    x = _leaf(3, dtype=torch.float64)
    y = (x.float() * 2).sum() + x.to(torch.float32).pow(2).sum()
    y.backward()
    return x.grad, x.grad.dtype


# --- engine behaviour ---------------------------------------------------------------------

@case
def accumulation_and_retain_graph():
    x = _leaf(3)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    g1 = x.grad.clone()
    x.grad = None
    (x * 3).sum().backward()
    return g1, x.grad


@case
def backward_twice_without_retain_graph():
    x = _leaf(3)
    y = (x.exp()).sum()
    y.backward()
    y.backward()
    return x.grad


@case
def autograd_grad_and_allow_unused():
    x, z = _leaf(3), _leaf(2)
    y = (x.pow(3)).sum()
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    unused = torch.autograd.grad((x * 2).sum(), [x, z], allow_unused=True)
    return g, gg, unused[1] is None, x.grad is None


@case
def autograd_grad_unused_error():
    x, z = _leaf(3), _leaf(2)
    return torch.autograd.grad((x * 2).sum(), [x, z])


@case
def grad_of_non_leaf_and_grad_outputs():
    x = _leaf(2, 3)
    h = x * 2
    y = h.exp()
    (gh,) = torch.autograd.grad(y, h, grad_outputs=torch.ones(2, 3) * 0.5)
    return gh


@case
def double_backward_families():
    x = _leaf(3, 2, offset=0.4)
    w = _leaf(2, 2, offset=0.1)
    y = ((x @ w).tanh().sum(1) * x.sigmoid()[:, 0]).pow(2).sum()
    gx, gw = torch.autograd.grad(y, (x, w), create_graph=True)
    (gx.pow(2).sum() + gw.sum()).backward()
    return gx, gw, x.grad, w.grad


@case
def retain_grad_and_hooks():
    x = _leaf(3)
    h = x * 2
    h.retain_grad()
    seen = []
    h.register_hook(lambda g: seen.append(g.clone()))
    x.register_hook(lambda g: g * 10)
    y = (h * h).sum()
    node_seen = []
    y.grad_fn.register_hook(lambda gi, go: node_seen.append(len(gi)))
    y.grad_fn.register_prehook(lambda go: node_seen.append(len(go)))
    y.backward()
    return h.grad, x.grad, seen[0], node_seen, h.retains_grad


@case
def post_accumulate_grad_hook():
    x = _leaf(3)
    calls = []
    x.register_post_accumulate_grad_hook(lambda p: calls.append(p.grad.clone()))
    (x * 4).sum().backward()
    return calls[0]


@case
def module_full_backward_hook():
    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(_ramp(2, 3))
        lin.bias.zero_()
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append((gi[0].clone(), go[0].clone())))
    x = _leaf(4, 3)
    lin(x).pow(2).sum().backward()
    return got[0][0], got[0][1], x.grad


@case
def custom_function():
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_backward(x)
            ctx.k = k
            return x.pow(3) * k

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x.pow(2) * ctx.k, None

    class Both(torch.autograd.Function):
        @staticmethod
        def forward(x):
            return x * 2, x.argmax()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.mark_non_differentiable(output[1])

        @staticmethod
        def backward(ctx, g, _):
            return g * 2

    x = _leaf(4, offset=0.1)
    y = Cube.apply(x, 2.0)
    a, i = Both.apply(x)
    (y.sum() + a.sum()).backward()
    return y, x.grad, type(y.grad_fn).__name__, i.requires_grad, y.grad_fn.needs_input_grad


@case
def custom_function_wrong_number_of_grads():
    class Bad(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g

    x = _leaf(2)
    Bad.apply(x, x).sum().backward()
    return x.grad


@case
def version_counter_error():
    x = _leaf(3)
    y = x.exp()
    y.add_(1)
    y.sum().backward()
    return x.grad


@case
def version_counter_error_saved_input():
    x = _leaf(3)
    h = x * 1
    y = h * h
    h.mul_(2)
    y.sum().backward()
    return x.grad


@case
def inplace_on_non_leaf():
    x = _leaf(3)
    h = x * 2
    h.add_(1).mul_(3)
    h.relu_()
    h.sum().backward()
    return x.grad, _names(h)


@case
def inplace_on_views():
    """In-place writes into views of tensors in the graph (upstream's CopySlices)."""
    x = _leaf(3)
    out = torch.zeros(2, 3)
    out[0] = x * 2
    out[1, 1:] = x[:2] ** 2
    (out * _ramp(2, 3)).sum().backward()
    y = _leaf(4)
    h = y * 1
    h[1:3].mul_(5)
    v = h[::2]
    v.add_(x[:2])
    (h * _ramp(4)).sum().backward()
    a = _leaf(2, 2)
    b = a.clone()
    b.t()[0].zero_()
    b.sum().backward()
    return x.grad, y.grad, a.grad, out.grad_fn.name(), type(v.grad_fn).__name__


@case
def inplace_on_view_of_leaf():
    x = _leaf(3)
    x[0].mul_(2)


@case
def set_requires_grad_on_non_leaf():
    x = _leaf(3)
    (x * 2).requires_grad = False


@case
def requires_grad_on_integer_tensor():
    torch.tensor([1, 2]).requires_grad_()


@case
def backward_on_tensor_without_grad():
    torch.ones(2).sum().backward()


@case
def leaf_gradient_layout():
    """AccumulateGrad's layout contract: a gradient keeps the leaf's strides (a linear layer's
    weight gradient is contiguous, a transposed leaf's is transposed), a leaf that is not dense
    gets a contiguous one; none of them is a view."""
    lin = nn.Linear(4, 3)
    lin(_ramp(5, 4)).sum().backward()
    wt = _ramp(3, 4).t().requires_grad_()
    (_ramp(5, 4) @ wt).sum().backward()
    ex = torch.ones(3, 1).expand(3, 4).requires_grad_()
    (ex * _ramp(3, 4)).sum().backward()
    out = []
    for g in (lin.weight.grad, lin.bias.grad, wt.grad, ex.grad):
        out += [g, g.stride(), g._base is None, g._is_view()]
    return out


@case
def detach_of_a_view_is_not_a_view():
    a = _ramp(3, 4)
    d = a.t().detach()
    return d, d.stride(), d._base is None, d._is_view(), a[1:].detach()._is_view()


@case
def detach_inplace_of_a_detached_view():
    # detach() gives a tensor that is not a view, so detach_ on it is allowed
    a = _ramp(3, 4)
    d = a.t().detach().detach_()
    return d, d._is_view(), d.requires_grad


# --- optimizers ---------------------------------------------------------------------------------

def _train(opt_fn, steps=5, sched=False, clip=None):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 3))
    opt = opt_fn(model.parameters())
    lr_sched = torch.optim.lr_scheduler.StepLR(opt, 2, 0.5) if sched else None
    x = _ramp(6, 4, scale=0.3)
    t = torch.tensor([0, 1, 2, 0, 1, 2])
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), t)
        loss.backward()
        if clip is not None:
            losses.append(nn.utils.clip_grad_norm_(model.parameters(), clip))
        opt.step()
        if lr_sched:
            lr_sched.step()
        losses.append(loss.detach())
    return losses, [p.detach() for p in model.parameters()]


@case
def optim_sgd_momentum():
    return _train(lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3))


@case
def optim_adam_with_scheduler():
    return _train(lambda p: torch.optim.Adam(p, lr=0.05), sched=True)


@case
def optim_adamw_clip():
    return _train(lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1), clip=0.5)


@case
def optim_state_dict_round_trip():
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.1)
    model(_ramp(2, 3)).sum().backward()
    opt.step()
    sd = opt.state_dict()
    opt2 = torch.optim.Adam(model.parameters(), lr=0.1)
    opt2.load_state_dict(sd)
    model(_ramp(2, 3)).sum().backward()
    opt2.step()
    return sd["state"][0]["exp_avg"], opt2.state_dict()["state"][0]["exp_avg_sq"], model.weight.detach()


@case
def checkpoint_and_saved_tensor_hooks():
    """torch.utils.checkpoint both ways (reentrant: a custom Function replaying forward;
    non-reentrant: saved-tensor hooks), RNG state restored for dropout, and plain hooks."""
    from torch.utils.checkpoint import checkpoint

    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Dropout(0.2), nn.Linear(4, 2))
    x = _leaf(3, 4)
    out = []
    for reentrant in (True, False):
        net.zero_grad()
        x.grad = None
        torch.manual_seed(1)
        checkpoint(net, x, use_reentrant=reentrant).pow(2).sum().backward()
        out += [x.grad.clone(), net[0].weight.grad.clone()]
    packed = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(1), t * 1)[1], lambda t: t):
        z = (x * x.exp()).sum()
    x.grad = None
    z.backward()
    return out, x.grad, len(packed) > 0


@case
def inference_tensors():
    x = _leaf(3)
    with torch.inference_mode():
        y = torch.ones(3) * 2
        v = y[1:]
    z = x + y  # not saved: fine
    return y.is_inference(), v.is_inference(), torch.ones(2).is_inference(), z.requires_grad, z.is_inference()


@case
def inference_tensor_saved_for_backward():
    x = _leaf(3)
    with torch.inference_mode():
        y = torch.ones(3) * 2
    (x * y).sum().backward()


@case
def inference_tensor_inplace_outside_inference_mode():
    with torch.inference_mode():
        y = torch.ones(3)
        y.add_(1)  # inside: allowed
    y.mul_(2)


@case
def inference_tensor_version_counter():
    with torch.inference_mode():
        y = torch.ones(3)
    return y._version


@case
def inference_tensor_requires_grad_outside():
    with torch.inference_mode():
        y = torch.ones(3)
        y.requires_grad_()  # inside: allowed
        inside = y.requires_grad
    z = torch.zeros(2)
    with torch.inference_mode():
        w = torch.zeros(2)
    return inside, z.requires_grad_().requires_grad, w.requires_grad_()


@case
def anomaly_mode_nan_gradient():
    with torch.autograd.set_detect_anomaly(True):
        a = torch.tensor([0.0, 1.0], requires_grad=True)
        (a.sqrt() * 0).sum().backward()
    return a.grad


@case
def pow_gradient_edges():
    # upstream's pow_backward: exponent 0 gives zeros whatever the incoming gradient holds (a
    # product with it would give NaN for inf and NaN); pow(0, e) has gradient 0 for e >= 0 and
    # result * log(0) below; Tensor ** Tensor is 0 where the exponent is 0
    g = torch.tensor([float("inf"), float("nan"), 1.0, -2.0, 0.5])
    x = _leaf(5, offset=0.3)
    (a,) = torch.autograd.grad(x.pow(0), x, g)
    e = torch.tensor([-1.0, 0.0, 0.5, 2.0, 3.0], requires_grad=True)
    (b,) = torch.autograd.grad(torch.pow(0.0, e), e, torch.ones(5))
    p = _leaf(5, offset=1.2)
    et = torch.tensor([0.0, 0.0, 1.0, 2.0, 0.5], requires_grad=True)
    c, d = torch.autograd.grad(p.pow(et), (p, et), g)
    (f,) = torch.autograd.grad(p.pow(3), p, g[2:].repeat(2)[:5])
    return a, b, c, d, f
