"""Operators composed as upstream composes them, and their argument checks in upstream's order:
quantile/nanquantile (every interpolation, dims, NaNs, out=), vander, chain_matmul,
flatten/unflatten_dense_tensors, lerp with a weight tensor, nll_loss's and nll_loss2d's checks,
upsample's output-size checks, pixel_shuffle/unshuffle, movedim, the stacks of an empty list,
convolution's argument checks. Run on whichever torch runs this file; writes per case the dtype,
shape and values of the result (or each result) or the exception type and message.

    python tests/programs/composite_checks_cases.py OUT.json

tests/test_composite_checks.py runs it on ours and on upstream and compares.
"""

import sys
import warnings

import torch
from case_outcomes import write_outcomes

warnings.simplefilter("ignore")
torch.manual_seed(0)
A = torch.ops.aten

x = torch.randn(4, 5, dtype=torch.float64)
x[1, 2] = float("nan")
y = torch.randn(7)
q = torch.tensor([0.0, 0.25, 0.5, 0.9, 1.0], dtype=torch.float64)
img = torch.rand(1, 2, 4, 4)
CASES = {}
for fn in ("quantile", "nanquantile"):
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        f = getattr(torch, fn)
        CASES[f"{fn}_{mode}_dim1"] = lambda f=f, m=mode: f(x, q, dim=1, keepdim=True, interpolation=m)
        CASES[f"{fn}_{mode}_scalar_dim0"] = lambda f=f, m=mode: f(x, 0.3, dim=0, interpolation=m)
        CASES[f"{fn}_{mode}_all"] = lambda f=f, m=mode: f(x, q, interpolation=m)
        CASES[f"{fn}_{mode}_f32"] = lambda f=f, m=mode: f(y, torch.tensor([0.1, 0.6]), dim=0, keepdim=True,
                                                          interpolation=m)
CASES.update({
    "quantile_q_range": lambda: torch.quantile(x, 1.5),
    "quantile_int": lambda: torch.quantile(x.int(), 0.5),
    "quantile_q_dtype": lambda: torch.quantile(x, q.float()),
    "quantile_q_2d": lambda: torch.quantile(x, torch.tensor([[0.5]], dtype=torch.float64)),
    "quantile_empty": lambda: torch.quantile(torch.empty(0), 0.5),
    "quantile_mode": lambda: torch.quantile(x, 0.5, interpolation="x"),
    "quantile_q_tensor_range": lambda: torch.quantile(x, torch.tensor([0.5, 2.0], dtype=torch.float64)),
    "quantile_dim": lambda: torch.quantile(x, 0.5, dim=3),
    "quantile_out_dtype": lambda: torch.quantile(x, 0.5, out=torch.empty(2, dtype=torch.float32)),
    "quantile_out": lambda: torch.quantile(x, q[:2], dim=0, out=torch.empty(3, dtype=torch.float64)),
    "vander": lambda: torch.vander(torch.tensor([1, 2, 3])),
    "vander_float_incr": lambda: torch.vander(torch.tensor([1.5, 2, -3]), N=4, increasing=True),
    "vander_bool": lambda: torch.vander(torch.tensor([True, False]), 3),
    "vander_2d": lambda: torch.vander(torch.ones(2, 2)),
    "vander_negative": lambda: torch.vander(torch.tensor([1, 2]), N=-1),
    "vander_zero": lambda: torch.vander(torch.tensor([2, 3]), N=0),
    "chain_matmul_one": lambda: torch.chain_matmul(y.reshape(1, 7)),
    "chain_matmul_empty": lambda: A.chain_matmul([]),
    "chain_matmul_1d": lambda: torch.chain_matmul(x, torch.randn(5)),
    "flatten_dense": lambda: A.flatten_dense_tensors([x, x.t(), torch.ones(0, dtype=torch.float64)]),
    "unflatten_dense": lambda: A.unflatten_dense_tensors(torch.arange(10.0), [torch.ones(2, 2), torch.ones(0, 3),
                                                                               torch.ones(3)]),
    "unflatten_short": lambda: A.unflatten_dense_tensors(torch.arange(3.0), [torch.ones(2, 2)]),
    "lerp_tensor_f32": lambda: torch.lerp(torch.tensor([-0.9627408981323242, 0.5, 3.0]), torch.tensor([0.3, -0.2, 1.0]),
                                          torch.tensor([0.3, 0.8, 0.5])),
    "lerp_tensor_f64_bcast": lambda: torch.lerp(x, x.flip(0), torch.linspace(-0.5, 1.5, 5, dtype=torch.float64)),
    "lerp_tensor_f16": lambda: torch.lerp(y.half(), y.flip(0).half(), torch.full((7,), 0.3, dtype=torch.half)),
    "nll_1d_target_size": lambda: A.nll_loss_forward(torch.rand(3), torch.tensor([0, 1]), None, 1, -100),
    "nll_0d_target": lambda: A.nll_loss_forward(torch.rand(3, 4), torch.tensor(1), None, 1, -100),
    "nll_float_target": lambda: A.nll_loss_forward(torch.rand(3, 4), torch.tensor([0.0, 1, 2]), None, 1, -100),
    "nll_3d_input": lambda: A.nll_loss_forward(torch.rand(3, 4, 5), torch.tensor([0, 1, 2]), None, 1, -100),
    "nll_2d_target": lambda: A.nll_loss_forward(torch.rand(3, 4), torch.zeros(3, 2, dtype=torch.long), None, 1, -100),
    "nll_byte_target": lambda: A.nll_loss_forward(x.float()[:3].nan_to_num(), torch.tensor([0, 1, 2], dtype=torch.uint8),
                                                  None, 1, -100),
    "nll_out_of_bounds": lambda: A.nll_loss_forward(torch.rand(3, 4), torch.tensor([0, 1, 5]), None, 1, -100),
    "nll_int_input": lambda: A.nll_loss_forward(torch.rand(3, 4).int(), torch.tensor([0, 1, 2]), None, 1, -100),
    "nll_nd_batch": lambda: A.nll_loss_nd(torch.rand(3, 4), torch.tensor([0, 1])),
    "nll2d_target_dims": lambda: A.nll_loss2d_forward(torch.rand(3, 4, 2, 2), torch.zeros(3, 2, dtype=torch.long), None,
                                                      1, -100),
    "nll2d_target_dtype": lambda: A.nll_loss2d_forward(torch.rand(3, 4, 2, 2), torch.zeros(3, 2, 2), None, 1, -100),
    "nll2d_size": lambda: A.nll_loss2d_forward(torch.rand(3, 4, 2, 2), torch.zeros(3, 2, 3, dtype=torch.long), None, 1,
                                               -100),
    "up_vec_size_len": lambda: A.upsample_nearest2d.vec(img, [1], None),
    "up_vec_scale_len": lambda: A.upsample_nearest2d.vec(img, None, [1.0]),
    "up_vec_neither": lambda: A.upsample_nearest2d.vec(img, None, None),
    "up_vec_both": lambda: A.upsample_nearest2d.vec(img, [2, 2], [1.0, 1.0]),
    "up_fixed_size_len": lambda: A.upsample_bilinear2d.default(img, [2], False),
    "up_fixed_input_dims": lambda: A.upsample_bilinear2d.default(img[0], [2, 2], False),
    "up_zero_out": lambda: A.upsample_bilinear2d.default(img, [0, 2], False),
    "up_zero_out_1d": lambda: A.upsample_linear1d.default(img[0], [0], False),
    "up_empty_channels": lambda: A.upsample_nearest2d.default(torch.rand(2, 0, 3, 3), [2, 2]),
    "up_empty_batch": lambda: A.upsample_nearest2d.default(torch.rand(0, 2, 3, 3), [2, 2]),
    "up_scale_trunc": lambda: A.upsample_nearest3d.vec(torch.rand(1, 1, 2, 2, 2), None, [1.5, 2.0, 0.5]),
    "up_bilinear_ac": lambda: A.upsample_bilinear2d.vec(img, [3, 5], True, None),
    "pixel_shuffle_dims": lambda: torch.pixel_shuffle(torch.rand(4, 4), 2),
    "pixel_shuffle_factor": lambda: torch.pixel_shuffle(torch.rand(4, 2, 2), 0),
    "pixel_shuffle_channels": lambda: torch.pixel_shuffle(torch.rand(3, 2, 2), 2),
    "pixel_unshuffle_height": lambda: torch.pixel_unshuffle(torch.rand(3, 3, 4), 2),
    "pixel_unshuffle_width": lambda: torch.pixel_unshuffle(torch.rand(3, 4, 3), 2),
    "pixel_shuffle": lambda: torch.pixel_shuffle(torch.arange(48.0).reshape(1, 8, 2, 3), 2),
    "pixel_unshuffle": lambda: torch.pixel_unshuffle(torch.arange(48.0).reshape(1, 2, 4, 6), 2),
    "movedim_lengths": lambda: torch.movedim(x, [0, 1], [1]),
    "movedim_repeated": lambda: torch.movedim(torch.ones(2, 3, 4), [0, 0], [1, 2]),
    "movedim_repeated_dst": lambda: torch.movedim(torch.ones(2, 3, 4), [0, 1], [1, 1]),
    "movedim_range": lambda: torch.movedim(torch.ones(2, 3, 4), [0, 5], [1, 2]),
    "hstack_empty": lambda: A.hstack([]), "vstack_empty": lambda: A.vstack([]), "dstack_empty": lambda: A.dstack([]),
    "conv_weight_dims": lambda: A.convolution(img, torch.ones(4, 2), None, [1], [0], [1], False, [0], 1),
    "conv_negative_padding": lambda: A.convolution(img, torch.ones(4, 2, 1, 1), None, [1], [-1], [1], False, [0], 1),
    "conv_zero_stride": lambda: A.convolution(img, torch.ones(4, 2, 1, 1), None, [0], [0], [1], False, [0], 1),
    "conv_groups_zero": lambda: A.convolution(img, torch.ones(4, 2, 1, 1), None, [1], [0], [1], False, [0], 0),
    "conv_transposed_bias": lambda: A.convolution(img, torch.ones(2, 2, 3, 3), torch.ones(4), [1], [0], [1], True, [0],
                                                  1),
})


if __name__ == "__main__":
    write_outcomes(CASES, sys.argv[1])
