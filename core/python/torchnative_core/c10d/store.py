"""c10d's key-value stores: Store (subclassable from Python), TCPStore, FileStore, HashStore,
PrefixStore — the rendezvous and bootstrap channel of torch.distributed.

Written in Python on purpose: a store is the control plane (a few small messages per process
group, barrier or rendezvous round), never the path tensors travel; the collectives' transport
is the native part. The semantics follow upstream's C++ (torch/csrc/distributed/c10d/*Store*):
`get` and `multi_get` wait for their keys up to the store's timeout, `add` keeps a decimal
string, `compare_set` answers the value now held, a timeout raises DistStoreError and a
connection failure DistNetworkError. The TCPStore wire protocol is torchnative's own (upstream's
is private to its C++ too); a TCPStore talks to a torchnative TCPStore server.
"""

from __future__ import annotations

import atexit
import datetime
import errno
import fcntl
import ipaddress
import os
import socket
import struct
import threading
import time
import weakref

from ..surface.placeholders import CClassMeta
from .errors import _DistNetworkError, _DistQueueEmptyError, _DistStoreError

DEFAULT_TIMEOUT = datetime.timedelta(seconds=300)  # c10d::Store::kDefaultTimeout
NO_TIMEOUT = datetime.timedelta(0)  # kNoTimeout: wait forever


def _as_bytes(value, what="value") -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, list) and all(isinstance(v, int) for v in value):
        return bytes(value)  # pybind's std::vector<uint8_t> from a list of ints
    raise TypeError(f"incompatible function arguments: {what} must be str or bytes, got {type(value).__name__}")


def _as_key(key) -> str:
    if not isinstance(key, str):
        raise TypeError(f"incompatible function arguments: key must be str, got {type(key).__name__}")
    return key


def _seconds(timeout: datetime.timedelta):
    """None for 'no timeout' (timedelta(0), upstream's kNoTimeout)."""
    if not isinstance(timeout, datetime.timedelta):
        raise TypeError(f"incompatible function arguments: timeout must be a datetime.timedelta, got {type(timeout).__name__}")
    s = timeout.total_seconds()
    return None if s <= 0 else s


def _wait_timeout_error(keys, timeout_s) -> _DistStoreError:
    ms = int(round((timeout_s or 0) * 1000))
    return _DistStoreError(f"wait timeout after {ms}ms, keys: {', '.join(keys)}")


def _as_int(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"add(): incompatible function arguments: value must be an int, got {type(value).__name__}")
    return value


def _add_value(current: bytes | None, amount: int, key: str) -> int:
    if current is None or current == b"":
        return amount
    try:
        return int(current.decode()) + amount
    except ValueError:
        raise _DistStoreError(f"add: the value of key {key!r} is not an integer: {current!r}") from None


class Store(metaclass=CClassMeta):
    """c10d::Store. Python subclasses override set/get/add/compare_set/wait/...; the extended
    calls (append, multi_get, multi_set) fall back to the basic ones, as upstream's do."""

    def __init__(self):
        self._timeout = DEFAULT_TIMEOUT

    # timeout is per store; subclasses that skip __init__ see the default
    @property
    def timeout(self) -> datetime.timedelta:
        return getattr(self, "_timeout", DEFAULT_TIMEOUT)

    def set_timeout(self, timeout: datetime.timedelta) -> None:
        _seconds(timeout)
        self._timeout = timeout

    def _pure(self, name):
        raise RuntimeError(f'Tried to call pure virtual function "c10d::Store::{name}"')

    def set(self, key, value):
        self._pure("set")

    def get(self, key):
        self._pure("get")

    def add(self, key, value):
        self._pure("add")

    def compare_set(self, key, expected_value, desired_value):
        self._pure("compareSet")

    def delete_key(self, key):
        self._pure("deleteKey")

    def check(self, keys):
        self._pure("check")

    def num_keys(self):
        self._pure("getNumKeys")

    def wait(self, keys, timeout=None):
        self._pure("wait")

    def append(self, key, value):
        # Store::append's default: not atomic, as upstream's
        value = _as_bytes(value)
        current = self.get(key) if self.check([key]) else b""
        self.set(key, bytes(current) + value)

    def multi_get(self, keys):
        return [self.get(k) for k in keys]

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        for k, v in zip(keys, values):
            self.set(k, v)

    def has_extended_api(self) -> bool:
        return False

    def queue_push(self, key, value):
        raise RuntimeError(f"queue support is not implemented for {type(self).__name__}")

    def queue_pop(self, key, block=True):
        raise RuntimeError(f"queue support is not implemented for {type(self).__name__}")

    def queue_len(self, key):
        raise RuntimeError(f"queue support is not implemented for {type(self).__name__}")

    def list_keys(self):
        raise RuntimeError(f"list_keys is not implemented for {type(self).__name__}")

    def clone(self):
        raise RuntimeError('Tried to call pure virtual function "::c10d::Store::clone"')

    def barrier(self, key, world_size, timeout=None):
        """Store::barrier: blocks until world_size callers reached `key` (a counter, then the
        last one's flag)."""
        key = _as_key(key)
        arrived = self.add(f"{key}/num_members", 1)
        if arrived >= world_size:
            self.set(f"{key}/last_member", "1")
        try:
            if timeout is None:
                self.wait([f"{key}/last_member"])
            else:
                self.wait([f"{key}/last_member"], timeout)
        except _DistStoreError:
            raise _DistStoreError("Wait timeout") from None

    def _timeout_s(self, timeout=None):
        return _seconds(self.timeout if timeout is None else timeout)


class _KeyValueTable:
    """The state of one store: keys -> bytes and queues, with a condition for waiters. Shared
    by HashStore and the TCPStore server."""

    def __init__(self):
        self.data: dict[str, bytes] = {}
        self.queues: dict[str, list[bytes]] = {}
        self.cond = threading.Condition()

    def _notify(self):
        self.cond.notify_all()

    def set(self, key, value):
        with self.cond:
            self.data[key] = value
            self._notify()

    def add(self, key, amount):
        with self.cond:
            new = _add_value(self.data.get(key), amount, key)
            self.data[key] = str(new).encode()
            self._notify()
            return new

    def compare_set(self, key, expected, desired):
        with self.cond:
            current = self.data.get(key)
            if current is None:
                if expected == b"":
                    self.data[key] = desired
                    self._notify()
                    return desired
                return expected
            if current == expected:
                self.data[key] = desired
                self._notify()
                return desired
            return current

    def append(self, key, value):
        with self.cond:
            self.data[key] = self.data.get(key, b"") + value
            self._notify()

    def delete(self, key):
        with self.cond:
            return self.data.pop(key, None) is not None

    def check(self, keys):
        with self.cond:
            return all(k in self.data for k in keys)

    def num_keys(self):
        with self.cond:
            return len(self.data)

    def wait(self, keys, timeout_s) -> bool:
        """True once every key is set; False at the timeout (None: no timeout)."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self.cond:
            while not all(k in self.data for k in keys):
                if deadline is None:
                    self.cond.wait()
                else:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self.cond.wait(left)
            return True

    def multi_get(self, keys):
        with self.cond:
            return [self.data[k] for k in keys]

    def multi_set(self, keys, values):
        with self.cond:
            for k, v in zip(keys, values):
                self.data[k] = v
            self._notify()

    def queue_push(self, key, value):
        with self.cond:
            self.queues.setdefault(key, []).append(value)
            self._notify()

    def queue_pop(self, key, block, timeout_s):
        """The first value; None at the timeout; raises KeyError when empty and not blocking."""
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self.cond:
            while not self.queues.get(key):
                if not block:
                    raise KeyError(key)
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self.cond.wait(left)
            return self.queues[key].pop(0)

    def queue_len(self, key):
        with self.cond:
            return len(self.queues.get(key, ()))

    def barrier(self, key, world_size, timeout_s) -> bool:
        """Counts this caller in at `key`; True once world_size have arrived, False at the timeout."""
        self.add(key, 1)
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self.cond:
            while int(self.data[key].decode()) < world_size:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                self.cond.wait(left)
            return True

    def list_keys(self):
        with self.cond:
            return list(self.data)


class HashStore(Store):
    """c10d::HashStore: a store inside one process (threads share it)."""

    def __init__(self):
        super().__init__()
        self._table = _KeyValueTable()

    def set(self, key, value):
        self._table.set(_as_key(key), _as_bytes(value))

    def get(self, key):
        key = _as_key(key)
        self.wait([key])
        return self._table.multi_get([key])[0]

    def add(self, key, value):
        return self._table.add(_as_key(key), _as_int(value))

    def compare_set(self, key, expected_value, desired_value):
        return self._table.compare_set(_as_key(key), _as_bytes(expected_value, "expected_value"),
                                       _as_bytes(desired_value, "desired_value"))

    def append(self, key, value):
        self._table.append(_as_key(key), _as_bytes(value))

    def delete_key(self, key):
        return self._table.delete(_as_key(key))

    def check(self, keys):
        return self._table.check([_as_key(k) for k in keys])

    def num_keys(self):
        return self._table.num_keys()

    def wait(self, keys, timeout=None):
        keys = [_as_key(k) for k in keys]
        t = self._timeout_s(timeout)
        if not self._table.wait(keys, t):
            raise _wait_timeout_error(keys, t)

    def multi_get(self, keys):
        keys = [_as_key(k) for k in keys]
        self.wait(keys)
        return self._table.multi_get(keys)

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        self._table.multi_set([_as_key(k) for k in keys], [_as_bytes(v) for v in values])

    def has_extended_api(self):
        return True

    def queue_push(self, key, value):
        self._table.queue_push(_as_key(key), _as_bytes(value))

    def queue_pop(self, key, block=True):
        t = self._timeout_s()
        try:
            value = self._table.queue_pop(_as_key(key), block, t)
        except KeyError:
            raise _DistQueueEmptyError(f"queue_pop: the queue {key!r} is empty") from None
        if value is None:
            raise _wait_timeout_error([key], t)
        return value

    def queue_len(self, key):
        return self._table.queue_len(_as_key(key))

    def list_keys(self):
        return self._table.list_keys()

    def clone(self):
        return self  # one process, one table: a clone is the same store


class PrefixStore(Store):
    """c10d::PrefixStore: every key becomes '<prefix>/<key>' in the underlying store."""

    def __init__(self, prefix, store):
        if not isinstance(prefix, str) or not isinstance(store, Store):
            raise TypeError("PrefixStore(prefix: str, store: torch.distributed.Store): incompatible function arguments")
        super().__init__()
        self._prefix = prefix
        self._store = store

    @property
    def underlying_store(self):
        return self._store

    @property
    def _underlying_non_prefix_store(self):
        store = self._store
        while isinstance(store, PrefixStore):
            store = store._store
        return store

    @property
    def timeout(self):
        return self._store.timeout

    def set_timeout(self, timeout):
        self._store.set_timeout(timeout)

    def _join(self, key):
        return f"{self._prefix}/{_as_key(key)}"

    def set(self, key, value):
        self._store.set(self._join(key), value)

    def get(self, key):
        return self._store.get(self._join(key))

    def add(self, key, value):
        return self._store.add(self._join(key), value)

    def compare_set(self, key, expected_value, desired_value):
        return self._store.compare_set(self._join(key), expected_value, desired_value)

    def append(self, key, value):
        self._store.append(self._join(key), value)

    def delete_key(self, key):
        return self._store.delete_key(self._join(key))

    def check(self, keys):
        return self._store.check([self._join(k) for k in keys])

    def num_keys(self):
        return self._store.num_keys()

    def wait(self, keys, timeout=None):
        keys = [self._join(k) for k in keys]
        if timeout is None:
            self._store.wait(keys)
        else:
            self._store.wait(keys, timeout)

    def multi_get(self, keys):
        return self._store.multi_get([self._join(k) for k in keys])

    def multi_set(self, keys, values):
        self._store.multi_set([self._join(k) for k in keys], values)

    def has_extended_api(self):
        return self._store.has_extended_api()

    def queue_push(self, key, value):
        self._store.queue_push(self._join(key), value)

    def queue_pop(self, key, block=True):
        return self._store.queue_pop(self._join(key), block)

    def queue_len(self, key):
        return self._store.queue_len(self._join(key))

    def list_keys(self):
        head = self._prefix + "/"
        return [k[len(head):] for k in self._store.list_keys() if k.startswith(head)]

    def clone(self):
        return PrefixStore(self._prefix, self._store.clone())


# --- TCPStore ----------------------------------------------------------------------------------
# A frame: u8 command, u32 count, then count x (u32 length, bytes). Replies: u8 status, same list.
(_SET, _GET, _ADD, _CAS, _APPEND, _DELETE, _CHECK, _NUM_KEYS, _WAIT, _MULTI_GET, _MULTI_SET,
 _QPUSH, _QPOP, _QLEN, _LIST, _PING, _BARRIER) = range(17)
_OK, _TIMEOUT, _EMPTY, _ERROR = range(4)
# the count of clients that joined (wait_for_workers); num_keys counts it, list_keys hides it
_INIT_KEY = b"\0init/"
_HEAD = struct.Struct("!BI")
_LEN = struct.Struct("!I")


def _recv_exact(sock, n) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise ConnectionResetError("the peer closed the connection")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def _send_frame(sock, tag, parts):
    out = [_HEAD.pack(tag, len(parts))]
    for p in parts:
        out.append(_LEN.pack(len(p)))
        out.append(p)
    sock.sendall(b"".join(out))


def _recv_frame(sock):
    tag, count = _HEAD.unpack(_recv_exact(sock, _HEAD.size))
    parts = []
    for _ in range(count):
        (n,) = _LEN.unpack(_recv_exact(sock, _LEN.size))
        parts.append(_recv_exact(sock, n) if n else b"")
    return tag, parts


def _timeout_arg(timeout_s) -> bytes:
    return b"-1" if timeout_s is None else str(timeout_s).encode()


def _parse_timeout(arg: bytes):
    t = float(arg.decode())
    return None if t < 0 else t


class _TCPServer:
    """The store daemon: a listening socket per local address of the host, a thread per client
    connection, one table. Lives while a master TCPStore refers to it."""

    def __init__(self, host, port, listen_fd=None):
        self.table = _KeyValueTable()
        if listen_fd is not None:  # a socket the caller bound and listens on already
            self.listeners = [socket.socket(fileno=listen_fd)]
        else:
            self.listeners = _listen(host, port)
        self.port = self.listeners[0].getsockname()[1]
        self.stopped = False
        self.conns: set = set()
        self.lock = threading.Lock()
        self.last_request = time.monotonic()
        _LIVE_SERVERS.add(self)
        for ls in self.listeners:
            threading.Thread(target=self._accept, args=(ls,), daemon=True,
                             name=f"tcpstore-accept-{self.port}").start()

    def _accept(self, ls):
        while not self.stopped:
            try:
                conn, _ = ls.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                if self.stopped:
                    conn.close()
                    return
                self.conns.add(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True,
                             name=f"tcpstore-conn-{self.port}").start()

    def _serve(self, conn):
        try:
            while True:
                cmd, args = _recv_frame(conn)
                self.last_request = time.monotonic()
                status, out = self._handle(cmd, args)
                _send_frame(conn, status, out)
                self.last_request = time.monotonic()
        except (OSError, struct.error, ValueError):
            pass
        finally:
            with self.lock:
                self.conns.discard(conn)
            conn.close()

    def _handle(self, cmd, a):
        t = self.table
        if cmd == _SET:
            t.set(a[0].decode(), a[1])
            return _OK, []
        if cmd == _GET or cmd == _MULTI_GET or cmd == _WAIT:
            keys = [k.decode() for k in a[1:]]
            if not t.wait(keys, _parse_timeout(a[0])):
                return _TIMEOUT, []
            return _OK, ([] if cmd == _WAIT else t.multi_get(keys))
        if cmd == _ADD:
            try:
                return _OK, [str(t.add(a[0].decode(), int(a[1].decode()))).encode()]
            except _DistStoreError as e:
                return _ERROR, [str(e).encode()]
        if cmd == _CAS:
            return _OK, [t.compare_set(a[0].decode(), a[1], a[2])]
        if cmd == _APPEND:
            t.append(a[0].decode(), a[1])
            return _OK, []
        if cmd == _DELETE:
            return _OK, [b"1" if t.delete(a[0].decode()) else b"0"]
        if cmd == _CHECK:
            return _OK, [b"1" if t.check([k.decode() for k in a]) else b"0"]
        if cmd == _NUM_KEYS:
            return _OK, [str(t.num_keys()).encode()]
        if cmd == _MULTI_SET:
            half = len(a) // 2
            t.multi_set([k.decode() for k in a[:half]], a[half:])
            return _OK, []
        if cmd == _QPUSH:
            t.queue_push(a[0].decode(), a[1])
            return _OK, []
        if cmd == _QPOP:
            try:
                value = t.queue_pop(a[0].decode(), a[1] == b"1", _parse_timeout(a[2]))
            except KeyError:
                return _EMPTY, []
            return (_TIMEOUT, []) if value is None else (_OK, [value])
        if cmd == _QLEN:
            return _OK, [str(t.queue_len(a[0].decode())).encode()]
        if cmd == _LIST:
            return _OK, [k.encode() for k in t.list_keys()]
        if cmd == _BARRIER:
            ok = t.barrier(a[0].decode(), int(a[1].decode()), _parse_timeout(a[2]))
            return (_OK if ok else _TIMEOUT), []
        if cmd == _PING:
            return _OK, [str(os.getpid()).encode()]
        return _ERROR, [f"unknown command {cmd}".encode()]

    def stop(self):
        with self.lock:
            self.stopped = True
            conns, self.conns = list(self.conns), set()
        for s in self.listeners + conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


_LIVE_SERVERS: weakref.WeakSet = weakref.WeakSet()


@atexit.register
def _linger_at_exit():
    """A process hosting a store lets its clients' last requests finish before it exits: the
    last member of a barrier still waits on the key that released the host (the elastic agents'
    exit barrier). Upstream's C++ server thread gets the same grace from process teardown. It
    waits while clients are connected and active, at most 2 s, and not at all when idle."""
    start = time.monotonic()
    for server in list(_LIVE_SERVERS):
        while (not server.stopped and server.conns and time.monotonic() - server.last_request < 0.25
               and time.monotonic() - start < 2.0):
            time.sleep(0.02)


def _bind_addresses(host):
    """Where the server listens. An address literal or 'localhost' binds just there (a store for
    127.0.0.1 is reachable only on loopback); any other host name binds every interface, as
    upstream's server does, since a name can resolve differently here than on the peers (a
    Debian host maps its own name to 127.0.1.1)."""
    try:
        ipaddress.ip_address(host.split("%")[0])
        return host
    except ValueError:
        return host if host in ("localhost", "localhost.localdomain") else None


def _listen(host, port):
    """Listening sockets on the addresses to bind; all share one port, the first's when port is 0."""
    try:
        infos = socket.getaddrinfo(_bind_addresses(host), port, socket.AF_UNSPEC, socket.SOCK_STREAM, 0,
                                   socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise _DistNetworkError(f"The server socket has failed to resolve the host {host!r}: {e}") from None
    infos.sort(key=lambda i: i[0] != socket.AF_INET)  # IPv4 first: it picks the port when port is 0
    seen, socks, failure = set(), [], None
    for family, kind, proto, _, addr in infos:
        if (family, addr[0]) in seen:
            continue
        seen.add((family, addr[0]))
        s = socket.socket(family, kind, proto)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        try:
            bound_port = socks[0].getsockname()[1] if socks else port
            s.bind((addr[0], bound_port) + tuple(addr[2:]))
            s.listen(1024)
        except OSError as e:
            s.close()
            if e.errno == errno.EADDRINUSE and not socks:
                failure = (e, family)
                break
            failure = failure or (e, family)
            continue  # e.g. ::1 on a host without IPv6: the other address serves
        socks.append(s)
    if not socks:
        e, family = failure
        name = errno.errorcode.get(e.errno, "?")
        raise _DistNetworkError(
            f"The server socket has failed to listen on any local network address. "
            f"port: {port}, useIpv6: {family == socket.AF_INET6}, code: {-(e.errno or 0)}, "
            f"name: {name}, message: {e.strerror}")
    return socks


# multi_tenant masters share the server of (host, port) within a process
_TENANT_SERVERS: dict = {}
_TENANT_LOCK = threading.Lock()


class TCPStore(Store):
    """c10d::TCPStore: a client of a store server, which runs in the master's process (a
    daemon thread) when is_master, or in another process that made one."""

    def __init__(self, host_name, port, world_size=None, is_master=False, timeout=DEFAULT_TIMEOUT,
                 wait_for_workers=True, multi_tenant=False, master_listen_fd=None, use_libuv=None):
        if not isinstance(host_name, str) or isinstance(port, bool) or not isinstance(port, int):
            raise TypeError("TCPStore(host_name: str, port: int, ...): incompatible function arguments")
        if not 0 <= port < 65536:
            raise TypeError(f"TCPStore: port must be in [0, 65535], got {port}")
        if world_size is not None and (isinstance(world_size, bool) or not isinstance(world_size, int)):
            raise TypeError("TCPStore: world_size must be an int or None")
        if world_size == 0:
            raise ValueError("TCPStore world size cannot be 0")
        super().__init__()
        self.set_timeout(timeout)
        self._host = host_name
        self._world_size = world_size
        self._use_libuv = True if use_libuv is None else bool(use_libuv)
        self._lock = threading.Lock()
        self._sock = None
        self._server = None
        if is_master:
            self._server = self._start_server(host_name, port, multi_tenant, master_listen_fd)
            port = self._server.port
        self._port = port
        self._connect()
        if wait_for_workers and world_size is not None:
            self._wait_for_workers(world_size)

    @staticmethod
    def _start_server(host, port, multi_tenant, listen_fd):
        if listen_fd is not None:
            return _TCPServer(host, port, listen_fd)
        if not multi_tenant or port == 0:
            return _TCPServer(host, port)
        with _TENANT_LOCK:
            ref = _TENANT_SERVERS.get(port)
            server = ref() if ref is not None else None
            if server is None or server.stopped:
                server = _TCPServer(host, port)
                _TENANT_SERVERS[port] = weakref.ref(server)
            return server

    def _connect(self):
        deadline = None if (t := self._timeout_s()) is None else time.monotonic() + t
        delay = 0.01
        last = None
        while True:
            try:
                infos = socket.getaddrinfo(self._host, self._port, socket.AF_UNSPEC, socket.SOCK_STREAM)
            except socket.gaierror as e:
                infos, last = [], e
            for family, kind, proto, _, addr in infos:
                s = socket.socket(family, kind, proto)
                try:
                    left = None if deadline is None else max(deadline - time.monotonic(), 0.05)
                    s.settimeout(left)
                    s.connect(addr)
                    s.settimeout(None)
                    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self._sock = s
                    return
                except OSError as e:
                    last = e
                    s.close()
            if deadline is not None and time.monotonic() >= deadline:
                raise _DistNetworkError(
                    f"The client socket has timed out after {self.timeout} while trying to connect to "
                    f"({self._host}, {self._port}). Last error: {last}")
            time.sleep(delay if deadline is None else min(delay, max(deadline - time.monotonic(), 0)))
            delay = min(delay * 2, 1.0)

    def _wait_for_workers(self, world_size):
        self._ok(_ADD, [_INIT_KEY, b"1"])
        if self._server is None:
            return
        t = self._timeout_s()
        start = time.monotonic()
        while True:
            joined = int(self._ok(_GET, [b"-1", _INIT_KEY])[0].decode())
            if joined >= world_size:
                return
            elapsed = time.monotonic() - start
            if t is not None and elapsed > t:
                raise _DistStoreError(f"Timed out after {int(elapsed)} seconds waiting for clients. "
                                      f"{joined}/{world_size} clients joined.")
            time.sleep(0.01)

    def _call(self, cmd, parts, blocking=False, wait_s=None):
        """One request and its (status, values) reply. A blocking request may be held by the
        server up to wait_s (None: forever); the server answers at that deadline, so the
        socket's own limit only covers a server that stops answering at all."""
        with self._lock:
            sock = self._sock
            if sock is None:
                raise _DistNetworkError("TCPStore: the client is closed")
            if blocking:
                limit = None if wait_s is None else wait_s + 30.0
            else:
                limit = (self._timeout_s() or 0.0) + 30.0
            try:
                sock.settimeout(limit)
                _send_frame(sock, cmd, parts)
                status, out = _recv_frame(sock)
            except socket.timeout:
                self._close()
                raise _DistStoreError(f"TCPStore: no reply from the server at ({self._host}, {self._port}) "
                                      f"within {limit:.0f} s") from None
            except (OSError, struct.error) as e:
                self._close()
                raise _DistNetworkError(f"TCPStore: connection to the server at ({self._host}, {self._port}) "
                                        f"failed: {e}") from None
        if status == _ERROR:
            raise _DistStoreError(out[0].decode() if out else "TCPStore: server error")
        return status, out

    def _ok(self, cmd, parts):
        return self._call(cmd, parts)[1]

    def _close(self):
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None

    def __del__(self):
        try:
            self._close()
        except Exception:
            pass

    # --- the Store API ---
    @property
    def host(self):
        return self._host

    @property
    def port(self):
        return self._port

    @property
    def libuvBackend(self):
        return self._use_libuv

    def set(self, key, value):
        self._ok(_SET, [_as_key(key).encode(), _as_bytes(value)])

    def _wait(self, cmd, keys, timeout=None):
        t = self._timeout_s(timeout)
        status, out = self._call(cmd, [_timeout_arg(t)] + [k.encode() for k in keys], True, t)
        if status == _TIMEOUT:
            raise _wait_timeout_error(keys, t)
        return out

    def get(self, key):
        return self._wait(_GET, [_as_key(key)])[0]

    def add(self, key, value):
        return int(self._ok(_ADD, [_as_key(key).encode(), str(_as_int(value)).encode()])[0].decode())

    def compare_set(self, key, expected_value, desired_value):
        return self._ok(_CAS, [_as_key(key).encode(), _as_bytes(expected_value, "expected_value"),
                               _as_bytes(desired_value, "desired_value")])[0]

    def append(self, key, value):
        self._ok(_APPEND, [_as_key(key).encode(), _as_bytes(value)])

    def delete_key(self, key):
        return self._ok(_DELETE, [_as_key(key).encode()])[0] == b"1"

    def check(self, keys):
        return self._ok(_CHECK, [_as_key(k).encode() for k in keys])[0] == b"1"

    def num_keys(self):
        return int(self._ok(_NUM_KEYS, [])[0].decode())

    def wait(self, keys, timeout=None):
        self._wait(_WAIT, [_as_key(k) for k in keys], timeout)

    def multi_get(self, keys):
        return self._wait(_MULTI_GET, [_as_key(k) for k in keys])

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        self._ok(_MULTI_SET, [_as_key(k).encode() for k in keys] + [_as_bytes(v) for v in values])

    def has_extended_api(self):
        return True

    def queue_push(self, key, value):
        self._ok(_QPUSH, [_as_key(key).encode(), _as_bytes(value)])

    def queue_pop(self, key, block=True):
        t = self._timeout_s()
        status, out = self._call(_QPOP, [_as_key(key).encode(), b"1" if block else b"0", _timeout_arg(t)],
                                 block, t if block else 0.0)
        if status == _EMPTY:
            raise _DistQueueEmptyError(f"queue_pop: the queue {key!r} is empty")
        if status == _TIMEOUT:
            raise _wait_timeout_error([key], t)
        return out[0]

    def queue_len(self, key):
        return int(self._ok(_QLEN, [_as_key(key).encode()])[0].decode())

    def list_keys(self):
        return [k.decode() for k in self._ok(_LIST, []) if not k.startswith(b"\0")]

    def barrier(self, key, world_size, timeout=None):
        # the server counts at one key and answers everyone once world_size have arrived
        t = self._timeout_s(timeout)
        status, _ = self._call(_BARRIER, [_as_key(key).encode(), str(int(world_size)).encode(), _timeout_arg(t)], True, t)
        if status == _TIMEOUT:
            raise _DistStoreError(f"barrier timeout after {int(round((t or 0) * 1000))}ms, key: {key}")

    def clone(self):
        return TCPStore(self._host, self._port, None, False, self.timeout, use_libuv=self._use_libuv)


# --- FileStore ---------------------------------------------------------------------------------
# An append-only log of records (u32 key length, key, u32 value length, value) under flock;
# a key starting with '+' is a user key, '-' deletes one, '=' an internal counter (the refcount
# that removes the file when the last store using it is destroyed, as upstream's FileStore).
_REC = struct.Struct("!I")


class FileStore(Store):
    """c10d::FileStore: a store in a file shared by processes on one host (or a shared file
    system)."""

    def __init__(self, path, numWorkers=-1):
        if not isinstance(path, str):
            raise TypeError("FileStore(path: str, numWorkers: int = -1): incompatible function arguments")
        super().__init__()
        self._path = path
        self._num_workers = numWorkers
        self._pos = 0
        self._cache: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._counter("=refcount", 1)

    @property
    def path(self):
        return self._path

    def _open(self):
        # as upstream's: a missing directory may still appear (a shared file system), so ENOENT
        # is retried until the store's timeout
        t = self._timeout_s()
        deadline = None if t is None else time.monotonic() + t
        while True:
            try:
                return os.open(self._path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as e:
                if e.errno != errno.ENOENT or (deadline is not None and time.monotonic() >= deadline):
                    raise RuntimeError(f"open({self._path}): {e.strerror}") from None
                time.sleep(0.01)

    def _locked(self, exclusive, fn):
        with self._lock:
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
                self._refresh(fd)
                return fn(fd)
            finally:
                os.close(fd)  # closing releases the lock

    def _refresh(self, fd):
        size = os.fstat(fd).st_size
        if size < self._pos:  # the file was removed and recreated
            self._pos, self._cache = 0, {}
        if size == self._pos:
            return
        os.lseek(fd, self._pos, os.SEEK_SET)
        buf = b""
        while len(buf) < size - self._pos:
            chunk = os.read(fd, size - self._pos - len(buf))
            if not chunk:
                break
            buf += chunk
        i = 0
        while i + 4 <= len(buf):
            (kn,) = _REC.unpack_from(buf, i)
            if i + 4 + kn + 4 > len(buf):
                break
            key = buf[i + 4:i + 4 + kn].decode()
            (vn,) = _REC.unpack_from(buf, i + 4 + kn)
            end = i + 8 + kn + vn
            if end > len(buf):
                break
            value = buf[i + 8 + kn:end]
            if key[0] == "-":
                self._cache.pop("+" + key[1:], None)
            else:
                self._cache[key] = value
            i = end
        self._pos += i

    def _write(self, fd, key, value):
        os.lseek(fd, 0, os.SEEK_END)
        k = key.encode()
        os.write(fd, _REC.pack(len(k)) + k + _REC.pack(len(value)) + value)
        self._refresh(fd)

    def _counter(self, key, amount):
        def op(fd):
            new = _add_value(self._cache.get(key), amount, key)
            self._write(fd, key, str(new).encode())
            return new
        return self._locked(True, op)

    def __del__(self):
        if getattr(self, "_closed", True):
            return
        self._closed = True
        try:
            finished = self._counter("=cleanup", 1)
            refs = self._counter("=refcount", -1)
            if refs == 0 or (self._num_workers > 0 and finished >= self._num_workers):
                os.unlink(self._path)
        except Exception:
            pass

    def set(self, key, value):
        key, value = "+" + _as_key(key), _as_bytes(value)
        self._locked(True, lambda fd: self._write(fd, key, value))

    def get(self, key):
        key = _as_key(key)
        self.wait([key])
        return self._locked(False, lambda fd: self._cache["+" + key])

    def add(self, key, value):
        return self._counter("+" + _as_key(key), _as_int(value))

    def compare_set(self, key, expected_value, desired_value):
        key = "+" + _as_key(key)
        expected = _as_bytes(expected_value, "expected_value")
        desired = _as_bytes(desired_value, "desired_value")

        def op(fd):
            current = self._cache.get(key)
            if (current is None and expected == b"") or current == expected:
                self._write(fd, key, desired)
                return desired
            return expected if current is None else current
        return self._locked(True, op)

    def append(self, key, value):
        key, value = "+" + _as_key(key), _as_bytes(value)
        self._locked(True, lambda fd: self._write(fd, key, self._cache.get(key, b"") + value))

    def delete_key(self, key):
        key = _as_key(key)

        def op(fd):
            if "+" + key in self._cache:
                self._write(fd, "-" + key, b"")
            return True  # upstream's FileStore answers True whether or not the key was there
        return self._locked(True, op)

    def check(self, keys):
        keys = ["+" + _as_key(k) for k in keys]
        return self._locked(False, lambda fd: all(k in self._cache for k in keys))

    def num_keys(self):
        # upstream counts its own bookkeeping keys (the refcount) too
        return self._locked(False, lambda fd: len(self._cache))

    def wait(self, keys, timeout=None):
        keys = [_as_key(k) for k in keys]
        t = self._timeout_s(timeout)
        deadline = None if t is None else time.monotonic() + t
        while not self.check(keys):
            if deadline is not None and time.monotonic() >= deadline:
                # upstream's FileStore raises a plain RuntimeError here, not DistStoreError
                raise RuntimeError(f"Wait timeout for keys: {', '.join(keys)}")
            time.sleep(0.01)

    def multi_get(self, keys):
        keys = [_as_key(k) for k in keys]
        self.wait(keys)
        return self._locked(False, lambda fd: [self._cache["+" + k] for k in keys])

    def multi_set(self, keys, values):
        if len(keys) != len(values):
            raise ValueError("multi_set: keys and values must have the same length")
        pairs = [("+" + _as_key(k), _as_bytes(v)) for k, v in zip(keys, values)]

        def op(fd):
            for k, v in pairs:
                self._write(fd, k, v)
        self._locked(True, op)

    def has_extended_api(self):
        return False

    def list_keys(self):
        return self._locked(False, lambda fd: [k[1:] for k in self._cache if k[0] == "+"])

    def clone(self):
        return FileStore(self._path, self._num_workers)


class _ControlCollectives(metaclass=CClassMeta):
    """c10d::ControlCollectives: small control messages between ranks (no tensors)."""


class _StoreCollectives(_ControlCollectives):
    """c10d::StoreCollectives: barrier, broadcast, gather, scatter, all_gather and all_sum done
    with store keys under `key` (control_collectives/StoreCollectives.cpp); each key is used once."""

    def __init__(self, store, rank, world_size):
        self._store, self._rank, self._world = store, rank, world_size
        self._seen: set = set()

    def _unique(self, key):
        if key in self._seen:
            raise RuntimeError(f"Key {key} has already been used.")
        self._seen.add(key)

    def _with_timeout(self, timeout, fn):
        old = self._store.timeout
        self._store.set_timeout(timeout)
        try:
            return fn()
        finally:
            self._store.set_timeout(old)

    def barrier(self, key, timeout, blocking=True):
        self._unique(key)

        def run():
            arrived = self._store.add(f"{key}/num_members", 1)
            self._store.set(f"{key}/{self._rank}", "joined")
            if arrived == self._world:
                self._store.set(f"{key}/last_members", "<val_ignored>")
            elif blocking:
                try:
                    self._store.wait([f"{key}/last_members"])
                except _DistStoreError as e:
                    missing = [str(r) for r in range(self._world) if not self._store.check([f"{key}/{r}"])]
                    raise RuntimeError(f"barrier failed -- missing ranks: {', '.join(missing)}, {e}") from None
        self._with_timeout(timeout, run)

    def broadcast_send(self, key, data, timeout):
        self._unique(key)
        self._with_timeout(timeout, lambda: self._store.set(key, data))

    def broadcast_recv(self, key, timeout):
        self._unique(key)
        return self._with_timeout(timeout, lambda: self._store.get(key))

    def gather_send(self, key, data, timeout):
        self._unique(key)
        self._with_timeout(timeout, lambda: self._store.set(f"{key}/{self._rank}", data))

    def gather_recv(self, key, data, timeout):
        self._unique(key)
        others = [f"{key}/{r}" for r in range(self._world) if r != self._rank]
        values = self._with_timeout(timeout, lambda: self._store.multi_get(others))
        values.insert(self._rank, _as_bytes(data))
        return values

    def scatter_send(self, key, data, timeout):
        self._unique(key)
        keys = [f"{key}/{r}" for r in range(self._world) if r != self._rank]
        values = [d for r, d in enumerate(data) if r != self._rank]
        self._with_timeout(timeout, lambda: self._store.multi_set(keys, values))
        return _as_bytes(data[self._rank])

    def scatter_recv(self, key, timeout):
        self._unique(key)
        return self._with_timeout(timeout, lambda: self._store.get(f"{key}/{self._rank}"))

    def all_gather(self, key, data, timeout):
        self._unique(key)

        def run():
            self._store.set(f"{key}/{self._rank}", data)
            return self._store.multi_get([f"{key}/{r}" for r in range(self._world)])
        return self._with_timeout(timeout, run)

    def all_sum(self, key, data, timeout):
        self._unique(key)
        self._with_timeout(timeout, lambda: self._store.add(key, data))
        self.barrier(f"{key}/barrier", timeout)
        return self._with_timeout(timeout, lambda: self._store.add(key, 0))


def _test_python_store(store):
    """Upstream's check that a Python subclass of Store answers calls made through the Store
    interface (torch/csrc/distributed/c10d/init.cpp)."""
    for key, value in (("key", 1), ("key", 2), ("key", 3)):
        store.add(key, value)
    store.set("key0", "value0")
    store.add("key3", 1)
    store.set("key1", "value1")
    store.add("key3", 2)
    store.set("key2", "value2")
    for v in (3, 4, 3, 2):
        store.add("key3", v)

    def get(k):
        v = store.get(k)
        return v.decode() if isinstance(v, (bytes, bytearray)) else str(v)

    for key, want in (("key", "6"), ("key0", "value0"), ("key1", "value1"), ("key2", "value2"), ("key3", "15")):
        if get(key) != want:
            raise RuntimeError("assertion failed")
    # upstream's check ends by cloning the store through the Store interface
    store.clone()


for _cls in (Store, HashStore, PrefixStore, TCPStore, FileStore, _ControlCollectives, _StoreCollectives):
    _cls.__module__ = "torch._C._distributed_c10d"

EXPORTS = {"Store": Store, "HashStore": HashStore, "PrefixStore": PrefixStore, "TCPStore": TCPStore,
           "FileStore": FileStore, "_test_python_store": _test_python_store,
           "_ControlCollectives": _ControlCollectives, "_StoreCollectives": _StoreCollectives}
