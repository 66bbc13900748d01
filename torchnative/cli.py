"""The `torchnative` command.

`torchnative demo` embeds a few sentences with the real all-MiniLM-L6-v2 checkpoint on
torchnative's runtime and, where the reference interpreter exists, compares with upstream torch
2.13.0 (torchnative/demo.py). `torchnative federated demo` runs a fleet of client processes on
scikit-learn's digits with FedAvg (torchnative/nn/federated/digits.py, docs/federated.md).
"""

from __future__ import annotations

import argparse


def demo(args) -> int:
    from . import demo as _demo

    return _demo.run(args)


def federated_demo(args) -> int:
    import json

    from .nn.federated import digits

    args.die = {int(k): v for k, v in json.loads(args.die).items()}
    return digits.fleet(args)


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
    from . import primitives

    primitives.add_parser(backends)
    from .conformance import cli as conformance

    conformance.add_parser(sub)
    fed = sub.add_parser("federated", help="federated learning (torchnative.nn.federated)").add_subparsers(
        dest="sub", required=True)
    fed_demo = fed.add_parser("demo", help="a fleet of client processes learning scikit-learn's digits, split "
                              "non-IID, with FedAvg; compared with centralised training")
    from .nn.federated.digits import add_arguments

    add_arguments(fed_demo)
    fed_demo.set_defaults(fn=federated_demo)
    args = parser.parse_args(argv)
    return args.fn(args)
