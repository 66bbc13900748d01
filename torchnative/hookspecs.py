"""The backend plugin hooks (``torchnative_core.hookspecs``, the reference documentation of the
plugin contract), under the library's name: ``from torchnative.hookspecs import hookimpl``.

They live in the core, which discovers backends with them, so that the core imports no library
module (dependencies run library -> core -> ABI).
"""

from torchnative_core.hookspecs import (  # noqa: F401 - re-exported
    GROUP,
    PROJECT,
    Descriptor,
    hookimpl,
    hookspec,
    torchnative_describe,
    torchnative_register,
    torchnative_set_num_threads,
)

__all__ = ["GROUP", "PROJECT", "Descriptor", "hookimpl", "hookspec", "torchnative_describe", "torchnative_register",
           "torchnative_set_num_threads"]
