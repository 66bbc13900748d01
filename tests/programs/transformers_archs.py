"""Twenty transformers architectures built from small seeded configs, run identically by upstream
torch and by torchnative (issue 5, items 1 and 2).

    python transformers_archs.py MODE[,MODE...] [ARCH,ARCH...]

MODE is one of
  forward32   float32 logits, sdpa and eager attention where the model supports them
  forward64   the same weights and inputs in float64 (upstream's own rounding error)
  perturbed   float32 with every activation module's output scaled by 1.001 (the fault the
              tolerance must catch)
  generate    20 new tokens, greedy, seeded sampling (top_k, top_p, temperature) and beam search
              (3 beams), KV cache
  forward_bf16 / forward_fp16  the same forward in reduced precision (item 5)

Prints one JSON object {mode: {case: result}}; a case that raises records its exception type
and message, so a refusal by name shows up as such on the comparing side."""
import json
import sys

import torch
import transformers
from transformers.utils import logging

logging.set_verbosity_error()

VOCAB = 100
SEQ = 10  # prompt length; the second row has 3 left-padding tokens
PAD = 0
NEW_TOKENS = 20
COMMON = dict(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              intermediate_size=64, max_position_embeddings=64, pad_token_id=PAD, bos_token_id=1,
              eos_token_id=None, tie_word_embeddings=False)
# Per-architecture names for the same small shape (configs that name things their own way).
EXTRA = {
    "gpt2": dict(n_embd=32, n_layer=2, n_head=4, n_positions=64, n_inner=64),
    "gpt_bigcode": dict(n_embd=32, n_layer=2, n_head=4, n_positions=64, n_inner=64, multi_query=True),
    "opt": dict(ffn_dim=64, word_embed_proj_dim=32),
    "mpt": dict(d_model=32, n_heads=4, n_layers=2, max_seq_len=64, expansion_ratio=2),
    "bloom": dict(n_layer=2, n_head=4),
    "gemma": dict(head_dim=8),
    "mixtral": dict(num_local_experts=4, num_experts_per_tok=2),
    "mamba": dict(state_size=8, expand=2, conv_kernel=4, time_step_rank=4),
    "falcon": dict(new_decoder_architecture=True, num_kv_heads=2),
}
ARCHS = ["llama", "gpt2", "qwen2", "mistral", "gemma", "gpt_neox", "opt", "mpt", "starcoder2", "persimmon",
         "cohere", "stablelm", "olmo", "phi", "bert", "falcon", "bloom", "gpt_bigcode", "mixtral", "mamba"]
ENCODERS = {"bert"}
MOE = {"mixtral"}


def build(arch, attn, dtype, experts=None):
    cfg = transformers.AutoConfig.for_model(arch, **COMMON, **EXTRA.get(arch, {}))
    if arch == "bert":
        cfg.is_decoder = False
    cls = transformers.AutoModelForMaskedLM if arch in ENCODERS else transformers.AutoModelForCausalLM
    torch.manual_seed(0)
    kwargs = {} if attn is None else {"attn_implementation": attn}
    if experts is not None:
        kwargs["experts_implementation"] = experts
    model = cls.from_config(cfg, **kwargs).eval()
    return model.to(dtype)


def attentions(arch):
    """sdpa and eager where the model class supports sdpa; None (the model's only path) otherwise."""
    cfg = transformers.AutoConfig.for_model(arch, **COMMON, **EXTRA.get(arch, {}))
    cls = transformers.AutoModelForMaskedLM if arch in ENCODERS else transformers.AutoModelForCausalLM
    model_cls = cls._model_mapping[type(cfg)]
    if arch == "mamba":
        return [None]
    return ["sdpa", "eager"] if getattr(model_cls, "_supports_sdpa", False) else ["eager"]


def cases(arch):
    """(attention, experts implementation) pairs: Mixture-of-experts models run their experts both
    as a loop over experts ("eager") and through grouped_mm (transformers' default)."""
    pairs = [(attn, None) for attn in attentions(arch)]
    if arch in MOE:
        pairs = [(attn, "eager") for attn, _ in pairs] + [(pairs[0][0], "grouped_mm")]
    return pairs


def inputs():
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(2, VOCAB, (2, SEQ), generator=g)
    mask = torch.ones(2, SEQ, dtype=torch.long)
    ids[1, :3] = PAD  # left padding in the second row
    mask[1, :3] = 0
    return ids, mask


def is_activation(module):
    mod = type(module).__module__
    return (mod in ("torch.nn.modules.activation", "transformers.activations")
            or type(module).__name__.lower().endswith("gelu"))


def perturb(model):
    """Scale every activation module's output by 1.001 (a 0.1% error in the activation function).
    Returns the call counter; Mamba calls F.silu directly, so it is patched there instead."""
    calls = [0]

    def scaled(out):
        calls[0] += 1
        return out * 1.001

    for module in model.modules():
        if is_activation(module):
            module.register_forward_hook(lambda _m, _i, out: scaled(out))
    silu = torch.nn.functional.silu
    if model.config.model_type == "mamba":
        torch.nn.functional.silu = lambda x, inplace=False: scaled(silu(x))
    return calls, lambda: setattr(torch.nn.functional, "silu", silu)


def forward(arch, attn, dtype, perturbed=False, experts=None):
    if experts == "grouped_mm" and dtype is torch.float64:
        experts = "eager"  # upstream's grouped_mm has no float64 kernel; eager experts compute the same function
    model = build(arch, attn, dtype, experts)
    calls, undo = perturb(model) if perturbed else (None, lambda: None)
    ids, mask = inputs()
    try:
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=mask).logits
    finally:
        undo()
    if calls is not None and not calls[0]:
        raise RuntimeError("the perturbed activation never ran")
    return {"shape": list(logits.shape), "dtype": str(logits.dtype), "values": logits.double().flatten().tolist()}


def generate(arch, attn, experts=None):
    model = build(arch, attn, torch.float32, experts)
    ids, mask = inputs()
    common = dict(attention_mask=mask, max_new_tokens=NEW_TOKENS, min_new_tokens=NEW_TOKENS, pad_token_id=PAD, use_cache=True)
    with torch.no_grad():
        greedy = model.generate(ids, do_sample=False, **common)
        torch.manual_seed(7)
        sampled = model.generate(ids, do_sample=True, top_k=20, top_p=0.9, temperature=0.8, **common)
        beams = model.generate(ids, do_sample=False, num_beams=3, **common)  # the cache reordered per beam
    return {"greedy": greedy.tolist(), "sampled": sampled.tolist(), "beam": beams.tolist()}


def run_case(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except Exception as exc:  # recorded, compared by the test: a refusal must name the operator
        return {"error": f"{type(exc).__name__}: {str(exc)[:300]}"}


def main(modes, archs):
    dtypes = {"forward32": torch.float32, "forward64": torch.float64, "perturbed": torch.float32,
              "forward_bf16": torch.bfloat16, "forward_fp16": torch.float16}
    out = {"torch": torch.__version__, "transformers": transformers.__version__}
    for mode in modes:
        res = out[mode] = {}
        for arch in archs:
            for attn, experts in cases(arch):
                key = f"{arch}/{attn or 'default'}" + (f"/{experts}" if experts else "")
                if mode == "generate":
                    if arch not in ENCODERS:
                        res[key] = run_case(generate, arch, attn, experts)
                else:
                    res[key] = run_case(forward, arch, attn, dtypes[mode], perturbed=mode == "perturbed",
                                         experts=experts)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1].split(","), sys.argv[2].split(",") if len(sys.argv) > 2 else ARCHS)
