"""c10d stores against upstream: the same programs (store_cases.py) under the reference torch
and under torchnative, outcomes compared case by case (values, and exception types for bad
input, timeouts and refused connections)."""

from dist_harness import HERE, OURS, differences, finish, free_port, last_json, ref_python, run_both, start

CASES = HERE / "store_cases.py"


def test_store_api_agrees_with_upstream():
    procs = [start(py, [CASES, "single"]) for py in (ref_python(), OURS)]
    (rc_ref, out_ref, err_ref), (rc_ours, out_ours, err_ours) = finish(procs, timeout=60)
    assert rc_ref == 0, err_ref[-3000:]
    assert rc_ours == 0, err_ours[-3000:]
    ref, ours = last_json(out_ref), last_json(out_ours)
    assert len(ref) > 150
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
