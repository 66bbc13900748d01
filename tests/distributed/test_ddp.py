"""Upstream's DistributedDataParallel on our Reducer and process group: a 2-process model
trained on each rank's half of the batch ends with the parameters of one process trained on the
whole batch (float tolerance), for the default path, small buckets (rebuilt after the first
iteration), gradient_as_bucket_view, find_unused_parameters, static_graph, comm hooks and
no_sync; and every rank's result equals upstream gloo's run of the same program, BatchNorm's
broadcast buffers and join() with uneven inputs included."""

from dist_harness import HERE, differences, free_port, run_both, run_pair

PROGRAMS = HERE / "ddp_programs.py"
WORLD = 2
TRAINED = ["default", "small_buckets", "grad_as_bucket_view", "find_unused", "allreduce_hook", "fp16_hook", "no_sync",
           "static_graph", "static_graph_unused"]
# compared with upstream's run only: BatchNorm's statistics depend on the batch split, and join()
# trains a rank one step less
AGAINST_UPSTREAM = ["batchnorm", "batchnorm.buffers", "join_uneven"]


def _max_diff(a, b):
    assert len(a) == len(b)
    return max(abs(x - y) for x, y in zip(a, b))


def _flat(x):
    return [v for item in x for v in (_flat(item) if isinstance(item, list) else [item])]


def _close(a, b, tol):
    return _max_diff(a, b) <= tol


def test_ddp_two_processes_equal_one_process_and_upstream():
    ports = {"ref": free_port(), "ours": free_port()}
    ref, ours = run_both(lambda side: [[PROGRAMS, "train", ports[side], r, WORLD] for r in range(WORLD)],
                         WORLD, timeout=120)
    alone = ours[0]["alone"]
    assert _close(alone, ref[0]["alone"], 1e-5)
    for r in range(WORLD):
        for name in TRAINED:
            tol = 1e-4 if name == "fp16_hook" else 1e-5  # the hook rounds gradients to float16
            assert _close(ours[r][name], alone, tol), (r, name, _max_diff(ours[r][name], alone))
            assert _close(ours[r][name], ref[r][name], 1e-5), (r, name)
            assert ours[r][name] == ours[0][name], (r, name)  # the replicas stay identical
        # construction broadcasts rank 0's parameters
        assert ours[r]["synced_at_construction"] == ours[0]["synced_at_construction"]
        assert _close(ours[r]["synced_at_construction"], ref[r]["synced_at_construction"], 1e-6)
        for name in AGAINST_UPSTREAM:
            assert _close(_flat(ours[r][name]), _flat(ref[r][name]), 1e-5), (r, name)
        skip = TRAINED + AGAINST_UPSTREAM + ["alone", "synced_at_construction"]
        rest = {k: v for k, v in ours[r].items() if k not in skip}
        want = {k: v for k, v in ref[r].items() if k not in skip}
        assert differences(want, rest) == []
    assert ours[0]["unused_without_find_unused"] == "raise RuntimeError (RuntimeError)"


def test_trained_parameters_comparison_can_fail():
    # the tolerance comparison tells trained parameters from untrained ones
    ref = [0.1, 0.2, 0.3]
    assert _close(ref, [0.1, 0.2, 0.3 + 1e-7], 1e-5)
    assert not _close(ref, [0.1, 0.2, 0.3 + 1e-3], 1e-5)


def test_bucket_assignment_agrees_with_upstream():
    ref, ours = run_pair([PROGRAMS, "buckets"], timeout=60)
    assert len(ref) == 12
    assert differences(ref, ours) == []
