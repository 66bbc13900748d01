"""The base of torch.fx's Node and its list iterator (`torch._C._NodeBase`, `_NodeIter`,
`_fx_map_aggregate`, `_fx_map_arg`). Upstream writes these in C++ (torch/csrc/fx/node.cpp) for
speed; the semantics are those, in Python: a graph is a circular doubly linked list of nodes
around a root, each node ordered by a sort key of integers so that `a < b` is list order without
a walk, and every edit of a node's arguments keeps `_input_nodes` and the inputs' `users` in step.
"""

from __future__ import annotations


def _immutable():
    from torch.fx.immutable_collections import immutable_dict, immutable_list

    return immutable_list, immutable_dict


def _is_node(x) -> bool:
    from torch.fx.node import Node

    return isinstance(x, Node)


def _map_aggregate(a, fn):
    """Rebuilds tuples (named tuples by their type), lists as immutable_list, dicts as
    immutable_dict and slices, applying `fn` to every other leaf."""
    if isinstance(a, tuple):
        if not a and type(a) is tuple:
            return a
        items = tuple(_map_aggregate(x, fn) for x in a)
        if type(a) is not tuple and hasattr(a, "_fields"):
            return type(a)(*items)
        return items
    if isinstance(a, list):
        ilist, _ = _immutable()
        if not a and type(a) is ilist:
            return a
        return ilist(_map_aggregate(x, fn) for x in a)
    if isinstance(a, dict):
        _, idict = _immutable()
        if not a and type(a) is idict:
            return a
        out = idict()
        for k, v in a.items():
            dict.__setitem__(out, k, _map_aggregate(v, fn))
        return out
    if isinstance(a, slice):
        return slice(_map_aggregate(a.start, fn), _map_aggregate(a.stop, fn), _map_aggregate(a.step, fn))
    return fn(a)


def _fx_map_aggregate(a, fn):
    return _map_aggregate(a, fn)


def _fx_map_arg(a, fn):
    return _map_aggregate(a, lambda x: fn(x) if _is_node(x) else x)


class _NodeBase:
    def __init__(self, graph, name, op, target, return_type=None):
        self._erased = False
        self._prev = self
        self._next = self
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = return_type
        self._input_nodes = {}
        self._args = ()
        self._kwargs = {}
        self.users = {}
        self._repr_fn = None
        self.meta = {}
        self._sort_key = ()

    def _update_args_kwargs(self, new_args, new_kwargs):
        for old in self._input_nodes:
            old.users.pop(self, None)
        self._input_nodes.clear()

        def visit(x):
            if _is_node(x):
                self._input_nodes.setdefault(x)
                x.users.setdefault(self)
            return x

        # both are built before either is replaced: new_args may be self._args itself
        args = _map_aggregate(new_args, visit)
        kwargs = _map_aggregate(new_kwargs, visit)
        self._args, self._kwargs = args, kwargs

    def _replace_input_with(self, old_input, new_input):
        def swap(x):
            return new_input if x is old_input else x

        self._update_args_kwargs(_map_aggregate(self._args, swap), _map_aggregate(self._kwargs, swap))

    def _remove_from_list(self):
        p, n = self._prev, self._next
        if p is self and n is self:
            return
        p._next, n._prev = n, p

    def _prepend(self, x):
        """Moves `x` just before this node and gives it a sort key between its new neighbours'."""
        if x is self:
            return
        if not _is_node(x):
            raise TypeError("_prepend() argument must be a Node")
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x
        psk, nsk = x._prev._sort_key, x._next._sort_key
        if len(psk) > len(nsk):
            key = list(psk[: len(nsk) + 1])
            key[-1] += 1
        elif len(psk) < len(nsk):
            key = list(nsk[: len(psk) + 1])
            key[-1] -= 1
        else:
            key = [*psk, 0]
        x._sort_key = tuple(key)

    def __lt__(self, other):
        return self._sort_key < other._sort_key if _is_node(other) else NotImplemented

    def __gt__(self, other):
        return self._sort_key > other._sort_key if _is_node(other) else NotImplemented

    def __le__(self, other):
        return True if self is other else self.__lt__(other)

    def __ge__(self, other):
        return True if self is other else self.__gt__(other)

    # Nodes are dict keys by identity (users, _input_nodes), as upstream's C++ objects are.
    __hash__ = object.__hash__
    __eq__ = object.__eq__


class _NodeIter:
    """Iterates a graph's nodes from `root` forward (or backward), skipping erased ones; edits
    made while iterating are seen, as the list is walked live."""

    def __init__(self, root, reversed=False):
        self._root = root
        self._cur = root
        self._reversed = bool(reversed)

    def __iter__(self):
        return self

    def __next__(self):
        step = "_prev" if self._reversed else "_next"
        cur = getattr(self._cur, step)
        while cur is not self._root:
            if not cur._erased:
                self._cur = cur
                return cur
            cur = getattr(cur, step)
        self._cur = cur
        raise StopIteration


def install(C) -> None:
    for obj in (_NodeBase, _NodeIter, _fx_map_aggregate, _fx_map_arg):
        obj.__module__ = "torch._C"
        setattr(C, obj.__name__, obj)
