"""Tiny transformers models trained with AdamW on seeded random tokens, run identically by
upstream torch and by torchnative.

    python train_transformers.py {llama,bert} STEPS

Prints one JSON object: per-step losses and the final parameter checksum per tensor."""
import json
import sys

import torch
import transformers


def build(kind):
    if kind == "llama":
        cfg = transformers.LlamaConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
        return transformers.LlamaForCausalLM(cfg)
    cfg = transformers.BertConfig(vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, max_position_embeddings=64, num_labels=3)
    return transformers.BertForSequenceClassification(cfg)


def main(kind, steps, attn):
    torch.manual_seed(0)
    model = build(kind)
    model.config._attn_implementation = attn
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 96, (4, 12))
    mask = torch.ones(4, 12, dtype=torch.long)
    mask[0, :3] = 0  # left padding in one row
    labels = ids if kind == "llama" else torch.tensor([0, 2, 1, 2])
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(input_ids=ids, attention_mask=mask, labels=labels)
        out.loss.backward()
        opt.step()
        losses.append(out.loss.item())
    sums = [p.detach().double().sum().item() for p in model.parameters()]
    print(json.dumps({"losses": losses, "param_sums": sums, "torch": torch.__version__}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else "sdpa")
