"""Store programs run under upstream torch and under torchnative (each in its own process);
the test compares what they print. `python store_cases.py single` prints one JSON object
{case: outcome}; `... master PORT N` / `... client PORT RANK N` are the processes of a
multi-process TCPStore run (their outcomes on stdout, one JSON object each).

An outcome is the value's repr, or 'raise <Type>' naming the exception's classes that belong
to torch.distributed, so a DistStoreError is told from a plain RuntimeError."""

import datetime
import json
import os
import socket
import sys
import tempfile
import threading
import time

import torch.distributed as dist
from program_outcome import outcome

TD = datetime.timedelta


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def kv_cases(make, out, tag):
    """The Store API on one store (set before get, so none of these waits)."""
    s = make()
    r = {}
    r["set"] = outcome(lambda: s.set("a", "1"))
    r["set_bytes"] = outcome(lambda: s.set("b", b"\x00\xff"))
    r["get"] = outcome(lambda: s.get("a"))
    r["get_bytes"] = outcome(lambda: s.get("b"))
    r["add_new"] = outcome(lambda: s.add("n", 3))
    r["add_more"] = outcome(lambda: s.add("n", -5))
    r["add_zero"] = outcome(lambda: s.add("n", 0))
    r["get_added"] = outcome(lambda: s.get("n"))
    r["add_non_int"] = outcome(lambda: s.add("a2", "x"))
    r["cas_missing_empty"] = outcome(lambda: s.compare_set("c", "", "v1"))
    r["cas_match"] = outcome(lambda: s.compare_set("c", "v1", "v2"))
    r["cas_mismatch"] = outcome(lambda: s.compare_set("c", "zz", "v3"))
    r["cas_missing_expected"] = outcome(lambda: s.compare_set("c9", "e", "d"))
    r["cas_after"] = outcome(lambda: s.get("c"))
    r["check_yes"] = outcome(lambda: s.check(["a", "n"]))
    r["check_no"] = outcome(lambda: s.check(["a", "nope"]))
    r["multi_set"] = outcome(lambda: s.multi_set(["m1", "m2"], ["x", b"y"]))
    r["multi_get"] = outcome(lambda: s.multi_get(["m1", "m2", "a"]))
    r["append_new"] = outcome(lambda: s.append("ap", "x"))
    r["append_more"] = outcome(lambda: s.append("ap", "yz"))
    r["append_get"] = outcome(lambda: s.get("ap"))
    r["delete"] = outcome(lambda: s.delete_key("m1"))
    r["delete_again"] = outcome(lambda: s.delete_key("m1"))
    r["check_deleted"] = outcome(lambda: s.check(["m1"]))
    r["has_extended_api"] = outcome(lambda: s.has_extended_api())
    r["timeout"] = outcome(lambda: s.timeout)
    r["set_timeout"] = outcome(lambda: s.set_timeout(TD(milliseconds=300)))
    r["timeout_after"] = outcome(lambda: s.timeout)
    r["get_missing"] = outcome(lambda: s.get("never"))
    r["wait_missing"] = outcome(lambda: s.wait(["never"], TD(milliseconds=200)))
    r["wait_present"] = outcome(lambda: s.wait(["a"]))
    r["multi_get_missing"] = outcome(lambda: s.multi_get(["a", "never"]))
    r["set_int_value"] = outcome(lambda: s.set("i", 5))
    r["key_not_str"] = outcome(lambda: s.set(5, "v"))
    r["barrier_one"] = outcome(lambda: s.barrier("bar", 1))
    r["barrier_keys"] = outcome(lambda: sorted(k for k in s.list_keys() if k.startswith("bar")) if s.has_extended_api() else None)
    r["barrier_timeout"] = outcome(lambda: s.barrier("bar2", 2, TD(milliseconds=200)))
    for k, v in r.items():
        out[f"{tag}.{k}"] = v
    return s


def single():
    out = {}
    d = tempfile.mkdtemp()
    port = free_port()
    kv_cases(lambda: dist.TCPStore("127.0.0.1", port, 1, True, TD(seconds=5)), out, "tcp")
    kv_cases(lambda: dist.HashStore(), out, "hash")
    kv_cases(lambda: dist.FileStore(os.path.join(d, "fs"), 1), out, "file")
    kv_cases(lambda: dist.PrefixStore("pre", dist.HashStore()), out, "prefix")

    # key counts: what each store counts of its own bookkeeping
    t = dist.TCPStore("127.0.0.1", 0, 1, True, TD(seconds=5))
    t.set("x", "1")
    out["tcp.num_keys"] = outcome(t.num_keys)
    out["tcp.list_keys"] = outcome(lambda: sorted(t.list_keys()))
    out["file.delete_missing"] = outcome(lambda: dist.FileStore(os.path.join(d, "fs3"), 1).delete_key("nope"))
    out["tcp.port_zero_picks"] = outcome(lambda: t.port > 0)
    out["tcp.host"] = outcome(lambda: t.host)
    t2 = dist.TCPStore("127.0.0.1", 0, None, True, TD(seconds=5), wait_for_workers=False)
    t2.set("x", "1")
    out["tcp.num_keys_no_world"] = outcome(t2.num_keys)
    h = dist.HashStore()
    h.set("x", "1")
    out["hash.num_keys"] = outcome(h.num_keys)
    f = dist.FileStore(os.path.join(d, "fs2"), 1)
    f.set("x", "1")
    out["file.num_keys"] = outcome(f.num_keys)
    p = dist.PrefixStore("p", h)
    p.set("y", "2")
    out["prefix.non_prefix"] = outcome(lambda: dist.PrefixStore("r", p)._underlying_non_prefix_store is h)
    out["prefix.num_keys"] = outcome(p.num_keys)
    out["prefix.underlying"] = outcome(lambda: h.get("p/y"))
    out["prefix.underlying_store_is"] = outcome(lambda: p.underlying_store is h)
    out["prefix.nested"] = outcome(lambda: dist.PrefixStore("q", p).set("z", "3") or h.get("p/q/z"))

    # a get that a second thread satisfies
    late = dist.HashStore()
    threading.Timer(0.1, lambda: late.set("k", "v")).start()
    out["hash.get_waits"] = outcome(lambda: late.get("k"))

    # queues
    q = dist.TCPStore("127.0.0.1", 0, None, True, TD(seconds=1), wait_for_workers=False)
    out["tcp.queue_push"] = outcome(lambda: q.queue_push("q", "a") or q.queue_push("q", b"b"))
    out["tcp.queue_len"] = outcome(lambda: q.queue_len("q"))
    out["tcp.queue_pop"] = outcome(lambda: [q.queue_pop("q"), q.queue_pop("q", block=False)])
    out["tcp.queue_pop_empty"] = outcome(lambda: q.queue_pop("q", block=False))

    # bad input
    used = dist.TCPStore("127.0.0.1", 0, None, True, TD(seconds=5), wait_for_workers=False)
    out["tcp.used_port"] = outcome(lambda: dist.TCPStore("127.0.0.1", used.port, None, True, TD(seconds=1), wait_for_workers=False))
    out["tcp.unreachable"] = outcome(lambda: dist.TCPStore("127.0.0.1", free_port(), None, False, TD(seconds=1)))
    out["tcp.workers_missing"] = outcome(lambda: dist.TCPStore("127.0.0.1", 0, 2, True, TD(seconds=1)))
    out["tcp.world_size_0"] = outcome(lambda: dist.TCPStore("127.0.0.1", 0, 0, True, TD(seconds=1), wait_for_workers=False))
    out["tcp.world_size_negative"] = outcome(lambda: dist.TCPStore("127.0.0.1", 0, -1, True, TD(seconds=1), wait_for_workers=False).port > 0)
    out["tcp.port_negative"] = outcome(lambda: dist.TCPStore("127.0.0.1", -1, None, True))
    out["tcp.port_big"] = outcome(lambda: dist.TCPStore("127.0.0.1", 70000, None, True))
    out["tcp.host_not_str"] = outcome(lambda: dist.TCPStore(5, 0, None, True))
    out["prefix.not_store"] = outcome(lambda: dist.PrefixStore("p", object()))

    # multi_tenant: two masters on one port in one process share the server
    mt = free_port()
    a = dist.TCPStore("127.0.0.1", mt, None, True, TD(seconds=5), multi_tenant=True, wait_for_workers=False)
    b = dist.TCPStore("127.0.0.1", mt, None, True, TD(seconds=5), multi_tenant=True, wait_for_workers=False)
    a.set("shared", "yes")
    out["tcp.multi_tenant"] = outcome(lambda: b.get("shared"))
    out["tcp.use_libuv_false"] = outcome(lambda: dist.TCPStore("127.0.0.1", 0, None, True, TD(seconds=5), wait_for_workers=False, use_libuv=False).port > 0)
    out["tcp.clone"] = outcome(lambda: a.clone().get("shared"))
    # a server on a socket the caller already listens on
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(8)
    fd_store = dist.TCPStore("127.0.0.1", ls.getsockname()[1], None, True, TD(seconds=5), wait_for_workers=False,
                             master_listen_fd=ls.detach())
    out["tcp.master_listen_fd"] = outcome(lambda: fd_store.set("f", "d") or dist.TCPStore(
        "127.0.0.1", fd_store.port, None, False, TD(seconds=5)).get("f"))

    # Python subclasses of Store, as upstream's tests write them
    class MyStore(dist.Store):
        def __init__(self):
            super().__init__()
            self.d = {}

        def set(self, key, value):
            self.d[key] = value.encode() if isinstance(value, str) else bytes(value)

        def get(self, key):
            return self.d[key]

        def add(self, key, value):
            new = int(self.d.get(key, b"0")) + value
            self.d[key] = str(new).encode()
            return new

    ms = MyStore()
    out["py.isinstance"] = outcome(lambda: isinstance(ms, dist.Store))
    out["py.test_python_store"] = outcome(lambda: torch_test_python_store(ms))
    out["py.prefix_over_python"] = outcome(lambda: dist.PrefixStore("w", ms).set("k", "v") or ms.get("w/k"))
    out["py.base_timeout"] = outcome(lambda: ms.timeout)
    control_collectives(out)
    print(json.dumps(out, sort_keys=True))
    os._exit(0)  # skip destructors of still-referenced stores (servers die with the process)


def control_collectives(out):
    """torch.distributed._StoreCollectives: two ranks as threads over one HashStore."""
    td = TD(seconds=5)
    store = dist.HashStore()
    cs = [dist._StoreCollectives(store, r, 2) for r in range(2)]
    got = {}

    def run(r):
        c = cs[r]
        c.barrier("b", td, True)
        if r == 0:
            c.broadcast_send("bc", "hello", td)
            got["gather"] = c.gather_recv("g", "d0", td)
            got["scatter0"] = c.scatter_send("s", ["x0", "x1"], td)
        else:
            got["bcast"] = c.broadcast_recv("bc", td)
            c.gather_send("g", "d1", td)
            got["scatter1"] = c.scatter_recv("s", td)
        got[f"all_gather{r}"] = c.all_gather("ag", f"a{r}", td)
        got[f"all_sum{r}"] = c.all_sum("sum", r + 5, td)

    threads = [threading.Thread(target=run, args=(r,)) for r in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    for k, v in got.items():
        out[f"control.{k}"] = repr(v)
    out["control.keys"] = repr(sorted(store.list_keys()))
    out["control.key_reused"] = outcome(lambda: cs[0].barrier("b", td, True))
    out["control.barrier_timeout"] = outcome(lambda: dist._StoreCollectives(store, 0, 2).barrier("b2", TD(milliseconds=200), True))
    out["control.barrier_nonblocking"] = outcome(lambda: cs[0].barrier("b3", td, False))


def torch_test_python_store(store):
    from torch.distributed import _test_python_store
    return _test_python_store(store)


def master(port, world):
    s = dist.TCPStore("127.0.0.1", port, world, True, TD(seconds=20))
    out = {"joined": True}
    # add before set: the clients add only after they read "from_master", so the master's add
    # returns 1 on every run (the other order raced with the clients' adds under load)
    out["counter"] = s.add("counter", 1)
    s.set("from_master", "m")
    s.wait([f"done{r}" for r in range(1, world)])
    s.barrier("all", world)
    out["final_counter"] = int(s.get("counter"))
    out["values"] = sorted(s.get(f"done{r}").decode() for r in range(1, world))
    print(json.dumps(out, sort_keys=True), flush=True)
    # the server lives in this process: stay until every client said it is finished, and a
    # moment longer so the reply to the last client's set reaches it
    s.wait([f"bye{r}" for r in range(1, world)])
    time.sleep(0.5)
    os._exit(0)


def client(port, rank, world):
    s = dist.TCPStore("127.0.0.1", port, world, False, TD(seconds=20))
    out = {"got": s.get("from_master").decode()}
    s.add("counter", 1)
    s.set(f"done{rank}", f"r{rank}")
    s.barrier("all", world)
    out["cas"] = s.compare_set("leader", "", f"r{rank}").decode() in {f"r{r}" for r in range(1, world)}
    s.set(f"bye{rank}", "1")
    print(json.dumps(out, sort_keys=True), flush=True)
    os._exit(0)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "single":
        single()
    elif mode == "master":
        master(int(sys.argv[2]), int(sys.argv[3]))
    else:
        client(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
