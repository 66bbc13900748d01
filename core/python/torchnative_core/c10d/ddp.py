"""What upstream's DistributedDataParallel (torch/nn/parallel/distributed.py) needs from
torch._C._distributed_c10d: the gradient Reducer with bucketing, bucket assignment, the DDP
Logger, parameter verification and coalesced broadcast, GradBucket and comm-hook registration.

Semantics follow torch/csrc/distributed/c10d/reducer.cpp: each parameter's gradient, once
accumulated, is written (times 1/world) into its bucket's flat buffer; buckets are all-reduced in
order (bucket i only after buckets < i); when every bucket is reduced the averaged values are
copied back into .grad at the end of backward (an autograd final callback). Buckets are rebuilt
once, after the first iteration, in the order gradients became ready. The data moves through the
process group's own collectives; this module only arranges tensors and calls them.
"""

from __future__ import annotations

import enum

from ..surface.placeholders import CClassMeta

DEFAULT_BUCKET_BYTES_CAP = 25 * 1024 * 1024  # kDefaultBucketBytesCap in reducer.hpp
DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024  # kDefaultFirstBucketBytes
_UNPREPARED_MSG = (
    "Expected to have finished reduction in the prior iteration before starting a new one. This error "
    "indicates that your module has parameters that were not used in producing loss. You can enable unused "
    "parameter detection by passing the keyword argument `find_unused_parameters=True` to "
    "`torch.nn.parallel.DistributedDataParallel`, and by \nmaking sure all `forward` function outputs "
    "participate in calculating loss. \nIf you already have done the above, then the distributed data "
    "parallel module wasn't able to locate the output tensors in the return value of your module's "
    "`forward` function. Please include the loss function and the structure of the return value of "
    "`forward` of your module when reporting this issue (e.g. list, dict, iterable).")


def _torch():
    import torch

    return torch


# --- bucket assignment -------------------------------------------------------------------------
def _compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(), tensor_indices=()):
    """Groups tensors (by dtype and device) into buckets that close once they reach the current
    size limit (the limits are used in turn, the last repeating); a tensor expecting a sparse
    gradient gets a bucket of its own. Without tensor_indices the buckets are sorted by the
    smallest index they hold. Returns (bucket index lists, per-bucket size limits)."""
    if not bucket_size_limits:
        raise RuntimeError("Expected at least one bucket size limit")
    expect_sparse_gradient = list(expect_sparse_gradient or ())
    tensor_indices = list(tensor_indices or ())
    if expect_sparse_gradient and not tensor_indices and len(expect_sparse_gradient) != len(tensors):
        raise RuntimeError("Expected the same number of tensors and expect_sparse_gradient entries")
    result = []  # (indices, size_limit)
    open_buckets: dict = {}  # key -> [indices, size, limit]
    limit_pos: dict = {}
    for i, t in enumerate(tensors):
        if t.is_sparse:
            raise RuntimeError("No support for sparse tensors.")
        index = tensor_indices[i] if tensor_indices else i
        if expect_sparse_gradient and expect_sparse_gradient[index]:
            result.append(([index], 0))  # kNoSizeLimit
            continue
        key = (t.dtype, str(t.device))
        bucket = open_buckets.setdefault(key, [[], 0, 0])
        bucket[0].append(index)
        bucket[1] += t.numel() * t.element_size()
        pos = limit_pos.setdefault(key, 0)
        bucket[2] = bucket_size_limits[pos]
        if bucket[1] >= bucket[2]:
            result.append((bucket[0], bucket[2]))
            open_buckets[key] = [[], 0, 0]
            if pos + 1 < len(bucket_size_limits):
                limit_pos[key] = pos + 1
    # the open buckets in libstdc++'s unordered_map order (the key seen last first), as upstream
    for indices, _, limit in reversed(list(open_buckets.values())):
        if indices:
            result.append((indices, limit))
    if not tensor_indices:
        result.sort(key=lambda b: min(b[0]))
    return [b[0] for b in result], [b[1] for b in result]


# --- collectives through the process group -----------------------------------------------------
def _broadcast(process_group, tensor, src):
    from .process_group import BroadcastOptions

    opts = BroadcastOptions()
    opts.rootRank = src
    opts.rootTensor = 0
    process_group.broadcast([tensor], opts).wait()


def _allreduce(process_group, tensor):
    process_group.allreduce([tensor]).wait()


def _allgather(process_group, tensor):
    outs = [_torch().empty_like(tensor) for _ in range(process_group.size())]
    process_group.allgather([outs], [tensor]).wait()
    return outs


def _broadcast_coalesced(process_group, tensors, buffer_size, src=0):
    """Broadcasts `tensors` from `src` in place, packed into flat buffers of at most
    buffer_size bytes per dtype and device (a larger tensor travels alone)."""
    torch = _torch()
    with torch.no_grad():
        for chunk in _take_tensors(list(tensors), buffer_size):
            flat = torch.cat([t.detach().reshape(-1) for t in chunk]) if len(chunk) > 1 else chunk[0].detach().reshape(-1).clone()
            _broadcast(process_group, flat, src)
            if process_group.rank() == src:
                continue
            offset = 0
            for t in chunk:
                n = t.numel()
                t.copy_(flat[offset:offset + n].view(t.shape))
                offset += n


def _take_tensors(tensors, size_limit):
    """torch/csrc/utils/tensor_flatten.cpp take_tensors: consecutive groups per (dtype, device)."""
    groups: dict = {}
    order = []
    for t in tensors:
        key = (t.dtype, str(t.device))
        if key not in groups:
            groups[key] = [[], 0]
        g = groups[key]
        size = t.numel() * t.element_size()
        if g[0] and g[1] + size > size_limit:
            order.append(g[0])
            groups[key] = g = [[], 0]
        g[0].append(t)
        g[1] += size
    order.extend(g[0] for g in groups.values() if g[0])
    return order


def _verify_params_across_processes(process_group, params, logger=None):
    """Every rank must hold the same number of parameters with the same sizes and strides."""
    torch = _torch()
    meta = []
    for p in params:
        meta.append(p.dim())
        meta.extend(p.shape)
        meta.extend(p.stride())
    local = torch.tensor([len(params)], dtype=torch.int64)
    counts = _allgather(process_group, local)
    rank = process_group.rank()
    for r, c in enumerate(counts):
        if int(c.item()) != len(params):
            _fail(logger, f"DDP expects same model across all ranks, but Rank {rank} has {len(params)} params, "
                          f"while rank {r} has inconsistent {int(c.item())} params.")
    length = torch.tensor([len(meta)], dtype=torch.int64)
    lengths = [int(x.item()) for x in _allgather(process_group, length)]
    if len(set(lengths)) != 1:
        _fail(logger, f"DDP expects same model across all ranks, but Rank {rank}'s parameter sizes differ "
                      f"from another rank's (metadata lengths {lengths}).")
    everyone = _allgather(process_group, torch.tensor(meta, dtype=torch.int64))
    mine = everyone[rank].tolist()
    for r, other in enumerate(everyone):
        other = other.tolist()
        if other == mine:
            continue
        pos = 0
        for i, p in enumerate(params):
            d = p.dim()
            shape, stride = mine[pos + 1:pos + 1 + d], mine[pos + 1 + d:pos + 1 + 2 * d]
            oshape, ostride = other[pos + 1:pos + 1 + d], other[pos + 1 + d:pos + 1 + 2 * d]
            if other[pos] != d or oshape != shape:
                _fail(logger, f"[{rank}]: params[{i}] in this process with sizes {shape} appears not to match "
                              f"sizes of the same param in process {r}.")
            if ostride != stride:
                _fail(logger, f"[{rank}]: params[{i}] in this process with sizes {shape} appears not to match "
                              f"strides of the same param in process {r}.")
            pos += 1 + 2 * d


def _fail(logger, msg):
    if logger is not None:
        logger.set_error_and_log(msg)
    raise RuntimeError(msg)


# --- comm hooks --------------------------------------------------------------------------------
class BuiltinCommHookType(enum.Enum):
    ALLREDUCE = 0
    FP16_COMPRESS = 1


class GradBucket(metaclass=CClassMeta):
    """One bucket as a comm hook sees it: its flat buffer, the gradients' views into it and the
    parameters they belong to."""

    def __init__(self, index, buffer, gradients, parameters, is_last, lengths, sizes):
        self._index, self._buffer, self._gradients = index, buffer, gradients
        self._parameters, self._is_last = parameters, is_last
        self._lengths, self._sizes = lengths, sizes

    def index(self):
        return self._index

    def buffer(self):
        return self._buffer

    def gradients(self):
        return list(self._gradients)

    def parameters(self):
        return list(self._parameters)

    def is_last(self):
        return self._is_last

    def set_buffer(self, tensor):
        self._buffer = tensor

    def get_per_parameter_tensors(self):
        return self.gradients()


def _register_comm_hook(reducer, state, comm_hook):
    reducer._set_comm_hook(lambda bucket: comm_hook(state, bucket), getattr(comm_hook, "__qualname__", "python hook"))


def _register_builtin_comm_hook(reducer, comm_hook_type):
    if comm_hook_type == BuiltinCommHookType.ALLREDUCE:
        reducer._set_comm_hook(reducer._allreduce_hook, "builtin_allreduce")
    elif comm_hook_type == BuiltinCommHookType.FP16_COMPRESS:
        reducer._set_comm_hook(reducer._fp16_compress_hook, "builtin_fp16_compress")
    else:
        raise RuntimeError(f"Unknown builtin comm hook type {comm_hook_type}")


# --- the Reducer -------------------------------------------------------------------------------
class _Bucket:
    def __init__(self, index, variables, buffer, offsets, lengths, views, size_limit):
        self.index = index
        self.variables = variables  # parameter indices, in bucket order
        self.buffer = buffer  # flat tensor of the bucket's dtype
        self.offsets, self.lengths = offsets, lengths
        self.views = views  # per variable, the param-shaped view into buffer
        self.size_limit = size_limit
        self.pending = len(variables)
        self.result = None  # the reduced buffer once the comm hook's future is done


class Reducer(metaclass=CClassMeta):
    def __init__(self, params, bucket_indices, per_bucket_size_limits, process_group, expect_sparse_gradients=(),
                 bucket_bytes_cap=DEFAULT_BUCKET_BYTES_CAP, find_unused_parameters=False, gradient_as_bucket_view=False,
                 param_to_name_mapping=None, first_bucket_bytes_cap=DEFAULT_FIRST_BUCKET_BYTES,
                 skip_all_reduce_unused_params=False, use_python_reducer=False, bucket_bytes_cap_list=(),
                 batched_grad_copy=False):
        torch = _torch()
        self._params = list(params)
        self._process_group = process_group
        self._expect_sparse = list(expect_sparse_gradients or [False] * len(self._params))
        if any(self._expect_sparse):
            raise NotImplementedError("DistributedDataParallel with sparse gradients is not supported by torchnative's Reducer")
        self._bucket_bytes_cap = bucket_bytes_cap
        self._first_bucket_bytes_cap = first_bucket_bytes_cap
        self._bucket_bytes_cap_list = list(bucket_bytes_cap_list or ())
        self._find_unused = bool(find_unused_parameters)
        self._grad_as_bucket_view = bool(gradient_as_bucket_view)
        self._param_names = dict(param_to_name_mapping or {})
        self._skip_unused_allreduce = bool(skip_all_reduce_unused_params)
        self._static_graph = False
        self._comm_hook = None
        self._comm_hook_name = ""
        self._logger = None
        self._expect_hooks = False
        self._require_finalize = False
        self._has_rebuilt = False
        self._rebuilt_params: list[int] = []
        self._num_iterations = 0
        self._num_bwd_calls = 0
        self._unused: list[int] = []
        self._marked_unused = False
        self._ready_this_iteration: set = set()
        self._hooks_fired: dict = {}  # static graph, first iteration: who produced a gradient, in order
        self._finalize_now = False
        self._local_used = torch.zeros(len(self._params), dtype=torch.int32)
        self._div_factor = process_group.size()
        self._hook_handles = []
        self._initialize_buckets(bucket_indices, per_bucket_size_limits)
        for i, p in enumerate(self._params):
            if p.requires_grad:
                self._hook_handles.append(p.register_post_accumulate_grad_hook(self._make_hook(i)))

    # --- buckets ---
    def _initialize_buckets(self, bucket_indices, size_limits):
        torch = _torch()
        self._buckets = []
        self._locator = {}
        for b, indices in enumerate(bucket_indices):
            indices = list(indices)
            if not indices:
                raise RuntimeError("Empty bucket specified.")
            first = self._params[indices[0]]
            for i in indices:
                p = self._params[i]
                if p.dtype != first.dtype or p.device != first.device:
                    raise RuntimeError("All parameters in a bucket must have the same dtype and device.")
            lengths = [self._params[i].numel() for i in indices]
            offsets = [sum(lengths[:k]) for k in range(len(lengths))]
            buffer = torch.zeros(sum(lengths), dtype=first.dtype, device=first.device)
            views = [self._view(buffer, self._params[i], off) for i, off in zip(indices, offsets)]
            limit = size_limits[b] if b < len(size_limits) else self._bucket_bytes_cap
            self._buckets.append(_Bucket(b, indices, buffer, offsets, lengths, views, limit))
            for k, i in enumerate(indices):
                self._locator[i] = (b, k)
        if self._grad_as_bucket_view:
            with torch.no_grad():
                for bucket in self._buckets:
                    for i, view in zip(bucket.variables, bucket.views):
                        p = self._params[i]
                        if p.grad is not None and not self._aliases(p.grad, view):
                            view.copy_(p.grad)
                            p.grad = view
        self._next_bucket = 0
        self._buckets_ready = 0

    @staticmethod
    def _view(buffer, param, offset):
        n = param.numel()
        if param.is_contiguous():
            return buffer[offset:offset + n].view(param.shape)
        # a dense param keeps its layout in the bucket, as upstream's bucket views do
        return buffer.as_strided(param.shape, param.stride(), offset)

    @staticmethod
    def _aliases(a, b):
        return (a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
                and a.storage_offset() == b.storage_offset() and a.shape == b.shape)

    def _reset_bucket_counting(self):
        self._next_bucket = 0
        self._buckets_ready = 0
        for bucket in self._buckets:
            bucket.pending = len(bucket.variables)
            bucket.result = None

    # --- the iteration ---
    def prepare_for_forward(self):
        self._num_iterations += 1

    def _static_first_iteration(self):
        return self._static_graph and self._num_bwd_calls == 0

    def _tracks_unused(self):
        return self._find_unused or self._static_graph

    def prepare_for_backward(self, outputs=()):
        self._expect_hooks = True
        self._reset_bucket_counting()
        self._marked_unused = False
        self._ready_this_iteration = set()
        if self._find_unused and not self._static_graph:
            self._unused = self._search_unused(list(outputs))

    def _search_unused(self, outputs):
        """Parameters whose AccumulateGrad node the outputs' graph does not reach."""
        seen, todo = set(), [t.grad_fn for t in outputs if getattr(t, "grad_fn", None) is not None]
        reached = set()
        while todo:
            fn = todo.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            var = getattr(fn, "variable", None)
            if var is not None:
                reached.add(id(var))
            todo.extend(nxt for nxt, _ in fn.next_functions)
        return [i for i, p in enumerate(self._params) if p.requires_grad and id(p) not in reached]

    def _make_hook(self, index):
        def hook(param):
            self._autograd_hook(index)
        return hook

    def _autograd_hook(self, index):
        if not self._expect_hooks:
            return  # no_sync() or a backward DDP did not prepare: gradients stay local
        self._require_finalize = True
        self._local_used[index] = 1
        if self._static_first_iteration():
            # the first iteration of a static graph learns which parameters get gradients;
            # _delay_all_reduce (queued by DDP's _DDPSink) reduces everything at its end
            self._hooks_fired[index] = True
            return
        if self._tracks_unused() and not self._marked_unused:
            self._marked_unused = True
            for i in self._unused:
                self._mark_ready(i, used=False)
        self._mark_ready(index, used=True)

    def _mark_ready(self, index, used):
        torch = _torch()
        if index in self._ready_this_iteration:
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of the following "
                f"reasons: 1) Use of a module parameter outside the `forward` function. 2) Reused parameters in "
                f"multiple reentrant backward passes. Parameter at index {index}"
                + (f" with name {self._param_names[index]}" if index in self._param_names else "")
                + " has been marked as ready twice.")
        self._ready_this_iteration.add(index)
        if not self._has_rebuilt and (self._static_graph or not self._find_unused):
            self._rebuilt_params.append(index)  # the ready order the buckets are rebuilt in
        b, k = self._locator[index]
        bucket = self._buckets[b]
        view = bucket.views[k]
        p = self._params[index]
        with torch.no_grad():
            grad = p.grad
            if grad is None or not used:
                view.zero_()
            elif self._aliases(grad, view):
                if self._comm_hook is None:
                    view.div_(self._div_factor)
            else:
                if self._comm_hook is None:
                    torch.mul(grad.detach(), 1.0 / self._div_factor, out=view)
                else:
                    view.copy_(grad.detach())
                if self._grad_as_bucket_view:
                    p.grad = view
        bucket.pending -= 1
        if bucket.pending == 0:
            self._mark_bucket_ready(b)
        if self._buckets_ready == len(self._buckets):
            self._all_buckets_ready()

    def _mark_bucket_ready(self, b):
        # buckets are reduced in order: a ready bucket waits for the ones before it
        if b > self._next_bucket:
            return
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._buckets_ready += 1
            self._run_bucket(self._buckets[self._next_bucket])
            self._next_bucket += 1

    def _grad_bucket(self, bucket):
        return GradBucket(bucket.index, bucket.buffer, bucket.views, [self._params[i] for i in bucket.variables],
                          bucket.index == len(self._buckets) - 1, bucket.lengths, [self._params[i].shape for i in bucket.variables])

    def _run_bucket(self, bucket):
        if self._comm_hook is None:
            _allreduce(self._process_group, bucket.buffer)
            bucket.result = bucket.buffer
            return
        fut = self._comm_hook(self._grad_bucket(bucket))
        value = fut.wait()
        if isinstance(value, (list, tuple)):
            if len(value) != 1:
                raise RuntimeError("The comm hook's future must hold one tensor (the bucket's reduced buffer)")
            value = value[0]
        bucket.result = value

    def _all_buckets_ready(self):
        torch = _torch()
        if self._tracks_unused():
            # a parameter unused on every rank keeps its .grad untouched
            self._global_used = self._local_used.clone()
            _allreduce(self._process_group, self._global_used)
        if self._finalize_now:
            self._finalize_backward()
            return
        try:
            torch.autograd.Variable._execution_engine.queue_callback(self._finalize_backward)
        except RuntimeError:  # not inside a backward pass (a direct call): finish now
            self._finalize_backward()

    def _finalize_backward(self):
        torch = _torch()
        self._expect_hooks = False
        self._require_finalize = False
        self._num_bwd_calls += 1
        with torch.no_grad():
            for bucket in self._buckets:
                result = bucket.result
                if result is not bucket.buffer:
                    bucket.buffer.copy_(result.reshape(-1))
                for i, view in zip(bucket.variables, bucket.views):
                    p = self._params[i]
                    if self._tracks_unused() and int(self._global_used[i].item()) == 0:
                        continue
                    if p.grad is None:
                        p.grad = view if self._grad_as_bucket_view else view.clone()
                    elif not self._aliases(p.grad, view):
                        p.grad.copy_(view)
        if self._tracks_unused():
            self._local_used.zero_()

    # --- bucket rebuilding ---
    def _rebuild_buckets(self):
        self._ensure_prior_reduction_finished()
        if self._has_rebuilt or not (self._static_graph or not self._find_unused) or not self._rebuilt_params:
            return False
        torch = _torch()
        limits = self._bucket_bytes_cap_list or [self._first_bucket_bytes_cap, self._bucket_bytes_cap]
        order = list(self._rebuilt_params)
        indices, sizes = _compute_bucket_assignment_by_size([self._params[i] for i in order], limits,
                                                            self._expect_sparse, order)
        # every rank takes rank 0's assignment (ready orders may differ between ranks)
        flat = [len(indices)] + [len(b) for b in indices] + [i for b in indices for i in b] + list(sizes)
        n = torch.tensor([len(flat)], dtype=torch.int64)
        _broadcast(self._process_group, n, 0)
        buf = torch.tensor(flat + [0] * max(int(n.item()) - len(flat), 0), dtype=torch.int64)[:int(n.item())]
        _broadcast(self._process_group, buf, 0)
        flat = buf.tolist()
        nb = flat[0]
        lens = flat[1:1 + nb]
        pos = 1 + nb
        indices = []
        for ln in lens:
            indices.append(flat[pos:pos + ln])
            pos += ln
        sizes = flat[pos:pos + nb]
        self._rebuilt_params = []
        self._has_rebuilt = True
        self._initialize_buckets(indices, sizes)
        return True

    def _ensure_prior_reduction_finished(self):
        if not self._require_finalize:
            return
        missing = [i for i, p in enumerate(self._params) if p.requires_grad and i not in self._ready_this_iteration]
        names = [self._param_names[i] for i in missing if i in self._param_names]
        detail = f"\nParameter indices which did not receive grad for rank {self._process_group.rank()}: {' '.join(map(str, missing))}"
        if names:
            detail += f"\nParameters which did not receive grad for rank {self._process_group.rank()}: {', '.join(names)}"
        msg = _UNPREPARED_MSG + detail
        if self._logger is not None:
            self._logger.set_error_and_log(msg)
        raise RuntimeError(msg)

    def _check_reducer_finalized(self):
        if self._require_finalize:
            raise RuntimeError("Expected to have finished reduction in the prior iteration before starting a new one.")

    def _push_all_rebuilt_params(self):
        self._rebuilt_params = list(range(len(self._params)))

    def _get_zeros_like_grad_buckets(self):
        torch = _torch()
        return [GradBucket(b.index, torch.zeros_like(b.buffer), [torch.zeros_like(v) for v in b.views],
                           [self._params[i] for i in b.variables], b.index == len(self._buckets) - 1,
                           b.lengths, [self._params[i].shape for i in b.variables]) for b in self._buckets]

    # --- comm hooks ---
    def _set_comm_hook(self, hook, name):
        if self._comm_hook is not None:
            raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
        self._comm_hook = hook
        self._comm_hook_name = name
        if self._logger is not None:
            self._logger._set_comm_hook_name(name)

    def _allreduce_hook(self, bucket):
        from .future import completed

        buf = bucket.buffer()
        buf.div_(self._div_factor)
        _allreduce(self._process_group, buf)
        return completed(buf)

    def _fp16_compress_hook(self, bucket):
        from .future import completed

        torch = _torch()
        buf = bucket.buffer()
        half = buf.to(torch.float16).div_(self._div_factor)
        _allreduce(self._process_group, half)
        buf.copy_(half)
        return completed(buf)

    def _run_comm_hook(self, bucket):
        if self._comm_hook is None:
            return self._allreduce_hook(bucket)
        return self._comm_hook(bucket)

    # --- the rest of the binding ---
    def set_logger(self, logger):
        self._logger = logger

    def get_backward_stats(self):
        return [0] * len(self._params)

    def _set_static_graph(self):
        self._static_graph = True

    def _set_ddp_runtime_logging_sample_rate(self, sample_rate):
        self._sample_rate = sample_rate

    def _get_local_used_map(self):
        return self._local_used

    def _remove_autograd_hooks(self):
        for h in self._hook_handles:
            h.remove()
        self._hook_handles = []

    def _reset_state(self):
        self._expect_hooks = False
        self._require_finalize = False
        self._reset_bucket_counting()

    def _update_process_group(self, new_process_group):
        self._process_group = new_process_group
        self._div_factor = new_process_group.size()

    def _set_forward_pass_work_handle(self, work, use_static_world_size):
        work.wait()

    def _install_post_backward_futures(self, futures):
        for b, fut in zip(self._buckets, futures):
            value = fut.wait()
            b.result = value[0] if isinstance(value, (list, tuple)) else value

    def _set_sparse_metadata(self, global_unique_ids):
        raise NotImplementedError("Reducer._set_sparse_metadata: sparse gradients are not supported by torchnative's Reducer")

    def _set_mixed_precision_param_dtype(self, dtype):
        raise NotImplementedError("DistributedDataParallel(mixed_precision=...) is not supported by torchnative's Reducer")

    def _set_optimizer_in_backward(self):
        self._optimizer_in_backward = True

    def _delay_all_reduce(self):
        """End of a static graph's first backward: every parameter is marked ready (the ones no
        hook reported as unused, for this and later iterations) and the buckets reduced now."""
        self._unused = [i for i, p in enumerate(self._params) if p.requires_grad and i not in self._hooks_fired]
        self._marked_unused = True
        self._finalize_now = True
        try:
            for i in list(self._hooks_fired) + self._unused:
                if i not in self._ready_this_iteration:
                    self._mark_ready(i, used=i in self._hooks_fired)
        finally:
            self._finalize_now = False

    # what the Logger reads
    def _bucket_sizes(self):
        return [b.buffer.numel() * b.buffer.element_size() for b in self._buckets]


def _c10_type_name(dtype):
    """caffe2::TypeMeta's name, as upstream's logging data spells dtypes."""
    name = str(dtype).replace("torch.", "")
    return {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
            "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
            "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
            "complex128": "c10::complex<double>"}.get(name, name)


# --- the DDP Logger ----------------------------------------------------------------------------
class DDPLoggingData(metaclass=CClassMeta):
    def __init__(self):
        self.strs_map: dict = {}
        self.ints_map: dict = {}


class Logger(metaclass=CClassMeta):
    """c10d::Logger: DDP's construction and runtime facts, read back by
    DistributedDataParallel._get_ddp_logging_data()."""

    def __init__(self, reducer):
        self._reducer = reducer
        self._data = DDPLoggingData()

    def set_construction_data_and_log(self, module_name, device_ids, output_device, broadcast_buffers,
                                      has_sync_bn, static_graph):
        r = self._reducer
        pg = r._process_group
        params = r._params
        s, i = self._data.strs_map, self._data.ints_map
        s["module_name"] = module_name
        s["device_ids"] = ", ".join(map(str, device_ids))
        s["dtypes"] = ", ".join(sorted({_c10_type_name(p.dtype) for p in params}))
        s["backend_name"] = pg.name() if hasattr(pg, "name") else ""
        s["bucket_sizes"] = ", ".join(map(str, r._bucket_sizes()))
        s["comm_hook"] = r._comm_hook_name
        i.update(world_size=pg.size(), rank=pg.rank(), output_device=output_device,
                 broadcast_buffers=int(bool(broadcast_buffers)), has_sync_bn=int(bool(has_sync_bn)),
                 static_graph=int(bool(static_graph)), bucket_cap_bytes=r._bucket_bytes_cap,
                 find_unused_parameters=int(r._find_unused), gradient_as_bucket_view=int(r._grad_as_bucket_view),
                 num_parameter_tensors=len(params),
                 total_parameter_size_bytes=sum(p.numel() * p.element_size() for p in params),
                 is_multi_device_module=int(len({str(p.device) for p in params}) > 1),
                 join_uneven_inputs=0, has_rebuilt_buckets=0)

    def set_runtime_stats_and_log(self):
        r = self._reducer
        self._data.ints_map["iteration"] = r._num_iterations
        self._data.ints_map["has_rebuilt_buckets"] = int(r._has_rebuilt)
        if r._has_rebuilt:
            self._data.strs_map["rebuilt_bucket_sizes"] = ", ".join(map(str, r._bucket_sizes()))

    def set_error_and_log(self, error):
        self._data.strs_map["error"] = str(error)
        self._data.ints_map["has_error"] = 1

    def _get_ddp_logging_data(self):
        return self._data

    def _set_comm_hook_name(self, comm_hook):
        self._data.strs_map["comm_hook"] = comm_hook

    def _set_uneven_input_join(self):
        self._data.ints_map["join_uneven_inputs"] = 1

    def _set_static_graph(self):
        self._data.ints_map["static_graph"] = 1


for _cls in (Reducer, Logger, DDPLoggingData, GradBucket, BuiltinCommHookType):
    _cls.__module__ = "torch._C._distributed_c10d"

EXPORTS = {
    "Reducer": Reducer, "Logger": Logger, "DDPLoggingData": DDPLoggingData, "GradBucket": GradBucket,
    "BuiltinCommHookType": BuiltinCommHookType, "_DEFAULT_FIRST_BUCKET_BYTES": DEFAULT_FIRST_BUCKET_BYTES,
    "_compute_bucket_assignment_by_size": _compute_bucket_assignment_by_size,
    "_broadcast_coalesced": _broadcast_coalesced, "_verify_params_across_processes": _verify_params_across_processes,
    "_register_comm_hook": _register_comm_hook, "_register_builtin_comm_hook": _register_builtin_comm_hook,
}
