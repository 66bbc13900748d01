"""torch.vmap and torch.func programs, run on ours and on upstream by tests/test_functorch.py.

Writes an npz of every case's outputs (argv[1]) and a JSON of every error case's exception
type and message (argv[2]). Inputs are seeded here, so both sides see the same numbers."""

import json
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, grad_and_value, jacrev, vjp, vmap

torch.manual_seed(0)
torch.set_num_threads(1)
out = {}


def put(name, value):
    if isinstance(value, dict):
        for k, v in value.items():
            put(f"{name}.{k}", v)
    elif isinstance(value, (tuple, list)):
        for i, v in enumerate(value):
            put(f"{name}.{i}", v)
    else:
        out[name] = value.detach().numpy().copy()
        out[name + "#rg"] = np.array(value.requires_grad)


x = torch.randn(6, 5)
y = torch.randint(0, 3, (6,))

# --- per-sample gradients (the opacus / federated DP path) ------------------------------------
mlp = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 3))
mp = {k: v.detach() for k, v in mlp.named_parameters()}


def mlp_loss(p, xb, yb):
    return F.cross_entropy(functional_call(mlp, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))


put("psg_mlp", vmap(grad(mlp_loss), in_dims=(None, 0, 0))(mp, x, y))
put("psg_mlp_value", vmap(grad_and_value(mlp_loss), in_dims=(None, 0, 0))(mp, x, y))

cnn = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.GELU(), nn.AvgPool2d(2), nn.Conv2d(4, 3, 3, stride=2),
                    nn.Flatten(), nn.Linear(3, 2))
cp = {k: v.detach() for k, v in cnn.named_parameters()}
xi = torch.randn(4, 2, 8, 8)
yi = torch.randint(0, 2, (4,))


def cnn_loss(p, xb, yb):
    return F.cross_entropy(functional_call(cnn, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))


put("psg_cnn", vmap(grad(cnn_loss), in_dims=(None, 0, 0))(cp, xi, yi))

emb = nn.Embedding(11, 4)
ep = {k: v.detach() for k, v in emb.named_parameters()}
tok = torch.randint(0, 11, (3, 5))
put("psg_embedding", vmap(grad(lambda p, t: functional_call(emb, p, (t,)).pow(2).sum()), in_dims=(None, 0))(ep, tok))

ln = nn.LayerNorm(5)
lp = {k: v.detach() for k, v in ln.named_parameters()}
put("psg_layernorm", vmap(grad(lambda p, a: functional_call(ln, p, (a,)).sin().sum()), in_dims=(None, 0))(lp, x))

# a transformers decoder (tiny Llama: embeddings, RMS norm, rotary attention through the fused
# kernel, gated MLP, the KV cache's cat, the loss's shift and cross entropy)
from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

llama = LlamaForCausalLM(LlamaConfig(vocab_size=50, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                     num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32)).eval()
llp = {k: v.detach() for k, v in llama.named_parameters()}


def llama_loss(p, t):
    return functional_call(llama, p, (t.unsqueeze(0),), {"labels": t.unsqueeze(0)}).loss


put("psg_llama", vmap(grad(llama_loss), in_dims=(None, 0))(llp, torch.randint(0, 50, (3, 6))))

# opacus's per-sample gradients through torch.func (its functorch mode, forced for every layer)
import warnings  # noqa: E402

from opacus import GradSampleModule  # noqa: E402

dp_model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten(), nn.Linear(2 * 4 * 4, 3), nn.LayerNorm(3))
gsm = GradSampleModule(dp_model, force_functorch=True)
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the full backward hook's warning about inputs without grad
    F.cross_entropy(gsm(torch.randn(5, 1, 6, 6)), torch.randint(0, 3, (5,))).backward()
put("opacus_functorch", [p.grad_sample for p in gsm.parameters()])
gsm._close()

# model ensembling: torch.func.stack_module_state, one vmap over the stacked parameters and buffers
import copy  # noqa: E402

from torch.func import stack_module_state  # noqa: E402

members = [nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 5)).eval()
           for _ in range(4)]
ens_params, ens_buffers = stack_module_state(members)
ens_base = copy.deepcopy(members[0]).to("meta")


def ens_call(p, b, im):
    return functional_call(ens_base, (p, b), (im,))


put("ensemble_shared_input", vmap(ens_call, in_dims=(0, 0, None))(ens_params, ens_buffers, torch.randn(2, 1, 6, 6)))
put("ensemble_own_inputs", vmap(ens_call)(ens_params, ens_buffers, torch.randn(4, 2, 1, 6, 6)))

# --- grad, vjp, jacrev ------------------------------------------------------------------------
put("grad", grad(lambda a: (a.sin() * a).sum())(x))
put("grad_argnums", grad(lambda a, b: (a * b.exp()).sum(), argnums=(0, 1))(x, x.cos()))
put("grad_aux", grad(lambda a: ((a ** 2).sum(), a.mean()), has_aux=True)(x))
put("grad_grad", grad(grad(lambda a: a.sin() * a.exp()))(torch.tensor(0.7)))
o, fn = vjp(lambda a: a.tanh() @ a.T, x)
put("vjp", (o, fn(torch.ones_like(o))))
put("jacrev", jacrev(lambda a: a.sin() @ a.T)(x[:3, :2]))
put("jacrev_argnums", jacrev(lambda a, b: a * b.sum(), argnums=(0, 1))(x[0], x[1]))
put("jacrev_jacrev", jacrev(jacrev(lambda a: (a ** 3).sum()))(x[0]))
put("vmap_jacrev", vmap(jacrev(lambda a: a.sin() * a.sum()))(x[:3]))

# --- forward mode: torch.autograd.forward_ad, jvp, jacfwd, hessian -----------------------------
import torch.autograd.forward_ad as fwAD  # noqa: E402
from torch.func import hessian, jacfwd, jvp  # noqa: E402

xt = torch.randn(3)
with fwAD.dual_level():
    dual = fwAD.make_dual(x[0, :3], xt)
    put("forward_ad", fwAD.unpack_dual((dual.sin() * dual).sum() + dual.exp()))
put("jvp", jvp(lambda a: a.tanh() @ torch.ones(3, 2), (x[0, :3],), (xt,)))
put("jvp_unused_input", jvp(lambda a, b: a * 2, (x[0], x[1]), (x[2], x[3])))
put("jacfwd", jacfwd(lambda a: a.sin() * a.sum())(x[0]))
put("jacfwd_module", jacfwd(mlp)(x[0]))
put("hessian", hessian(lambda a: (a ** 3).sum() * a[0])(x[0]))
put("jvp_of_jvp", jvp(lambda a: jvp(torch.sin, (a,), (xt,))[1], (x[0, :3],), (xt,)))
vt = torch.randn(4, 3, 5)
put("vmap_jvp", vmap(lambda a, b: jvp(torch.exp, (a,), (b,)))(vt, vt.cos()))
put("jacfwd_vs_jacrev_softmax", (jacfwd(lambda a: a.softmax(0))(x[0]), jacrev(lambda a: a.softmax(0))(x[0])))

# torch.autograd's batched gradients (the legacy vmap of torch/_vmap_internals.py)
xg = x[0].clone().requires_grad_()
put("is_grads_batched", torch.autograd.grad(xg.sin() * xg.sum(), xg, torch.eye(5), is_grads_batched=True))
fa = lambda a: a.exp() * a.sum()  # noqa: E731
put("jacobian_vectorized", torch.autograd.functional.jacobian(fa, x[0], vectorize=True))
put("jacobian_forward_mode", torch.autograd.functional.jacobian(fa, x[0], vectorize=True, strategy="forward-mode"))
put("hessian_vectorized", torch.autograd.functional.hessian(lambda a: (a ** 3).sum() * a[1], x[0], vectorize=True))
put("hvp", torch.autograd.functional.hvp(lambda a: (a ** 3).sum(), x[0], x[1]))

def _inplace_views(a):
    a[0] = 1.0
    a[:, 1] += 2.0
    a.view(-1)[3] = -1.0
    a.transpose(0, 1)[2].mul_(3)
    a[torch.tensor([0, 2])] = torch.ones(2, 5)
    a.index_add_(0, torch.tensor([1]), a[:1])
    return a


# --- vmap over operators ----------------------------------------------------------------------
a3 = torch.randn(4, 3, 5)
w = torch.randn(5, 2)
put("matmul_2d_1d", vmap(lambda m, v: m @ v, in_dims=(None, 0))(torch.randn(3, 5), x[:4]))
put("matmul_1d_2d", vmap(lambda v: v @ w)(x))
put("matmul_batched_both", vmap(torch.matmul)(a3, torch.randn(4, 5, 2)))
lhs4 = torch.randn(2, 1, 3, 3)
put("matmul_3d", vmap(lambda m: lhs4 @ m)(torch.randn(4, 3, 2)))
put("bmm_unbatched_lhs", vmap(lambda m: torch.bmm(torch.ones(2, 3, 5), m), in_dims=1)(torch.randn(2, 4, 5, 3)))
put("dot", vmap(torch.dot)(x, x.cos()))
put("mv", vmap(torch.mv, in_dims=(0, None))(a3, x[0]))
put("addmm", vmap(lambda m: torch.addmm(torch.ones(2), m, w, beta=0.5, alpha=2.0))(a3))
put("linear", vmap(lambda a: F.linear(a, torch.ones(4, 5), torch.arange(4.0)))(a3))
put("linear_batched_weight", vmap(F.linear, in_dims=(None, 0, 0))(x, torch.randn(3, 2, 5), torch.randn(3, 2)))
put("reductions", vmap(lambda a: (a.sum(), a.sum(0), a.mean(-1, keepdim=True), a.amax(1), a.var(0),
                                  a.std(), a.argmax(), a.argmax(1), a.logsumexp(1), a.prod(), a.norm(),
                                  a.max(0).values, a.min(), a.max()))(a3))
put("zero_dim_reductions", vmap(lambda a: (a.std(0, correction=0, keepdim=True), a.sum(0, keepdim=True),
                                           a.amax(0, keepdim=True), a.logsumexp(0, keepdim=True), a.mean(0),
                                           a.softmax(0), a.cumsum(0)))(x[0]))
put("softmax_cumsum", vmap(lambda a: (a.softmax(-1), F.log_softmax(a, 0), a.cumsum(1), a.cumprod(0)))(a3))
put("sort_topk", vmap(lambda a: (a.sort(1)[0], a.sort(0, descending=True)[1], a.topk(2, dim=-1)[0]))(a3))
put("views", vmap(lambda a: (a.view(15), a.reshape(5, 3), a.permute(1, 0), a.t(), a.transpose(0, 1),
                             a.unsqueeze(1), a.unsqueeze(-1).squeeze(-1), a[1], a[:, 1:4:2], a.diagonal(),
                             a.unfold(1, 2, 2), a.expand(2, 3, 5), a.flatten(), a.narrow(1, 1, 2),
                             a.split(2, 1)[1], a.chunk(3, 0)[2], a.unbind(1)[3], a.flip(0), a.mT))(a3))
put("views_bdim2", vmap(lambda a: (a.view(-1), a.transpose(0, 1).reshape(-1), a[..., 0]), in_dims=2)(a3))
put("pointwise", vmap(lambda a, s: (a * s, a + 1, torch.where(a > 0, a, s), a.clamp(-0.5, 0.5), F.gelu(a),
                                    a.masked_fill(a < 0, 2.0), torch.maximum(a, s), a.pow(2), a / 3))(a3, x[:4, 0]))
put("promote_zero_dim", vmap(lambda a, i: (a * i, a + i, i * 2.5))(a3, torch.arange(4)))
put("promote_zero_dim_double", vmap(lambda a, d: a + d)(a3, torch.arange(4, dtype=torch.float64)))
put("cat_stack", vmap(lambda a, b: (torch.cat([a, b], 0), torch.stack([a, b], 1), torch.cat([a, a.sin()], -1)),
                      in_dims=(0, None))(a3, torch.ones(3, 5)))
put("index_batched_idx", vmap(lambda i: x[i, 1:3])(torch.tensor([0, 3, 5])))
put("index_two", vmap(lambda i, j: a3[0][i, j])(torch.tensor([0, 2, 1]), torch.tensor([4, 0, 3])))
put("index_nonadjacent", vmap(lambda a: a[torch.tensor([0, 2]), :, torch.tensor([1, 3])])(torch.randn(2, 3, 4, 5)))
put("index_middle", vmap(lambda a: a[:, torch.tensor([[0, 4], [1, 1]])])(a3))
put("index_unbatched_masks", vmap(lambda a: (a[torch.tensor([True, False, True])], a[:, torch.tensor([0, 1, 1, 0, 1]) > 0],
                                             a[torch.ones(3, 5) > 0.5 * torch.arange(5.0)]))(a3))
put("inplace_through_views", vmap(lambda a: _inplace_views(a.clone()))(a3))
put("gather", vmap(lambda a, i: a.gather(1, i))(a3, torch.randint(0, 5, (4, 3, 2))))
put("embedding", vmap(lambda wt: F.embedding(tok, wt))(torch.randn(3, 11, 4)))
put("embedding_batched_idx", vmap(F.embedding, in_dims=(0, None))(tok, torch.randn(11, 4)))
put("conv2d", vmap(lambda im: F.conv2d(im, torch.ones(3, 2, 3, 3), torch.arange(3.0)))(torch.randn(2, 1, 2, 6, 6)))
put("conv2d_unbatched_input", vmap(lambda im: F.max_pool2d(F.conv2d(im, torch.ones(3, 2, 3, 3)), 2))(torch.randn(2, 2, 6, 6)))
put("layer_norm", vmap(lambda a: F.layer_norm(a, (5,), torch.arange(5.0), torch.ones(5)))(a3))
put("pads", vmap(lambda a: (F.pad(a, (1, 2)), F.pad(a, (1, 1, 2, 0), value=0.5),
                            F.pad(a.unsqueeze(0), (2, 1), mode="reflect"), F.pad(a, (1, 1), mode="replicate")))(a3))
put("sdpa", vmap(F.scaled_dot_product_attention)(*(torch.randn(2, 2, 3, 4) for _ in range(3))))
put("nested", vmap(vmap(lambda a, b: a * b + a.sum()))(a3, a3.cos()))
put("nested_in_dims", vmap(vmap(lambda a, b: a @ b, in_dims=(0, None)), in_dims=(None, 0))(torch.randn(3, 5), torch.randn(4, 5)))
put("out_dims", vmap(lambda a: (a.t(), a.sum()), in_dims=1, out_dims=(1, 0))(a3))
put("chunked", vmap(lambda a: a.sin().sum(0), chunk_size=3)(a3))
put("pytree", vmap(lambda d: d["a"] * d["b"])({"a": a3, "b": a3.exp()}))
put("unbatched_output", vmap(lambda a: torch.ones(2))(a3))
put("inplace_batched", vmap(lambda a: a.clone().mul_(2).add_(a))(a3))
put("fallback_loop", vmap(lambda a: (torch.linalg.det(a[:, :3]), torch.kron(a[:2, :2], a[1:, 3:]), torch.histc(a, 4)))(a3))
put("new_zeros_like", vmap(lambda a: (a.new_zeros(2, 2), torch.zeros_like(a), torch.full_like(a, 3.0)))(a3))
put("randomness_same", vmap(lambda a: torch.rand(3, generator=None) * 0 + a.sum(), randomness="same")(a3))
put("grad_through_vmap", torch.autograd.grad(vmap(lambda a: a.sin() @ w)(x.requires_grad_()).sum(), x)[0])
x.requires_grad_(False)

# --- autograd.Function under transforms --------------------------------------------------------
class Square(torch.autograd.Function):
    generate_vmap_rule = True

    @staticmethod
    def forward(a):
        return a * a.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return g * (1 + a) * a.exp()


class SquareNoVmap(Square):
    generate_vmap_rule = False


class SquareOldStyle(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2 * a * g


put("function_vmap", vmap(Square.apply)(a3))
put("function_grad", grad(lambda a: Square.apply(a).sum())(x))
put("function_vmap_grad", vmap(grad(lambda a: Square.apply(a).sum()))(x))
put("function_grad_vmap", grad(lambda a: vmap(Square.apply)(a).sum())(x))

# --- errors -----------------------------------------------------------------------------------
errors = {}


def err(name, fn):
    try:
        fn()
        errors[name] = "no error"
    except Exception as e:  # noqa: BLE001 - the type is the result
        errors[name] = [type(e).__name__, str(e).split("\n")[0][:60]]


err("random_error_mode", lambda: vmap(lambda a: a + torch.rand(5))(a3))
err("dropout_error_mode", lambda: vmap(lambda a: F.dropout(a, 0.5))(a3))
err("item", lambda: vmap(lambda a: a.sum().item())(a3))
err("control_flow", lambda: vmap(lambda a: a if a.sum() > 0 else -a)(a3))
err("inplace_unbatched_self", lambda: vmap(lambda a: torch.ones(3, 5).add_(a))(a3))
err("batch_size_mismatch", lambda: vmap(torch.add)(a3, torch.ones(2, 5)))
err("in_dims_out_of_range", lambda: vmap(torch.sin, in_dims=3)(a3))
err("non_tensor_output", lambda: vmap(lambda a: 1.0)(a3))
err("grad_non_scalar", lambda: grad(lambda a: a * 2)(x))
err("dim_out_of_range", lambda: vmap(lambda a: a.sum(3))(a3))
err("mm_shapes", lambda: vmap(torch.mm)(a3, a3))
err("function_without_vmap_rule", lambda: vmap(SquareNoVmap.apply)(a3))
err("function_old_style_vmap", lambda: vmap(SquareOldStyle.apply)(a3))
err("function_old_style_grad", lambda: grad(lambda a: SquareOldStyle.apply(a).sum())(x))
err("batched_mask_getitem", lambda: vmap(lambda a: a[a > 0])(a3))
err("batched_mask_setitem", lambda: vmap(lambda a: a.clone().__setitem__(a > 0, 1.0))(a3))
wg = torch.randn(5, requires_grad=True)
err("autograd_grad_inside_plain_vmap", lambda: vmap(lambda a: torch.autograd.grad((a * wg).sum(), wg)[0])(a3[:, 0]))
# inside a plain vmap batched tensors report no requires_grad (upstream's BatchedTensor), inside grad-of-vmap they do
put("requires_grad_inside_vmap", (vmap(lambda a: a * 0 if (a * wg).requires_grad else a + 1)(a3[:, 0]),
                                  vmap(grad(lambda a: (a * wg).sum() * (2.0 if (a * wg).requires_grad else 3.0)))(a3[:, 0])))
err("jvp_tangent_size", lambda: jvp(torch.sin, (x[0],), (x[0, :2],)))

np.savez(sys.argv[1], **out)
with open(sys.argv[2], "w") as f:
    json.dump(errors, f, indent=1, sort_keys=True)
