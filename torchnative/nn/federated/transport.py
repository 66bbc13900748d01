"""Point-to-point messages between the coordinator and each client, with deadlines.

Why point-to-point and not collectives: a collective needs every member, so one dead or slow
client stalls it for all. Here each client has its own two-rank process group with the
coordinator (new_group([0, c]), created at the start), and every message goes by isend/irecv on
that pair's group. A client that dies makes its pending receive fail at once ("connection
closed"); a straggler simply has not answered when the round's deadline passes. Only that client
is dropped, and the other pairs go on.

Why a thread per wait rather than Work.wait(timeout): on gloo a receive that times out closes
*every* pair of its context ("Application timeout caused pair closure"), so a timeout must never
reach the backend. The coordinator waits in a daemon thread and gives up on the thread instead;
the receive stays posted and the straggler's late reply lands in its buffer (kept alive), so the
pair stays usable: the straggler still gets the final weights at the end. A peer that never
answers at all leaves one blocked thread until its pair group's own timeout. This needs nothing
but torch.distributed's public API (new_group, isend, irecv, Work.wait), so it runs on any backend.

The framing keeps a dropped straggler harmless: coordinator -> client is a fixed-size int64
header, then a payload whose length the header gives; client -> coordinator is always ONE
message whose exact size the coordinator fixed in its header. So the receive the coordinator
gave up on is posted for exactly the message the straggler will eventually send, and the
coordinator never receives from a dropped client again.
"""

from __future__ import annotations

import struct
import threading
import time

import torch
import torch.distributed as dist

MAGIC = 0x46454431  # "FED1"
HEADER_LEN = 6  # magic, command, round, payload bytes, reply bytes, spare


class PeerLost(Exception):
    """A peer died, timed out or sent a malformed message; .reason says which."""

    def __init__(self, rank: int, reason: str):
        super().__init__(f"rank {rank}: {reason}")
        self.rank, self.reason = rank, reason


def _failure(exc: BaseException, rank: int, what: str) -> PeerLost:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return PeerLost(rank, f"failed {what} ({text})")


def _waiting(*works):
    """A daemon thread that waits for the works in order; its box gets None or the exception."""
    box = []

    def waiter():
        try:
            for w in works:
                w.wait()
            box.append(None)
        except BaseException as exc:  # noqa: BLE001 -- handed to the joining thread
            box.append(exc)

    thread = threading.Thread(target=waiter, daemon=True, name="federated-wait")
    thread.start()
    return thread, box


def _wait(work, rank: int, seconds: float | None, what: str) -> None:
    """Wait for a Work; with `seconds`, give up after that long without touching the backend."""
    if seconds is None:
        try:
            work.wait()
        except Exception as exc:  # backends raise RuntimeError/DistBackendError subclasses
            raise _failure(exc, rank, what) from None
        return
    thread, box = _waiting(work)
    thread.join(max(seconds, 0.0))
    if not box:
        raise PeerLost(rank, f"timed out {what} (no answer in the time allowed)")
    if box[0] is not None:
        raise _failure(box[0], rank, what)


def _as_tensor(data: bytes) -> torch.Tensor:
    return torch.frombuffer(bytearray(data), dtype=torch.uint8)


class Link:
    """The coordinator's or a client's side of the star of two-rank groups."""

    def __init__(self, groups: dict):
        self.groups = groups  # peer rank -> the two-rank group it shares with this rank
        self.sent = 0
        self.received = 0
        self._abandoned = []  # (work, buffer) of receives given up on: kept alive, never reused

    # --- coordinator -> client ------------------------------------------------------------
    def post(self, dst: int, command: int, rnd: int, payload: bytes = b"", reply: int = 0) -> list:
        """Start sending a command; returns the Works (`gather` waits for them)."""
        header = torch.tensor([MAGIC, command, rnd, len(payload), reply, 0], dtype=torch.int64)
        works = [(dist.isend(header, dst, group=self.groups[dst]), header)]
        if payload:
            buf = _as_tensor(payload)
            works.append((dist.isend(buf, dst, group=self.groups[dst]), buf))
        self.sent += header.numel() * 8 + len(payload)
        return works

    def expect(self, src: int, nbytes: int):
        """Post the receive of a client's one reply of `nbytes`."""
        buf = torch.empty(nbytes, dtype=torch.uint8)
        return dist.irecv(buf, src, group=self.groups[src]), buf

    def gather(self, pending: dict, seconds_left) -> tuple[dict, dict]:
        """Wait for many clients at once: pending maps rank -> (send works, posted receive).
        One waiting thread per client starts now, so a reply that arrived before the deadline
        counts even when an earlier client used the time up. seconds_left() is called per join
        (None: no limit). Returns ({rank: reply bytes}, {rank: PeerLost})."""
        boxes = {c: _waiting(*(w for w, _ in works), posted[0]) for c, (works, posted) in pending.items()}
        replies, lost = {}, {}
        for c, (thread, box) in boxes.items():
            left = seconds_left()
            thread.join(left)
            if not box:
                self._abandoned.append(pending[c])
                lost[c] = PeerLost(c, "timed out waiting for its reply (no answer in the time allowed)")
            elif box[0] is not None:
                lost[c] = _failure(box[0], c, "waiting for its reply")
            else:
                buf = pending[c][1][1]
                self.received += buf.numel()
                replies[c] = buf.numpy().tobytes()
        return replies, lost

    # --- client side ----------------------------------------------------------------------
    def receive_command(self, src: int, seconds: float | None) -> tuple[int, int, bytes, int]:
        """(command, round, payload, reply size) of the coordinator's next message."""
        header = torch.empty(HEADER_LEN, dtype=torch.int64)
        try:
            work = dist.irecv(header, src, group=self.groups[src])
        except Exception as exc:  # noqa: BLE001
            raise _failure(exc, src, "waiting for the coordinator") from None
        _wait(work, src, seconds, "waiting for the coordinator")
        magic, command, rnd, nbytes, reply, _ = (int(x) for x in header.tolist())
        if magic != MAGIC:
            raise PeerLost(src, f"sent a message that is not a federated command (magic {magic:#x})")
        payload = b""
        if nbytes:
            buf = torch.empty(nbytes, dtype=torch.uint8)
            _wait(dist.irecv(buf, src, group=self.groups[src]), src, seconds, "receiving the coordinator's payload")
            payload = buf.numpy().tobytes()
        return command, rnd, payload, reply

    def reply(self, dst: int, data: bytes, size: int, seconds: float | None) -> None:
        """Send one reply of exactly `size` bytes (padded), as the coordinator asked."""
        if len(data) > size:
            raise ValueError(f"reply of {len(data)} bytes exceeds the {size} the coordinator allowed")
        buf = _as_tensor(data + bytes(size - len(data)))
        try:
            work = dist.isend(buf, dst, group=self.groups[dst])
        except Exception as exc:  # noqa: BLE001 -- a closed pair raises at once on some backends
            raise _failure(exc, dst, "sending to the coordinator") from None
        _wait(work, dst, seconds, "sending to the coordinator")
        self.sent += size


# Small framed records inside payloads: an 8-byte length, then JSON or raw bytes.
def pack(*parts: bytes) -> bytes:
    return b"".join(struct.pack("<Q", len(p)) + p for p in parts)


def unpack(data: bytes, count: int) -> list[bytes]:
    out, at = [], 0
    for _ in range(count):
        (n,) = struct.unpack_from("<Q", data, at)
        at += 8
        out.append(data[at:at + n])
        at += n
    return out


class Deadline:
    def __init__(self, seconds: float | None):
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self) -> float | None:
        return None if self.end is None else max(self.end - time.monotonic(), 0.001)
