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


@exact
def has_torch_function_probes():
    # torch._C's probes as every torch.nn.functional call uses them: plain tensors, Parameter and
    # Python values are not overrides; subclasses (inheriting the default or their own) and
    # tensor-likes are; the disable guards and a pushed mode change the answer
    from torch.overrides import TorchFunctionMode, has_torch_function, has_torch_function_unary, has_torch_function_variadic

    class Sub(torch.Tensor):
        pass

    class Own(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return super().__torch_function__(func, types, args, kwargs)

    class Like:
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return 0

    class Off(torch.Tensor):
        __torch_function__ = torch._C._disabled_torch_function_impl

    t = torch.ones(2)
    values = [t, torch.nn.Parameter(t.clone()), t.as_subclass(Sub), t.as_subclass(Own), Like(), t.as_subclass(Off),
              None, 1, 2.0, True, "s", [t], (t,), {}, torch.nn.parameter.Buffer(t) if hasattr(torch.nn.parameter, "Buffer") else 0]

    def probe():
        return ([has_torch_function_unary(v) for v in values], has_torch_function_variadic(t, None, 3),
                has_torch_function_variadic(t, values[2]), has_torch_function(tuple(values[:2])),
                has_torch_function([values[4]]))

    plain = probe()
    with torch._C.DisableTorchFunctionSubclass():
        sub_off = probe()
        state_sub = torch._C._is_torch_function_enabled()
    with torch._C.DisableTorchFunction():
        all_off = probe()
        state_all = torch._C._is_torch_function_all_disabled()

    class Mode(TorchFunctionMode):
        pass

    with Mode():
        moded = probe()
        depth = torch._C._len_torch_function_stack()
        inner = type(torch._C._get_function_stack_at(0)).__name__
        with torch._C.DisableTorchFunctionSubclass():
            moded_sub_off = probe()
            mode_on = torch._C._is_torch_function_mode_enabled()
    return plain, sub_off, state_sub, all_off, state_all, moded, depth, inner, moded_sub_off, mode_on, torch._C._len_torch_function_stack()


@exact
def torch_function_stack_errors():
    from torch.overrides import TorchFunctionMode

    out = []
    with TorchFunctionMode():
        for f in (lambda: torch._C._get_function_stack_at(1), torch._C._pop_torch_function_stack):
            try:
                out.append(type(f()).__name__)
            except RuntimeError as e:
                out.append(str(e))
        torch._C._push_on_torch_function_stack(TorchFunctionMode())  # what the pop took
    try:
        torch._C._pop_torch_function_stack()
    except RuntimeError as e:
        out.append(str(e))
    return out
