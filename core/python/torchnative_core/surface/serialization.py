"""`torch._C.PyTorchFileWriter` / `PyTorchFileReader`: the zip container of `torch.save` files.

Upstream writes it with miniz (caffe2/serialize/inline_container.cc); this is the same container
written with Python's `zipfile`, laid out as upstream lays it out so that either side reads the
other's files:

- every record is stored uncompressed under `<archive>/`, where `<archive>` is the file's base
  name without its extension (`archive` for buffers);
- each record's data starts at a multiple of the storage alignment (64), padded with an `FB`
  extra field in the local header, as upstream pads;
- each record is followed by a data descriptor (upstream's miniz streams its records, and
  `torch.load`'s offset calculation counts the descriptor);
- `version` (3), `byteorder` and `.data/serialization_id` are added at the end when missing.
  The id has upstream's form (40 digits: a combined hash of the record names, then a combined
  CRC-32 of their data) but hashes names with CRC-32 where upstream uses std::hash, so the same
  content gets a different, equally stable id; nothing reads it back but telemetry.

The files are not byte-identical to upstream's (zipfile and miniz differ in header fields such
as "version made by" and in writing zip64 end records); both readers read both.

The reader reads record data at its offset without checking CRC-32, as upstream does (upstream
can write files without CRCs); a file that is not a zip archive, is truncated, or misses a
record raises RuntimeError with upstream's message.
"""

from __future__ import annotations

import io
import os
import struct
import zipfile
import zlib

from . import types as T

C = None

VERSION = 3  # kProducedFileFormatVersion of upstream's writer for torch.save files
MIN_VERSION, MAX_VERSION = 1, 10
LOCAL_HEADER = 30
ZIP64_LIMIT = (1 << 31) - 1  # zipfile's threshold for a zip64 local header
_MINIZ_HINT = (". This is an internal miniz error. If you are seeing this error, there is a high likelihood that your "
               "checkpoint file is corrupted. This can happen if the checkpoint was not saved properly, was "
               "transferred incorrectly, or the file was modified after saving.")


def _archive_name(path: str) -> str:
    """Upstream's basename(): the last path component up to its last dot."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


class _Unseekable(io.RawIOBase):
    """Makes zipfile stream its records (data descriptors after the data), as miniz does."""

    def __init__(self, sink):
        self._sink, self._pos = sink, 0

    def writable(self):
        return True

    def seekable(self):
        return False

    def tell(self):
        return self._pos

    def seek(self, *args):
        raise OSError("not seekable")

    def write(self, data):
        self._sink.write(data)
        self._pos += len(data)
        return len(data)

    def flush(self):
        if hasattr(self._sink, "flush"):
            self._sink.flush()


def _payload(data, size: int) -> bytes:
    """The bytes to store for a record: `data` may be bytes, str, a storage or an address."""
    if isinstance(data, str):
        data = data.encode()
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data[:size])
    from .storage import StorageBase

    if isinstance(data, StorageBase):
        if data.device.type != "cpu":
            raise RuntimeError(f"write_record: expected a CPU storage, got one on {data.device}")
        if size > data.nbytes():
            raise RuntimeError(f"write_record: {size} bytes requested from a storage of {data.nbytes()} bytes")
        return bytes(C._tn_to_bytes(data._tn_bytes()))[:size]
    if isinstance(data, int):  # a data pointer (upstream's `uintptr_t` overload)
        import ctypes

        return ctypes.string_at(data, size)
    raise TypeError(f"write_record(): incompatible data argument of type {type(data).__name__}")


def _hash_combine(seed: int, value: int) -> int:
    """c10::hash_combine on 64-bit values."""
    m = (1 << 64) - 1
    return (seed ^ ((value + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & m)) & m


class PyTorchFileWriter:
    def __init__(self, file_name, compute_crc32=True, storage_alignment=64):
        if isinstance(file_name, (str, os.PathLike)):
            self._path = os.fspath(file_name)
            self._fh = open(self._path, "wb")  # noqa: SIM115 (closed by write_end_of_file)
            self._archive = _archive_name(self._path)
        else:
            if not callable(getattr(file_name, "write", None)):
                raise TypeError(f"PyTorchFileWriter: expected a file name or a writable buffer, got {type(file_name).__name__}")
            self._path, self._fh, self._archive = None, file_name, "archive"
        self._alignment = int(storage_alignment)
        self._zip = zipfile.ZipFile(_Unseekable(self._fh), "w", compression=zipfile.ZIP_STORED)
        self._written: list[str] = []
        self._crc = 0
        self._min_version = VERSION
        self._serialization_id = ""
        self._finished = False

    def archive_name(self) -> str:
        return self._archive

    def set_min_version(self, version: int) -> None:
        self._min_version = max(self._min_version, int(version))

    def get_all_written_records(self) -> set:
        return set(self._written)

    def serialization_id(self) -> str:
        return self._serialization_id

    def write_record(self, name: str, data, size: int) -> None:
        if self._finished:
            raise RuntimeError("PytorchStreamWriter: the archive was already finalized")
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        payload = _payload(data, int(size))
        full = f"{self._archive}/{name}"
        info = zipfile.ZipInfo(full, date_time=(1980, 0, 0, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        zip64 = len(payload) * 1.05 > ZIP64_LIMIT
        start = self._zip.fp.tell() + LOCAL_HEADER + len(full.encode()) + 4 + (20 if zip64 else 0)
        pad = -start % self._alignment
        info.extra = b"FB" + struct.pack("<H", pad) + b"Z" * pad
        with self._zip.open(info, "w", force_zip64=zip64) as out:
            out.write(payload)
        self._written.append(name)
        self._crc = _hash_combine(self._crc, zlib.crc32(payload))

    def write_record_metadata(self, name: str, size: int) -> None:
        raise NotImplementedError("torch._C.PyTorchFileWriter.write_record_metadata (saving without data, "
                                  "torch.serialization.skip_data) is not implemented by torchnative")

    def write_end_of_file(self) -> None:
        if self._finished:
            return
        if ".data/version" not in self._written and "version" not in self._written:
            v = f"{self._min_version}\n"
            self.write_record(".data/version" if self._min_version >= 6 else "version", v, len(v))
        if "byteorder" not in self._written:
            import sys

            self.write_record("byteorder", sys.byteorder, len(sys.byteorder))
        if ".data/serialization_id" not in self._written:
            names = 0
            for n in sorted(self._written):
                names = _hash_combine(names, zlib.crc32(n.encode()))
            self._serialization_id = f"{names:020d}{self._crc:020d}"
            self.write_record(".data/serialization_id", self._serialization_id, len(self._serialization_id))
        self._zip.close()
        self._finished = True
        if self._path is not None:
            self._fh.close()


def _error(msg: str) -> RuntimeError:
    return RuntimeError(f"PytorchStreamReader {msg}{_MINIZ_HINT}")


class _Spliced(io.RawIOBase):
    """A read-only view of `fh` with `gap` bytes left out at position `at`."""

    def __init__(self, fh, at, gap, size):
        self._fh, self._at, self._gap, self._size, self._pos = fh, at, gap, size - gap, 0

    def readable(self):
        return True

    def seekable(self):
        return True

    def tell(self):
        return self._pos

    def seek(self, offset, whence=os.SEEK_SET):
        base = {os.SEEK_SET: 0, os.SEEK_CUR: self._pos, os.SEEK_END: self._size}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def read(self, n=-1):
        end = self._size if n is None or n < 0 else min(self._size, self._pos + n)
        out = bytearray()
        while self._pos < end:
            real = self._pos if self._pos < self._at else self._pos + self._gap
            stop = min(end, self._at) if self._pos < self._at else end
            self._fh.seek(real)
            chunk = self._fh.read(stop - self._pos)
            if not chunk:
                break
            out += chunk
            self._pos += len(chunk)
        return bytes(out)


class PyTorchFileReader:
    def __init__(self, name_or_buffer):
        if isinstance(name_or_buffer, (str, os.PathLike)):
            self._fh = open(os.fspath(name_or_buffer), "rb")  # noqa: SIM115 (closed with the reader)
            self._owned = True
        else:
            self._fh, self._owned = name_or_buffer, False
        self._fh.seek(0, os.SEEK_END)
        self._size = self._fh.tell()
        self._fh.seek(0)
        if self._size < 22 or self._fh.read(4) != b"PK\x03\x04":
            raise _error("failed reading zip archive: not a ZIP archive")
        try:
            self._zip = self._open_zip()
        except UnicodeDecodeError:
            raise  # a record name that is not UTF-8: upstream's get_all_records raises this too
        except (zipfile.BadZipFile, OSError, ValueError, struct.error):
            raise _error("failed reading zip archive: failed finding central directory") from None
        infos = self._zip.infolist()
        if not infos:
            raise _error("failed reading zip archive: failed finding central directory")
        self._check_zip64_locator()
        self._check_central_directory_size(infos)
        for info in infos:
            # miniz's central directory checks: a stored record's two sizes agree and its data
            # lies inside the archive
            if info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size or (
                    info.header_offset + LOCAL_HEADER + info.compress_size > self._size):
                raise _error("failed reading zip archive: invalid header or archive is corrupted")
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"file in archive is not in a subdirectory: {first}")
        self._prefix = first.split("/", 1)[0] + "/"
        self._infos = {}
        for info in infos:
            if not info.filename.startswith(self._prefix):
                raise RuntimeError(f"file in archive is not in a subdirectory {self._prefix}: {info.filename}")
            self._infos[info.filename[len(self._prefix):]] = info
        key = ".data/version" if ".data/version" in self._infos else "version"
        text = self.get_record(key).decode(errors="replace").strip()
        try:
            self._version = int(text)
        except ValueError:
            raise RuntimeError(f"Couldn't parse the version {text} as Long.") from None
        if self._version < MIN_VERSION:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {self._version}, but the minimum "
                               f"supported version for reading is {MIN_VERSION}. Your PyTorch script module file is "
                               "too old. Please regenerate it with latest version of PyTorch to mitigate this issue.")
        if self._version > MAX_VERSION:
            raise RuntimeError(f"Attempted to read a PyTorch file with version {self._version}, but the maximum "
                               f"supported version for reading is {MAX_VERSION}. The version of your PyTorch "
                               "installation may be too old, please upgrade PyTorch to latest version to mitigate "
                               "this issue.")

    def _open_zip(self):
        """zipfile over the archive. miniz ignores a zip64 end record whose locator is damaged
        and reads the 32-bit end record; zipfile instead counts the unrecognised record as data
        prepended to the archive and shifts every offset. So when the locator is unreadable,
        zipfile gets a view of the file without the bytes between the central directory and the
        32-bit end record."""
        try:
            return zipfile.ZipFile(self._fh)
        except zipfile.BadZipFile:
            eocd = self._end_record()
            if eocd is None:
                raise
            at, size_cd, offset_cd = eocd
            gap = at - (offset_cd + size_cd)
            if gap <= 0:
                raise
            return zipfile.ZipFile(_Spliced(self._fh, offset_cd + size_cd, gap, self._size))

    def _end_record(self):
        """(position, central directory size, central directory offset) of the 32-bit end
        record, or None."""
        self._fh.seek(max(0, self._size - 22 - 65536))
        tail_at = self._fh.tell()
        tail = self._fh.read()
        at = tail.rfind(b"PK\x05\x06")
        if at < 0 or len(tail) < at + 22:
            return None
        size_cd, offset_cd = struct.unpack("<II", tail[at + 12:at + 20])
        return tail_at + at, size_cd, offset_cd

    def _check_central_directory_size(self, infos) -> None:
        """miniz walks the central directory within its recorded size: an entry whose name,
        extra field and comment run past the end is corrupt (zipfile reads on regardless)."""
        eocd = self._end_record()
        if eocd is None or 0xFFFFFFFF in eocd[1:]:
            return  # zip64 sizes: zipfile's own checks apply
        _, size_cd, offset_cd = eocd
        self._fh.seek(offset_cd)
        cd = self._fh.read(size_cd + 46 + 3 * 0xFFFF)  # room for an overrunning last entry
        pos = 0
        for _ in infos:
            if cd[pos:pos + 4] != b"PK\x01\x02" or len(cd) < pos + 46:
                return  # zipfile already rejects a central directory it cannot walk
            name, extra, comment = struct.unpack("<HHH", cd[pos + 28:pos + 34])
            pos += 46 + name + extra + comment
        if pos > size_cd:
            raise _error("failed reading zip archive: invalid header or archive is corrupted")

    def _check_zip64_locator(self) -> None:
        """The zip64 locator (which upstream's writer always emits) must point at the zip64 end
        record; Python's zipfile finds that record by position instead, miniz by the pointer."""
        self._fh.seek(0)
        tail = self._fh.read()[-(22 + 20 + 65536):]
        at = tail.rfind(b"PK\x06\x07")
        if at < 0:
            return
        (offset,) = struct.unpack("<Q", tail[at + 8:at + 16])
        self._fh.seek(offset)
        if offset + 4 > self._size or self._fh.read(4) != b"PK\x06\x06":
            raise _error("failed reading zip archive: not a ZIP archive")

    def __del__(self):
        if getattr(self, "_owned", False):
            self._fh.close()

    def _info(self, name: str):
        info = self._infos.get(name)
        if info is None:
            raise _error(f"failed locating file {name}: file not found")
        return info

    def has_record(self, name: str) -> bool:
        return name in self._infos

    def get_all_records(self) -> list:
        return list(self._infos)

    def get_record_size(self, name: str) -> int:
        return self._info(name).file_size

    def get_record_header_offset(self, name: str) -> int:
        return self._info(name).header_offset

    def get_record_offset(self, name: str) -> int:
        """Where the record's data starts: after its local header, whose extra field may differ
        from the central directory's."""
        info = self._info(name)
        self._fh.seek(info.header_offset)
        header = self._fh.read(LOCAL_HEADER)
        if len(header) < LOCAL_HEADER or header[:4] != b"PK\x03\x04":
            raise _error(f"failed reading file {name}: invalid header or archive is corrupted")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        return info.header_offset + LOCAL_HEADER + name_len + extra_len

    def get_record_offset_no_read(self, header_offset: int, name: str, size: int, alignment: int) -> int:
        """The data offset of a record whose local header starts at `header_offset`, computed as
        the writer places it (upstream's getPadding)."""
        full = len((self._prefix + name).encode())
        start = header_offset + LOCAL_HEADER + full + 4
        if size >= 0xFFFFFFFF or header_offset >= 0xFFFFFFFF:
            start += 4 + (16 if size >= 0xFFFFFFFF else 0) + (8 if header_offset >= 0xFFFFFFFF else 0)
        return start + (-start % alignment)

    def get_record(self, name: str) -> bytes:
        info = self._info(name)
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise _error(f"failed retrieving file meta-data for {name}: unsupported method")
        if info.compress_type == zipfile.ZIP_DEFLATED:
            return self._zip.read(info)  # compressed by another writer: zipfile inflates it
        offset = self.get_record_offset(name)
        self._fh.seek(offset)
        data = self._fh.read(info.file_size)
        if len(data) != info.file_size:
            raise _error(f"failed reading file {name}: file read failed")
        return data

    def get_storage_from_record(self, name: str, numel: int, dtype=None):
        """A tensor of size 0 whose storage holds the record: `numel` elements of `dtype`
        (torch.export's loader passes a dtype; torch.load passes torch.UntypedStorage, bytes)."""
        data = self.get_record(name)
        itemsize = dtype.itemsize if isinstance(dtype, T.dtype) else 1
        if len(data) != numel * itemsize:
            raise RuntimeError(f"PytorchStreamReader: record {name} holds {len(data)} bytes, "
                               f"expected {numel * itemsize}")
        u8 = T.BY_NAME["uint8"]._tn_code
        whole = C._tn_from_bytes(data, [len(data)], u8, "cpu", 0)
        code = dtype._tn_code if isinstance(dtype, T.dtype) else u8
        return whole._tn_reinterpret(code, [0], [1], 0)

    def serialization_id(self) -> str:
        return self.get_record(".data/serialization_id").decode() if self.has_record(".data/serialization_id") else ""


# torch.sparse.check_sparse_tensor_invariants: a global switch (default off) that torch.load
# consults before validating the sparse tensors it rebuilt (torchnative rebuilds none).
_sparse_invariants = [False]


def _check_sparse_tensor_invariants() -> bool:
    return _sparse_invariants[0]


def _set_check_sparse_tensor_invariants(enabled: bool) -> None:
    _sparse_invariants[0] = bool(enabled)


def install(C_) -> None:
    global C
    C = C_
    C._check_sparse_tensor_invariants = _check_sparse_tensor_invariants
    C._set_check_sparse_tensor_invariants = _set_check_sparse_tensor_invariants
    for cls in (PyTorchFileWriter, PyTorchFileReader):
        cls.__module__ = "torch._C"
        setattr(C, cls.__name__, cls)
