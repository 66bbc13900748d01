"""c10d stores against upstream: the same programs (store_cases.py) under the reference torch
and under torchnative, outcomes compared case by case (values, and exception types for bad
input, timeouts and refused connections)."""

from dist_harness import HERE, differences, free_port, run_both, run_pair

CASES = HERE / "store_cases.py"


def test_store_api_agrees_with_upstream():
    ref, ours = run_pair([CASES, "single"], timeout=60)
    assert len(ref) > 190
    assert differences(ref, ours) == []


def test_comparison_catches_a_difference():
    # the comparator above is able to fail: one changed outcome is reported by name
    ref = {"tcp.get_missing": "raise DistStoreError/DistError (RuntimeError)", "tcp.get": "b'1'"}
    ours = dict(ref, **{"tcp.get_missing": "raise RuntimeError (RuntimeError)"})
    assert differences(ref, ours) == ["tcp.get_missing: upstream 'raise DistStoreError/DistError (RuntimeError)', "
                                      "ours 'raise RuntimeError (RuntimeError)'"]


def test_tcp_store_across_processes():
    world = 3
    ports = {"ref": free_port(), "ours": free_port()}

    def args(side):
        return [[CASES, "master", ports[side], world]] + [[CASES, "client", ports[side], r, world] for r in range(1, world)]

    ref, ours = run_both(args, world, timeout=60)
    assert ours == ref
    assert ours[0]["final_counter"] == world
