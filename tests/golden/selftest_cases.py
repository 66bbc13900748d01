"""Cases for the harness's own self-test (crash/hang recovery).  Not a cases_*.py file, so
they are not part of the golden set; test_selftest.py runs them explicitly."""
import os
import time

from .registry import case, torch


@case
def before():
    return torch.tensor([1, 2])


@case
def crash():
    os._exit(7)  # the interpreter dies mid-case, as a segfaulting runtime would


@case
def after_crash():
    return torch.tensor([3])


@case(timeout=1)
def hang():
    time.sleep(30)


@case
def unserialisable():
    return object()


@case
def last():
    return "done"
