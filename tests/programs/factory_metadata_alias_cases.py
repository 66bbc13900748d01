"""Window functions, torch.range, tensor-metadata operators, fill_diagonal_, can_cast, the
operator aliases (arcsinh, fix, negative, moveaxis, special_*, ...) and the functional forms of
in-place operators (random.from, exponential, copy): a fixed set of calls, each run on whichever
torch runs this file, writing the dtype, shape and values of each result or the exception type
and message.

    python tests/programs/factory_metadata_alias_cases.py OUT.json

tests/test_factory_metadata_alias.py runs it on ours and on upstream and compares.
"""

import sys
import warnings

import torch
from case_outcomes import write_outcomes

warnings.simplefilter("ignore")
A = torch.ops.aten
x = torch.arange(12.0).reshape(3, 4) / 7 - 0.6

CASES = {}
for fn in ("bartlett_window", "blackman_window", "hamming_window", "hann_window", "kaiser_window"):
    for n in (0, 1, 2, 7, 16):
        for periodic in (True, False):
            for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
                CASES[f"{fn}_{n}_{periodic}_{dt}"] = (lambda fn=fn, n=n, p=periodic, dt=dt:
                                                      getattr(torch, fn)(n, periodic=p, dtype=dt))
CASES.update({
    "hamming_alpha_beta": lambda: torch.hamming_window(9, False, 0.3, 0.2),
    "kaiser_beta": lambda: torch.kaiser_window(9, False, 3.5),
    "kaiser_op_f64": lambda: A.kaiser_window.beta(9, True, 2.0, dtype=torch.float64),
    "window_negative": lambda: torch.hann_window(-1),
    "window_int": lambda: torch.kaiser_window(4, dtype=torch.int64),
    "range_default": lambda: torch.range(0, 5),
    "range_step": lambda: torch.range(1.5, -2, -0.7, dtype=torch.float64),
    "range_int": lambda: torch.range(-3, 3, 2, dtype=torch.int32),
    "range_f16": lambda: torch.range(0, 1, 0.1, dtype=torch.float16),
    "range_zero_step": lambda: torch.range(0, 5, 0),
    "range_sign": lambda: torch.range(5, 0, 1),
    "range_inf": lambda: torch.range(0, float("inf")),
    "range_op": lambda: A.range.step(0, 2, 0.5),
    "dim": lambda: A.dim.default(x),
    "numel": lambda: A.numel.default(x),
    "stride": lambda: A.stride.int(x, -1),
    "stride_oob": lambda: A.stride.int(x, 5),
    "size": lambda: A.sym_size.int(x, 0),
    "is_contiguous_cl": lambda: A.is_contiguous.memory_format(torch.ones(1, 2, 3, 4), torch.channels_last),
    "get_device": lambda: A.get_device.default(x),
    "requires_grad_int": lambda: A.requires_grad_.default(torch.ones(2, dtype=torch.long)),
    "retain_grad_no_grad": lambda: A.retain_grad.default(x),
    "output_nr": lambda: A.output_nr.default(x),
    "version": lambda: A._version.default(x),
    "is_distributed": lambda: A.is_distributed.default(x),
    "dense_dim": lambda: x.dense_dim(),
    "sparse_dim": lambda: x.sparse_dim(),
    "adjoint": lambda: x.adjoint(),
    "adjoint_1d": lambda: A.adjoint.default(torch.ones(3)),
    "mT_1d": lambda: A.mT.default(torch.ones(3)),
    "matrix_H_3d": lambda: A.matrix_H.default(torch.ones(2, 2, 2)),
    "numpy_T": lambda: A.numpy_T.default(torch.arange(24.0).reshape(2, 3, 4)),
    "chalf": lambda: x.chalf(),
    "to_dense": lambda: A.to_dense.default(x, torch.float64),
    "can_cast": lambda: [torch.can_cast(a, b) for a in (torch.bool, torch.uint8, torch.int32, torch.float16,
                                                           torch.float64, torch.complex64)
                         for b in (torch.bool, torch.int8, torch.int64, torch.bfloat16, torch.float32, torch.complex128)],
    "fill_diagonal_wrap": lambda: torch.zeros(7, 3).fill_diagonal_(5, wrap=True),
    "fill_diagonal_wide": lambda: torch.zeros(2, 5).fill_diagonal_(5),
    "fill_diagonal_cube": lambda: torch.zeros(3, 3, 3).fill_diagonal_(2),
    "fill_diagonal_ragged": lambda: torch.zeros(3, 3, 2).fill_diagonal_(2),
    "fill_diagonal_1d": lambda: torch.zeros(3).fill_diagonal_(2),
    "arcsinh": lambda: torch.arcsinh(x),
    "arccos_op_out": lambda: A.arccos.out(x, out=torch.empty(3, 4)),
    "arctanh_": lambda: x.clone().arctanh_(),
    "fix": lambda: torch.fix(x * 3),
    "negative_": lambda: x.clone().negative_(),
    "absolute": lambda: torch.absolute(x),
    "moveaxis": lambda: torch.moveaxis(torch.arange(6.0).reshape(1, 2, 3), 0, 2),
    "swapaxes": lambda: A.swapaxes.default(x, 0, 1),
    "linalg_matmul": lambda: torch.linalg.matmul(x, x.t()),
    "special_expit": lambda: torch.special.expit(x),
    "special_psi": lambda: torch.special.psi(x + 1),
    "special_logsumexp": lambda: torch.special.logsumexp(x, 1),
    "divide_scalar_mode": lambda: A.div.Scalar_mode(torch.tensor([5, -7]), 2, rounding_mode="floor"),
    "divide__scalar_mode": lambda: torch.tensor([5.0, -7.0]).divide_(2, rounding_mode="trunc"),
    "div_bad_mode": lambda: torch.div(x, 2.0, rounding_mode="x"),
    "random_to": lambda: (torch.manual_seed(3), A.random.to(torch.zeros(6), 10))[1],
    "exponential": lambda: (torch.manual_seed(3), A.exponential.default(torch.zeros(4)))[1],
    "copy_functional": lambda: A.copy.default(torch.zeros(2, 2), torch.ones(2)),
    "conv_weight_2d": lambda: A.convolution(torch.ones(2, 3, 8, 8), torch.ones(4, 3), None, [1], [0], [1], False, [0], 1),
    "conv_bias_shape": lambda: A.convolution(torch.ones(2, 3, 8, 8), torch.ones(4, 3, 3, 3), torch.ones(3), [1], [0],
                                             [1], False, [0], 1),
    "conv_stride_len": lambda: A.convolution(torch.ones(2, 3, 8, 8), torch.ones(4, 3, 3, 3), None, [1, 1, 1], [0], [1],
                                             False, [0], 1),
    "conv_groups": lambda: A.convolution(torch.ones(2, 3, 8, 8), torch.ones(4, 3, 3, 3), None, [1], [0], [1], False,
                                         [0], 3),
    "smooth_l1_default_reduction": lambda: A.smooth_l1_loss.default(x, x * 0.5),
    "dropout_p": lambda: A.dropout.default(x, 2.0, True),
})


if __name__ == "__main__":
    write_outcomes(CASES, sys.argv[1])
