"""A torchrun worker: joins by env:// as the launcher set it up, all_reduces, uses the store
the launcher's rendezvous made, prints one JSON line."""

import json
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.full((3,), float(rank + 1))
dist.all_reduce(t)
store = dist.distributed_c10d._get_default_store()
store.set(f"w{rank}", str(rank * 10))
peer = store.get(f"w{(rank + 1) % world}").decode()
gathered = [None] * world
dist.all_gather_object(gathered, {"rank": rank, "local": int(os.environ["LOCAL_RANK"])})
out = {"rank": rank, "world": world, "local_rank": int(os.environ["LOCAL_RANK"]),
       "local_world": int(os.environ["LOCAL_WORLD_SIZE"]), "agent_store": os.environ.get("TORCHELASTIC_USE_AGENT_STORE"),
       "all_reduce": t.tolist(), "peer": peer, "gathered": gathered}
dist.destroy_process_group()
print("RESULT " + json.dumps(out, sort_keys=True), flush=True)
