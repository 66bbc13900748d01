"""Secure aggregation with pairwise masks that cancel in the sum and survive dropout (SecAgg+ style).

Bonawitz et al. 2017, with SecAgg+'s neighbourhoods (Bell et al. 2020): each client masks its
fixed-point input with a self mask PRG(b_i) and, for every neighbour j, +-PRG(s_ij), where s_ij
comes from an X25519 agreement between i's and j's mask keys, so the pairwise masks cancel in
the sum. Each client Shamir-shares b_i and its mask private key among its neighbourhood (the
shares travel through the coordinator encrypted with AES-GCM under a second X25519 agreement).
After the masked inputs arrive, survivors reveal shares of survivors' b (to strip self masks) and
of dropped clients' mask keys (to strip the pairwise masks the dropped client's neighbours
added) -- never both for one client. The coordinator learns only the sum.

Arithmetic is exact: inputs are fixed-point (round(x * 2^frac_bits) as int64) and everything
is summed modulo 2^64 (numpy uint64 wraps), so the unmasked sum equals the plain sum of the
quantized inputs bit for bit. Shamir shares live in GF(2^521 - 1). The cryptography package
(X25519, HKDF-SHA256, AES-GCM) supplies the primitives; nothing here is home-made crypto
beyond Shamir's polynomial arithmetic.
"""

from __future__ import annotations

import base64
import json
import math
import secrets

import numpy as np

PRIME = 2 ** 521 - 1  # a Mersenne prime: larger than any 32-byte secret


# --- Shamir secret sharing over GF(PRIME) ---------------------------------------------------
def shamir_split(secret: int, threshold: int, xs: list[int]) -> dict[int, int]:
    """Shares (x, f(x)) of a random degree threshold-1 polynomial with f(0) = secret."""
    if not 0 <= secret < PRIME:
        raise ValueError("secret out of range")
    if not 1 <= threshold <= len(xs):
        raise ValueError(f"threshold {threshold} needs between 1 and {len(xs)} shares")
    coeffs = [secret] + [secrets.randbelow(PRIME) for _ in range(threshold - 1)]
    out = {}
    for x in xs:
        if x % PRIME == 0:
            raise ValueError("share points must be non-zero")
        y = 0
        for c in reversed(coeffs):
            y = (y * x + c) % PRIME
        out[x] = y
    return out


def shamir_combine(points: dict[int, int]) -> int:
    """f(0) by Lagrange interpolation through the given points."""
    total = 0
    xs = list(points)
    for xj in xs:
        num, den = 1, 1
        for xm in xs:
            if xm != xj:
                num = num * (-xm) % PRIME
                den = den * (xj - xm) % PRIME
        total = (total + points[xj] * num * pow(den, -1, PRIME)) % PRIME
    return total


# --- fixed point and masks ------------------------------------------------------------------
def quantize(x: np.ndarray, frac_bits: int) -> np.ndarray:
    scaled = np.rint(np.asarray(x, np.float64) * float(2 ** frac_bits))
    if scaled.size and np.abs(scaled).max() >= 2.0 ** 62:
        raise OverflowError("secure aggregation: a value is too large for the fixed-point range; lower frac_bits")
    return scaled.astype(np.int64).view(np.uint64)


def dequantize(total: np.ndarray, frac_bits: int) -> np.ndarray:
    return total.view(np.int64).astype(np.float64) / float(2 ** frac_bits)


def prg(seed: bytes, n: int) -> np.ndarray:
    """n uniform uint64 words from a 32-byte seed (PCG64 keyed by the seed)."""
    return np.random.PCG64(int.from_bytes(seed, "little")).random_raw(n).astype(np.uint64)


def neighbours(sampled: list[int], i: int, num_shares: int | None) -> list[int]:
    """i's neighbourhood: everyone (num_shares None) or the num_shares nearest on the ring of sampled ranks."""
    others = [j for j in sampled if j != i]
    if num_shares is None or num_shares >= len(others):
        return others
    ring = sorted(sampled)
    at = ring.index(i)
    out = []
    for step in range(1, len(ring)):
        for j in (ring[(at + step) % len(ring)], ring[(at - step) % len(ring)]):
            if j != i and j not in out and len(out) < num_shares:
                out.append(j)
    return sorted(out)


def default_threshold(group: int) -> int:
    """Shares needed to rebuild a secret held by a neighbourhood of `group` (itself included)."""
    return min(group, max(2, math.ceil(2 * group / 3)))


def _crypto():
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return hashes, serialization, X25519PrivateKey, X25519PublicKey, AESGCM, HKDF


def _raw_pub(key) -> bytes:
    _, ser, *_ = _crypto()
    return key.public_key().public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)


def _raw_priv(key) -> bytes:
    _, ser, *_ = _crypto()
    return key.private_bytes(ser.Encoding.Raw, ser.PrivateFormat.Raw, ser.NoEncryption())


def _agree(priv_raw: bytes, pub_raw: bytes, info: bytes) -> bytes:
    hashes, _, Priv, Pub, _, HKDF = _crypto()
    shared = Priv.from_private_bytes(priv_raw).exchange(Pub.from_public_bytes(pub_raw))
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=info).derive(shared)


def _pair_info(kind: str, rnd: int, a: int, b: int) -> bytes:
    lo, hi = sorted((a, b))
    return f"torchnative-secagg/{kind}/{rnd}/{lo}/{hi}".encode()


def pairwise_mask(priv_raw: bytes, pub_raw: bytes, rnd: int, i: int, j: int, n: int) -> np.ndarray:
    """The mask i adds for neighbour j: +PRG(s_ij) when i < j, -PRG(s_ij) when i > j (mod 2^64)."""
    words = prg(_agree(priv_raw, pub_raw, _pair_info("mask", rnd, i, j)), n)
    return words if i < j else (np.zeros(n, np.uint64) - words)


class SecAggClient:
    """One client's side of one round."""

    def __init__(self, rank: int, rnd: int, sampled: list[int], threshold: int | None, num_shares: int | None):
        _, _, Priv, *_ = _crypto()
        self.rank, self.rnd = rank, rnd
        self.nbrs = neighbours(sampled, rank, num_shares)
        self.threshold = threshold or default_threshold(len(self.nbrs) + 1)
        self._c = Priv.generate()
        self._s = Priv.generate()
        self._b = secrets.token_bytes(32)
        self.pks = {}
        self.held = {}  # j -> (share of b_j, share of s_sk_j), this client's point x = rank + 1

    def keys(self) -> dict:
        return {"c": _raw_pub(self._c).hex(), "s": _raw_pub(self._s).hex()}

    def shares(self, pks: dict) -> dict:
        """Encrypted shares of b and of the mask key for every neighbour that published keys."""
        _, _, _, _, AESGCM, _ = _crypto()
        self.pks = {int(j): (bytes.fromhex(v["c"]), bytes.fromhex(v["s"])) for j, v in pks.items()}
        group = [j for j in self.nbrs if j in self.pks] + [self.rank]
        if len(group) < self.threshold:
            raise RuntimeError(f"secure aggregation: {len(group)} clients in the neighbourhood, threshold {self.threshold}")
        xs = [j + 1 for j in group]
        b_sh = shamir_split(int.from_bytes(self._b, "little"), self.threshold, xs)
        sk_sh = shamir_split(int.from_bytes(_raw_priv(self._s), "little"), self.threshold, xs)
        self.held[self.rank] = (b_sh[self.rank + 1], sk_sh[self.rank + 1])
        out = {}
        for j in group:
            if j == self.rank:
                continue
            key = _agree(_raw_priv(self._c), self.pks[j][0], _pair_info("share", self.rnd, self.rank, j))
            nonce = secrets.token_bytes(12)
            plain = json.dumps({"b": hex(b_sh[j + 1]), "sk": hex(sk_sh[j + 1])}).encode()
            aad = f"{self.rank}->{j}@{self.rnd}".encode()
            out[str(j)] = base64.b64encode(nonce + AESGCM(key).encrypt(nonce, plain, aad)).decode()
        return out

    def receive(self, cts: dict) -> None:
        _, _, _, _, AESGCM, _ = _crypto()
        for j, ct in cts.items():
            j = int(j)
            if j not in self.nbrs:
                raise RuntimeError(f"secure aggregation: got shares from rank {j}, not a neighbour")
            raw = base64.b64decode(ct)
            key = _agree(_raw_priv(self._c), self.pks[j][0], _pair_info("share", self.rnd, self.rank, j))
            plain = json.loads(AESGCM(key).decrypt(raw[:12], raw[12:], f"{j}->{self.rank}@{self.rnd}".encode()))
            self.held[j] = (int(plain["b"], 16), int(plain["sk"], 16))

    def mask(self, x: np.ndarray, shared: list[int]) -> np.ndarray:
        """x (uint64) + PRG(b_i) + the pairwise masks with every neighbour that completed the sharing."""
        y = x + prg(self._b, len(x))
        for j in self.nbrs:
            if j in shared:
                if j not in self.held:
                    raise RuntimeError(f"secure aggregation: rank {j} shared keys but sent this client no shares")
                y = y + pairwise_mask(_raw_priv(self._s), self.pks[j][1], self.rnd, self.rank, j, len(x))
        return y

    def unmask(self, survivors: list[int], dropped: list[int]) -> dict:
        """Shares of survivors' b and of dropped clients' mask keys; refuses to reveal both for anyone."""
        if set(survivors) & set(dropped):
            raise RuntimeError("secure aggregation: the coordinator asked for both secrets of one client")
        b = {str(j): hex(self.held[j][0]) for j in survivors if j in self.held}
        sk = {str(j): hex(self.held[j][1]) for j in dropped if j in self.held and j != self.rank}
        return {"b": b, "sk": sk}


class SecAggServer:
    """The coordinator's side: routes shares, sums masked inputs, strips the masks."""

    def __init__(self, rnd: int, sampled: list[int], threshold: int | None, num_shares: int | None):
        self.rnd, self.sampled, self.num_shares = rnd, sorted(sampled), num_shares
        self.threshold = threshold
        self.pks = {}
        self.cts = {}  # receiver -> {sender: ciphertext}
        self.shared = []  # ranks whose shares went out (U2)

    def nbrs(self, i: int) -> list[int]:
        return neighbours(self.sampled, i, self.num_shares)

    def need(self, i: int) -> int:
        return self.threshold or default_threshold(len(self.nbrs(i)) + 1)

    def add_keys(self, i: int, keys: dict) -> None:
        self.pks[i] = keys

    def keys_for(self, i: int) -> dict:
        return {str(j): self.pks[j] for j in self.nbrs(i) if j in self.pks}

    def add_shares(self, i: int, cts: dict) -> None:
        for j, ct in cts.items():
            if int(j) not in self.nbrs(i):
                raise RuntimeError(f"rank {i} sent shares to rank {j}, not its neighbour")
            self.cts.setdefault(int(j), {})[str(i)] = ct
        self.shared.append(i)

    def shares_for(self, i: int) -> dict:
        return {s: ct for s, ct in self.cts.get(i, {}).items() if int(s) in self.shared}

    def unmask(self, total: np.ndarray, survivors: list[int], revealed: dict[int, dict]) -> np.ndarray:
        """total (sum of survivors' masked inputs, uint64) with every mask removed."""
        n = len(total)
        out = total.copy()
        dropped = [j for j in self.shared if j not in survivors]
        for j in survivors:
            pts = {i + 1: int(r["b"][str(j)], 16) for i, r in revealed.items() if str(j) in r["b"]}
            if len(pts) < self.need(j):
                raise RuntimeError(f"secure aggregation: {len(pts)} shares of rank {j}'s self mask, need {self.need(j)}")
            b = shamir_combine(pts).to_bytes(32, "little")
            out = out - prg(b, n)
        for j in dropped:
            pts = {i + 1: int(r["sk"][str(j)], 16) for i, r in revealed.items() if str(j) in r["sk"]}
            if len(pts) < self.need(j):
                raise RuntimeError(f"secure aggregation: {len(pts)} shares of dropped rank {j}'s key, need {self.need(j)}")
            sk = shamir_combine(pts).to_bytes(32, "little")
            for k in self.nbrs(j):
                if k in survivors:
                    # k added its mask for j: pairwise_mask(k, j) == -pairwise_mask(j, k)
                    out = out + pairwise_mask(sk, bytes.fromhex(self.pks[k]["s"]), self.rnd, j, k, n)
        return out
