"""npu memory: aligned blocks of host RAM (ONNX Runtime's CPU provider reads and writes host
memory; an NPU provider copies in and out of the session itself).

The allocator is where the lazy graph meets the bytes: copying a block out flushes the pending
graph when the block's content is still symbolic, copying into a block the graph refers to flushes
it first, and freeing a block the graph still reads keeps its buffer until the next flush
(graph.py)."""

from __future__ import annotations

import ctypes

from .graph import GRAPH


class NpuAllocator:
    def __init__(self, graph=GRAPH):
        self.graph = graph
        self.blocks = graph.blocks  # aligned address -> [nbytes, buffer]
        self.allocated = 0

    def alloc(self, nbytes: int, align: int) -> int:
        align = max(align, 64)
        buf = ctypes.create_string_buffer(nbytes + align)
        address = -(-ctypes.addressof(buf) // align) * align
        self.blocks[address] = [nbytes, buf]
        self.allocated += 1
        return address

    def free(self, address: int, nbytes: int) -> None:
        _, buf = self.blocks.pop(address)
        self.graph.free(address, buf)

    def _base(self, address: int) -> int:
        if address in self.blocks:
            return address
        for base, (n, _) in self.blocks.items():  # an address inside a block (a view's bytes)
            if base <= address < base + max(n, 1):
                return base
        raise RuntimeError(f"npu: address {address:#x} is not in an npu block")

    def copy_from_host(self, dst: int, src: int, nbytes: int) -> None:
        self.graph.before_copy_in(self._base(dst))
        ctypes.memmove(dst, src, nbytes)

    def copy_to_host(self, dst: int, src: int, nbytes: int) -> None:
        self.graph.before_copy_out(self._base(src))
        ctypes.memmove(dst, src, nbytes)
