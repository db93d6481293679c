"""FLOATER: posenc's op against torchdiffeq (the reference code's solver), in f64 and f32.

Reference: the dynamics written here from the reference code's facts (flow_func_linear: two
Linear_t layers, time concatenated last, ReLU between), integrated by torchdiffeq.odeint with
method='rk4' (Kutta's 3/8 rule) and step_size = delta / 5, outputs at t_i = i * delta: the
reference code's call. Gradients of torchdiffeq's table come from autograd through its steps;
posenc's come from its own reverse sweep, so they are independent computations of the same
derivative of the same discrete table.
"""
import pytest
import torch
from torch import nn
from torchdiffeq import odeint, odeint_adjoint

import posenc


class LinearT(nn.Module):
    def __init__(self, i, o, time=True):
        super().__init__()
        self.time = time
        self.linear = nn.Linear(i + (1 if time else 0), o)

    def forward(self, t, x):
        if self.time:
            x = torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=x.dtype) * t], dim=-1)
        return self.linear(x)


class RefFlow(nn.Module):
    """flow_func_linear of the reference code (layers 0 and 2 carry the parameters)."""

    def __init__(self, d, hidden, act=nn.ReLU, t1=True, t2=True):
        super().__init__()
        self.layers = nn.Sequential(LinearT(d, hidden, t1), act(), LinearT(hidden, d, t2))

    def forward(self, t, x):
        return self.layers[2](t, self.layers[1](self.layers[0](t, x)))


class RefEncoder(nn.Module):
    def __init__(self, d, hidden, blocks, act=nn.ReLU, t1=True, t2=True):
        super().__init__()
        self.proj_flow = RefFlow(d, hidden, act, t1, t2)
        self.proj_bias = nn.Parameter(torch.empty(blocks + (d,)))


def make_pair(d=12, hidden=20, blocks=(3, 2), dtype=torch.float64, seed=0, activation="relu", act=nn.ReLU,
              time_input=(True, True), **kw):
    torch.manual_seed(seed)
    enc = posenc.FloaterEncoder(d, hidden, blocks, activation=activation, time_input=time_input, **kw).to(dtype)
    # larger weights than xavier so the flow moves visibly over the grid
    with torch.no_grad():
        for p in enc.parameters():
            p.normal_(0.0, 0.5)
    ref = RefEncoder(d, hidden, blocks, act, *time_input).to(dtype)
    ref.load_state_dict(enc.state_dict())  # the same names and shapes: loads unchanged
    return enc, ref


def ref_table(ref, L, delta=0.01, method="rk4", substeps=5, adjoint=False):
    t = torch.arange(L, dtype=ref.proj_bias.dtype) * delta
    solve = odeint_adjoint if adjoint else odeint
    return solve(ref.proj_flow, ref.proj_bias, t, method=method, options=dict(step_size=delta / substeps))


def rel(a, b):
    return ((a - b).abs().max() / b.abs().max()).item()


def grads(module):
    return {k: p.grad.detach().clone() for k, p in module.named_parameters()}


@pytest.mark.parametrize("method", ["rk4", "euler", "midpoint"])
@pytest.mark.parametrize("delta", [0.01, 0.1])
def test_table_and_gradients_match_torchdiffeq_f64(method, delta):
    # 1e-12 relative (the bound): both sides run the same steps in f64, differing only in
    # the rounding of the stage sums and matrix products (measured ~1e-15).
    enc, ref = make_pair(scheme=method, delta=delta)
    L = 30
    P = enc(L)
    R = ref_table(ref, L, delta, method)
    assert P.shape == R.shape == (L, 3, 2, 12)
    assert rel(P, R) < 1e-12
    assert torch.equal(P[0], enc.proj_bias.detach())  # position 0 is p(0) itself
    assert (P[-1] - P[0]).abs().max() > 1e-2  # the flow moved: the comparison is not vacuous
    g = torch.randn_like(R)
    (P * g).sum().backward()
    (R * g).sum().backward()
    gp, gr = grads(enc), grads(ref)
    assert gp.keys() == gr.keys()
    for k in gp:
        assert rel(gp[k], gr[k]) < 1e-12, k


@pytest.mark.parametrize("activation,act", [("tanh", nn.Tanh), ("gelu", nn.GELU), ("softplus", nn.Softplus)])
@pytest.mark.parametrize("time_input", [(True, True), (False, True), (True, False)])
def test_activations_and_time_inputs_f64(activation, act, time_input):
    enc, ref = make_pair(d=8, hidden=16, blocks=(2,), activation=activation, act=act, time_input=time_input)
    P, R = enc(20), ref_table(ref, 20)
    assert rel(P, R) < 1e-12
    g = torch.randn_like(R)
    (P * g).sum().backward()
    (R * g).sum().backward()
    gp, gr = grads(enc), grads(ref)
    for k in gr:
        assert rel(gp[k], gr[k]) < 1e-12, k


def test_float32_matches_torchdiffeq():
    # f32: the two sides round differently in every stage; over 60 positions x 5 substeps x 4
    # stages the differences stay within ~10 float32 ulps (eps = 1.2e-7; measured ~1e-6 for the table
    # and the gradients): bound 2e-5 relative.
    enc, ref = make_pair(dtype=torch.float32)
    P, R = enc(60), ref_table(ref, 60)
    assert P.dtype == torch.float32
    assert rel(P, R) < 2e-5
    g = torch.randn_like(R)
    (P * g).sum().backward()
    (R * g).sum().backward()
    gp, gr = grads(enc), grads(ref)
    for k in gr:
        assert rel(gp[k], gr[k]) < 2e-5, k


def test_gradcheck_small_f64():
    # finite differences of posenc's own table (backprop is its exact gradient)
    torch.manual_seed(1)
    d, h = 3, 4
    w1 = (0.5 * torch.randn(h, d + 1, dtype=torch.float64)).requires_grad_()
    b1 = (0.1 * torch.randn(h, dtype=torch.float64)).requires_grad_()
    w2 = (0.5 * torch.randn(d, h + 1, dtype=torch.float64)).requires_grad_()
    b2 = (0.1 * torch.randn(d, dtype=torch.float64)).requires_grad_()
    p0 = torch.randn(2, d, dtype=torch.float64, requires_grad=True)
    f = lambda *a: posenc.floater_table(*a, L=6, delta=0.1, activation="tanh")
    assert torch.autograd.gradcheck(f, (w1, b1, w2, b2, p0), eps=1e-6, atol=1e-8, rtol=1e-6)


def test_adjoint_matches_odeint_adjoint():
    # Both integrate the augmented system (p, a, dL/dtheta) backwards interval by interval with the
    # 3/8 rule and 5 steps per interval, restarting p from the forward checkpoint at each output:
    # the same discretisation of the continuous adjoint, so they agree to rounding: 1e-12 relative
    # (measured ~1.5e-15). Only the stage sums' rounding differs; torchdiffeq's per-segment grid
    # from floating-point times lands on the same 5 steps for delta = 0.01.
    enc, ref = make_pair(d=8, hidden=12, blocks=(2, 2), gradient="adjoint", seed=3)
    L = 25
    P, R = enc(L), ref_table(ref, L, adjoint=True)
    assert rel(P, R) < 1e-12
    g = torch.randn_like(R)
    (P * g).sum().backward()
    (R * g).sum().backward()
    ga, gr = grads(enc), grads(ref)
    for k in gr:
        assert rel(ga[k], gr[k]) < 1e-12, k
    # the exact discrete gradient is a different number, close to the adjoint's (ReLU makes h only
    # piecewise smooth, so the gap is larger than the O(h^4) of a smooth h: measured ~5e-5)
    enc.cfg["gradient"] = "backprop"
    enc.zero_grad()
    (enc(L) * g).sum().backward()
    gb = grads(enc)
    for k in gb:
        assert 0 < rel(ga[k], gb[k]) < 1e-3, k


def test_reference_state_dict_loads_unchanged():
    torch.manual_seed(4)
    ref = RefEncoder(10, 10, (3, 6))
    nn.init.xavier_uniform_(ref.proj_bias)
    for p in ref.proj_flow.parameters():
        nn.init.normal_(p, 0, 0.3)
    model_sd = {"encoder." + k: v for k, v in ref.state_dict().items()}
    model_sd["encoder.time_dt"] = torch.tensor(0.01)
    model_sd["encoder.layers.0.fc1.weight"] = torch.zeros(2, 2)  # the rest of a fairseq model is ignored
    enc = posenc.FloaterEncoder(10, blocks=(3, 6))
    assert set(enc.state_dict()) == set(ref.state_dict())
    enc.load_reference_state_dict(model_sd)
    enc2 = posenc.FloaterEncoder(10, blocks=(3, 6))
    enc2.load_state_dict(ref.state_dict())  # strict
    with torch.no_grad():
        R = ref_table(ref, 20)
        assert rel(enc(20), R) < 1e-5  # float32 throughout
        assert torch.equal(enc(20), enc2(20))
    with pytest.raises(KeyError, match="decoder.proj_bias"):
        enc.load_reference_state_dict(model_sd, prefix="decoder.")


def test_eval_cache_extends_bitwise_and_tracks_parameters():
    enc, _ = make_pair()
    enc.eval()
    with torch.no_grad():
        fresh = posenc.floater_table(*enc._tensors(), L=50).view(50, 3, 2, 12)
        a = enc(20)
        state = enc._cache[1]
        assert torch.ops.posenc.floater_state_cached(state) == 20
        b = enc(50)  # integrates only intervals 20..49 from the cached state
        assert enc._cache[1] is state and torch.ops.posenc.floater_state_cached(state) == 50
        assert torch.equal(b, fresh) and torch.equal(a, fresh[:20])
        c = enc(10)
        assert torch.equal(c, fresh[:10]) and enc._cache[1] is state
        c.add_(1.0)  # the caller owns what it got: the cache is unaffected
        assert torch.equal(enc(10), fresh[:10])
        c.sub_(1.0)
        enc.proj_bias.mul_(2.0)  # in-place change: the cache must be dropped
        d = enc(10)
        assert enc._cache[1] is not state
        assert not torch.equal(d, c)
    enc.train()
    assert enc._cache is None
