"""The door's own mechanisms: dispatch modes at the door, and upstream's decompositions as the last step of its lookup."""

from . import decompositions, modes  # noqa: F401  (registration by import)
