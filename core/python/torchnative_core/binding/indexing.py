"""`Tensor.__getitem__` / `__setitem__` with upstream's semantics
(torch/csrc/autograd/python_variable_indexing.cpp): basic indexing (ints, slices, None,
Ellipsis) produces views through select/slice/unsqueeze; tensors and boolean masks produce
advanced indexing through `aten.index.Tensor` / `aten.index_put_`."""

from __future__ import annotations

from ..surface import types as T

C = None


def _door(op, *args):
    return C._aten_dispatch(op, *args)


def _is_tensor(x):
    return isinstance(x, C.TensorBase)


def _as_index_tensor(x):
    from ..ops.factories.tensors import from_python_values

    flat, shape = _flatten(x)
    if all(isinstance(v, bool) for v in flat) and flat:
        return from_python_values(flat, shape, T.BY_NAME["bool"])
    for v in flat:
        if isinstance(v, float):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got float)")
    return from_python_values([int(v) for v in flat], shape, T.BY_NAME["int64"])


def _flatten(x):
    if isinstance(x, (list, tuple)):
        if not x:
            return [], [0]
        parts = [_flatten(e) for e in x]
        return [v for p, _ in parts for v in p], [len(x)] + parts[0][1]
    if _is_tensor(x):
        return [x.item()], []
    return [x], []


def _normalize(index):
    """The index as a tuple of items, with sequences turned into tensors as upstream does."""
    if isinstance(index, tuple):
        items = list(index)
    elif isinstance(index, list) and _treat_as_tuple(index):
        items = list(index)
    else:
        items = [index]
    out = []
    for it in items:
        if isinstance(it, list):
            it = _as_index_tensor(it)
        out.append(it)
    return out


def _treat_as_tuple(seq):
    # upstream: a list containing slices, Ellipsis, None or sequences is treated as a tuple
    return any(isinstance(x, (slice, type(Ellipsis), list, tuple)) or x is None or _is_tensor(x) for x in seq) and len(seq) < 32


def _check_int(i):
    return isinstance(i, int) and not isinstance(i, bool) or (hasattr(type(i), "__index__") and not _is_tensor(i)
                                                              and not isinstance(i, bool))


def _apply_slicing(self, items):
    """Basic indexing. Returns (view, [(dim, index tensor)]) for the advanced part."""
    ndim = len(self._tn_sizes)
    # upstream's count_specified_dimensions: a bool or uint8 tensor indexes as many dims as it
    # has, any other index but None, Ellipsis and Python bools one
    specified = 0
    for it in items:
        if type(it) is int or type(it) is slice:
            specified += 1
        elif it is None or it is Ellipsis or isinstance(it, bool):
            continue
        elif _is_tensor(it) and T.BY_CODE[it._tn_dtype_code] in (T.BY_NAME["bool"], T.BY_NAME["uint8"]):
            specified += len(it._tn_sizes)
        else:
            specified += 1
    if specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    result = self
    dim = 0
    advanced = []
    for pos, it in enumerate(items):
        if it is None:
            result = _door("unsqueeze", result, dim)
            dim += 1
        elif it is Ellipsis:
            dim += ndim - specified
        elif isinstance(it, bool):
            result = _door("unsqueeze", result, dim)
            from ..ops.factories.tensors import from_python_values

            advanced.append((dim, from_python_values([it], [1], T.BY_NAME["bool"])))
            dim += 1
        elif _check_int(it):
            i = it.__index__()
            size = result._tn_sizes[dim] if dim < len(result._tn_sizes) else None
            if size is not None and (i < -size or i >= size):
                # upstream's applySelect names the index's position in the tuple (its real_dim)
                raise IndexError(f"index {i} is out of bounds for dimension {pos} with size {size}")
            result = _door("select.int", result, dim, i)
        elif isinstance(it, slice):
            start, stop, step = (_slice_int(v) for v in (it.start, it.stop, it.step))
            step = 1 if step is None else step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            size = result._tn_sizes[dim] if dim < len(result._tn_sizes) else None
            # upstream's applySlice skips a slice that keeps the whole dimension
            if not (step == 1 and start in (None, 0) and size is not None and (stop is None or stop >= size)):
                result = _door("slice.Tensor", result, dim, *_slice_bounds(start, stop), step)
            dim += 1
        elif _is_tensor(it):
            dt = T.BY_CODE[it._tn_dtype_code]
            if dt is T.BY_NAME["bool"] or dt is T.BY_NAME["uint8"]:
                if len(it._tn_sizes):
                    advanced.append((dim, it))
                    dim += len(it._tn_sizes)
                else:
                    # upstream's boolToIndexingTensor: a 0-dim mask is a new dimension of size
                    # one, indexed by [0] when True and by nothing when False
                    from ..ops.factories.tensors import from_python_values

                    result = _door("unsqueeze", result, dim)
                    hit = bool(it.item())
                    advanced.append((dim, from_python_values([0] if hit else [], [1 if hit else 0], T.BY_NAME["int64"])))
                    dim += 1
            elif dt.is_floating_point or dt.is_complex:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            else:
                advanced.append((dim, it))
                dim += 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices "
                f"(got {type(it).__name__})"
            )
    return result, advanced


def _slice_bounds(start, stop):
    # upstream's applySlicing fills an open slice with 0 and INT64_MAX, so the operator (and a
    # mode or a traced graph) sees those numbers, not None
    return (0 if start is None else start), ((1 << 63) - 1 if stop is None else stop)


def _slice_int(v):
    if v is None or type(v) is int:
        return v
    if _is_tensor(v):
        return int(v.item())
    return v.__index__()


def _index_list(result, advanced):
    indices = [None] * len(result._tn_sizes)
    for dim, t in advanced:
        indices[dim] = t
    # trailing Nones are dropped, as upstream's index list ends at the last indexed dim
    while indices and indices[-1] is None:
        indices.pop()
    return indices


def getitem(self, index):
    if type(index) is int:  # x[i] in range: the commonest index, straight to the door
        sizes = self._tn_sizes
        if sizes and -sizes[0] <= index < sizes[0]:
            return _dispatch("select.int", self, 0, index)
    if _check_int(index) and not isinstance(index, bool):
        i = index.__index__()
        if not self._tn_sizes:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        size = self._tn_sizes[0]
        if i < -size or i >= size:
            raise IndexError(f"index {i} is out of bounds for dimension 0 with size {size}")
        return _door("select.int", self, 0, i)
    if isinstance(index, slice):
        if not self._tn_sizes:
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        start, stop, step = (_slice_int(v) for v in (index.start, index.stop, index.step))
        step = 1 if step is None else step
        if step <= 0:
            raise ValueError("step must be greater than zero")
        return _door("slice.Tensor", self, 0, *_slice_bounds(start, stop), step)
    if type(index) is tuple:
        r = _basic_tuple(self, index)
        if r is not None:
            return r
    if index is None:
        return _door("unsqueeze", self, 0)
    if index is Ellipsis:
        return _door("alias", self)
    items = _normalize(index)
    result, advanced = _apply_slicing(self, items)
    if not advanced:
        if result is self:
            return _door("alias", self)
        return result
    return _door("index.Tensor", result, _index_list(result, advanced))


_INT64_MAX = (1 << 63) - 1


def _basic_tuple(self, index):
    """`x[..., :16]`, `x[:, 0]`: a tuple of Python ints, int-bounded slices and at most one
    Ellipsis, in range — the views `_apply_slicing` makes, without its general loop (the
    commonest indexing in transformer code). None where anything else is in the tuple, or an
    index is out of range or a step not positive (the general path then raises)."""
    ndim = len(self._tn_sizes)
    ell = False
    for it in index:
        t = type(it)
        if t is slice:
            if not ((it.start is None or type(it.start) is int) and (it.stop is None or type(it.stop) is int)
                    and (it.step is None or (type(it.step) is int and it.step > 0))):
                return None
        elif t is not int:
            if it is not Ellipsis or ell:
                return None
            ell = True
    specified = len(index) - ell
    if specified > ndim:
        return None
    result, dim = self, 0
    for it in index:
        t = type(it)
        if t is int:
            size = result._tn_sizes[dim]
            if it < -size or it >= size:
                return None
            result = _dispatch("select.int", result, dim, it)
        elif t is slice:
            start, stop, step = it.start, it.stop, it.step or 1
            # upstream's applySlice skips a slice that keeps the whole dimension
            if not (step == 1 and not start and (stop is None or stop >= result._tn_sizes[dim])):
                result = _dispatch("slice.Tensor", result, dim, start or 0, _INT64_MAX if stop is None else stop, step)
            dim += 1
        else:
            dim += ndim - specified
    return _dispatch("alias", self) if result is self else result


def setitem(self, index, value):
    if not _is_tensor(value):
        if isinstance(value, (int, float, bool, complex)):
            value = _scalar_like(value, self)
        else:
            from ..ops.factories.tensors import from_python_values

            flat, shape = _flatten(value)
            value = from_python_values(flat, shape, T.BY_CODE[self._tn_dtype_code])
    items = _normalize(index)
    result, advanced = _apply_slicing(self, items)
    if not advanced:
        if _is_tensor(value) and not value._tn_sizes and getattr(value, "_tn_wrapped_number", False):
            _door("fill_.Scalar", result, value.item())
        else:
            _door("copy_", result, value)
        return
    _door("index_put_", result, _index_list(result, advanced), value, False)


def _scalar_like(value, self):
    from ..ops.factories.tensors import wrapped_number

    return wrapped_number(value)


_dispatch = None  # torch._C._aten_dispatch


def install(C_) -> None:
    global C, _dispatch
    C = C_
    _dispatch = C._aten_dispatch
    C.TensorBase.__getitem__ = getitem
    C.TensorBase.__setitem__ = setitem
