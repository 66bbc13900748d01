"""Test-time adaptation: a deployed model adapts to the data it meets, as a weight delta with a
lifetime and a destination.

    from torchnative import adapt
    adapted = adapt.wrap(model, method=adapt.Tent())
    logits = adapted(x)      # online (the default): adapts on x, returns the predictions
    adapted.offline()        # serve without adapting
    adapted.reset()          # base weights, buffers and optimizer state back, bit for bit
    adapted.delta()          # what changed: a state dict of differences, with .nbytes

Plain torch code: it runs on upstream torch as on torchnative (docs/adapt.md).
"""

from .adapted import AdaptedModule, wrap
from .delta import EVENTS, Delta, Destination, Lifetime, Memory, SafetensorsFile, StateDictUpdate
from .methods import EATA, SAM, SAR, BNAdapt, LMEntropy, Method, Tent, compute_fishers, softmax_entropy

__all__ = ["AdaptedModule", "BNAdapt", "Delta", "Destination", "EATA", "EVENTS", "LMEntropy", "Lifetime", "Memory",
           "Method", "SAM", "SAR", "SafetensorsFile", "StateDictUpdate", "Tent", "compute_fishers",
           "softmax_entropy", "wrap"]
