"""Hostile sizes: each case's outcome (exception type and message, or the result's shape) as JSON,
under an address-space limit so an allocation the limit cannot give fails on every machine."""
import json
import resource
import sys

resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))
import torch  # noqa: E402, F401 (the cases are evaluated with it in scope)

CASES = [
    "torch.zeros(2**62)", "torch.eye(2**31)", "torch.empty(-1)", "torch.zeros(2**40, 2**40)",
    "torch.ones(2**33, 2**33)", "torch.empty(2**63 - 1)", "torch.arange(2**62)", "torch.full((2**62,), 1.0)",
    "torch.linspace(0, 1, 2**62)", "torch.randn(2**62)", "torch.zeros(3).new_empty(2**62)",
    "torch.zeros(3).new_zeros((2**31, 2**31))", "torch.zeros(3).resize_(2**62)",
    "torch.zeros(3).expand(2**62, 3)", "torch.zeros(3).tile(2**31, 2**31)",
    "torch.empty_strided((2,), (2**62,))", "torch.zeros(3).as_strided((2,), (2**62,))",
    "torch.zeros(3).as_strided((2**40,), (1,))", "torch.zeros(2**35)", "torch.zeros(3).view(2**62, 0)",
    "torch.zeros(3).diag(2**62)", "torch.randint(0, 2, (2**62,))", "torch.zeros(3).unfold(0, 2**40, 1)",
    "torch.zeros(3)[2**62]", "torch.zeros(3).narrow(0, 2**62, 1)",
    # too few sizes: upstream names a dtype without a legacy tensor class by dispatch key and type
    "torch.zeros(3, dtype=torch.bool).expand(())", "torch.zeros(3, dtype=torch.bfloat16).expand(())",
    "torch.zeros(3, dtype=torch.int16).expand(())",
]
out = {}
for c in CASES:
    try:
        r = eval(c)
        out[c] = ["ok", list(r.shape)]
    except Exception as e:
        out[c] = [type(e).__name__, str(e).split(" Error code")[0][:160]]
json.dump(out, sys.stdout)
