"""Rendezvous programs run under upstream torch and under torchnative; the test compares what
each rank prints (one JSON object).

  python rendezvous_programs.py join METHOD RANK WORLD   one rank of init_process_group(init_method=METHOD)
  python rendezvous_programs.py bad PORT                 bad input, each case's outcome type
"""

import datetime
import json
import os
import socket
import sys
import tempfile

import torch
import torch.distributed as dist
from program_outcome import outcome as _outcome

TD = datetime.timedelta


def _destroy():
    if dist.is_initialized():
        dist.destroy_process_group()


def outcome(fn):
    return _outcome(fn, cleanup=_destroy)


def join(method, rank, world):
    kwargs = {} if method == "env://" else {"rank": rank, "world_size": world}
    dist.init_process_group("gloo", init_method=method, timeout=TD(seconds=30), **kwargs)
    out = {"rank": dist.get_rank(), "world": dist.get_world_size(), "backend": dist.get_backend()}
    t = torch.arange(4, dtype=torch.float32) * (dist.get_rank() + 1)
    dist.all_reduce(t)
    out["all_reduce"] = t.tolist()
    # the default store is the rendezvous's, prefixed as upstream prefixes it
    store = dist.distributed_c10d._get_default_store()
    store.set(f"hello{rank}", f"from {rank}")
    out["peer"] = store.get(f"hello{(rank + 1) % world}").decode()
    out["store_type"] = type(store).__name__
    dist.barrier()
    dist.destroy_process_group()
    print(json.dumps(out, sort_keys=True), flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bad(tmp):
    tmp = tempfile.mkdtemp(dir=tmp)  # one directory per interpreter running this
    short = TD(seconds=2)
    out = {}

    def init(method, **kw):
        dist.init_process_group("gloo", init_method=method, timeout=short, **kw)
        return dist.get_world_size()

    out["world_size_0"] = outcome(lambda: init(f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=0))
    out["rank_too_big"] = outcome(lambda: init(f"tcp://127.0.0.1:{free_port()}", rank=2, world_size=2))
    out["rank_negative"] = outcome(lambda: init(f"tcp://127.0.0.1:{free_port()}", rank=-2, world_size=2))
    out["no_rank_tcp"] = outcome(lambda: init(f"tcp://127.0.0.1:{free_port()}"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        out["used_port"] = outcome(lambda: init(f"tcp://127.0.0.1:{busy.getsockname()[1]}", rank=0, world_size=1))
    out["unreachable_master"] = outcome(lambda: init(f"tcp://127.0.0.1:{free_port()}", rank=1, world_size=2))
    out["workers_missing"] = outcome(lambda: init(f"tcp://127.0.0.1:{free_port()}", rank=0, world_size=2))
    out["bad_scheme"] = outcome(lambda: init("nope://x", rank=0, world_size=1))
    out["file_no_world"] = outcome(lambda: init(f"file://{tmp}/f1", rank=0))
    for k in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        os.environ.pop(k, None)
    out["env_missing"] = outcome(lambda: init("env://"))
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1")
    out["env_world_1"] = outcome(lambda: init("env://"))
    out["port_out_of_range"] = outcome(lambda: init("tcp://127.0.0.1:70000", rank=0, world_size=1))
    out["rendezvous_direct"] = outcome(lambda: [type(s).__name__ for s in next(dist.rendezvous(
        f"tcp://127.0.0.1:{free_port()}?rank=0&world_size=1", timeout=short))[:1]])
    print(json.dumps(out, sort_keys=True), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "join":
        join(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        bad(sys.argv[2])
    sys.stdout.flush()
    os._exit(0)
