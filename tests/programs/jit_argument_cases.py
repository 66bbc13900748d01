"""How `torch.ops.aten.<op>.<overload>` takes a Python value for each kind of schema argument:
one operator argument per JIT type (int, SymInt, int[N], int[], float, bool, Scalar, Tensor,
Tensor?, Tensor[], float[]?, ScalarType, Layout, Device, MemoryFormat, Generator, str, bool[N]),
called with each kind of value (None, bool, int, float, lists, tuples, 0-dim and 1-d tensors, a
str, a dtype, a complex). Writes, per pair, whether the call was refused while binding ("bind":
upstream's "Expected a value of type ..."), or the exception type the operator raised, or "ok".

    python tests/programs/jit_argument_cases.py OUT.json

tests/test_jit_arguments.py runs it on ours and on upstream (the reference environment).
"""

import json
import sys
import warnings

import torch

warnings.simplefilter("ignore")
x = torch.ones(2, 3, 4, 5)
VALUES = {
    "None": None, "bool": True, "int": 2, "float": 1.5, "list_int": [1, 1], "list_bool": [True, True],
    "list_float": [1.0, 1.0], "tuple_int": (1, 1), "list1": [1], "empty": [], "t0_int": torch.tensor(1),
    "t0_float": torch.tensor(1.5), "t0_bool": torch.tensor(True), "t1_int": torch.tensor([1, 1]), "str": "s",
    "dtype": torch.float32, "list_t": [torch.tensor(1), torch.tensor(1)], "complex": 1j,
}
A = torch.ops.aten
# the argument's schema type (and where it is), and a call passing the value there
ARGUMENTS = {
    "int (select.int dim)": lambda v: A.select.int(x, v, 0),
    "ScalarType? (cumsum dtype)": lambda v: A.cumsum.default(x, 0, dtype=v),
    "int[2] (avg_pool2d stride)": lambda v: A.avg_pool2d.default(x, [1, 1], v),
    "SymInt[2] (conv2d stride)": lambda v: A.conv2d.default(x, torch.ones(1, 3, 1, 1), None, v),
    "int[] (permute dims)": lambda v: A.permute.default(x, v),
    "SymInt[] (view size)": lambda v: A.view.default(x, v),
    "int[1]? (sum.dim_IntList dim)": lambda v: A.sum.dim_IntList(x, v),
    "int[1] (amax dim)": lambda v: A.amax.default(x, v),
    "float (dropout p)": lambda v: A.dropout.default(x, v, False),
    "bool (dropout train)": lambda v: A.dropout.default(x, 0.5, v),
    "Scalar (add.Scalar other)": lambda v: A.add.Scalar(x, v),
    "Scalar? (clamp min)": lambda v: A.clamp.default(x, v),
    "Tensor, numbers allowed (add.Tensor other)": lambda v: A.add.Tensor(x, v),
    "Tensor (mv vec)": lambda v: A.mv.default(x[0, 0], v),
    "Tensor? (conv2d bias)": lambda v: A.conv2d.default(x, torch.ones(1, 3, 1, 1), v),
    "Tensor[] (cat tensors)": lambda v: A.cat.default(v),
    "float[]? (upsample_nearest2d.vec scale_factors)": lambda v: A.upsample_nearest2d.vec(x, None, v),
    "SymInt[]? (upsample_nearest2d.vec output_size)": lambda v: A.upsample_nearest2d.vec(x, v, None),
    "Scalar? (linalg_vector_norm ord)": lambda v: A.linalg_vector_norm.default(x, v),
    "float? (nan_to_num nan)": lambda v: A.nan_to_num.default(x, v),
    "ScalarType? (sum dtype)": lambda v: A.sum.default(x, dtype=v),
    "str? (div.Tensor_mode rounding_mode)": lambda v: A.div.Tensor_mode(x, x, rounding_mode=v),
    "Generator? (bernoulli generator)": lambda v: A.bernoulli.default(x, generator=v),
    "Layout? (zeros layout)": lambda v: A.zeros.default([2], layout=v),
    "Device? (zeros device)": lambda v: A.zeros.default([2], device=v),
    "MemoryFormat? (clone memory_format)": lambda v: A.clone.default(x, memory_format=v),
    "bool[3] (native_layer_norm_backward output_mask)": lambda v: A.native_layer_norm_backward.default(
        x, x, [5], x.mean(-1, keepdim=True), x.mean(-1, keepdim=True), None, None, v),
    "SymInt (narrow start)": lambda v: A.narrow.default(x, 0, v, 1),
}


def outcome(f, v):
    try:
        f(v)
        return "ok"
    except Exception as e:  # noqa: BLE001  (the outcome is what is recorded)
        return "bind" if "Expected a value of type" in str(e) else type(e).__name__


if __name__ == "__main__":
    out = {f"{arg} <- {name}": outcome(f, v) for arg, f in ARGUMENTS.items() for name, v in VALUES.items()}
    with open(sys.argv[1], "w") as fh:
        json.dump(out, fh, indent=0, sort_keys=True)
