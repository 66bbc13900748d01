"""`torch._C.StorageBase` (the base of `torch.UntypedStorage`), `Tensor.untyped_storage()` and
`Tensor.set_` from a storage.

A storage object is a thin Python handle on the native storage that tensors share (an
`Arc<Storage>` in core/src/storage.rs). The handle keeps one tensor over that storage (its
"anchor") and derives byte views of the whole storage from it on demand, so every storage
operation (copy, fill, indexing, slicing) runs through ordinary tensor operations. Two handles
on one storage compare equal through `_cdata` (the native storage's identity), as upstream's do.

What upstream's StorageBase offers for shared memory and IPC is refused by name (see REFUSED)
rather than approximated; weak references are real.
"""

from __future__ import annotations

import os
import struct

from . import types as T

C = None
_U8 = None  # dtype code of uint8


def _torch():
    import torch

    return torch


def _device(device):
    torch = _torch()
    if device is None:
        return torch.device("cpu")
    return device if isinstance(device, torch.device) else torch.device(device)


class StorageBase:
    """Bytes on a device, shared by every tensor built on them."""

    def __init__(self, *args, device=None, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}(): got an unexpected keyword argument '{next(iter(kwargs))}'")
        dev = _device(device)
        if not args:
            data = b""
        elif len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
            data = args[0]
        elif len(args) == 1 and hasattr(args[0], "__len__"):
            data = _bytes_of_sequence(args[0])
        else:
            raise TypeError(f"{type(self).__name__}(): could not parse the arguments {tuple(type(a).__name__ for a in args)}")
        if isinstance(data, int):
            if data < 0:
                raise RuntimeError(f"Storage size must be non-negative, but got {data}")
            anchor = C._tn_empty([data], _U8, dev.type, dev.index or 0)
        else:
            anchor = C._tn_from_bytes(data, [len(data)], _U8, dev.type, dev.index or 0)
        self._tn_anchor = anchor
        self._tn_filename = None

    @classmethod
    def _tn_wrap(cls, tensor, filename=None):
        """A handle on the storage `tensor` lives in (no copy)."""
        obj = cls.__new__(cls)
        obj._tn_anchor = tensor
        obj._tn_filename = filename
        return obj

    # --- geometry -------------------------------------------------------------------------------
    def _tn_bytes(self):
        """A uint8 tensor over every byte of the storage, from byte 0."""
        return self._tn_anchor._tn_reinterpret(_U8, [self.nbytes()], [1], 0)

    def nbytes(self) -> int:
        return self._tn_anchor._tn_storage_nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    @property
    def device(self):
        return self._tn_anchor.device

    @property
    def _cdata(self) -> int:
        return self._tn_anchor._tn_storage_id

    def data_ptr(self) -> int:
        if self._tn_anchor._tn_device_key == "meta":
            return 0
        return self._tn_bytes().data_ptr()

    def resizable(self) -> bool:
        # memory torchnative does not own (numpy arrays, buffers, mapped files) cannot grow
        return self._tn_filename is None and not getattr(self, "_tn_foreign", False)

    def is_shared(self) -> bool:
        return self.device.type == "cuda"

    def _get_filename(self):
        return self._tn_filename

    # --- contents -------------------------------------------------------------------------------
    def __getitem__(self, idx):
        n = self.nbytes()
        if isinstance(idx, slice):
            start, stop, step = idx.indices(n)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step of 1 is supported")
            return self._tn_slice(start, max(stop - start, 0))
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self).__module__}.{type(self).__name__} with {type(idx).__name__}")
        i = idx + n if idx < 0 else idx
        if not 0 <= i < n:
            raise IndexError(f"index {idx} out of range for storage of size {n}")
        return int(self._tn_bytes()[i].item())

    def _tn_slice(self, start: int, length: int):
        """A storage over bytes [start, start+length) of this one, sharing memory (CPU only)."""
        if self.device.type != "cpu":
            raise NotImplementedError(f"torchnative: slicing a {self.device.type} storage is not supported")
        view = C._tn_from_address(self.data_ptr() + start, length, [length], [1], _U8, self)
        out = type(self)._tn_wrap(view)
        out._tn_foreign = True
        return out

    def __setitem__(self, idx, value):
        if isinstance(value, StorageBase):
            value = value._tn_bytes()
        self._tn_bytes()[idx] = value

    def fill_(self, value):
        self._tn_bytes().fill_(value)
        return self

    def copy_(self, source, non_blocking=None):
        src = getattr(source, "_untyped_storage", source)  # a TypedStorage copies its bytes
        if not isinstance(src, StorageBase):
            raise TypeError(f"copy_(): expected a storage, got {type(source).__name__}")
        if src.nbytes() != self.nbytes():
            raise RuntimeError(f"size does not match, self was {self.nbytes()} bytes but other was {src.nbytes()} bytes")
        if self.nbytes():
            self._tn_bytes().copy_(src._tn_bytes(), bool(non_blocking))
        return self

    def new(self):
        return type(self)(0, device=self.device)

    def resize_(self, size: int):
        if size < 0:
            raise RuntimeError(f"Storage size must be non-negative, but got {size}")
        if not self.resizable():
            raise RuntimeError("Trying to resize storage that is not resizable")
        if size < self.nbytes():
            raise NotImplementedError("torchnative: shrinking a storage with resize_ is not supported yet")
        self._tn_bytes()._tn_resize([size])
        return self

    def _byteswap(self, dtype):
        k = dtype.itemsize
        if k == 1 or not self.nbytes():
            return
        if self.nbytes() % k:
            raise RuntimeError(f"storage of {self.nbytes()} bytes is not a whole number of {k}-byte elements")
        b = self._tn_bytes()
        b.copy_(b.view(-1, k).flip([-1]).reshape(-1))

    # --- the legacy (pre-zip) torch.save format ---------------------------------------------------
    def _write_file(self, f, is_real_file=False, save_size=True, element_size=1):
        """Appends the storage to `f`: its element count (int64, little-endian) when `save_size`,
        then its bytes."""
        if self.device.type != "cpu":
            raise RuntimeError(f"_write_file: expected a CPU storage, got one on {self.device}")
        if save_size:
            f.write(struct.pack("<q", self.nbytes() // element_size))
        f.write(bytes(C._tn_to_bytes(self._tn_bytes())) if self.nbytes() else b"")

    def _set_from_file(self, f, offset=None, is_real_file=False, element_size=1):
        """Reads what `_write_file` wrote (at `offset` when given) into this storage."""
        if offset is not None:
            f.seek(offset)
        head = f.read(8)
        if len(head) != 8:
            raise RuntimeError("unexpected EOF, expected 8 more bytes. The file might be corrupted.")
        nbytes = struct.unpack("<q", head)[0] * element_size
        if nbytes != self.nbytes():
            raise RuntimeError(f"storage has wrong byte size: expected {self.nbytes()} got {nbytes}")
        data = f.read(nbytes)
        if len(data) != nbytes:
            raise RuntimeError(f"unexpected EOF, expected {nbytes - len(data)} more bytes. The file might be corrupted.")
        if nbytes:
            src = C._tn_from_bytes(data, [nbytes], _U8, "cpu", 0)
            self._tn_bytes().copy_(src)
        return self

    # --- constructors ---------------------------------------------------------------------------
    @classmethod
    def from_buffer(cls, buffer, byte_order=None, count=-1, offset=0, dtype=None):
        """A storage holding a copy of `buffer`'s bytes (upstream copies too)."""
        torch = _torch()
        dtype = torch.uint8 if dtype is None else dtype
        k = dtype.itemsize
        if k > 1 and byte_order not in ("native", "little", "big"):
            raise ValueError(
                "function missing required argument 'byte_order'" if byte_order is None
                else f"invalid byte_order '{byte_order}' (expected 'big', 'little', or 'native')")
        raw = memoryview(buffer).cast("B")
        if offset < 0 or offset > len(raw):
            raise ValueError(f"offset must be non-negative and no greater than buffer length ({len(raw)}), but got {offset}")
        if count < 0:
            if (len(raw) - offset) % k:
                raise ValueError(f"buffer size ({len(raw) - offset}) must be a multiple of element size ({k})")
            count = (len(raw) - offset) // k
        if offset + count * k > len(raw):
            raise ValueError(f"buffer has only {len(raw) - offset} elements after offset {offset}, but specified a size of {count}")
        out = cls(bytes(raw[offset:offset + count * k]))
        order = {"native": None, "little": "little", "big": "big"}.get(byte_order)
        if order is not None and order != __import__("sys").byteorder:
            out._byteswap(dtype)
        return out

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        """The file's first `nbytes` bytes, memory-mapped: writes reach the file when `shared`,
        stay private (copy-on-write) otherwise."""
        import numpy as np

        filename = os.fspath(filename)
        size = os.path.getsize(filename) if os.path.exists(filename) else 0
        if size < nbytes:
            if not shared:
                raise RuntimeError(f"unable to mmap {nbytes} bytes from file <{filename}>: the file holds only {size} bytes")
            with open(filename, "r+b" if os.path.exists(filename) else "wb") as fh:
                fh.truncate(nbytes)
        if nbytes == 0:
            return cls(0)
        mm = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c", shape=(nbytes,))
        view = C._tn_from_address(mm.__array_interface__["data"][0], nbytes, [nbytes], [1], _U8, mm)
        out = cls._tn_wrap(view, filename if shared else None)
        out._tn_foreign = True
        return out


def _bytes_of_sequence(seq) -> bytes:
    values = list(seq)
    for v in values:
        if not isinstance(v, int):
            raise TypeError(f"tried to construct a storage from a sequence ({type(seq).__name__}), "
                            f"but one of the items was of type {type(v).__name__} instead of int")
        if not 0 <= v <= 255:
            raise RuntimeError(f"Overflow when unpacking long long ({v} does not fit in a byte)")
    return bytes(values)


# Weak references (torch.multiprocessing.reductions.StorageWeakRef, which torch.fx's proxy
# tracing and FakeTensorMode use to track aliasing): an id per storage, expired once no tensor
# holds the storage.
def _weak_ref(self):
    return self._tn_anchor._tn_storage_weak_ref()


StorageBase._weak_ref = _weak_ref
StorageBase._expired = staticmethod(lambda cdata: C._tn_storage_expired(cdata))
StorageBase._free_weak_ref = staticmethod(lambda cdata: C._tn_storage_free_weak_ref(cdata))

# Shared memory and IPC: upstream's mechanisms for multiprocessing, which torchnative does not
# have; nor re-materializing a storage from a weak reference.
REFUSED = ("share_memory_", "_share_fd_cpu_", "_share_filename_cpu_", "_share_cuda_", "_new_shared_cuda",
           "_new_shared_filename_cpu", "_new_using_fd_cpu", "_new_using_filename_cpu", "_release_ipc_counter_cuda",
           "_shared_incref", "_shared_decref", "_new_with_weak_ptr", "_set_cdata")


def _refuse(name):
    def refused(*args, **kwargs):
        raise NotImplementedError(f"torch.UntypedStorage.{name} (shared memory, IPC or weak references) is not "
                                  "implemented by torchnative")

    refused.__name__ = name
    return refused


for _name in REFUSED:
    setattr(StorageBase, _name, _refuse(_name))


# --- Tensor side ------------------------------------------------------------------------------
def _cpp_name(dtype) -> str:
    from ..ops.base import cpp_type_name

    return cpp_type_name(dtype)


def _scalar_name(dtype) -> str:
    from ..ops.elementwise.arithmetic import _type_name

    return _type_name(dtype)


def untyped_storage(self):
    # an alias, so that a later `self.set_(...)` does not move this handle to the new storage
    return _untyped_storage_class()._tn_wrap(self._tn_alias())


def _untyped_storage_class():
    import torch

    return torch.UntypedStorage


def set_from_storage(self, source, storage_offset=0, size=None, stride=None):
    """`Tensor.set_(storage, offset, size, stride)`: `self` views `source`'s bytes as its own dtype."""
    dtype = self.dtype
    if not isinstance(source, StorageBase):  # a TypedStorage
        if source.dtype != dtype:
            raise RuntimeError(f"Expected a Storage of type {_cpp_name(dtype)} or an "
                               f"UntypedStorage, but got type {_scalar_name(source.dtype)} for argument 1 'storage'")
        source = source._untyped_storage
    if source.device != self.device:
        raise RuntimeError(f"Attempted to set the storage of a tensor on device \"{self.device}\" to a storage on "
                           f"different device \"{source.device}\".  This is no longer allowed; the devices must match.")
    k = dtype.itemsize
    nbytes = source.nbytes()
    if size is None:
        size, stride, storage_offset = [nbytes // k], [1], 0
    size = [int(s) for s in size]
    if not stride:
        stride = [1] * len(size)
        for i in range(len(size) - 2, -1, -1):
            stride[i] = stride[i + 1] * max(size[i + 1], 1)
    stride = [int(s) for s in stride]
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape ({len(stride)} vs {len(size)})")
    if all(s > 0 for s in size):
        need = (storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) + 1) * k
        if need > nbytes:
            source.resize_(need)  # upstream's set_ resizes the storage to fit, as resize_ does
            nbytes = need
    whole = source._tn_anchor._tn_reinterpret(self._tn_dtype_code, [nbytes // k], [1], 0)
    self._tn_set_storage_from(whole, size, stride, storage_offset)
    return self


def is_storage(obj) -> bool:
    """An UntypedStorage or a TypedStorage."""
    if isinstance(obj, StorageBase):
        return True
    import torch.storage

    return isinstance(obj, torch.storage.TypedStorage)


def tensor_over_storage(storage, dtype=None):
    """`torch.asarray(storage)`: a 1-D tensor sharing the storage's bytes. Without `dtype`,
    upstream takes int64 for an UntypedStorage and the default dtype for a TypedStorage (which
    must then be of that dtype)."""
    torch = _torch()
    typed = not isinstance(storage, StorageBase)
    if typed:
        dtype = torch.get_default_dtype() if dtype is None else dtype  # as upstream: not the storage's
        if dtype != storage.dtype:
            raise RuntimeError(f"Expected a Storage of type {_scalar_name(dtype)} or an UntypedStorage, but got "
                               f"{_scalar_name(storage.dtype)}")
    if not typed and dtype is None:
        dtype = torch.int64  # upstream infers the type of the storage's items (Python ints)
    out = C._tn_empty([0], dtype._tn_code, storage.device.type, storage.device.index or 0)
    return set_from_storage(out, storage)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """`torch.frombuffer`: a 1-D tensor sharing the memory of an object with the buffer protocol."""
    import numpy as np

    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    if view.readonly:
        import warnings

        warnings.warn("The given buffer is not writable, and PyTorch does not support non-writable tensors. This "
                      "means you can write to the underlying (supposedly non-writable) buffer using the tensor. You "
                      "may want to copy the buffer to protect its data or make it writable before converting it to a "
                      "tensor. This type of warning will be suppressed for the rest of this program.")
    length, k = view.nbytes, dtype.itemsize
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length ({length} "
                         "bytes) minus 1")
    if count < 0 and (length - offset) % k:
        raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a multiple "
                         f"of element size ({k})")
    n = (length - offset) // k if count < 0 else count
    if offset + n * k > length:
        raise ValueError(f"requested buffer length ({n} * {k} bytes) after offset ({offset} bytes) must not be "
                         f"greater than actual buffer length ({length} bytes)")
    owner = np.frombuffer(view.cast("B") if view.ndim != 1 or view.format != "B" else view, dtype=np.uint8)
    address = owner.__array_interface__["data"][0] + offset
    out = C._tn_from_address(address, n * k, [n], [1], dtype._tn_code, owner)
    if requires_grad:
        out.requires_grad_(True)
    return out


def _has_storage(tensor) -> bool:
    """Every torchnative tensor is a strided tensor over a storage (no sparse or wrapper tensors)."""
    if not isinstance(tensor, C.TensorBase):
        raise TypeError(f"_has_storage(): argument 'tensor' must be Tensor, not {type(tensor).__name__}")
    return True


def _get_tensor_metadata(tensor) -> dict:
    """The conj/neg bits torch.save records; torchnative tensors never carry them lazily."""
    return {}


def _set_tensor_metadata(tensor, metadata: dict) -> None:
    lazy = sorted(k for k, v in metadata.items() if v)
    if lazy:
        raise NotImplementedError(f"torchnative: tensors with the lazy {'/'.join(lazy)} bit are not supported "
                                  "(the checkpoint holds one)")


def install(C_) -> None:
    global C, _U8
    C = C_
    _U8 = T.BY_NAME["uint8"]._tn_code
    StorageBase.__module__ = "torch._C"
    C.StorageBase = StorageBase
    C.TensorBase.untyped_storage = untyped_storage
    C._has_storage = _has_storage
    C._get_tensor_metadata = _get_tensor_metadata
    C._set_tensor_metadata = _set_tensor_metadata
