"""View operators: metadata-only, no kernel. Every result shares storage and version counter with
its base, exactly as upstream's views do.
"""

from __future__ import annotations

from ...surface.types import CONTIGUOUS_FORMAT
from .. import base as B
from .. import impl
from .metadata import _tn


D = B.door



def _view(t, sizes, strides, offset=None):
    return t._tn_as_strided(list(sizes), list(strides), t.storage_offset() if offset is None else offset)


def infer_size(shape, numel):
    shape = list(shape)
    infer = None
    prod = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s}")
        else:
            prod *= s
    if infer is not None:
        if prod == 0:
            raise RuntimeError(
                f"cannot reshape tensor of 0 elements into shape {shape} because the unspecified dimension size -1 can be any value and is ambiguous"
            )
        if numel % prod != 0:
            raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
        shape[infer] = numel // prod
    elif prod != numel:
        raise RuntimeError(f"shape '{_shape_str(shape)}' is invalid for input of size {numel}")
    return shape


def _shape_str(shape):
    return "[" + ", ".join(str(s) for s in shape) + "]"


def compute_stride(oldshape, oldstride, newshape):
    """at::detail::computeStride: strides for viewing (oldshape, oldstride) as newshape without
    a copy, or None when impossible."""
    if not oldshape:
        return [1] * len(newshape)
    numel = B.numel(oldshape)
    if numel == 0 and list(oldshape) == list(newshape):
        return list(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for view_d in range(len(newshape) - 1, -1, -1):
            if view_d == len(newshape) - 1:
                newstride[view_d] = 1
            else:
                newstride[view_d] = max(newshape[view_d + 1], 1) * newstride[view_d + 1]
        return newstride
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return newstride


@impl("view")
def view(self, size):
    sizes = self._tn_sizes
    shape = infer_size(size, B.numel(sizes))
    strides = compute_stride(sizes, self._tn_strides, shape)
    if strides is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one dimension spans across "
            "two contiguous subspaces). Use .reshape(...) instead."
        )
    return _view(self, shape, strides)


@impl("_unsafe_view")
def _unsafe_view(self, size):
    return view(self, size)


@impl("reshape")
def reshape(self, shape):
    # upstream's reshape_symint: a contiguous input is viewed with the shape as given (-1 and
    # all, which export graphs show), another viewable one with the inferred shape
    sizes = self._tn_sizes
    new = infer_size(shape, B.numel(sizes))
    if self._tn_is_contiguous():
        return D("view", self, list(shape))
    strides = compute_stride(sizes, self._tn_strides, new)
    if strides is not None:
        return D("view", self, new)
    return D("_unsafe_view", D("clone", self, CONTIGUOUS_FORMAT), new)


# the dtypes with a legacy tensor class (torch.FloatTensor, ...), which upstream's messages name
_LEGACY = {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double"}


def _type_string(t):
    """What upstream's `Tensor::toString()` prints: the legacy class where the dtype has one,
    otherwise the dispatch key and scalar type (`CPUBoolType`)."""
    name = B.scalar_type_name(B.dtype_of(t))
    if name in _LEGACY or t._tn_device_key != "cpu":
        return t.type()
    return f"CPU{name}Type"


@impl("expand")
def expand(self, size, implicit=False):
    sizes, strides = self._tn_sizes, self._tn_strides
    if len(size) < len(sizes):
        raise RuntimeError(
            f"expand({_type_string(self)}{{{list(sizes)}}}, size={list(size)}): the number of sizes provided ({len(size)}) must be "
            f"greater or equal to the number of dimensions in the tensor ({len(sizes)})"
        )
    nd = len(size)
    off = nd - len(sizes)
    new_sizes, new_strides = [0] * nd, [0] * nd
    for i in range(nd - 1, -1, -1):
        j = i - off
        target = size[i]
        if j >= 0:
            s, st = sizes[j], strides[j]
            if target == -1:
                target = s
            if s != target:
                if s != 1:
                    raise RuntimeError(
                        f"The expanded size of the tensor ({target}) must match the existing size ({s}) at non-singleton "
                        f"dimension {i}.  Target sizes: {list(size)}.  Tensor sizes: {list(sizes)}"
                    )
                st = 0
        else:
            if target == -1:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension {i}"
                )
            st = 0
        new_sizes[i], new_strides[i] = target, st
    return _view(self, new_sizes, new_strides)


@impl("permute")
def permute(self, dims):
    sizes, strides = self._tn_sizes, self._tn_strides
    nd = len(sizes)
    if len(dims) != nd:
        raise RuntimeError(
            f"permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired "
            f"ordering of dimensions i.e. input.dim() = {nd} is not equal to len(dims) = {len(dims)}"
        )
    wrapped = [B.wrap_dim(d, nd) for d in dims]
    if len(set(wrapped)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _view(self, [sizes[d] for d in wrapped], [strides[d] for d in wrapped])


@impl("transpose.int")
def transpose(self, dim0, dim1):
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    nd = len(sizes)
    if nd == 0:
        B.wrap_dim(dim0, 0), B.wrap_dim(dim1, 0)
        return _view(self, sizes, strides)
    a, b = B.wrap_dim(dim0, nd), B.wrap_dim(dim1, nd)
    sizes[a], sizes[b] = sizes[b], sizes[a]
    strides[a], strides[b] = strides[b], strides[a]
    return _view(self, sizes, strides)


@impl("t")
def t(self):
    nd = len(self._tn_sizes)
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return transpose(self, 0, 1) if nd == 2 else _view(self, self._tn_sizes, self._tn_strides)


@impl("select.int")
def select(self, dim, index):
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    nd = len(sizes)
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = B.wrap_dim(dim, nd)
    size = sizes[d]
    if index < -size or index >= size:
        raise IndexError(f"index {index} is out of bounds for dimension {d} with size {size}")
    if index < 0:
        index += size
    offset = self.storage_offset() + index * strides[d]
    del sizes[d], strides[d]
    return _view(self, sizes, strides, offset)


@impl("slice.Tensor")
def slice_(self, dim=0, start=None, end=None, step=1):
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    nd = len(sizes)
    if nd == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = B.wrap_dim(dim, nd)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = sizes[d]
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    start = min(max(start, 0), size)
    end = min(max(end, start), size)
    length = (end - start + step - 1) // step
    offset = self.storage_offset() + start * strides[d]
    sizes[d] = length
    strides[d] = strides[d] * step
    return _view(self, sizes, strides, offset)


@impl("narrow_copy")
def narrow_copy(self, dim, start, length):
    """upstream's dense narrow_copy checks a non-negative dim itself (a RuntimeError, where a
    negative one is wrapped with the usual IndexError)."""
    nd = len(self._tn_sizes)
    if not nd:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim >= nd:
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  (Could "
                           "this error message be improved?  If so, please report an enhancement request to PyTorch.)")
    return D("clone", D("narrow", self, dim, start, length), CONTIGUOUS_FORMAT)


@impl("narrow")
def narrow(self, dim, start, length):
    nd = len(self._tn_sizes)
    if nd == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = B.wrap_dim(dim, nd)
    size = self._tn_sizes[d]
    if start < 0:
        start += size
    if start < 0 or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if length < 0 or start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return D("slice.Tensor", self, dim, start, start + length, 1)  # the dim as given, as upstream's


def _squeeze_dims(self, dims):
    sizes, strides = self._tn_sizes, self._tn_strides
    keep = [i for i in range(len(sizes)) if not (i in dims and sizes[i] == 1)]
    return _view(self, [sizes[i] for i in keep], [strides[i] for i in keep])


@impl("squeeze")
def squeeze(self):
    return _squeeze_dims(self, set(range(len(self._tn_sizes))))


@impl("squeeze.dim")
def squeeze_dim(self, dim):
    nd = len(self._tn_sizes)
    w = B.wrap_dim(dim, max(nd, 1))  # a scalar takes dims -1 and 0, as upstream's maybe_wrap_dim
    return _squeeze_dims(self, {w} if nd else set())


@impl("squeeze.dims")
def squeeze_dims(self, dim):
    nd = len(self._tn_sizes)
    seen = set()
    for d in dim:  # upstream's dim_list_to_bitset
        w = B.wrap_dim(d, nd)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return _squeeze_dims(self, seen if nd else set())


@impl("unsqueeze")
def unsqueeze(self, dim):
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    nd = len(sizes)
    d = B.wrap_dim(dim, nd + 1)
    new_stride = 1 if d >= nd else sizes[d] * strides[d]
    sizes.insert(d, 1)
    strides.insert(d, new_stride)
    return _view(self, sizes, strides)


@impl("slice_inverse")
def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
    # upstream: self viewed with the base's geometry (self's storage is assumed large enough)
    return D("as_strided", self, list(src._tn_sizes), list(src._tn_strides), src.storage_offset())


@impl("as_strided")
def as_strided(self, size, stride, storage_offset=None):
    size, stride = [B.concrete(s) for s in size], [B.concrete(s) for s in stride]
    return _view(self, size, stride, None if storage_offset is None else B.concrete(storage_offset))


@impl("alias")
def alias(self):
    # a view of self (its `_base` is self's base, or self), as upstream's alias
    return _view(self, self._tn_sizes, self._tn_strides)


@impl("detach_")
def detach_(self):
    # the autograd-level operation Tensor.detach_ is (autograd/tensor.py): no data moves; views
    # without a graph pass (see Tensor.detach_)
    from ...autograd.tensor import detach_inplace

    return detach_inplace(self, any_view=False)


@impl("lift_fresh")
def lift_fresh(self):
    # A freshly made tensor handed to the modes (torch.tensor under FakeTensorMode); the
    # operator itself returns its argument, as upstream's kernel does.
    return self


@impl("lift_fresh_copy")
def lift_fresh_copy(self):
    return B.C._aten_dispatch("clone", self, CONTIGUOUS_FORMAT)


@impl("detach")
def detach(self):
    return self._tn_alias(None, False)


@impl("split.Tensor")
def split(self, split_size, dim=0):
    nd = len(self._tn_sizes)
    if not nd:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if split_size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={split_size}")
    d = B.wrap_dim(dim, nd)
    size = self._tn_sizes[d]
    if split_size == 0 and size != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
    chunks = max((size + split_size - 1) // split_size, 1) if split_size else 1
    return [
        D("slice.Tensor", self, d, i * split_size, min((i + 1) * split_size, size), 1) for i in range(chunks)
    ]


@impl("split_with_sizes", "split.sizes")
def split_with_sizes(self, split_sizes, dim=0):
    nd = len(self._tn_sizes)
    if not nd:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = B.wrap_dim(dim, nd)
    size = self._tn_sizes[d]
    if any(s < 0 for s in split_sizes):
        raise RuntimeError("split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={list(split_sizes)}")
    if sum(split_sizes) != size:
        raise RuntimeError(
            f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size at dimension {d}), "
            f"but got split_sizes={list(split_sizes)}"
        )
    out, start = [], 0
    for s in split_sizes:
        out.append(D("slice.Tensor", self, d, start, start + s, 1))
        start += s
    return out


@impl("chunk")
def chunk(self, chunks, dim=0):
    if len(self._tn_sizes) == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = B.wrap_dim(dim, len(self._tn_sizes))
    size = self._tn_sizes[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return split_with_sizes(self, [0] * chunks, d)
    return D("split.Tensor", self, split_size, d)


@impl("unbind.int")
def unbind(self, dim=0):
    d = B.wrap_dim(dim, len(self._tn_sizes))
    return [D("select.int", self, d, i) for i in range(self._tn_sizes[d])]


@impl("flatten.using_ints")
def flatten(self, start_dim=0, end_dim=-1):
    sizes = list(self._tn_sizes)
    s, e = B.wrap_dim(start_dim, max(len(sizes), 1)), B.wrap_dim(end_dim, max(len(sizes), 1))
    if not sizes:
        return D("reshape", self, [1])
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    new = sizes[:s] + [B.numel(sizes[s : e + 1])] + sizes[e + 1 :]
    return D("reshape", self, new)


@impl("unflatten.int")
def unflatten(self, dim, sizes):
    if not len(sizes):
        raise RuntimeError("unflatten: sizes must be non-empty")
    if not self._tn_sizes:  # upstream's error comes from the size lookup, re-raised as RuntimeError
        raise RuntimeError("unflatten got an unexpected error:\nDimension specified as 0 but tensor has no dimensions")
    d = B.wrap_dim(dim, len(self._tn_sizes))
    cur = list(self._tn_sizes)
    inferred = infer_size(sizes, cur[d])
    return D("view", self, cur[:d] + inferred + cur[d + 1 :])


@impl("expand_as")
def expand_as(self, other):
    return D("expand", self, list(other._tn_sizes), False)


@impl("view_as")
def view_as(self, other):
    return D("view", self, list(other._tn_sizes))


@impl("reshape_as")
def reshape_as(self, other):
    return D("reshape", self, list(other._tn_sizes))


@impl("movedim.int")
def movedim(self, source, destination):
    return movedim_list(self, [source], [destination])


@impl("movedim.intlist")
def movedim_list(self, source, destination):
    nd = len(self._tn_sizes)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} dims) should contain "
                           f"the same number of dims as destination ({list(destination)} dims)")
    src = [B.wrap_dim(s, nd) for s in source]
    dst = [B.wrap_dim(d, nd) for d in destination]
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(given)})")
    if nd == 0:
        return D("permute", self, [])  # a scalar has nothing to move (dims checked above)
    order = [-1] * nd
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(nd) if i not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return D("permute", self, order)


@impl("swapaxes", "swapdims")
def swapaxes(self, axis0, axis1):
    return D("transpose.int", self, axis0, axis1)


@impl("is_set_to")
def is_set_to(self, tensor):
    """Same storage, offset, sizes and strides (a metadata query, no kernel)."""
    return (self._tn_storage_id == tensor._tn_storage_id and self.storage_offset() == tensor.storage_offset()
            and list(self._tn_sizes) == list(tensor._tn_sizes) and list(self._tn_strides) == list(tensor._tn_strides))


@impl("_has_compatible_shallow_copy_type")
def _has_compatible_shallow_copy_type(self, from_):
    """Whether `self`'s data can be swapped for `from_`'s (`module.to()`, `param.data = ...`):
    upstream answers True for two dense tensors, and every torchnative tensor is dense."""
    return True


@impl("_assert_tensor_metadata")
def _assert_tensor_metadata(a, size=None, stride=None, dtype=None, device=None, layout=None):
    """torch.export's runtime check of a tensor's metadata, with upstream's messages (a meta
    tensor's device is not checked, as upstream's meta kernel skips it)."""
    def mismatch(name, expected, got):
        raise RuntimeError(f"Tensor {name} mismatch! Expected: {expected}, Got: {got}")

    if size is not None and list(size) != list(a._tn_sizes):
        mismatch("sizes", list(size), list(a._tn_sizes))
    if stride is not None and list(stride) != list(a._tn_strides):
        mismatch("strides", list(stride), list(a._tn_strides))
    if dtype is not None and dtype is not B.dtype_of(a):
        mismatch("dtype", B.scalar_type_name(dtype), B.cpp_type_name(B.dtype_of(a)))
    if device is not None and a._tn_device_key != "meta":
        got = B.device_of(a)
        if device.type != got.type or (device.index is not None and got.index is not None and device.index != got.index):
            mismatch("device", device, got)
    if layout is not None and str(layout) != "torch.strided":
        mismatch("layout", {"torch.sparse_coo": "Sparse"}.get(str(layout), str(layout).replace("torch.", "")), "Strided")
    return None


@impl("broadcast_to")
def broadcast_to(self, size):
    return D("expand", self, list(size), False)


@impl("diagonal")
def diagonal(self, offset=0, dim1=0, dim2=1):
    sizes, strides = list(self._tn_sizes), list(self._tn_strides)
    nd = len(sizes)
    d1, d2 = B.wrap_dim(dim1, nd), B.wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    off = self.storage_offset()
    if offset >= 0:
        n = max(min(sizes[d1], sizes[d2] - offset), 0)
        off += offset * strides[d2] if n else 0
    else:
        n = max(min(sizes[d1] + offset, sizes[d2]), 0)
        off -= offset * strides[d1] if n else 0
    keep = [i for i in range(nd) if i not in (d1, d2)]
    return self._tn_as_strided([sizes[i] for i in keep] + [n], [strides[i] for i in keep] + [strides[d1] + strides[d2]], off)


@impl("view.dtype")
def view_dtype(self, dtype):
    """Reinterpret the bytes (TensorConversions.cpp view_dtype): a size change scales the last
    dimension, which must be contiguous, and every other stride and the offset."""
    old = B.dtype_of(self)
    sizes, strides, off = list(self._tn_sizes), list(self._tn_strides), self.storage_offset()
    a, b = old.itemsize, dtype.itemsize
    if a != b:
        if not sizes:
            raise RuntimeError(
                "self.dim() cannot be 0 to view " + _tn(old) + " as " + _tn(dtype) + " (different element sizes)")
        if strides[-1] != 1:
            raise RuntimeError("self.stride(-1) must be 1 to view " + _tn(old) + " as " + _tn(dtype)
                               + " (different element sizes), but got " + str(strides[-1]))
        if b < a:
            r = a // b
            sizes[-1] *= r
            strides = [st * r for st in strides[:-1]] + [1]
            off *= r
        else:
            r = b // a
            if sizes[-1] % r:
                raise RuntimeError(f"self.size(-1) must be divisible by {r} to view {_tn(old)} as {_tn(dtype)} "
                                   f"(different element sizes), but got {sizes[-1]}")
            if off % r:
                raise RuntimeError(f"self.storage_offset() must be divisible by {r} to view {_tn(old)} as "
                                   f"{_tn(dtype)} (different element sizes), but got {off}")
            for st in strides[:-1]:
                if st % r:
                    raise RuntimeError(f"self.stride(i) must be divisible by {r} to view {_tn(old)} as {_tn(dtype)} "
                                       f"(different element sizes), but got {st}")
            sizes[-1] //= r
            strides = [st // r for st in strides[:-1]] + [1]
            off //= r
    return self._tn_reinterpret(dtype._tn_code, sizes, strides, off)


@impl("ravel")
def ravel(self):
    return self.reshape(-1)


@impl("narrow.Tensor")
def narrow_tensor(self, dim, start, length):
    if start.dim() != 0 or start.is_floating_point():
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return self.narrow(dim, int(start.item()), length)
