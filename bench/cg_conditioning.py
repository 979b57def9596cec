"""Conditioning of `examples/deepseek_mhc/example_mhc_bwd.py`'s
`sinkhorn_bwd_implicit_cg` kernel: the same conjugate-gradient steps in
float64 and float32 (numpy), on the inputs of a `tilec run --dump` and on
the Sinkhorn-normalised inputs the example means.

    tilec run examples/deepseek_mhc/example_mhc_bwd.py \
        --kernel 'sinkhorn_bwd_implicit_cg()' -D n_stream=16 -D seqlen=256 \
        --backend ref --dump DIR
    python3 bench/cg_conditioning.py DIR

On random inputs the system is not symmetric positive definite and 2n CG
steps amplify rounding: float32 and float64 runs of the same steps differ
by O(1), so two correct float32 kernels (tilec, TileLang) may differ as
much. On the example's inputs float32 agrees with float64 to ~1e-7.
"""

import sys

import numpy as np

EPS = 1e-10


def implicit_cg(R, dR, dt):
    """The kernel's steps, vectorised over the sequence, in dtype `dt`."""
    R = R.astype(dt)
    dR = dR.astype(dt)
    n = R.shape[-1]
    eps = dt(EPS)

    def matvec(x1, x2):
        return (R * x2[:, None, :]).sum(-1) + x1, (R * x1[:, :, None]).sum(-2) + x2

    RdR = R * dR
    b1, b2 = RdR.sum(-1), RdR.sum(-2)
    x1, x2 = np.zeros_like(b1), np.zeros_like(b2)
    y1, y2 = matvec(x1, x2)
    r1, r2 = b1 - y1, b2 - y2
    p1, p2 = r1.copy(), r2.copy()
    r_norm = (r1 * r1 + r2 * r2).sum(-1)
    for _ in range(2 * n):
        a1, a2 = matvec(p1, p2)
        p_a_p = (p1 * a1 + p2 * a2).sum(-1)
        alpha = (r_norm / (p_a_p + eps))[:, None]
        x1, x2 = x1 + alpha * p1, x2 + alpha * p2
        r1, r2 = r1 - alpha * a1, r2 - alpha * a2
        r_new = (r1 * r1 + r2 * r2).sum(-1)
        beta = (r_new / (r_norm + eps))[:, None]
        p1, p2 = r1 + beta * p1, r2 + beta * p2
        r_norm = r_new
    return (dR - x1[:, :, None] - x2[:, None, :]) * R


def rel(x, y):
    return float(np.abs(x.astype(np.float64) - y).max() / np.abs(y).max())


def main():
    d = sys.argv[1]
    R0 = np.load(d + "/out.in.npy")
    dR0 = np.load(d + "/dout.in.npy")
    got = np.load(d + "/res.npy")
    f64 = implicit_cg(R0, dR0, np.float64)
    f32 = implicit_cg(R0, dR0, np.float32)
    print(
        "random inputs (the differential's): tilec ref vs float64 CG rel %.3g; "
        "float32 numpy CG vs float64 CG rel %.3g; tilec ref vs float32 numpy rel %.3g"
        % (rel(got, f64), rel(f32, f64), rel(got, f32.astype(np.float64)))
    )
    # The inputs the example means: R from Sinkhorn normalisation of exp(M),
    # M ~ U(0, 4).
    rng = np.random.default_rng(0)
    R = np.exp(rng.uniform(0, 4, R0.shape))
    for _ in range(100):
        R = R / R.sum(-2, keepdims=True)
        R = R / R.sum(-1, keepdims=True)
    dR = rng.standard_normal(R0.shape)
    g64 = implicit_cg(R, dR, np.float64)
    g32 = implicit_cg(R, dR, np.float32)
    print("Sinkhorn-normalised inputs (the example's): float32 CG vs float64 CG rel %.3g" % rel(g32, g64))


if __name__ == "__main__":
    main()
