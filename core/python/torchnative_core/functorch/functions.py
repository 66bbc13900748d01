"""`torch.autograd.Function` under functorch transforms.

Upstream routes a Function through its transform interpreters when a transform is active, and
refuses the forms it cannot transform: a Function without a separate `setup_context`, and under
vmap one with neither a `vmap` staticmethod nor `generate_vmap_rule=True`. torchnative refuses
the same with upstream's messages; a Function that may be vmapped runs once per sample (its
forward and its backward both see the sample's own tensors, so the core's one autograd graph
stays on the physical tensors) and its outputs are stacked."""

from __future__ import annotations

from ..ops import base as B
from . import dispatch
from . import levels as LV
from . import rules

DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


def check(cls, setup_context_defined) -> None:
    stack = LV.stack()
    if not stack:
        return
    if not setup_context_defined:
        raise RuntimeError(
            "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, ...), it "
            f"must override the setup_context staticmethod. {DOCS}"
        )
    if any(e.kind == "vmap" for e in stack):
        from torch._functorch.autograd_function import has_overridden_vmap_rule

        overridden = has_overridden_vmap_rule(cls)
        if cls.generate_vmap_rule and overridden:
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and an overridden "
                "vmap staticmethod. Please set generate_vmap_rule=False or delete the overridden vmap staticmethod "
                f"to avoid ambiguity. {DOCS}"
            )
        if not (cls.generate_vmap_rule or overridden):
            raise RuntimeError(
                f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please override and "
                f"implement the vmap staticmethod or set generate_vmap_rule=True. {DOCS}"
            )


def apply_batched(cls, args, kwargs):
    """The Function once per sample of the highest vmap level its arguments are batched at, or
    None when no argument is batched."""
    level = dispatch.top_level(args, kwargs)
    if not level:
        return None
    size = LV.layer(level).batch_size
    results = []
    for b in range(size):
        a_b = [rules._sample(a, level, b) for a in args]
        results.append(cls.apply(*a_b, **kwargs))
    r0 = results[0]
    if isinstance(r0, B.C.TensorBase) or (isinstance(r0, (tuple, list)) and any(isinstance(o, B.C.TensorBase) for o in r0)):
        return rules.wrap(rules._stack(results, cls.__name__), level)
    return r0
