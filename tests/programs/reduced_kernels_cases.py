"""bfloat16/float16 cases for the operators of torchnative_core/ops/reduced_precision.py and the
reduced-type interpolation weights of ops/nn/resample.py, larger than OpInfo's samples; run by
upstream and by ours (tests/test_reduced_kernels.py).

    python reduced_kernels_cases.py OUT.json

Writes {"results": {case: [bit patterns]}, "naive": {case: [bit patterns]}}: each result as its
16-bit patterns, and next to it the "naive" result (the operator computed in float32 and rounded
once), which differs from upstream's where upstream rounds between steps: the test shows the
comparison would catch ours if it were still computed that way."""

import json
import sys

import torch
import torch.nn.functional as F


def bits(t):
    return t.contiguous().view(torch.int16).reshape(-1).tolist()


def main(out):
    torch.manual_seed(0)
    results, naive = {}, {}

    def r(*s, dt):
        return torch.randn(*s).mul(2).to(dt)

    for dt in (torch.bfloat16, torch.float16):
        n = str(dt).replace("torch.", "") + "."
        cases = {}
        s, b1, b2 = r(20, 30, dt=dt), r(6, 20, 16, dt=dt), r(6, 16, 30, dt=dt)
        cases["addbmm"] = (lambda f: torch.addbmm(f(s), f(b1), f(b2), beta=0.5, alpha=1.5))
        s2, v1, v2 = r(17, 23, dt=dt), r(17, dt=dt), r(23, dt=dt)
        cases["addr"] = (lambda f: torch.addr(f(s2), f(v1), f(v2), beta=1.3, alpha=-0.7))
        x, w, b = r(4, 6, 9, 11, dt=dt), r(6, dt=dt), r(6, dt=dt)
        rm, rv = r(6, dt=dt), torch.rand(6).to(dt)

        def bn(f):
            m, v = f(rm).clone(), f(rv).clone()
            out = F.batch_norm(f(x), m, v, f(w), f(b), training=True, momentum=0.3, eps=1e-5)
            return torch.cat([out.reshape(-1), m.to(out.dtype), v.to(out.dtype)])
        cases["batch_norm_train"] = bn
        xi = r(3, 4, 7, 7, dt=dt)
        cases["instance_norm"] = (lambda f: F.instance_norm(f(xi)))
        xp = r(2, 3, 9, 10, 11, dt=dt)
        cases["adaptive_avg_pool3d"] = (lambda f: F.adaptive_avg_pool3d(f(xp), (4, 3, 5)))
        xc, wc, bc = r(2, 8, 7, 6, dt=dt), r(8, 3, 3, 2, dt=dt), r(6, dt=dt)
        cases["conv_transpose2d_groups"] = (lambda f: F.conv_transpose2d(
            f(xc), f(wc), f(bc), stride=(2, 3), padding=(1, 0), output_padding=(0, 2), groups=2, dilation=(1, 2)))
        x1, w1 = r(3, 16, 20, dt=dt), r(16, 4, 5, dt=dt)
        cases["conv_transpose1d"] = (lambda f: F.conv_transpose1d(f(x1), f(w1), None, stride=3, padding=2))
        x3, w3, b3 = r(1, 4, 3, 4, 5, dt=dt), r(4, 2, 2, 3, 2, dt=dt), r(2, dt=dt)
        cases["conv_transpose3d"] = (lambda f: F.conv_transpose3d(f(x3), f(w3), f(b3), stride=2, output_padding=(1, 1, 1)))
        xg, wg = r(2, 4, 5, 6, dt=dt), r(4, 3, 2, 3, dt=dt)
        # an output padding not smaller than its stride: upstream's slow path for bfloat16 too
        cases["conv_transpose2d_big_output_padding"] = (lambda f: F.conv_transpose2d(
            f(xg), f(wg), None, stride=2, output_padding=(2, 1), dilation=(3, 1)))
        xl = r(2, 3, 13, dt=dt)
        cases["linear"] = (lambda f: F.interpolate(f(xl), size=29, mode="linear"))
        cases["linear_align"] = (lambda f: F.interpolate(f(xl), scale_factor=2.3, mode="linear", align_corners=True))
        xt = r(1, 2, 5, 6, 7, dt=dt)
        cases["trilinear"] = (lambda f: F.interpolate(f(xt), size=(9, 4, 11), mode="trilinear"))
        xb = r(2, 3, 9, 8, dt=dt)
        cases["bicubic"] = (lambda f: F.interpolate(f(xb), size=(17, 5), mode="bicubic"))
        cases["bicubic_align"] = (lambda f: F.interpolate(f(xb), size=(13, 7), mode="bicubic", align_corners=True))
        cases["bilinear_small"] = (lambda f: F.interpolate(f(xb), size=(17, 5), mode="bilinear"))
        xn = r(9, 13, dt=dt)
        cases["vector_norm_dtype"] = (lambda f: torch.linalg.vector_norm(f(xn), 3, 1, dtype=f(xn).dtype))
        q, k, v = r(2, 3, 7, 8, dt=dt), r(2, 3, 9, 8, dt=dt), r(2, 3, 9, 8, dt=dt)

        def sdpa(f):
            torch.manual_seed(7)
            return F.scaled_dot_product_attention(f(q), f(k), f(v), dropout_p=0.3)
        cases["sdpa_dropout"] = sdpa
        for name, fn in cases.items():
            results[n + name] = bits(fn(lambda t: t))
            naive[n + name] = bits(fn(lambda t: t.float()).to(dt))
    with open(out, "w") as f:
        json.dump({"results": results, "naive": naive}, f)


if __name__ == "__main__":
    main(sys.argv[1])
