"""TorchFunctionModes: `with torch.device(...)` (a DeviceContext mode) and user modes see the
calls of bound torch functions, Tensor methods and operators, as upstream's bindings route them."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


@exact
def device_context_builds_on_meta():
    with torch.device("meta") as dev:
        a = torch.ones(2, 3)
        lin = torch.nn.Linear(4, 5)
        t = torch.tensor([1.0, 2.0])
    return str(dev), a.device.type, a.shape, lin.weight.device.type, t.device.type, torch.ones(1).device.type


@exact
def torch_function_mode_sees_calls():
    from torch.overrides import TorchFunctionMode

    seen = []

    class Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Record():
        a = torch.ones(2)
        b = (a + 1).mul(2)
        c = torch.arange(3)
    return seen, b, c


@exact
def torch_function_mode_sees_to():
    # Tensor.to in each of its forms reaches the mode, the same-dtype call included (which
    # returns the tensor itself and dispatches nothing below)
    from torch.overrides import TorchFunctionMode

    seen = []

    class Record(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((func.__name__, len(args), sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    a = torch.arange(4.0)
    with Record():
        same = a.to(torch.float32)
        wide = a.to(torch.float64)
        dev = a.to("cpu", torch.int32)
        kw = a.to(dtype=torch.float16, copy=True)
    return seen, same is a, wide, dev, kw


@exact
def meta_tensor_copy_out_refused():
    return torch.empty(2, device="meta").to("cpu")
