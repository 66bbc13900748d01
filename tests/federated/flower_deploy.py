"""Flower's own deployment on 127.0.0.1: a SuperLink and SuperNodes as separate processes,
started with a chosen interpreter (ours or upstream's) and always stopped.

flwr lives in build/flwr-site (`pip install --target build/flwr-site -r requirements/flower.txt`):
it pins protobuf, typer and packaging below what .venv has, so it is kept out of the shared venv
and put first on PYTHONPATH only for these processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from pathlib import Path

import harness

REPO = harness.REPO
SITE = REPO / "build" / "flwr-site"
APP = REPO / "examples" / "flower_digits"
ENTRY_POINTS = {
    "flower-superlink": ("flwr.superlink.cli", "flower_superlink"),
    "flower-supernode": ("flwr.supernode.cli", "flower_supernode"),
    "flower-superexec": ("flwr.supercore.cli", "flower_superexec"),
    "flwr-serverapp": ("flwr.superlink.cli", "flwr_serverapp"),
    "flwr-clientapp": ("flwr.supernode.cli", "flwr_clientapp"),
    "flwr": ("flwr.cli.app", "app"),
}


def available() -> str | None:
    if not (SITE / "flwr").is_dir():
        return "flwr is not installed: pip install --target build/flwr-site -r requirements/flower.txt"
    return None


def _wait_port(port: int, proc, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"exited with {proc.returncode} before listening on {port}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {seconds} s")


class Deployment:
    """with Deployment(python, tmp, nodes=2) as d: d.run({...}) -> the ServerApp's output."""

    def __init__(self, python: str, tmp: Path, nodes: int = 2):
        self.python, self.tmp, self.nodes = python, tmp, nodes
        self.procs: list[subprocess.Popen] = []
        self.home = tmp / "flwr-home"
        self.bin = tmp / "bin"

    def __enter__(self):
        self.home.mkdir(parents=True)
        self.bin.mkdir()
        for name, (module, func) in ENTRY_POINTS.items():  # Flower starts its children by these names
            path = self.bin / name
            path.write_text(f"#!{self.python}\nimport sys\nfrom {module} import {func}\nsys.exit({func}())\n")
            path.chmod(0o755)
        self.env = dict(harness.env_for(), FLWR_HOME=str(self.home), PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}",
                        PYTHONPATH=os.pathsep.join([str(SITE), str(REPO)]))
        port = harness.free_port()  # Flower 1.42 serves the Fleet, Control and Runtime APIs on one HTTP port
        (self.home / "config.toml").write_text(
            f'[superlink]\ndefault = "local"\n\n[superlink.local]\naddress = "127.0.0.1:{port}"\ninsecure = true\n')
        try:
            # no runtime dependency installation: the processes use this interpreter's packages
            link = self._start("superlink", ["flower-superlink", "--insecure", "--database", ":flwr-in-memory:",
                                             "--host", "127.0.0.1", "--port", str(port),
                                             "--disable-runtime-dependency-installation"])
            _wait_port(port, link, 60)
            for i in range(self.nodes):
                self._start(f"supernode{i}", ["flower-supernode", "--insecure", "--superlink", f"127.0.0.1:{port}",
                                              "--host", "127.0.0.1", "--port", str(harness.free_port()),
                                              "--node-config", f"partition-id={i} num-partitions={self.nodes}"])
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _start(self, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "wb")
        proc = subprocess.Popen(cmd, env=self.env, cwd=self.tmp, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.procs.append(proc)
        return proc

    def run(self, config: dict, timeout: float = 150) -> dict:
        """`flwr run` the example app with these run-config overrides; wait for its output."""
        out = self.tmp / f"result-{len(list(self.tmp.glob('result-*.npz')))}.npz"
        overrides = " ".join(f"{k}={json.dumps(v)}" for k, v in {**config, "out": str(out),
                                                                  "min-clients": self.nodes}.items())
        started = self._flwr("run", str(APP), "local", "--run-config", overrides, "--format", "json")
        run_id = str(started.get("run-id", ""))
        end = time.monotonic() + timeout
        done = Path(str(out) + ".json")
        while not done.exists():
            if time.monotonic() > end:
                raise TimeoutError(f"the Flower run did not finish in {timeout} s; logs in {self.tmp}:\n"
                                   + self.logs())
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"a Flower process exited ({dead[0].args[0]}): \n" + self.logs())
            runs = [r for r in self._flwr("ls", "local", "--format", "json").get("runs", [])
                    if str(r.get("run-id")) == run_id]
            if runs and runs[0]["status"].startswith("finished:") and runs[0]["status"] != "finished:completed":
                raise RuntimeError(f"Flower run {run_id}: {runs[0]['status']}: {runs[0].get('status-details')}")
            time.sleep(2)
        time.sleep(0.2)
        import numpy as np

        with np.load(out) as z:
            weights = [z[k] for k in sorted(z.files, key=lambda s: int(s.split("_")[1]))]
        return {"weights": weights, **json.loads(done.read_text())}

    def _flwr(self, *args: str) -> dict:
        proc = subprocess.run(["flwr", *args], env=self.env, cwd=self.tmp, timeout=120, capture_output=True, text=True)
        try:
            return json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise RuntimeError(f"flwr {args[0]} failed ({proc.returncode}): {proc.stdout[-2000:]} {proc.stderr[-2000:]}")

    def logs(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(self.tmp.glob("*.log")))

    def __exit__(self, *exc):
        for p in self.procs:  # each was started in its own session: stop the whole group
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(timeout=10)
        _kill_leftovers(str(self.home))


def _kill_leftovers(marker: str) -> None:
    """Flower's detached children (SuperExec, app processes) of this deployment, found by FLWR_HOME."""
    needle = f"FLWR_HOME={marker}".encode()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            env = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            try:
                os.kill(int(pid), signal.SIGKILL)
            except ProcessLookupError:
                pass
