"""In-place overloads (`lerp_.Scalar`, `addcmul_`, ...) that have no implementation of their
own: the functional overload computes the result, which is copied into `self` after upstream's
checks (the result dtype must be castable to self's, and the result must have self's shape).
Hot in-place operators keep their own kernels (elementwise.binary_); this covers the rest."""

from __future__ import annotations

from .. import IMPLS, impl
from .. import base as B


# In-place forms of view operators change self's geometry, not its values (`t_`, `squeeze_`,
# `as_strided_`, ...): self takes the view's sizes, strides and offset.
_VIEW_FUNCTIONALS = {"t", "transpose", "squeeze", "unsqueeze", "swapdims", "swapaxes", "as_strided"}


def _make_view(op, functional):
    def run(self, *args):
        v = B.door(functional, self, *args)
        self._tn_set_geometry(list(v._tn_sizes), list(v._tn_strides), v.storage_offset())
        return self

    run.__name__ = op
    return run


def copy_into_self(self, out):
    """The in-place form's write: `out` (the functional result) into self, with upstream's checks
    (its dtype castable to self's, its shape self's)."""
    B.check_safe_cast(B.dtype_of(out), B.dtype_of(self))
    if list(out._tn_sizes) != list(self._tn_sizes):
        raise RuntimeError(f"output with shape {list(self._tn_sizes)} doesn't match the broadcast shape "
                           f"{list(out._tn_sizes)}")
    return B.door("copy_", self, out, False)


def _make(op, functional, dtype_at=None, dim_at=None, operand_at=()):
    if functional.partition(".")[0] in _VIEW_FUNCTIONALS:
        return _make_view(op, functional)

    def run(self, *args):
        if dim_at is not None and len(args) >= dim_at and isinstance(args[dim_at - 1], int):
            B.wrap_dim(args[dim_at - 1], max(len(self._tn_sizes), 1))  # the meta function wraps dim first
        if dtype_at is not None and len(args) >= dtype_at and args[dtype_at - 1] is not None \
                and args[dtype_at - 1] is not B.dtype_of(self):  # cumsum_(dtype=...), as upstream's cum ops
            raise RuntimeError(f"Bad in-place call: input tensor dtype {B.cpp_type_name(B.dtype_of(self))} and output "
                               f"tensor dtype {B.cpp_type_name(args[dtype_at - 1])} should match")
        if operand_at:
            # a TensorIterator checks its operands' common dtype against self's before the
            # kernel's dtype dispatch can refuse (gcd_ of int32 and float: a cast error, not
            # "gcd_cpu" for Float); scalars such as lerp's weight are not operands
            operands = [args[i] for i in operand_at if i < len(args) and args[i] is not None]
            B.check_safe_cast(B.result_type(self, *operands), B.dtype_of(self))
        try:
            out = B.door(functional, self, *args)
        except NotImplementedError:
            if operand_at:  # a TensorIterator finds a self it cannot write before the dtype dispatch
                shapes = [a._tn_sizes for a in args if isinstance(a, B.C.TensorBase)]
                shape = list(B.broadcast_shapes(self._tn_sizes, *shapes))
                if shape != list(self._tn_sizes):
                    raise RuntimeError(f"output with shape {list(self._tn_sizes)} doesn't match the broadcast shape "
                                       f"{shape}") from None
            raise
        return copy_into_self(self, out)

    run.__name__ = op
    return run


def _iterator_operands(schema):
    """Positions (after self) of a pointwise operator's other TensorIterator operands: its
    tensors, and a Scalar `other` or `exponent`, which upstream wraps into one."""
    return tuple(i for i, a in enumerate(schema.args[1:])
                 if a.base_type.rstrip("?") == "Tensor" or (a.base_type == "Scalar" and a.name in ("other", "exponent")))


# In-place overloads whose functional form has another overload name (pow.Scalar takes a Scalar
# self)
_FUNCTIONAL_OF = {"transpose_": "transpose.int", "pow_.Scalar": "pow.Tensor_Scalar", "pow_.Tensor": "pow.Tensor_Tensor"}


def _on_iterator(schemas, schema, functional):
    """Whether upstream runs the operator through a TensorIterator: pointwise-tagged, or its out=
    overload a structured kernel inheriting TensorIteratorBase."""
    base, _, ov = functional.partition(".")
    out = schemas.get(f"{base}.{ov}_out" if ov else f"{base}.out")
    return "pointwise" in schema.tags or (out is not None and out.extra.get("structured") == "iterator")


def install():
    from ...binding.schema import all_schemas

    schemas = all_schemas()
    for op, schema in schemas.items():
        name, _, ov = op.partition(".")
        if op in IMPLS or not name.endswith("_") or name.startswith("_") or schema.is_out:
            continue
        if not schema.args or schema.args[0].name != "self" or not schema.args[0].is_write:
            continue
        functional = _FUNCTIONAL_OF.get(op, name[:-1] + ("." + ov if ov else ""))
        if functional in IMPLS and functional in schemas:
            names = [a.name for a in schema.args]
            IMPLS[op] = _make(op, functional, names.index("dtype") if "dtype" in names else None,
                              names.index("dim") if "dtype" in names and "dim" in names else None,
                              _iterator_operands(schema) if _on_iterator(schemas, schema, functional) else ())
    # the reverse: upstream's generated functional forms of in-place operators (random.from,
    # bernoulli.Tensor, set.source_Tensor, resize_as: torchgen's "generated" tag) are the in-place
    # operator applied to a copy of self
    for op, schema in schemas.items():
        name, _, ov = op.partition(".")
        if op in IMPLS or name.endswith("_") or name.startswith("_") or schema.is_out or not schema.args:
            continue
        inplace_op = name + "_" + ("." + ov if ov else "")
        target = schemas.get(inplace_op)
        if target is None or inplace_op not in IMPLS or schema.args[0].name != "self" or schema.args[0].is_write:
            continue
        if [a.base_type for a in schema.args] != [a.base_type for a in target.args]:
            continue
        IMPLS[op] = _functional_from_inplace(inplace_op)


def _functional_from_inplace(inplace_op):
    def run(self, *args):
        return B.door(inplace_op, B.door("clone", self, None), *args)

    return run


@impl("resize_")
def resize_(self, size, memory_format=None):
    """Contiguous geometry of `size`; the storage grows (keeping its bytes) when too small.
    torch.distributed's *_object collectives resize their byte buffers with it."""
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if memory_format is None and [int(s) for s in size] == list(self._tn_sizes):
        return self  # upstream's resize_impl_cpu_: the same sizes keep the strides
    self._tn_resize([int(s) for s in size])
    return self


@impl("resize_as_")
def resize_as_(self, the_template, memory_format=None):
    return B.door("resize_", self, list(the_template._tn_sizes), memory_format)


# set_ is a Tensor method (binding/tensor_methods.py), not a door implementation, so the rule
# above cannot see it: its generated functional forms, each the method applied to a copy of self
@impl("set")
def set_functional(self):
    return B.door("clone", self, None).set_()


@impl("set.source_Tensor", "set.source_Storage")
def set_source(self, source):
    if isinstance(source, B.C.TensorBase) and source.dtype != self.dtype:
        # upstream's functional form sets a fresh tensor of self's dtype onto the source's
        # storage (its bytes read as self's dtype) where set_ itself refuses the dtype; a geometry
        # past the storage's end, which upstream reads out of bounds, raises here instead
        size, stride, offset, k = list(source._tn_sizes), list(source._tn_strides), source.storage_offset(), self.itemsize
        storage = source.untyped_storage()
        if all(size):
            need = (offset + sum((n - 1) * st for n, st in zip(size, stride)) + 1) * k
            if need > storage.nbytes():
                raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset {offset}, and itemsize {k} "
                                   f"requiring a storage size of {need} are out of bounds for storage of size "
                                   f"{storage.nbytes()}")
        return B.empty([0], self.dtype, B.device_of(self)).set_(storage, offset, size, stride)
    return B.door("clone", self, None).set_(source)


@impl("set.source_Storage_storage_offset")
def set_source_storage_offset(self, source, storage_offset, size, stride=()):
    return B.door("clone", self, None).set_(source, storage_offset, size, stride)
