"""The adaptation methods: what each configures, which parameters it trains, and one adapting
forward. Plain torch only (no torchnative_core), so the same code runs on upstream torch.

Each method follows its authors' reference code and takes its defaults from there:

- `BNAdapt`: DequanWang/tent norm.py (test-batch statistics, no parameter update);
- `Tent`: DequanWang/tent tent.py with cfgs/tent.yaml (Adam lr 1e-3, betas (0.9, 0.999));
- `EATA`: mr-eggplant/EATA eata.py with main.py's settings (SGD lr 2.5e-4, momentum 0.9);
- `SAR`: mr-eggplant/SAR sar.py and sam.py with main.py's settings (SAM over SGD);
- `LMEntropy`: ours (no reference code): Tent's loss on a causal LM's norm layers, with a
  collapse guard.

A method object only holds hyperparameters; `wrap` copies it, and the copy keeps the running
state of one adapted model (EATA's probability average, SAR's entropy average).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


def softmax_entropy(logits: torch.Tensor, dim: int = 1) -> torch.Tensor:
    """Entropy of the softmax of `logits` along `dim` (the references' `softmax_entropy`)."""
    return -(logits.softmax(dim) * logits.log_softmax(dim)).sum(dim)


def _layer_names(types) -> str:
    return ", ".join(f"torch.nn.{t.__name__}" if getattr(nn, t.__name__, None) is t else t.__name__ for t in types)


def _logits(outputs):
    """The logits in a model's output: a tensor, a transformers ModelOutput, or a tuple."""
    if isinstance(outputs, torch.Tensor):
        return outputs
    logits = getattr(outputs, "logits", None)
    if logits is not None:
        return logits
    if isinstance(outputs, (tuple, list)) and outputs and isinstance(outputs[0], torch.Tensor):
        return outputs[0]
    raise TypeError(f"cannot find logits in a model output of type {type(outputs).__name__}")


def _detached(outputs):
    if isinstance(outputs, torch.Tensor):
        return outputs.detach()
    logits = getattr(outputs, "logits", None)
    if logits is not None:
        outputs.logits = logits.detach()
    return outputs


def _drop_running_stats(m: nn.Module) -> None:
    """Tent's configure_model: batch norm normalises by the batch's statistics in train and
    eval mode alike, and the source statistics are dropped."""
    m.track_running_stats = False
    m.running_mean = None
    m.running_var = None


class Method:
    """Base of the adaptation methods. Subclasses set `layers` (the module types they adapt) and
    implement `configure` and `adapt`; the rest is shared."""

    name = "method"
    layers: tuple = ()
    #: whether `check_model`'s rule applies: the references assert that some, but not all,
    #: parameters train.
    partial_update = True
    #: whether the method trains parameters (BNAdapt only re-estimates statistics)
    needs_parameters = True

    def select(self, model: nn.Module) -> list[tuple[str, nn.Module]]:
        """The (name, module) pairs this method adapts in `model`."""
        return [(n, m) for n, m in model.named_modules() if isinstance(m, self.layers)]

    def trainable(self, model: nn.Module) -> list[str]:
        """Names of the parameters the method trains (affine weight and bias of its layers)."""
        out = []
        for n, m in self.select(model):
            for pn in ("weight", "bias"):
                if isinstance(m._parameters.get(pn), nn.Parameter):
                    out.append(f"{n}.{pn}" if n else pn)
        return out

    def require_layers(self, model: nn.Module) -> None:
        """A clear error for a model without the layers the method needs."""
        if not self.select(model):
            raise ValueError(f"{self.name} needs {_layer_names(self.layers)} layers to adapt; "
                             f"{type(model).__name__} has none")
        if self.needs_parameters and not self.trainable(model):
            raise ValueError(f"{self.name} trains the affine weight and bias of {_layer_names(self.layers)} "
                             f"layers; those of {type(model).__name__} have none (affine=False)")

    def delta_keys(self, model: nn.Module) -> list[str]:
        """State-dict keys of what adaptation may change: the trained parameters (and, for
        methods that keep them, the statistics buffers)."""
        return self.trainable(model)

    def configure(self, model: nn.Module) -> None:
        raise NotImplementedError

    def make_optimizer(self, params):
        return None

    def prepare(self, model: nn.Module, optimizer) -> None:
        """Runs once after configure, before the snapshot that reset() returns to (EATA's Fisher
        information is measured here)."""

    def reset_state(self, episodic: bool = False) -> None:
        """Clears the method's running state; `episodic` is the per-batch reset of the
        references' `episodic=True`, which some of them leave partly in place."""

    def adapt(self, model: nn.Module, optimizer, args, kwargs, recover):
        """One adapting call on `model(*args, **kwargs)`; returns the predictions. `recover()`
        puts the weights, buffers and optimizer back to the source (SAR's model recovery, the
        LM collapse guard); the method's own state is the method's to handle."""
        raise NotImplementedError

    def stats(self) -> dict:
        return {}

    def describe(self) -> dict:
        """The hyperparameters, for the delta's metadata."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_") and isinstance(v, (int, float, str, bool, tuple))}


class BNAdapt(Method):
    """Test-time normalisation (Schneider et al. 2020; the "norm" baseline of Tent's repository,
    norm.py): batch norm layers are put in train mode, so they normalise by the test batch's
    statistics and update their running statistics with `momentum`; no parameter changes.
    eps and momentum are set on every layer as norm.py does (defaults 1e-5 and 0.1);
    `reset_stats` starts the running statistics from scratch, `no_stats` drops them."""

    name = "BNAdapt"
    needs_parameters = False

    def __init__(self, eps: float = 1e-5, momentum: float = 0.1, reset_stats: bool = False, no_stats: bool = False,
                 layers: tuple = (nn.BatchNorm2d,)):
        self.eps, self.momentum, self.reset_stats, self.no_stats = eps, momentum, reset_stats, no_stats
        self.layers = tuple(layers)

    def trainable(self, model):
        return []

    def delta_keys(self, model):
        if self.no_stats:
            return []
        keys = []
        for n, m in self.select(model):
            for b in ("running_mean", "running_var", "num_batches_tracked"):
                if m._buffers.get(b) is not None:
                    keys.append(f"{n}.{b}" if n else b)
        return keys

    def configure(self, model):
        for _, m in self.select(model):
            m.train()
            m.eps, m.momentum = self.eps, self.momentum
            if self.reset_stats:
                m.reset_running_stats()
            if self.no_stats:
                _drop_running_stats(m)

    def adapt(self, model, optimizer, args, kwargs, recover):
        with torch.no_grad():
            return model(*args, **kwargs)


class _EntropyMethod(Method):
    """Shared by Tent, EATA and SAR: their configure_model (train mode, every parameter frozen
    but the adapted layers', batch norm on batch statistics) and optimizer choice."""

    def configure(self, model):
        model.train()
        model.requires_grad_(False)
        names = set(self.trainable(model))
        for n, p in model.named_parameters():
            if n in names:
                p.requires_grad_(True)
        for _, m in model.named_modules():
            if isinstance(m, nn.BatchNorm2d) and isinstance(m, self.layers):
                _drop_running_stats(m)

    def make_optimizer(self, params):
        if self.optimizer == "adam":
            return torch.optim.Adam(params, lr=self.lr, betas=self.betas, weight_decay=self.weight_decay)
        if self.optimizer == "sgd":
            return torch.optim.SGD(params, lr=self.lr, momentum=self.momentum, dampening=self.dampening,
                                   weight_decay=self.weight_decay, nesterov=self.nesterov)
        raise ValueError(f"{self.name}: optimizer must be 'adam' or 'sgd', not {self.optimizer!r}")


class Tent(_EntropyMethod):
    """Tent (Wang et al., ICLR 2021; tent.py): the affine weight and bias of the batch norm
    layers train to minimise the batch's mean softmax entropy; batch norm uses the batch's
    statistics (running statistics dropped); each call takes `steps` optimizer steps and
    returns the predictions of its last forward, made before that step. Defaults are
    cfgs/tent.yaml's: Adam, lr 1e-3, betas (0.9, 0.999), no weight decay, one step; the SGD
    option has conf.py's momentum 0.9, dampening 0, Nesterov."""

    name = "Tent"

    def __init__(self, lr: float = 1e-3, betas: tuple = (0.9, 0.999), weight_decay: float = 0.0, steps: int = 1,
                 optimizer: str = "adam", momentum: float = 0.9, dampening: float = 0.0, nesterov: bool = True,
                 layers: tuple = (nn.BatchNorm2d,)):
        if steps < 1:
            raise ValueError("Tent requires >= 1 step(s) to forward and update")
        self.lr, self.betas, self.weight_decay, self.steps = lr, tuple(betas), weight_decay, steps
        self.optimizer, self.momentum, self.dampening, self.nesterov = optimizer, momentum, dampening, nesterov
        self.layers = tuple(layers)

    def adapt(self, model, optimizer, args, kwargs, recover):
        with torch.enable_grad():
            for _ in range(self.steps):
                outputs = model(*args, **kwargs)
                loss = softmax_entropy(_logits(outputs)).mean(0)
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
        return _detached(outputs)


class EATA(_EntropyMethod):
    """EATA (Niu et al., ICML 2022; eata.py). Entropy minimisation on the batch norm affine
    parameters, restricted to reliable samples (entropy below `e_margin`, default 0.4 ln C with
    C the number of classes, as main.py) that are not redundant (cosine similarity below
    `d_margin` = 0.05 to a 0.9-EMA of the selected samples' mean probabilities), each weighted
    by 1 / exp(entropy - e_margin); plus `fisher_alpha` (main.py: 2000) times the Fisher-weighted
    squared distance to the source parameters, when Fisher information is given. The optimizer
    is main.py's: SGD lr 2.5e-4, momentum 0.9 (for batch 64).

    Fisher information: pass `fishers` ({name: (fisher, source value)}), or `fisher_data`, an
    iterable of in-distribution input batches (main.py uses 2,000 samples); it is then measured
    as main.py does, after configuring: cross-entropy against the model's own argmax, squared
    gradients averaged over the batches. Without either the regulariser is off (the
    references' "ETA")."""

    name = "EATA"

    def __init__(self, lr: float = 0.00025, momentum: float = 0.9, e_margin: float | None = None,
                 d_margin: float = 0.05, fisher_alpha: float = 2000.0, fishers: dict | None = None,
                 fisher_data=None, steps: int = 1, optimizer: str = "sgd", betas: tuple = (0.9, 0.999),
                 weight_decay: float = 0.0, dampening: float = 0.0, nesterov: bool = False,
                 layers: tuple = (nn.BatchNorm2d,)):
        if steps < 1:
            raise ValueError("EATA requires >= 1 step(s) to forward and update")
        self.lr, self.momentum, self.e_margin, self.d_margin = lr, momentum, e_margin, d_margin
        self.fisher_alpha, self.fishers, self.fisher_data, self.steps = fisher_alpha, fishers, fisher_data, steps
        self.optimizer, self.betas, self.weight_decay = optimizer, tuple(betas), weight_decay
        self.dampening, self.nesterov = dampening, nesterov
        self.layers = tuple(layers)
        self._probs = None
        self._reliable = self._selected = 0

    def describe(self):
        d = super().describe()
        d["fisher"] = self.fishers is not None
        return d

    def prepare(self, model, optimizer):
        if self.fisher_data is not None and self.fishers is None:
            self.fishers = compute_fishers(model, self.fisher_data)
        self.fisher_data = None  # the batches are not kept alive by the adapted model

    def reset_state(self, episodic=False):
        # eata.py's reset() restores model and optimizer only: the probability average of the
        # redundancy filter carries over between episodes, and is cleared by a full reset.
        if not episodic:
            self._probs = None
            self._reliable = self._selected = 0

    def margin(self, n_classes: int) -> float:
        return 0.4 * math.log(n_classes) if self.e_margin is None else self.e_margin

    def adapt(self, model, optimizer, args, kwargs, recover):
        with torch.enable_grad():
            for _ in range(self.steps):
                outputs = model(*args, **kwargs)
                logits = _logits(outputs)
                e_margin = self.margin(logits.shape[1])
                entropys = softmax_entropy(logits)
                reliable = torch.where(entropys < e_margin)
                entropys = entropys[reliable]
                probs = logits[reliable].softmax(1)
                if self._probs is not None:
                    cos = F.cosine_similarity(self._probs.unsqueeze(dim=0), probs, dim=1)
                    keep = torch.where(torch.abs(cos) < self.d_margin)
                    entropys = entropys[keep]
                    probs = probs[keep]
                self._probs = _update_probs(self._probs, probs)
                coeff = 1 / (torch.exp(entropys.clone().detach() - e_margin))
                loss = entropys.mul(coeff).mean(0)
                if self.fishers is not None:
                    ewc = 0
                    for n, p in model.named_parameters():
                        if n in self.fishers:
                            fisher, source = self.fishers[n]
                            ewc += self.fisher_alpha * (fisher * (p - source) ** 2).sum()
                    loss = loss + ewc
                self._reliable += int(reliable[0].numel())
                self._selected += int(entropys.numel())
                if entropys.numel() != 0:
                    loss.backward()
                    optimizer.step()
                optimizer.zero_grad()
        return _detached(outputs)

    def stats(self):
        return {"reliable_samples": self._reliable, "selected_samples": self._selected}


def _update_probs(current, new):
    """eata.py's update_model_probs: the 0.9-EMA of the selected samples' mean probability."""
    with torch.no_grad():
        if new.size(0) == 0:
            return current
        if current is None:
            return new.mean(0)
        return 0.9 * current + (1 - 0.9) * new.mean(0)


def compute_fishers(model: nn.Module, batches) -> dict:
    """EATA main.py's Fisher information over in-distribution input batches, on a configured
    model: cross-entropy against the model's own argmax, squared gradients of the trainable
    parameters averaged over batches, with the parameters' values then."""
    sums, count = {}, 0
    with torch.enable_grad():
        for x in batches:
            args = x if isinstance(x, (tuple, list)) else (x,)
            logits = _logits(model(*args))
            loss = F.cross_entropy(logits, logits.max(1)[1])
            loss.backward()
            count += 1
            for n, p in model.named_parameters():
                if p.grad is not None:
                    g = p.grad.detach().clone() ** 2
                    sums[n] = g if n not in sums else g + sums[n]
                    p.grad = None
    if count == 0:
        raise ValueError("EATA fisher_data gave no batches")
    params = dict(model.named_parameters())
    return {n: (s / count, params[n].detach().clone()) for n, s in sums.items()}


class SAM:
    """Sharpness-aware minimisation (Foret et al.; SAR's sam.py, from davda54/sam) over a base
    optimizer: first_step climbs to w + rho * g / |g| (|g| the 2-norm over all parameters'
    gradients; `adaptive` scales by w^2), second_step returns to w and lets the base optimizer
    step with the gradient taken there. Unlike sam.py, state_dict covers the base optimizer's
    state (SGD's momentum), so that a reset restores it too."""

    def __init__(self, params, base_optimizer=torch.optim.SGD, rho: float = 0.05, adaptive: bool = False, **kwargs):
        if rho < 0.0:
            raise ValueError(f"Invalid rho, should be non-negative: {rho}")
        self.rho, self.adaptive = rho, adaptive
        self.base_optimizer = base_optimizer(params, **kwargs)
        self.param_groups = self.base_optimizer.param_groups
        self._old = {}

    def _params(self):
        return [p for g in self.param_groups for p in g["params"] if p.grad is not None]

    @torch.no_grad()
    def first_step(self, zero_grad: bool = False):
        params = self._params()
        if params:
            grad_norm = torch.norm(torch.stack([((torch.abs(p) if self.adaptive else 1.0) * p.grad).norm(p=2)
                                                for p in params]), p=2)
            scale = self.rho / (grad_norm + 1e-12)
            for p in params:
                self._old[p] = p.detach().clone()
                e_w = (torch.pow(p, 2) if self.adaptive else 1.0) * p.grad * scale.to(p)
                p.add_(e_w)
        if zero_grad:
            self.zero_grad()

    @torch.no_grad()
    def second_step(self, zero_grad: bool = False):
        for p in self._params():
            if p in self._old:
                p.copy_(self._old.pop(p))
        self._old.clear()
        self.base_optimizer.step()
        if zero_grad:
            self.zero_grad()

    def zero_grad(self, set_to_none: bool = True):
        self.base_optimizer.zero_grad(set_to_none=set_to_none)

    def state_dict(self):
        return {"base": self.base_optimizer.state_dict(), "rho": self.rho, "adaptive": self.adaptive}

    def load_state_dict(self, state):
        self.base_optimizer.load_state_dict(state["base"])
        self.rho, self.adaptive = state["rho"], state["adaptive"]
        self._old.clear()


class SAR(_EntropyMethod):
    """SAR (Niu et al., ICLR 2023; sar.py, sam.py). Sharpness-aware minimisation (`rho` 0.05)
    of the entropy of reliable samples (entropy below `margin_e0`, default 0.4 ln C as main.py),
    filtered again after the climb; model recovery: when the 0.9-EMA of the second pass's loss
    falls below `reset_constant` (0.2), weights and optimizer go back to the source.

    Adapted: affine weight and bias of BatchNorm2d (on batch statistics), LayerNorm and
    GroupNorm, except main.py's top layers (module names containing "layer4", "blocks.9",
    "blocks.10", "blocks.11" or "norm.", or named "norm"; pass `exclude=()` to adapt all).
    The base optimizer is main.py's SGD, momentum 0.9, lr 2.5e-4 (main.py's ResNet value for
    batches of 32 or more; it uses 2 * 2.5e-4 * batch / 64 below 32 and 1e-3 * batch / 64 for
    ViT).

    Two points where ours departs from sar.py, both so that recovery is what it says: a recovery
    also restores SGD's momentum (sam.py's state_dict leaves the base optimizer's state out),
    and the threshold is `reset_constant` (sar.py compares with a literal 0.2). As in sar.py,
    the entropy average computed in the recovering step is kept, so recovery repeats until it
    climbs back over the threshold."""

    name = "SAR"
    EXCLUDE = ("layer4", "blocks.9", "blocks.10", "blocks.11", "norm.")

    def __init__(self, lr: float = 0.00025, momentum: float = 0.9, rho: float = 0.05, adaptive: bool = False,
                 margin_e0: float | None = None, reset_constant: float = 0.2, steps: int = 1,
                 exclude: tuple | None = None, layers: tuple = (nn.BatchNorm2d, nn.LayerNorm, nn.GroupNorm)):
        if steps < 1:
            raise ValueError("SAR requires >= 1 step(s) to forward and update")
        self.lr, self.momentum, self.rho, self.adaptive = lr, momentum, rho, adaptive
        self.margin_e0, self.reset_constant, self.steps = margin_e0, reset_constant, steps
        self.exclude = self.EXCLUDE if exclude is None else tuple(exclude)
        self.layers = tuple(layers)
        self._ema = None
        self._recoveries = 0

    def select(self, model):
        default = self.exclude == self.EXCLUDE
        return [(n, m) for n, m in super().select(model)
                if not any(e in n for e in self.exclude) and not (default and n == "norm")]

    def make_optimizer(self, params):
        return SAM(params, torch.optim.SGD, rho=self.rho, adaptive=self.adaptive, lr=self.lr, momentum=self.momentum)

    def reset_state(self, episodic=False):
        self._ema = None
        if not episodic:
            self._recoveries = 0

    def margin(self, n_classes: int) -> float:
        return 0.4 * math.log(n_classes) if self.margin_e0 is None else self.margin_e0

    def adapt(self, model, optimizer, args, kwargs, recover):
        with torch.enable_grad():
            for _ in range(self.steps):
                optimizer.zero_grad()
                outputs = model(*args, **kwargs)
                logits = _logits(outputs)
                margin = self.margin(logits.shape[1])
                entropys = softmax_entropy(logits)
                reliable = torch.where(entropys < margin)
                loss = entropys[reliable].mean(0)
                loss.backward()
                optimizer.first_step(zero_grad=True)
                entropys2 = softmax_entropy(_logits(model(*args, **kwargs)))[reliable]
                loss_second = entropys2[torch.where(entropys2 < margin)].mean(0)
                value = loss_second.item()
                if not math.isnan(value):
                    self._ema = value if self._ema is None else 0.9 * self._ema + (1 - 0.9) * value
                loss_second.backward()
                optimizer.second_step(zero_grad=True)
                if self._ema is not None and self._ema < self.reset_constant:
                    recover()
                    self._recoveries += 1
        return _detached(outputs)

    def stats(self):
        return {"entropy_ema": self._ema, "recoveries": self._recoveries}


def _is_norm(m: nn.Module) -> bool:
    """Norm layers of a causal LM: torch's LayerNorm/RMSNorm/GroupNorm and the RMSNorm classes
    models define themselves (transformers' LlamaRMSNorm), recognised by name and a weight."""
    if isinstance(m, (nn.LayerNorm, nn.GroupNorm, getattr(nn, "RMSNorm", nn.LayerNorm))):
        return True
    cls = type(m).__name__
    return cls.endswith(("RMSNorm", "LayerNorm")) and isinstance(m._parameters.get("weight"), nn.Parameter)


class LMEntropy(Method):
    """Entropy minimisation for causal language models (ours; no reference code): the weight
    (and bias) of every norm layer trains, with Tent's optimizer (Adam lr 1e-3, betas
    (0.9, 0.999)), to minimise the mean next-token entropy over the positions that
    `attention_mask` keeps (all when absent); positions with entropy at or above `margin` (none
    by default) are left out, as SAR/EATA leave out unreliable samples. The model's modes are
    left as the caller set them (a causal LM has no batch statistics to switch on).

    Collapse guard: a model that minimises entropy can collapse onto a few tokens. Each call's
    forward (before its step) gives the mean entropy and the entropy of the mean predicted
    distribution (the marginal: near zero when every position predicts the same token); when
    the 0.9-EMA of the first falls below `min_entropy_ratio` (0.7) of the first call's (the
    source model's) mean entropy, or the marginal below `min_marginal_ratio` (0.5) of the first
    call's, the weights and optimizer go back to the source, the call is answered by the source
    model and takes no step, and the EMA restarts (counted in stats()["recoveries"]). Both
    floors are relative, unlike SAR's absolute 0.2, because a vocabulary's entropy scale varies.
    `guard=False` turns it off.

    Call the adapted model as the LM: adapted(input_ids=..., attention_mask=...)."""

    name = "LMEntropy"
    layers = (nn.LayerNorm, nn.GroupNorm)

    def __init__(self, lr: float = 1e-3, betas: tuple = (0.9, 0.999), weight_decay: float = 0.0, steps: int = 1,
                 margin: float | None = None, min_entropy_ratio: float = 0.7, min_marginal_ratio: float = 0.5,
                 guard: bool = True):
        if steps < 1:
            raise ValueError("LMEntropy requires >= 1 step(s) to forward and update")
        self.lr, self.betas, self.weight_decay, self.steps = lr, tuple(betas), weight_decay, steps
        self.margin, self.min_entropy_ratio, self.min_marginal_ratio = margin, min_entropy_ratio, min_marginal_ratio
        self.guard = guard
        self._ema = None
        self._entropy0 = self._marginal0 = None
        self._recoveries = 0
        self._last = {}

    def select(self, model):
        return [(n, m) for n, m in model.named_modules() if _is_norm(m)]

    def require_layers(self, model):
        if not self.select(model):
            raise ValueError(f"{self.name} needs norm layers (torch.nn.LayerNorm, torch.nn.RMSNorm, "
                             f"torch.nn.GroupNorm or a model's own *RMSNorm/*LayerNorm) to adapt; "
                             f"{type(model).__name__} has none")
        if not self.trainable(model):
            raise ValueError(f"{self.name} trains norm layers' weights; those of {type(model).__name__} have none")

    def configure(self, model):
        model.requires_grad_(False)
        names = set(self.trainable(model))
        for n, p in model.named_parameters():
            if n in names:
                p.requires_grad_(True)

    def make_optimizer(self, params):
        return torch.optim.Adam(params, lr=self.lr, betas=self.betas, weight_decay=self.weight_decay)

    def reset_state(self, episodic=False):
        self._ema = None
        if not episodic:
            self._entropy0 = self._marginal0 = None
            self._recoveries = 0
            self._last = {}

    @staticmethod
    def _measure(logits, mask):
        """(per-position entropies kept by mask, marginal entropy) of next-token logits."""
        flat = logits.reshape(-1, logits.shape[-1])
        ent = softmax_entropy(flat)
        if mask is not None:
            keep = torch.where(mask.reshape(-1) != 0)
            flat, ent = flat[keep], ent[keep]
        marginal = flat.softmax(1).mean(0)
        return ent, -(marginal * torch.log(marginal.clamp_min(1e-30))).sum()

    def adapt(self, model, optimizer, args, kwargs, recover):
        mask = kwargs.get("attention_mask")
        with torch.enable_grad():
            for _ in range(self.steps):
                outputs = model(*args, **kwargs)
                ent, marginal = self._measure(_logits(outputs), mask)
                mean, marg = float(ent.detach().mean()), float(marginal.detach())
                if self._marginal0 is None:
                    self._entropy0, self._marginal0 = mean, marg
                if not math.isnan(mean):
                    self._ema = mean if self._ema is None else 0.9 * self._ema + (1 - 0.9) * mean
                self._last = {"entropy": mean, "marginal_entropy": marg}
                if self.guard and ((self._ema is not None and self._ema < self.min_entropy_ratio * self._entropy0)
                                   or marg < self.min_marginal_ratio * self._marginal0):
                    # collapsed: back to the source, whose predictions this batch gets
                    recover()
                    self._recoveries += 1
                    self._ema = None
                    with torch.no_grad():
                        return _detached(model(*args, **kwargs))
                if self.margin is not None:
                    ent = ent[torch.where(ent < self.margin)]
                if ent.numel():
                    ent.mean(0).backward()
                    optimizer.step()
                optimizer.zero_grad()
        return _detached(outputs)

    def stats(self):
        return {"entropy_ema": self._ema, "entropy_source": self._entropy0, "marginal_entropy_source": self._marginal0,
                "recoveries": self._recoveries,
                **self._last}
