"""einsum and tensordot as compositions of permutes, reshapes and batched matrix products.

einsum follows upstream's semantics (aten/src/ATen/native/Linear.cpp): labels are letters, `...`
broadcasts, a label repeated in one operand takes the diagonal, the implicit output is the
ellipsis dimensions followed by the labels used exactly once in alphabetical order (upper case
first), dimensions of size 1 broadcast. Operands are contracted left to right, each pair as one
bmm over (batch, kept, contracted) dimensions, as upstream's sumproduct_pair does; the `path`
argument (opt_einsum's order) is honoured when given."""

from __future__ import annotations

from .. import impl


def _labels(spec, ndim, ell):
    if "..." not in spec:
        if len(spec) != ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(spec)}) does not match the "
                               f"number of dimensions ({ndim}) for operand and no ellipsis was given")
        return list(spec)
    pre, _, post = spec.partition("...")
    n = ndim - len(pre) - len(post)
    if n < 0:
        raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(pre) + len(post)}) is more than "
                           f"the number of dimensions ({ndim}) for operand")
    return list(pre) + ell[len(ell) - n:] + list(post)


def _diagonals(t, labels):
    """Repeated labels within one operand: keep the diagonal (moved last, as torch.diagonal does)."""
    while len(set(labels)) != len(labels):
        for i, lab in enumerate(labels):
            j = labels.index(lab, i + 1) if labels.count(lab) > 1 else -1
            if j > 0:
                t = t.diagonal(0, i, j)
                labels = [x for k, x in enumerate(labels) if k not in (i, j)] + [lab]
                break
    return t, labels


def _sum_out(t, labels, keep):
    dims = [i for i, lab in enumerate(labels) if lab not in keep]
    if dims:
        t = t.sum(dims)
        labels = [lab for lab in labels if lab in keep]
    return t, labels


def _pair(a, la, b, lb, keep):
    import torch

    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    size = {}
    for t, ls in ((a, la), (b, lb)):
        for i, lab in enumerate(ls):
            n = t.shape[i]
            if size.get(lab, 1) != 1 and n != 1 and size[lab] != n:
                raise RuntimeError(f"einsum(): operands do not broadcast with remapped shapes (original->remapped): "
                                   f"{list(a.shape)} and {list(b.shape)}")
            size[lab] = max(size.get(lab, 1), n) if n != 0 else 0
    batch = [lab for lab in la if lab in lb and lab in keep]
    contract = [lab for lab in la if lab in lb and lab not in keep]
    a_only = [lab for lab in la if lab not in lb]
    b_only = [lab for lab in lb if lab not in la]

    def arrange(t, ls, order):
        t = t.permute([ls.index(lab) for lab in order])
        return t.expand([size[lab] for lab in order])

    def prod(ls):
        p = 1
        for lab in ls:
            p *= size[lab]
        return p

    A = arrange(a, la, batch + a_only + contract).reshape(prod(batch), prod(a_only), prod(contract))
    Bm = arrange(b, lb, batch + contract + b_only).reshape(prod(batch), prod(contract), prod(b_only))
    out = torch.bmm(A, Bm).reshape([size[lab] for lab in batch + a_only + b_only])
    return out, batch + a_only + b_only


@impl("einsum")
def einsum(equation, tensors, path=None):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    tensors = list(tensors)
    if len(specs) != len(tensors):
        raise RuntimeError("einsum(): more operands were provided than specified in the equation"
                           if len(tensors) > len(specs) else
                           "einsum(): fewer operands were provided than specified in the equation")
    n_ell = max((t.dim() - len(s.replace("...", "")) for s, t in zip(specs, tensors) if "..." in s), default=0)
    ell = [chr(0x2000 + i) for i in range(max(n_ell, 0))]
    ops = []
    counts = {}
    for s, t in zip(specs, tensors):
        for ch in s.replace("...", ""):
            if not ch.isalpha():
                raise RuntimeError(f"einsum(): invalid subscript given at index {eq.index(ch)} in the equation "
                                   f"string, subscripts must be in [a-zA-Z]")
        labels = _labels(s, t.dim(), ell)
        ops.append([t, labels])
        for lab in set(labels):
            counts[lab] = counts.get(lab, 0) + labels.count(lab)
    if arrow:
        out_labels = _labels(rhs, len(rhs.replace("...", "")) + len(ell), ell) if "..." in rhs else list(rhs)
    else:
        out_labels = ell + sorted(lab for lab, n in counts.items() if n == 1 and lab not in ell)
    for i, (t, labels) in enumerate(ops):
        t, labels = _diagonals(t, labels)
        others = {lab for j, (_, ls) in enumerate(ops) if j != i for lab in ls}
        ops[i] = list(_sum_out(t, labels, set(out_labels) | others))
    order = list(range(len(ops)))
    if path is not None and len(ops) > 2:
        pairs = [(path[k], path[k + 1]) for k in range(0, len(path) - 1, 2)]
    else:
        pairs = None
    if pairs:
        work = [tuple(op) for op in ops]
        for i, j in pairs:
            i, j = sorted((i, j))
            (a, la), (b, lb) = work[i], work[j]
            rest = [w for k, w in enumerate(work) if k not in (i, j)]
            keep = set(out_labels) | {lab for _, ls in rest for lab in ls}
            work = rest + [_pair(a, la, b, lb, keep)]
        t, labels = work[0]
    else:
        t, labels = ops[order[0]]
        for k in order[1:]:
            b, lb = ops[k]
            keep = set(out_labels) | {lab for _, ls in ops[k + 1:] for lab in ls}
            t, labels = _pair(t, labels, b, lb, keep)
    t, labels = _sum_out(t, labels, set(out_labels))
    missing = [lab for lab in out_labels if lab not in labels]
    if missing:
        raise RuntimeError(f"einsum(): output subscript {missing[0]} does not appear in the equation for any input operand")
    return t.permute([labels.index(lab) for lab in out_labels]) if labels != out_labels else t


@impl("tensordot")
def tensordot(self, other, dims_self, dims_other):
    import torch

    nd_a, nd_b = self.dim(), other.dim()
    ds = [d % nd_a for d in dims_self]
    do = [d % nd_b for d in dims_other]
    for da, db in zip(ds, do):  # a size-1 dimension broadcasts: the other side is summed there (Linear.cpp)
        sa, sb = self.shape[da], other.shape[db]
        if sa != sb:
            if sb == 1:
                self = self.sum(da, keepdim=True)
            elif sa == 1:
                other = other.sum(db, keepdim=True)
            else:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in dim {da} and "
                                   f"second has size {sb} in dim {db}")
    free_a = [d for d in range(nd_a) if d not in ds]
    free_b = [d for d in range(nd_b) if d not in do]
    k = 1
    for d in ds:
        k *= self.shape[d]
    a = self.permute(free_a + ds).reshape(-1, k)
    b = other.permute(do + free_b).reshape(k, -1)
    return torch.mm(a, b).reshape([self.shape[d] for d in free_a] + [other.shape[d] for d in free_b])
