"""dtypes and type promotion: tensor+tensor for every dtype pair, tensor+Python scalar,
0-dim tensors (which promote like scalars within a category), casts."""
from functools import partial

from .registry import add, case, torch

exact = partial(case, exact=True)

DTYPES = ("float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool")


def _t(name, values=(0, 1, 2, 3)):
    return torch.tensor(values, dtype=getattr(torch, name))


# One case per left dtype; the result maps each right dtype to the sum (dtype + values).
def _add_pairs(left):
    def fn():
        return {right: _t(left) + _t(right) for right in DTYPES}
    add(f"dtypes.add_pairs_{left}", fn, exact=True)


for _left in DTYPES:
    _add_pairs(_left)


@exact
def promote_types_table():
    return {(a, b): torch.promote_types(getattr(torch, a), getattr(torch, b))
            for a in DTYPES for b in DTYPES}


@exact
def result_type_with_scalars():
    return {(d, repr(s)): torch.result_type(_t(d), s)
            for d in DTYPES for s in (1, 2.5, True)}


# Tensor + Python scalar: dtype follows the tensor unless the scalar's category is higher.
def _scalar_ops(name):
    def fn():
        t = _t(name)
        return {"int": t + 3, "float": t + 1.5, "bool": t + True, "rsub_int": 2 - t,
                "mul_float": t * 0.5, "div_int": t / 2}
    add(f"dtypes.scalar_ops_{name}", fn, exact=True)


for _name in DTYPES:
    if _name != "bool":
        _scalar_ops(_name)


@exact
def bool_with_scalars():
    t = torch.tensor([True, False])
    return t + 1, t + 1.5, t & True, t | False, t * True


@exact
def zero_dim_same_category_does_not_promote():
    a = torch.tensor([1, 2], dtype=torch.int8)
    f = torch.tensor([1.0, 2.0], dtype=torch.float16)
    return (a + torch.tensor(300), f + torch.tensor(1.0, dtype=torch.float64),
            a + torch.tensor(1, dtype=torch.int64))


@exact
def zero_dim_higher_category_promotes():
    a = torch.tensor([1, 2], dtype=torch.int32)
    return a + torch.tensor(1.5), a + torch.tensor(1.5, dtype=torch.float64)


@exact
def zero_dim_with_zero_dim():
    return (torch.tensor(1, dtype=torch.int8) + torch.tensor(1.0, dtype=torch.float64),
            torch.tensor(2.0) * torch.tensor(3.0, dtype=torch.float64))


@exact
def int_true_division_is_float():
    return torch.tensor([1, 2, 3]) / torch.tensor([2, 2, 2]), torch.tensor([7]) / 2


@exact
def uint8_wraps():
    a = torch.tensor([250, 5], dtype=torch.uint8)
    return a + torch.tensor([10, 10], dtype=torch.uint8), a - 10


@exact
def int8_overflow_wraps():
    return torch.tensor([127, -128], dtype=torch.int8) + torch.tensor([1, -1], dtype=torch.int8)


@exact
def casts_to():
    x = torch.tensor([-1.7, -0.5, 0.0, 0.5, 1.7, 2.5])
    return {d: x.to(getattr(torch, d)) for d in DTYPES if d != "uint8"}


@exact
def casts_methods():
    x = torch.tensor([0, 1, 2])
    return x.float(), x.double(), x.half(), x.bfloat16(), x.long(), x.int(), x.short(), \
        x.char(), x.byte(), x.bool()


@exact
def float_to_half_rounding():
    x = torch.tensor([1.0001, 65504.0, 70000.0, 1e-8, 3.14159], dtype=torch.float64)
    return x.half(), x.bfloat16(), x.float()


@exact
def type_method_and_is_floating():
    x = torch.tensor([1, 2])
    return (x.type(torch.float64), x.dtype.is_floating_point, x.is_floating_point(),
            torch.float16.itemsize, torch.bfloat16.is_signed, torch.uint8.is_signed)


@exact
def dtype_attributes():
    return [(str(getattr(torch, d)), getattr(torch, d).itemsize,
             getattr(torch, d).is_floating_point) for d in DTYPES]


@exact
def finfo_iinfo():
    f = torch.finfo(torch.float16)
    b = torch.finfo(torch.bfloat16)
    i = torch.iinfo(torch.int8)
    return f.eps, f.max, f.tiny, b.eps, b.max, i.min, i.max, torch.finfo().eps


@case(exact=True)
def reduced_precision_scalar_mul_div():
    # upstream reads the Python number at float precision for mul/div (not rounded to the dtype)
    h = torch.linspace(-3, 3, 200).half()
    b = torch.linspace(-3, 3, 200).bfloat16()
    hh = h.clone()
    hh *= 0.1
    return (h * 0.1, h / 3.3, b * 0.1, b / 3.3, torch.div(b, 0.3, rounding_mode="floor"), hh, h + 0.1)


@case(exact=True)
def python_scalar_types_name_dtypes():
    x = torch.ones(2)
    return (torch.tensor(0, dtype=int), torch.tensor(1.5, dtype=float), torch.tensor([1, 0], dtype=bool),
            x.to(int), x.to(float), x.to("cpu", int), x.to(dtype=int), torch.zeros(2, dtype=int))


@case
def tensor_dtype_must_be_a_dtype():
    return torch.tensor(1, dtype="float32")
