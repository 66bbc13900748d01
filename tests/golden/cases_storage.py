"""Storages: torch.UntypedStorage / TypedStorage, Tensor.untyped_storage(), Tensor.set_ from a
storage, torch.frombuffer, and the errors upstream raises on bad arguments. All bit-exact."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


@exact
def untyped_storage_basics():
    x = torch.arange(4, dtype=torch.int16)
    s = x.untyped_storage()
    return (type(s).__name__, s.nbytes(), len(s), s.element_size(), s[2], s[-1], s.tolist(), str(s.device),
            s.is_shared(), s.filename)


@exact
def untyped_storage_construct_copy_fill():
    a = torch.UntypedStorage(4)
    a.fill_(7)
    b = torch.UntypedStorage([1, 2, 3, 250])
    c = b.clone()
    c[0] = 9
    a.copy_(b)
    return a.tolist(), b.tolist(), c.tolist(), torch.UntypedStorage().nbytes()


@exact
def untyped_storage_slice_shares_memory():
    x = torch.zeros(4, dtype=torch.uint8)
    s = x.untyped_storage()[1:3]
    s.fill_(5)
    return x, s.nbytes(), s.data_ptr() - x.data_ptr()


@exact
def untyped_storage_copy_size_mismatch():
    return torch.UntypedStorage(4).copy_(torch.UntypedStorage(8))


@exact
def untyped_storage_index_out_of_range():
    return torch.UntypedStorage(3)[3]


@exact
def untyped_storage_resize_grows():
    s = torch.UntypedStorage([1, 2])
    s.resize_(4)
    return s.nbytes(), s[:2].tolist()


@exact
def typed_storage_of_tensor():
    x = torch.arange(6.0)[2:]
    ts = x._typed_storage()
    return ts.dtype, ts.size(), ts.tolist(), ts._untyped_storage.nbytes(), ts.device.type


@exact
def tensor_set_from_storage():
    s = torch.arange(8, dtype=torch.float32).untyped_storage()
    a = torch.empty(0).set_(s, 2, (2, 2), (1, 2))
    b = torch.empty(0, dtype=torch.int32).set_(s)
    return a, b.shape, a.untyped_storage().data_ptr() == s.data_ptr(), a.is_contiguous()


@exact
def tensor_set_from_storage_grows_it():
    s = torch.UntypedStorage(8)
    t = torch.empty(0).set_(s, 1, (2,), (1,))
    return s.nbytes(), t.shape, t.untyped_storage().data_ptr() == s.data_ptr()


@exact
def tensor_set_from_typed_storage_wrong_dtype():
    ts = torch.arange(3.0)._typed_storage()
    return torch.empty(0, dtype=torch.float64).set_(ts)


@exact
def asarray_over_storage_shares_memory():
    x = torch.arange(4, dtype=torch.int32)
    t = torch.asarray(x.untyped_storage(), dtype=torch.int32)
    t[0] = 42
    return x, t.dtype, torch.asarray(x.untyped_storage()).dtype, torch.asarray(x.untyped_storage()).shape


@exact
def asarray_over_typed_storage_of_another_dtype():
    return torch.asarray(torch.arange(3, dtype=torch.int32)._typed_storage())


@exact
def frombuffer_shares_memory():
    buf = bytearray(b"\x01\x00\x02\x00\x03\x00\x04\x00")
    t = torch.frombuffer(buf, dtype=torch.int16, offset=2, count=2)
    t[0] = 7
    return t, list(buf), torch.frombuffer(buf, dtype=torch.uint8).shape


@exact
def frombuffer_bad_offset():
    return torch.frombuffer(bytearray(4), dtype=torch.float32, offset=4)


@exact
def frombuffer_length_not_multiple():
    return torch.frombuffer(bytearray(6), dtype=torch.float32)


@exact
def frombuffer_count_too_large():
    return torch.frombuffer(bytearray(8), dtype=torch.float32, count=3)
