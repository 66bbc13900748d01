"""Seeded training on the digits data, run identically by upstream torch and by torchnative.

    python train_digits.py DIGITS_CSV_GZ {mlp,cnn} STEPS [ACT_SCALE]

ACT_SCALE (default 1) multiplies the first Linear layer's output: the comparator's self-test
uses 1.001, a 0.1% error in one activation, and must see the difference. (A gradient scaled by
a constant would not do: Adam's update is invariant to it; nor would the CNN's convolution, whose
scale its batch norm removes.)

Prints one JSON object: per-step losses, final parameters, test accuracy. Everything random
(init, batch order, dropout) comes from torch's seeded generator, so both runtimes draw the same
numbers. The convolution before batch norm has no bias: its gradient would be pure rounding
noise (batch norm removes the mean), which Adam turns into steps of arbitrary sign."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from torchnative.datasets import read_digits  # noqa: E402


def model_for(kind):
    if kind == "mlp":
        return nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    return nn.Sequential(
        nn.Unflatten(1, (1, 8, 8)),
        nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Dropout(0.1), nn.Flatten(), nn.Linear(8 * 4 * 4, 10),
    )


def main(path, kind, steps, act_scale=1.0):
    xs, ys = read_digits(path)
    x = torch.tensor(xs) / 16.0
    y = torch.tensor(ys)
    torch.manual_seed(0)
    perm = torch.randperm(len(ys))  # the file is ordered by writer: split at random
    x, y = x[perm], y[perm]
    x_train, y_train, x_test, y_test = x[:1500], y[:1500], x[1500:], y[1500:]
    model = model_for(kind)
    if act_scale != 1.0:
        first = next(m for m in model if isinstance(m, nn.Linear))
        first.register_forward_hook(lambda mod, inp, out: out * act_scale)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    order = torch.randperm(1500)
    for step in range(steps):
        if (step * 64) % 1500 + 64 > 1500:
            order = torch.randperm(1500)
        start = (step * 64) % 1500
        idx = order[start:start + 64]
        model.train()
        opt.zero_grad()
        loss = loss_fn(model(x_train[idx]), y_train[idx])
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        acc = (model(x_test).argmax(1) == y_test).float().mean().item()
    params = [p.detach().reshape(-1).tolist() for p in model.parameters()]
    print(json.dumps({"losses": losses, "params": params, "accuracy": acc, "torch": torch.__version__}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else 1.0)
