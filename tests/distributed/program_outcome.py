"""What a distributed test program reports for one call: the value's repr, or 'raise <Type>'
naming the exception's torch.distributed classes (a DistStoreError is told from a plain
RuntimeError) and its builtin base. Messages are left out: they differ between builds."""


def outcome(fn, cleanup=None):
    try:
        return repr(fn())
    except Exception as e:
        chain = [c.__name__ for c in type(e).__mro__ if c.__module__.startswith("torch") or c is type(e)]
        builtin = next(c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins")
        return f"raise {'/'.join(chain)} ({builtin})"
    finally:
        if cleanup is not None:
            cleanup()
