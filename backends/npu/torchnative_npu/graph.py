"""Lazy capture: kernels record ONNX nodes into one pending graph instead of computing, and the
graph runs (one ONNX Runtime session, cached by the graph's structure) when its results are needed.

Memory model. Every tensor lives in a *block*: one allocation of the npu allocator (memory.py),
host RAM here. A block's content is either its bytes in memory, or — once a captured kernel wrote
it — a *symbolic* value of the pending graph: the whole block as one ONNX value (`Sym`). A kernel
reads a tensor as a value of its shape:

  * a block with a symbolic value: that value, reshaped when the view is the whole block, else a
    Slice (a contiguous view) or a Gather of the view's element offsets from the flat value (any
    strided view: transposes, expands, as_strided);
  * a block in memory: a graph input ("m0", "m1", ...) fed at run time from a numpy view of the
    tensor's bytes with its sizes and strides (made contiguous; no copy when it already is).

A kernel writes its outputs the same way round: an output covering its whole block contiguously
becomes the block's new symbolic value; an output that is a view into a block (in-place ops on
slices, `copy_` into a view) becomes a ScatterElements into the block's flat value.

The graph is flushed — built into one ONNX model, run, every block it wrote still alive copied
back to memory — whenever memory has to be right: the allocator copies a block out (`.cpu()`,
printing, `item()`, the CPU fallback reading operands) or into a block the graph refers to, or a
value is read with another dtype than its block's symbolic value. Freed blocks the graph still
reads stay allocated until the next flush. TORCHNATIVE_NPU_EAGER=1 flushes after every kernel
(one session per operator: for debugging, and the tests compare both modes).

Sessions are cached by a structural key: the nodes, attributes, constants and the inputs' dtypes
and shapes, with values numbered in order of creation (no addresses), so a forward pass repeated
on inputs of the same shapes reuses one session.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass

import numpy as np

from . import providers

# torch ScalarType code -> (numpy dtype, ONNX element type name, TensorProto enum, torch name)
DTYPES = {
    0: (np.uint8, "uint8", 2, "Byte"), 1: (np.int8, "int8", 3, "Char"), 2: (np.int16, "int16", 5, "Short"),
    3: (np.int32, "int32", 6, "Int"), 4: (np.int64, "int64", 7, "Long"), 5: (np.float16, "float16", 10, "Half"),
    6: (np.float32, "float", 1, "Float"), 7: (np.float64, "double", 11, "Double"), 11: (np.bool_, "bool", 9, "Bool"),
}
FLOATS = {5, 6, 7}
INTS = {0, 1, 2, 3, 4}
BOOL = 11
MAX_NODES = int(os.environ.get("TORCHNATIVE_NPU_MAX_NODES", "20000"))  # flush a graph this large
MAX_SESSIONS = int(os.environ.get("TORCHNATIVE_NPU_SESSIONS", "64"))  # sessions kept (LRU)


class Rejected(Exception):
    """The runtime has no kernel for a node this operator needs (operator, element type): the
    operator runs on the cpu backend instead (kernels.py)."""


class Unsupported(Exception):
    """A torch dtype with no ONNX/numpy counterpart here (bfloat16, complex)."""


def contiguous(sizes, strides) -> bool:
    expect = 1
    for n, s in zip(reversed(sizes), reversed(strides)):
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def numel(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


def dense_permutation(sizes, strides):
    """(dense sizes, perm) when the view is a permutation of a contiguous block of its numel
    elements (a transpose, a permute): Transpose(block.reshape(dense sizes), perm) is the view.
    None otherwise (slices with gaps, expands)."""
    n = len(sizes)
    order = sorted(range(n), key=lambda d: (-strides[d], d))
    dense = [sizes[d] for d in order]
    if not contiguous(dense, [strides[d] for d in order]):
        return None
    return dense, [order.index(i) for i in range(n)]


def offsets(offset, sizes, strides) -> np.ndarray:
    """The element offsets of a strided view, shaped like the view (int64)."""
    idx = np.full((), offset, dtype=np.int64)
    for d, (n, s) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
    return np.broadcast_to(idx, tuple(sizes)).copy() if sizes else idx.reshape(())


@dataclass
class Sym:
    """A block's symbolic content: a value holding the whole block, either shaped (a full
    contiguous write of that shape) or flat (1-D, every element of the block)."""
    value: str
    shape: tuple
    code: int


class Stats:
    def __init__(self):
        self.reset()

    def reset(self):
        self.flushes = 0  # graphs run
        self.nodes_run = 0  # ONNX nodes in them
        self.sessions_created = 0  # cache misses
        self.session_hits = 0
        self.kernels = 0  # aten kernels captured
        self.rejected = {}  # aten op -> calls the provider rejected (ran on the cpu backend)
        self.flush_reasons = {}

    def as_dict(self):
        return {k: (dict(v) if isinstance(v, dict) else v) for k, v in vars(self).items()}


class Graph:
    """The pending graph and the blocks' symbolic state (one per process: `GRAPH`)."""

    def __init__(self):
        self.blocks: dict[int, list] = {}  # base address -> [nbytes, buffer] (memory.py fills it)
        self.sessions: dict[str, object] = {}
        self.stats = Stats()
        self.eager = os.environ.get("TORCHNATIVE_NPU_EAGER", "") not in ("", "0")
        self._clear()

    # --- pending state ---------------------------------------------------------------------
    def _clear(self):
        self.nodes: list[tuple] = []  # (op_type, inputs, outputs, attrs as a sorted tuple, domain)
        self.count = 0  # values created
        self.consts: list[tuple] = []  # (name, ndarray)
        self.inputs: list[tuple] = []  # (name, base, offset, sizes, strides, code)
        self.input_keys: dict[tuple, str] = {}
        self.sym: dict[int, Sym] = {}  # base -> symbolic content
        self.written: dict[int, None] = {}  # bases written by the graph, in order
        self.read_bases: set[int] = set()  # bases the graph reads from memory
        self.deferred: list = []  # buffers freed while the graph still reads them

    def referenced(self, base: int) -> bool:
        return base in self.sym or base in self.read_bases

    def checkpoint(self):
        return (self.stats.flushes, len(self.nodes), self.count, len(self.consts), len(self.inputs))

    def rollback(self, mark):
        """Forget what a kernel recorded before it was rejected (it wrote no block yet)."""
        if mark[0] != self.stats.flushes:
            mark = (0, 0, 0, 0, 0)
        _, n, c, k, i = mark
        del self.nodes[n:], self.consts[k:]
        self.count = max(self.count, c)  # names stay unique; the key is built from the nodes
        for name, base, *geom in self.inputs[i:]:
            self.input_keys.pop((base, *map(_tuple, geom)), None)
        del self.inputs[i:]
        self.read_bases = {x[1] for x in self.inputs}

    # --- building ---------------------------------------------------------------------------
    def new(self) -> str:
        self.count += 1
        return f"v{self.count}"

    def node(self, op, inputs, nout=1, domain="", **attrs):
        outs = [self.new() for _ in range(nout)]
        self.nodes.append((op, tuple(inputs), tuple(outs), tuple(sorted(attrs.items())), domain))
        return outs[0] if nout == 1 else outs

    def const(self, array) -> str:
        name = f"c{len(self.consts)}"
        self.consts.append((name, np.array(array, order="C")))  # (ascontiguousarray makes 0-dim 1-dim)
        return name

    def ints(self, values) -> str:
        return self.const(np.asarray(values, dtype=np.int64))

    def scalar(self, value, code) -> str:
        return self.const(np.asarray(value, dtype=npdtype(code)))

    # --- reading tensors ---------------------------------------------------------------------
    def read(self, t) -> str:
        """A value holding tensor `t` (an npu tensor, or a host tensor: a constant)."""
        code = t._tn_dtype_code
        sizes, strides = t._tn_sizes, t._tn_strides
        if t._tn_device_key != "npu":
            return self.const(host_array(t, code, sizes, strides))
        item = np.dtype(npdtype(code)).itemsize
        offset = t.storage_offset()
        base = t.data_ptr() - offset * item
        if base not in self.blocks:
            raise RuntimeError(f"npu: tensor at {base:#x} is not in an npu block")
        s = self.sym.get(base)
        if s is not None and s.code != code:
            self.flush("a block read with another dtype")
            s = None
        if s is not None:
            return self._view(s, base, offset, sizes, strides)
        perm = None
        if not contiguous(sizes, strides) and numel(sizes):
            dp = dense_permutation(sizes, strides)
            if dp is not None:  # feed the dense bytes as they are (no copy), transpose in the graph
                sizes, perm = dp
                strides = [int(np.prod(sizes[i + 1:], dtype=np.int64)) for i in range(len(sizes))]
        key = (base, offset, tuple(sizes), tuple(strides), code)
        name = self.input_keys.get(key)
        if name is None:
            name = f"m{len(self.inputs)}"
            self.inputs.append((name, base, offset, tuple(sizes), tuple(strides), code))
            self.input_keys[key] = name
            self.read_bases.add(base)
        return name if perm is None else self.node("Transpose", [name], perm=perm)

    def _flat(self, s: Sym, base) -> str:
        if len(s.shape) != 1:
            s = self.sym[base] = Sym(self.node("Reshape", [s.value, self.ints([-1])]), (numel(s.shape),), s.code)
        return s.value

    def _view(self, s: Sym, base, offset, sizes, strides) -> str:
        sizes, n = tuple(sizes), numel(sizes)
        total = numel(s.shape)
        if offset == 0 and n == total and contiguous(sizes, strides):
            return s.value if s.shape == sizes else self.node("Reshape", [s.value, self.ints(sizes)])
        if n == 0:
            return self.const(np.zeros(sizes, dtype=npdtype(s.code)))
        dp = ((list(sizes), list(range(len(sizes)))) if contiguous(sizes, strides)
              else dense_permutation(sizes, strides))
        if dp is not None:  # a contiguous run of the block, possibly permuted: Slice, Reshape, Transpose
            dense, perm = dp
            if offset == 0 and n == total:
                part = s.value
            else:
                part = self.node("Slice", [self._flat(s, base), self.ints([offset]), self.ints([offset + n])])
            v = self.node("Reshape", [part, self.ints(dense)])
            return v if perm == sorted(perm) else self.node("Transpose", [v], perm=perm)
        flat = self._flat(s, base)
        return self.node("Gather", [flat, self.const(offsets(offset, sizes, strides))], axis=0)

    # --- writing tensors ----------------------------------------------------------------------
    def write(self, t, value: str) -> None:
        """Make `value` (of t's shape and dtype) the content of tensor `t`'s elements."""
        code = t._tn_dtype_code
        sizes, strides = tuple(t._tn_sizes), tuple(t._tn_strides)
        item = np.dtype(npdtype(code)).itemsize
        offset = t.storage_offset()
        base = t.data_ptr() - offset * item
        block = self.blocks[base]
        total = block[0] // item
        n = numel(sizes)
        if n == 0:
            return
        if offset == 0 and n == total and contiguous(sizes, strides):
            self.sym[base] = Sym(value, sizes, code)
        else:
            s = self.sym.get(base)
            if s is not None and s.code != code:
                self.flush("a block written with another dtype")
                s = None
            if s is None:  # the block's current bytes, then the view's elements replaced
                key = (base, 0, (total,), (1,), code)
                cur = self.input_keys.get(key)
                if cur is None:
                    cur = f"m{len(self.inputs)}"
                    self.inputs.append((cur, base, 0, (total,), (1,), code))
                    self.input_keys[key] = cur
                    self.read_bases.add(base)
                s = Sym(cur, (total,), code)
            flat = self._flat(s, base)
            upd = self.node("Reshape", [value, self.ints([-1])])
            if contiguous(sizes, strides):
                idx = self.const(np.arange(offset, offset + n, dtype=np.int64))
            else:
                idx = self.const(offsets(offset, sizes, strides).reshape(-1))
            self.sym[base] = Sym(self.node("ScatterElements", [flat, idx, upd], axis=0), (total,), code)
        self.written[base] = None

    # --- memory events (memory.py) ----------------------------------------------------------
    def before_copy_out(self, base):
        if base in self.sym:
            self.flush("copy to host")

    def before_copy_in(self, base):
        if self.referenced(base):
            self.flush("copy into a block the graph uses")

    def free(self, base, buffer):
        """A block is freed: forget its symbolic value; keep its bytes while the graph reads them."""
        self.sym.pop(base, None)
        self.written.pop(base, None)
        if base in self.read_bases:
            self.deferred.append(buffer)

    def after_kernel(self):
        self.stats.kernels += 1
        if self.eager:
            self.flush("eager mode")
        elif len(self.nodes) > MAX_NODES:
            self.flush("graph size limit")

    # --- running ------------------------------------------------------------------------------
    def key(self, outputs) -> str:
        h = hashlib.sha256()
        h.update(repr([(n, s, st, c) for n, _, _, s, st, c in self.inputs]).encode())
        h.update(repr(self.nodes).encode())
        h.update(repr(outputs).encode())
        for name, a in self.consts:
            h.update(f"{name}{a.dtype}{a.shape}".encode())
            h.update(a.tobytes())
        return h.hexdigest()

    def flush(self, reason="flush"):
        if not self.nodes and not self.written:
            self._clear()
            return
        outs = []  # (base, value, code, shape)
        for base in self.written:
            s = self.sym.get(base)
            if s is not None and base in self.blocks:
                outs.append((base, s.value, s.code, s.shape))
        try:
            self._run(outs)
        finally:
            self.stats.flushes += 1
            self.stats.flush_reasons[reason] = self.stats.flush_reasons.get(reason, 0) + 1
            self._clear()

    def _run(self, outs):
        # Output names must be distinct and not graph inputs: route each through an Identity.
        names, nodes = [], list(self.nodes)
        for i, (_, value, code, shape) in enumerate(outs):
            names.append(f"out{i}")
            nodes.append(("Identity", (value,), (f"out{i}",), (), ""))
        key = self.key([(code, shape) for _, _, code, shape in outs] + [n[1] for n in nodes[len(self.nodes):]])
        sess = self.sessions.pop(key, None)
        if sess is None:
            sess = self._session(nodes, outs, names)
            self.stats.sessions_created += 1
            while len(self.sessions) >= MAX_SESSIONS:  # least recently used first
                del self.sessions[next(iter(self.sessions))]
        else:
            self.stats.session_hits += 1
        self.sessions[key] = sess  # most recently used last
        self.stats.nodes_run += len(self.nodes)
        feeds = {name: memory_array(base, offset, sizes, strides, code)
                 for name, base, offset, sizes, strides, code in self.inputs}
        results = sess.run(names, feeds) if names else []
        for (base, _, code, shape), r in zip(outs, results):
            dst = memory_array(base, 0, shape, None, code, copy=False)
            np.copyto(dst, np.asarray(r).reshape(shape), casting="unsafe")

    def _session(self, nodes, outs, names):
        import onnx
        from onnx import helper

        graph_inputs = [helper.make_tensor_value_info(name, tproto(code), list(sizes))
                        for name, _, _, sizes, _, code in self.inputs]
        graph_outputs = [helper.make_tensor_value_info(n, tproto(code), list(shape))
                         for n, (_, _, code, shape) in zip(names, outs)]
        inits = [onnx.numpy_helper.from_array(a, name) for name, a in self.consts]
        onnx_nodes = [helper.make_node(op, list(i), list(o), domain=d or None, **dict(a))
                      for op, i, o, a, d in nodes]
        g = helper.make_graph(onnx_nodes, "torchnative_npu", graph_inputs, graph_outputs, inits)
        opsets = [helper.make_opsetid("", providers.OPSET), helper.make_opsetid("com.microsoft", 1)]
        model = helper.make_model(g, opset_imports=opsets, ir_version=10)
        ort = providers.ort()
        return ort.InferenceSession(model.SerializeToString(), providers.session_options(),
                                    providers=list(providers.providers()))


def _tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else x


def npdtype(code):
    try:
        return DTYPES[code][0]
    except KeyError:
        raise Unsupported(code) from None


def elem(code) -> str:
    try:
        return DTYPES[code][1]
    except KeyError:
        raise Unsupported(code) from None


def tproto(code) -> int:
    return DTYPES[code][2]


def memory_array(base, offset, sizes, strides, code, copy=True):
    """A numpy array over the block at `base` with the view's geometry (contiguous when
    `strides` is None); `copy`: made contiguous, so ONNX Runtime can take it."""
    import ctypes

    dt = np.dtype(npdtype(code))
    sizes = tuple(sizes)
    if strides is None:
        strides = tuple(int(np.prod(sizes[i + 1:], dtype=np.int64)) for i in range(len(sizes)))
    span = 1 + sum((n - 1) * s for n, s in zip(sizes, strides)) if all(sizes) else 0
    raw = (ctypes.c_char * max((offset + span) * dt.itemsize, 1)).from_address(base)
    flat = np.frombuffer(raw, dtype=dt, count=offset + span)[offset:]
    a = np.lib.stride_tricks.as_strided(flat, sizes, tuple(s * dt.itemsize for s in strides))
    return np.ascontiguousarray(a) if copy else a


def host_array(t, code, sizes, strides):
    """A copy of a host (cpu) tensor's elements: Python numbers beside npu operands arrive as
    0-dim cpu tensors."""
    dt = np.dtype(npdtype(code))
    base = t.data_ptr() - t.storage_offset() * dt.itemsize
    return memory_array(base, t.storage_offset(), sizes, strides, code).copy()


GRAPH = Graph()
