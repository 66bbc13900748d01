"""The `torchnative` command.

`torchnative demo` embeds a few sentences with the real all-MiniLM-L6-v2 checkpoint on
torchnative's runtime and, where the reference interpreter exists, compares with upstream torch
2.13.0 (torchnative/demo.py).
"""

from __future__ import annotations

import argparse


def demo(args) -> int:
    from . import demo as _demo

    return _demo.run(args)


def _backends():
    from . import backends

    return backends


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="torchnative")
    sub = parser.add_subparsers(dest="command", required=True)
    demo_parser = sub.add_parser("demo", help="sentence embeddings with all-MiniLM-L6-v2 on torchnative, "
                                 "compared with upstream")
    demo_parser.add_argument("sentences", nargs="*", help="sentences to compare (default: five examples)")
    demo_parser.set_defaults(fn=demo)
    backends = sub.add_parser("backends", help="backend plugins").add_subparsers(dest="sub", required=True)
    lst = backends.add_parser("list", help="every discovered and first-party plugin, with its status")
    lst.add_argument("--json", action="store_true")
    lst.set_defaults(fn=lambda a: _backends().backends_list(a))
    show = backends.add_parser("show", help="one plugin: its status and the operators it implements per device key")
    show.add_argument("name")
    show.add_argument("--json", action="store_true")
    show.set_defaults(fn=lambda a: _backends().backends_show(a))
    args = parser.parse_args(argv)
    return args.fn(args)
