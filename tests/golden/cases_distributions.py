"""torch.distributions' samplers: poisson, binomial, _standard_gamma, _sample_dirichlet and the
gamma's reparameterised gradient, seeded, bit for bit; their argument errors."""
from functools import partial

from .registry import case, torch

exact = partial(case, exact=True)


def _outcome(f):
    try:
        return f()
    except Exception as e:  # the exception type and message are what is compared
        return (type(e).__name__, str(e))


@exact
def poisson_both_regimes_and_dtypes():
    # rates below 10 multiply uniforms; from 10 on, Hoermann's transformed rejection
    torch.manual_seed(11)
    rates = torch.tensor([0.0, 0.3, 2.5, 9.99, 10.0, 17.5, 250.0, 1e6])
    grid = torch.linspace(0, 40, 24).reshape(4, 6)
    return (torch.poisson(rates), torch.poisson(rates.double()), torch.poisson(grid.t()),
            torch.poisson(rates.half()), torch.poisson(rates.bfloat16()), torch.poisson(torch.tensor(3.0)),
            torch.poisson(rates, generator=torch.Generator().manual_seed(3)), torch.rand(2))


@exact
def poisson_infinite_and_huge_rates():
    # x86's conversion of an out-of-range double to int64 gives INT64_MIN
    torch.manual_seed(2)
    return torch.poisson(torch.tensor([float("inf"), 1e30, 5.0]))


@exact
def binomial_inversion_btrs_and_complements():
    torch.manual_seed(5)
    count = torch.tensor([0.0, 5.0, 20.0, 40.0, 1000.0, 1000.0, 7.0, 30.0, 12.0, 3.0])
    prob = torch.tensor([0.5, 0.0, 0.3, 0.9, 0.01, 0.6, 1.0, 0.97, float("nan"), -0.2])
    return (torch.binomial(count, prob), torch.binomial(count.double(), prob.double()),
            torch.binomial(count[:6].reshape(2, 3), torch.tensor([0.25, 0.5, 0.75])), torch.rand(2))


@exact
def standard_gamma_boosted_and_large_concentrations():
    torch.manual_seed(9)
    alpha = torch.tensor([0.0, 1e-3, 0.2, 0.5, 1.0, 1.7, 3.0, 12.0, 400.0, float("inf"), -0.5])
    torch.randn(3)  # three normals by the scalar path leave a cached double, which the gamma's first draw takes
    return (torch._standard_gamma(alpha), torch._standard_gamma(alpha.double()),
            torch._standard_gamma(torch.full((3, 4), 2.5).t()), torch.randn(1, dtype=torch.float64), torch.rand(2))


@exact
def distributions_sample_and_rsample():
    torch.manual_seed(3)
    D = torch.distributions
    return (D.Poisson(torch.tensor([1.0, 30.0])).sample((3,)),
            D.Binomial(10, torch.tensor([0.2, 0.7])).sample((2,)),
            D.Gamma(torch.tensor([0.5, 4.0]), torch.tensor([1.0, 2.0])).rsample((3,)),
            D.Beta(torch.tensor([2.0, 0.4]), torch.tensor([3.0, 0.6])).sample((2,)),
            D.Dirichlet(torch.tensor([[1.0, 2.0, 3.0], [0.1, 0.1, 0.1]])).sample(),
            D.Chi2(torch.tensor([3.0])).sample((2,)),
            D.StudentT(torch.tensor([4.0])).sample((2,)))


@exact
def dirichlet_normalises_in_double_and_clamps():
    torch.manual_seed(4)
    alpha = torch.tensor([[1e-30, 1e-30, 1e-30], [1.0, 2.0, 3.0], [50.0, 0.01, 7.0]])
    return (torch._sample_dirichlet(alpha), torch._sample_dirichlet(alpha.double()),
            torch._sample_dirichlet(torch.tensor(2.0)), torch._sample_dirichlet(torch.ones(2, 0)))


@exact
def gamma_reparameterised_gradient():
    # the Taylor (x < 0.8), saddle point (alpha > 8) and rational regimes, float and double
    alpha = torch.tensor([0.5, 0.5, 2.0, 2.0, 9.0, 9.0, 9.0, 30.0, 4.0])
    x = torch.tensor([0.01, 0.7, 0.5, 3.0, 8.5, 2.0, 20.0, 31.0, 1e-9])
    torch.manual_seed(8)
    a = torch.tensor([0.7, 3.0, 12.0], requires_grad=True)
    (torch._standard_gamma(a) * torch.tensor([1.0, -2.0, 0.5])).sum().backward()
    return (torch._standard_gamma_grad(alpha, x), torch._standard_gamma_grad(alpha.double(), x.double()),
            a.grad, torch.poisson(a.detach()).requires_grad)


@case
def sampler_argument_errors():
    f = torch.tensor([1.0, 2.0])
    calls = (lambda: torch.poisson(torch.tensor([1, 2])), lambda: torch.poisson(torch.tensor([1.0, -2.0])),
             lambda: torch.binomial(torch.tensor([1, 2]), f), lambda: torch.binomial(f, torch.tensor([1, 1])),
             lambda: torch.binomial(f.half(), f.half()), lambda: torch.binomial(f, f.double()),
             lambda: torch.binomial(f, torch.ones(3)), lambda: torch._standard_gamma(torch.tensor([1, 2])),
             lambda: torch._standard_gamma(f.half()), lambda: torch._sample_dirichlet(f.half()),
             lambda: torch._sample_dirichlet(torch.tensor([1, 2])),
             lambda: torch._standard_gamma_grad(f.half(), f.half()), lambda: torch._standard_gamma_grad(f, f.double()),
             lambda: torch.poisson(torch.empty(0, 3)))
    return [_outcome(c) for c in calls]
