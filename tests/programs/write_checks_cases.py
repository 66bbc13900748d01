"""Writes into tensors whose elements share memory, and other writes upstream refuses: every
in-place and out= call below writes into `expand`ed tensors (one memory location for several
elements), plus `pin_memory` requests and out= tensors on another device. Run on whichever torch
runs this file; writes per case "OVERLAP" (upstream's internal-overlap refusal), "ok", or the
exception type and message.

    python tests/programs/write_checks_cases.py OUT.json

tests/test_write_checks.py runs it on ours and on upstream and compares.
"""

import json
import sys
import warnings

import torch

warnings.simplefilter("ignore")


def e():
    return torch.zeros(1, 3).expand(3, 3)


I = torch.tensor([0, 1])
x3 = torch.ones(3, 3, 3)
CASES = {
 "copy_": lambda: e().copy_(torch.ones(3, 3)), "fill_": lambda: e().fill_(1), "zero_": lambda: e().zero_(),
 "uniform_": lambda: e().uniform_(), "normal_": lambda: e().normal_(), "random_": lambda: e().random_(3),
 "bernoulli_": lambda: e().bernoulli_(0.5), "exponential_": lambda: e().exponential_(),
 "index_put_": lambda: e().index_put_((I,), torch.ones(3)), "masked_fill_": lambda: e().masked_fill_(torch.ones(3, 3, dtype=torch.bool), 1.0),
 "clamp_": lambda: e().clamp_(0, 1), "mul_": lambda: e().mul_(2), "addmm_": lambda: e().addmm_(torch.ones(3, 3), torch.ones(3, 3)),
 "scatter_": lambda: e().scatter_(0, torch.zeros(3, 3, dtype=torch.long), 1.0), "index_add_": lambda: e().index_add_(0, I, torch.ones(2, 3)),
 "cumsum_": lambda: e().cumsum_(0), "put_": lambda: e().put_(I, torch.ones(2)), "index_fill_": lambda: e().index_fill_(0, I, 1.0),
 "masked_scatter_": lambda: e().masked_scatter_(torch.ones(3, 3, dtype=torch.bool), torch.ones(9)), "tril_": lambda: e().tril_(),
 "triu_": lambda: e().triu_(), "baddbmm_": lambda: torch.zeros(1, 3, 3).expand(2, 3, 3).baddbmm_(torch.ones(2, 3, 3), torch.ones(2, 3, 3)),
 "addcmul_": lambda: e().addcmul_(torch.ones(3, 3), torch.ones(3, 3)), "lerp_": lambda: e().lerp_(torch.ones(3, 3), 0.5),
 "relu_": lambda: e().relu_(), "sigmoid_": lambda: e().sigmoid_(), "div_": lambda: e().div_(2), "pow_": lambda: e().pow_(2),
 "neg_": lambda: e().neg_(), "t_": lambda: e().t_(), "resize_": lambda: e().resize_(3, 3), "set_": lambda: e().set_(torch.ones(3)),
 "squeeze_": lambda: e().squeeze_(), "as_strided_": lambda: e().as_strided_((3,), (1,)),
 "nan_to_num_": lambda: e().nan_to_num_(), "dropout_": lambda: torch.nn.functional.dropout(e(), 0.5, True, True),
 "index_copy_": lambda: e().index_copy_(0, I, torch.ones(2, 3)), "scatter_add_": lambda: e().scatter_add_(0, torch.zeros(3, 3, dtype=torch.long), torch.ones(3, 3)),
 "scatter_reduce_": lambda: e().scatter_reduce_(0, torch.zeros(3, 3, dtype=torch.long), torch.ones(3, 3), "sum"),
 "index_reduce_": lambda: e().index_reduce_(0, I, torch.ones(2, 3), "prod"), "renorm_": lambda: e().renorm_(2, 0, 1.0),
 "fill_diagonal_": lambda: e().fill_diagonal_(1.0), "log_normal_": lambda: e().log_normal_(), "cauchy_": lambda: e().cauchy_(),
 "geometric_": lambda: e().geometric_(0.5), "sort(out)": lambda: torch.sort(torch.ones(3, 3), out=(e(), torch.zeros(3, 3, dtype=torch.long))),
 "add(out)": lambda: torch.add(torch.ones(3, 3), 1, out=e()), "bmm(out)": lambda: torch.bmm(torch.ones(2, 3, 3), torch.ones(2, 3, 3), out=torch.zeros(1, 3, 3).expand(2, 3, 3)),
 "sum(out)": lambda: torch.sum(torch.ones(3, 3, 3), 0, out=e()), "cat(out)": lambda: torch.cat([torch.ones(1, 3)] * 3, out=e()),
 "mm(out)": lambda: torch.mm(torch.ones(3, 3), torch.ones(3, 3), out=e()), "clone(out)": lambda: torch.ops.aten.clone.out(torch.ones(3, 3), out=e()),
 "triu(out)": lambda: torch.triu(torch.ones(3, 3), out=e()), "softmax(out)": lambda: torch.softmax(torch.ones(3, 3), 0, out=e()),
 "index_select(out)": lambda: torch.index_select(torch.ones(3, 3), 0, torch.tensor([0, 1, 2]), out=e()),
 "addmm(out)": lambda: torch.addmm(torch.ones(3, 3), torch.ones(3, 3), torch.ones(3, 3), out=e()),
 "where(out)": lambda: torch.where(torch.ones(3, 3, dtype=torch.bool), torch.ones(3, 3), 0.0, out=e()),
 "gather(out)": lambda: torch.gather(torch.ones(3, 3), 0, torch.zeros(3, 3, dtype=torch.long), out=e()),
 "linalg_vector_norm(out)": lambda: torch.linalg.vector_norm(torch.ones(3, 3, 3), dim=0, out=e()),
 "cumsum(out)": lambda: torch.cumsum(torch.ones(3, 3), 0, out=e()), "exp(out)": lambda: torch.exp(torch.ones(3, 3), out=e()),
 "fill(out)": lambda: torch.ops.aten.fill.Scalar_out(torch.ones(3, 3), 1.0, out=e()),
 "mean": lambda: torch.mean(x3, 0, out=e()), "prod": lambda: torch.prod(x3, 0, out=e()), "amax": lambda: torch.amax(x3, 0, out=e()),
 "max.dim": lambda: torch.max(x3, 0, out=(e(), torch.zeros(3, 3, dtype=torch.long))), "std": lambda: torch.std(x3, 0, out=e()),
 "logsumexp": lambda: torch.logsumexp(x3, 0, out=e()), "norm": lambda: torch.norm(x3, 2, 0, out=e()), "nansum": lambda: torch.nansum(x3, 0, out=e()),
 "any": lambda: torch.any(x3.bool(), 0, out=e().bool()), "argmax": lambda: torch.argmax(x3, 0, out=e().long()),
 "addbmm_": lambda: e().addbmm_(torch.ones(2, 3, 3), torch.ones(2, 3, 3)), "addbmm(out)": lambda: torch.addbmm(torch.ones(3, 3), torch.ones(2, 3, 3), torch.ones(2, 3, 3), out=e()),
 "baddbmm(out)": lambda: torch.baddbmm(torch.ones(2, 3, 3), torch.ones(2, 3, 3), torch.ones(2, 3, 3), out=torch.zeros(1, 3, 3).expand(2, 3, 3)),
 "tril(out)": lambda: torch.tril(torch.ones(3, 3), out=e()), "matmul(out)": lambda: torch.matmul(torch.ones(3, 3), torch.ones(3, 3), out=e()),
 "masked_scatter(out)": lambda: torch.ops.aten.masked_fill.Scalar_out(torch.ones(3, 3), torch.ones(3, 3, dtype=torch.bool), 1.0, out=e()),
 "index_put(out)": lambda: torch.ops.aten.index_put.out(torch.ones(3, 3), (torch.tensor([0]),), torch.ones(3), out=e()),
 "var_mean": lambda: torch.var_mean(x3, 0), "cummax(out)": lambda: torch.cummax(torch.ones(3, 3), 0, out=(e(), torch.zeros(3, 3, dtype=torch.long))),
 "topk(out)": lambda: torch.topk(torch.ones(3, 4), 3, out=(e(), torch.zeros(3, 3, dtype=torch.long))),
 "diag_embed?": lambda: torch.ops.aten.diag_embed.out(torch.ones(3), out=e()),

 "index_put_acc": lambda: e().index_put_((torch.tensor([0]),), torch.ones(3), accumulate=True),
    "pin_factory": lambda: torch.zeros(2, pin_memory=True),
    "pin_method": lambda: torch.empty(2).pin_memory(),
    "is_pinned": lambda: torch.empty(2).is_pinned(),
    "pin_like": lambda: torch.empty_like(torch.ones(2), pin_memory=True),
    "pin_op": lambda: torch.ops.aten.hann_window.default(3, pin_memory=True),
    "out_on_meta": lambda: torch.ops.aten.bitwise_not.out(torch.ones(2, dtype=torch.int32),
                                                          out=torch.empty(2, dtype=torch.int32, device="meta")),
    "expand_then_clone": lambda: e().clone().add_(1),
}


def outcome(f):
    try:
        f()
        return "ok"
    except Exception as ex:  # noqa: BLE001  (the outcome is what is recorded)
        msg = str(ex)
        if "written-to tensor refers to a single memory location" in msg:
            return "OVERLAP"
        return f"{type(ex).__name__}: {msg.splitlines()[0][:120]}"


if __name__ == "__main__":
    with open(sys.argv[1], "w") as fh:
        json.dump({k: outcome(f) for k, f in CASES.items()}, fh, indent=0, sort_keys=True)
