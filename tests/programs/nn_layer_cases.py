"""Pooling, embedding bags, CTC and margin losses, RReLU, bilinear, 3-d grid sampling,
antialiased resizing and conv_tbc: values, gradients, seeded draws and argument errors.
Deterministic inputs (seeded generators); run on whichever torch runs this file, writing each
case's outcome as JSON.

    python tests/programs/nn_layer_cases.py OUT.json

tests/test_nn_layer_ops.py runs it on ours and on upstream and compares.
"""

import sys
import warnings

import torch
import torch.nn.functional as F
from case_outcomes import write_outcomes

warnings.simplefilter("ignore")
A = torch.ops.aten


def rand(*shape, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype)


def grads(fn, *inputs):
    """fn's value and the gradients of its sum (weighted, so each output matters) wrt inputs."""
    xs = [t.detach().clone().requires_grad_() for t in inputs]
    out = fn(*xs)
    out = out[0] if isinstance(out, tuple) else out
    w = torch.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
    gs = torch.autograd.grad((out * w).sum(), xs, allow_unused=True)
    return [out.detach()] + [g if g is not None else torch.zeros(()) for g in gs]


x5 = rand(2, 3, 5, 6, 7)
ties = torch.tensor([[[[[1., 3., 3.], [2., 3., 0.], [float("nan"), 1., float("nan")]]]]])
lp = rand(6, 2, 5, seed=1).log_softmax(2)
tg = torch.tensor([[1, 2, 2], [3, 1, 0]])
emb = rand(10, 3, seed=2)
bag_idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
bag_off = torch.tensor([0, 2, 2, 5])
img = rand(2, 3, 9, 11, seed=3)
vol = rand(2, 2, 4, 5, 3, seed=4)
grid3 = rand(2, 3, 2, 4, 3, seed=5) * 0.8


def fmp(nd, dtype=torch.float64, seed=7):
    x = rand(*([2, 3] + [9, 8, 7][:nd]), seed=seed, dtype=dtype)
    s = torch.rand(2, 3, nd, generator=torch.Generator().manual_seed(seed), dtype=dtype)
    op = A.fractional_max_pool2d if nd == 2 else A.fractional_max_pool3d
    return op(x, [2] * nd, [4, 5, 3][:nd], s)


def rrelu_train(dtype, seed):
    torch.manual_seed(seed)
    x = rand(40, seed=seed, dtype=dtype)
    noise = torch.empty_like(x)
    out = A.rrelu_with_noise(x, noise, 0.1, 0.4, True)
    return [out, noise, torch.rand(3)]  # the generator's position after the draws too


CASES = {
    # max_pool3d
    "max_pool3d": lambda: F.max_pool3d(x5, 2, 2, return_indices=True),
    "max_pool3d_pad_dil_ceil": lambda: A.max_pool3d_with_indices(x5, [3, 2, 3], [2, 1, 2], [1, 1, 1], [1, 2, 1], True),
    "max_pool3d_unbatched_f32": lambda: F.max_pool3d(x5[0].float(), [2, 3, 2], 1, 1, return_indices=True),
    "max_pool3d_ties_nan": lambda: A.max_pool3d_with_indices(ties, [1, 2, 2], [1, 1, 1], [0], [1], False),
    "max_pool3d_int": lambda: A.max_pool3d_with_indices((x5 * 10).long(), [2, 2, 2], [], [0], [1], False),
    "max_pool3d_grad": lambda: grads(lambda t: F.max_pool3d(t, 3, 2, 1), x5),
    "max_pool3d_backward": lambda: A.max_pool3d_with_indices_backward(
        torch.ones(2, 3, 2, 3, 3, dtype=torch.float64), x5, [2, 2, 2], [2, 2, 2], [0], [1], False,
        A.max_pool3d_with_indices(x5, [2, 2, 2], [2, 2, 2], [0], [1], False)[1]),
    "max_pool3d_bf16_backward": lambda: A.max_pool3d_with_indices_backward(  # overlapping windows add in bfloat16
        torch.linspace(0.5, 1.5, 630).bfloat16().reshape(2, 3, 5, 6, 7), x5.bfloat16(), [3, 3, 3], [1, 1, 1],
        [1, 1, 1], [1, 1, 1], False,
        A.max_pool3d_with_indices(x5.bfloat16(), [3, 3, 3], [1, 1, 1], [1, 1, 1], [1, 1, 1], False)[1]),
    "max_pool3d_f16_strided": lambda: A.max_pool3d_with_indices(x5.half().transpose(2, 4), [2, 1, 2], [1, 2, 1],
                                                                [1, 0, 1], [1], True),
    "max_pool3d_err_pad": lambda: A.max_pool3d_with_indices(x5, [2, 2, 2], [1], [2], [1], False),
    "max_pool3d_err_dim": lambda: A.max_pool3d_with_indices(x5[0, 0], [2, 2, 2], [1], [0], [1], False),
    "max_pool3d_err_kernel": lambda: A.max_pool3d_with_indices(x5, [2, 2], [1], [0], [1], False),
    "max_pool3d_err_small": lambda: A.max_pool3d_with_indices(x5, [2, 9, 2], [1], [0], [1], False),
    "max_pool3d_err_bool": lambda: A.max_pool3d_with_indices(x5 > 0, [2, 2, 2], [1], [0], [1], False),
    # fractional max pooling
    "fmp2d": lambda: fmp(2),
    "fmp2d_f32": lambda: fmp(2, torch.float32, 8),
    "fmp3d": lambda: fmp(3),
    "fmp2d_seeded": lambda: (torch.manual_seed(3), F.fractional_max_pool2d(img, 3, output_ratio=(0.5, 0.5),
                                                                           return_indices=True))[1],
    "fmp3d_seeded_grad": lambda: (torch.manual_seed(4), grads(lambda t: F.fractional_max_pool3d(t, 2, (2, 3, 2)),
                                                              x5))[1],
    "fmp2d_bf16": lambda: fmp(2, torch.bfloat16, 9),
    "fmp3d_f16": lambda: fmp(3, torch.float16, 10),
    "fmp2d_unbatched_nan": lambda: A.fractional_max_pool2d(
        img[0].clone().index_fill_(2, torch.tensor([3, 7]), float("nan")), [2, 3], [5, 4],
        torch.rand(1, 3, 2, generator=torch.Generator().manual_seed(11), dtype=torch.float64)),
    "fmp2d_grad_overlap": lambda: (torch.manual_seed(5), grads(lambda t: F.fractional_max_pool2d(t, 4, (6, 7)),
                                                               img))[1],
    "fmp2d_err_large": lambda: A.fractional_max_pool2d(img, [3, 3], [9, 4], torch.rand(2, 3, 2, dtype=torch.float64)),
    "fmp2d_err_samples": lambda: A.fractional_max_pool2d(img, [2, 2], [4, 4], torch.rand(2, 3, 1, dtype=torch.float64)),
    "fmp2d_err_dtype": lambda: A.fractional_max_pool2d(img, [2, 2], [4, 4], torch.rand(2, 3, 2)),
    # embedding_bag
    "bag_sum": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 0, False, None, False, -1),
    "bag_sum_padding": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 0, False, None, False, 2),
    "bag_mean": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 1, False, None, False, -1),
    "bag_mean_last_offset": lambda: A._embedding_bag(emb, bag_idx, torch.tensor([0, 2, 2, 8]), False, 1, False,
                                                     None, True, 4),
    "bag_max": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 2, False, None, False, -1),
    "bag_max_padding": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 2, False, None, False, 4),
    "bag_psw_f32": lambda: A._embedding_bag(emb.float(), bag_idx, bag_off, False, 0, False,
                                            torch.linspace(0, 1, 8), False, -1),
    "bag_int32": lambda: A._embedding_bag(emb, bag_idx.int(), bag_off.int(), False, 1, False, None, False, -1),
    "bag_grad_sum_psw": lambda: grads(lambda w, p: F.embedding_bag(bag_idx, w, bag_off, mode="sum",
                                                                   per_sample_weights=p), emb, torch.rand(8).double()),
    "bag_grad_mean_padding": lambda: grads(lambda w: F.embedding_bag(bag_idx, w, bag_off, mode="mean",
                                                                     padding_idx=4), emb),
    # upstream divides the k-th distinct row by the count of the k-th sorted index
    "bag_grad_freq": lambda: grads(lambda w: F.embedding_bag(bag_idx, w, bag_off, mode="mean", scale_grad_by_freq=True,
                                                             padding_idx=4), emb),
    "bag_grad_max": lambda: grads(lambda w: F.embedding_bag(bag_idx, w, bag_off, mode="max"), emb),
    "bag_backward_mean_padding": lambda: A._embedding_bag_backward(
        torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3), bag_idx, bag_off,
        *A._embedding_bag(emb, bag_idx, bag_off, False, 1, False, None, False, 4)[1:], 10, False, 1, False, None, 4),
    "bag_dense_backward_max": lambda: A._embedding_bag_dense_backward(
        torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3), bag_idx,
        *A._embedding_bag(emb, bag_idx, bag_off, False, 2, False, None, False, -1)[1:], 10, False, 2, None, -1),
    "bag_psw_backward": lambda: A._embedding_bag_per_sample_weights_backward(
        torch.linspace(-1, 1, 12, dtype=torch.float64).reshape(4, 3), emb, bag_idx, bag_off,
        torch.empty(0, dtype=torch.long), 0, -1),
    "bag_2d_input": lambda: F.embedding_bag(bag_idx.reshape(2, 4), emb, mode="mean"),
    "bag_err_offset0": lambda: A._embedding_bag(emb, bag_idx, bag_off + 1, False, 0, False, None, False, -1),
    "bag_err_last": lambda: A._embedding_bag(emb, bag_idx, torch.tensor([0, 9]), False, 0, False, None, False, -1),
    "bag_err_range": lambda: A._embedding_bag(emb, bag_idx - 5, bag_off, False, 1, False, None, False, -1),
    "bag_err_range_max": lambda: A._embedding_bag(emb, bag_idx + 1, bag_off, False, 2, False, None, False, -1),
    "bag_err_psw_mode": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 2, False, torch.rand(8).double(),
                                                 False, -1),
    "bag_err_mode": lambda: A._embedding_bag(emb, bag_idx, bag_off, False, 3, False, None, False, -1),
    "bag_err_index_dtype": lambda: A._embedding_bag(emb, bag_idx.float(), bag_off, False, 0, False, None, False, -1),
    "bag_err_weight_dtype": lambda: A._embedding_bag(emb.long(), bag_idx, bag_off, False, 0, False, None, False, -1),
    # ctc_loss
    # (log_alpha, the second result, is left uninitialised by upstream past each sample's lengths)
    "ctc": lambda: A._ctc_loss(lp, tg, [6, 5], [3, 2], 0, False)[0],
    "ctc_concat_targets": lambda: A._ctc_loss(lp, torch.tensor([1, 2, 2, 3, 1]), [6, 5], [3, 2], 0, False)[0],
    "ctc_infinite": lambda: A._ctc_loss(lp, tg, [1, 5], [3, 2], 0, False)[0],
    "ctc_mean_blank": lambda: F.ctc_loss(lp, tg, (6, 4), (2, 2), blank=4),
    "ctc_sum_zero_inf": lambda: F.ctc_loss(lp, tg, (2, 5), (3, 2), reduction="sum", zero_infinity=True),
    "ctc_tensor_lengths": lambda: F.ctc_loss(lp.float(), tg, torch.tensor([6, 5]), torch.tensor([3, 2]),
                                             reduction="none"),
    "ctc_unbatched": lambda: F.ctc_loss(lp[:, 0], tg[0], (6,), (3,)),
    "ctc_grad": lambda: grads(lambda t: F.ctc_loss(t, tg, (6, 5), (3, 2), reduction="none"), lp),
    "ctc_grad_zero_inf": lambda: grads(lambda t: F.ctc_loss(t, tg, (2, 5), (3, 2), zero_infinity=True), lp),
    "ctc_err_dims": lambda: A._ctc_loss(lp[:, 0], tg, [6, 5], [3, 2], 0, False),
    "ctc_err_lengths": lambda: A._ctc_loss(lp, tg, [7, 5], [3, 2], 0, False),
    "ctc_err_target_size": lambda: A._ctc_loss(lp, tg, [6, 5], [3, 4], 0, False),
    "ctc_err_blank": lambda: A._ctc_loss(lp, tg, [6, 5], [3, 2], 5, False),
    "ctc_err_half": lambda: A._ctc_loss(lp.half(), tg, [6, 5], [3, 2], 0, False),
    "ctc_err_float_lengths": lambda: A.ctc_loss.Tensor(lp, tg, torch.tensor([6., 5.]), torch.tensor([3, 2])),
    # multilabel_margin_loss
    "mlm": lambda: A.multilabel_margin_loss_forward(rand(3, 5), torch.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 0, 4],
                                                                             [-1, 1, 1, 1, 1]]), 0),
    "mlm_mean_vector": lambda: F.multilabel_margin_loss(rand(5).float(), torch.tensor([4, 1, -1, 0, 0])),
    "mlm_grad": lambda: grads(lambda t: F.multilabel_margin_loss(t, torch.tensor([[3, 0, -1, 1], [1, 2, 3, 0]]),
                                                                 reduction="sum"), rand(2, 4, seed=9)),
    "mlm_err_range": lambda: F.multilabel_margin_loss(rand(2, 4), torch.tensor([[3, 0, 4, 1], [1, 2, 3, 0]])),
    "mlm_err_shape": lambda: F.multilabel_margin_loss(rand(2, 4), torch.tensor([[3, 0, 1], [1, 2, 3]])),
    "mlm_err_half": lambda: F.multilabel_margin_loss(rand(2, 4).half(), torch.tensor([[3, 0, 1, 1], [1, 2, 3, 0]])),
    # rrelu
    "rrelu_train_f32": lambda: rrelu_train(torch.float32, 11),
    "rrelu_train_f64": lambda: rrelu_train(torch.float64, 12),
    "rrelu_eval": lambda: F.rrelu(rand(7), 0.2, 0.3, training=False),
    "rrelu_grad": lambda: (torch.manual_seed(5), grads(lambda t: F.rrelu(t, training=True), rand(9)))[1],
    "rrelu_err_bounds": lambda: A.rrelu_with_noise(rand(3), torch.empty(3, dtype=torch.float64), 0.5, 0.3, True),
    "rrelu_err_noise": lambda: A.rrelu_with_noise(rand(3), torch.empty(2, dtype=torch.float64), 0.1, 0.3, True),
    # bilinear, conv_tbc
    "bilinear": lambda: grads(lambda a, b, w, c: F.bilinear(a, b, w, c), rand(3, 4), rand(3, 5, seed=1),
                              rand(6, 4, 5, seed=2), rand(6, seed=3)),
    "bilinear_batched": lambda: F.bilinear(rand(2, 3, 4), rand(2, 3, 5), rand(6, 4, 5)),
    "bilinear_err_batch": lambda: F.bilinear(rand(2, 4), rand(3, 5), rand(6, 4, 5)),
    "bilinear_err_weight_1d": lambda: F.bilinear(rand(2, 4), rand(2, 5), rand(6)),
    "bilinear_err_weight_2d": lambda: F.bilinear(rand(2, 4), rand(2, 5), rand(6, 4)),
    "bilinear_err_bias": lambda: F.bilinear(rand(2, 4), rand(2, 5), rand(6, 4, 5), rand(3)),
    "conv_tbc": lambda: grads(lambda a, w, b: A.conv_tbc(a, w, b, 1), rand(7, 2, 3), rand(3, 3, 4, seed=1),
                              rand(4, seed=2)),
    "conv_tbc_backward": lambda: A.conv_tbc_backward(rand(7, 2, 4, seed=4), rand(7, 2, 3), rand(3, 3, 4, seed=1),
                                                     rand(4, seed=2), 1),
    "conv_tbc_negative_pad": lambda: A.conv_tbc(rand(7, 2, 3), rand(3, 3, 4), rand(4), -1),
    "conv_tbc_err_channels": lambda: A.conv_tbc(rand(7, 2, 3), rand(3, 2, 4), rand(4), 0),
    # the slow convolution entry points, nll_loss2d
    "thnn_conv2d": lambda: A.thnn_conv2d(img, rand(4, 3, 3, 2, seed=6), [3, 2], rand(4), [1, 2], [1, 0]),
    "thnn_conv2d_err_stride": lambda: A.thnn_conv2d(img, rand(4, 3, 3, 2, seed=6), [3, 2], None, [1], [0, 0]),
    "slow_conv3d": lambda: A.slow_conv3d(x5, rand(2, 3, 2, 3, 2, seed=7), [2, 3, 2], None, [1, 2, 1], [1, 0, 1]),
    "slow_conv3d_err_padding": lambda: A.slow_conv3d(x5, rand(2, 3, 2, 3, 2), [2, 3, 2], None, [1], [0]),
    "slow_conv_dilated2d_unbatched": lambda: A.slow_conv_dilated2d(img[0], rand(4, 3, 3, 2), [3, 2], None, [1, 1],
                                                                   [0, 0], [2, 1]),
    "slow_conv_transpose2d_unbatched": lambda: A.slow_conv_transpose2d(img[0], rand(3, 4, 3, 2), [3, 2], None,
                                                                       [2, 1], [1, 0], [1, 0], [1, 1]),
    "nll_loss2d": lambda: A.nll_loss2d(img.log_softmax(1), torch.tensor([0, 1, 2]).repeat(2, 9, 4)[:, :, :11]),
    # grid_sampler_3d
    "grid3d_bilinear": lambda: grads(lambda a, g: F.grid_sample(a, g, align_corners=False), vol, grid3 * 1.3),
    "grid3d_nearest_border": lambda: F.grid_sample(vol, grid3 * 1.5, "nearest", "border", align_corners=True),
    "grid3d_reflection": lambda: grads(lambda a, g: F.grid_sample(a, g, "bilinear", "reflection",
                                                                  align_corners=False), vol, grid3 * 2.5),
    "grid3d_backward": lambda: A.grid_sampler_3d_backward(torch.ones(2, 2, 3, 2, 4, dtype=torch.float64), vol,
                                                          grid3, 0, 0, True, [False, True]),
    "grid3d_err_bicubic": lambda: A.grid_sampler_3d(vol, grid3, 2, 0, False),
    "grid3d_err_last": lambda: A.grid_sampler_3d(vol, grid3[..., :2], 0, 0, False),
    "grid2d_bicubic_reflection": lambda: grads(lambda a, g: F.grid_sample(a, g, "bicubic", "reflection",
                                                                         align_corners=False), img, grid3[:, 0, :, :, :2] * 1.6),
    "grid2d_bicubic_zeros_corners": lambda: F.grid_sample(img, grid3[:, 1, :, :, :2] * 1.3, "bicubic", "zeros",
                                                          align_corners=True),
    # antialiased resizing
    "aa_bilinear_down": lambda: F.interpolate(img, size=(4, 5), mode="bilinear", antialias=True),
    "aa_bilinear_up_f32": lambda: F.interpolate(img.float(), scale_factor=1.7, mode="bilinear", antialias=True),
    "aa_bicubic_down": lambda: F.interpolate(img, size=(3, 7), mode="bicubic", antialias=True),
    "aa_bicubic_corners": lambda: F.interpolate(img, size=(5, 4), mode="bicubic", antialias=True,
                                                align_corners=True),
    "aa_bilinear_grad": lambda: grads(lambda t: F.interpolate(t, size=(4, 6), mode="bilinear", antialias=True), img),
    "aa_bicubic_backward": lambda: A._upsample_bicubic2d_aa_backward(torch.ones(2, 3, 4, 5, dtype=torch.float64),
                                                                     [4, 5], [2, 3, 9, 11], False, None, None),
}

if __name__ == "__main__":
    write_outcomes(CASES, sys.argv[1])
