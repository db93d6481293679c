"""A tiny Transformer encoder with FLOATER positions (the reference code's use: per-layer q/k/v
biases after the input projection) trained on sequence reversal twice with the same seed: once
with the positions from torchdiffeq (autograd through rk4 steps, the reference solver) and once
from posenc's op. In f64 the two loss curves agree to 1e-9 (measured ~7e-16): the positions agree
to ~1e-15 and so do their gradients, and 40 Adam steps amplify that by far less than 1e6."""
import torch
from torch import nn
from torchdiffeq import odeint

import posenc

F64 = torch.float64


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.in_proj = nn.Linear(d, 3 * d)
        self.out_proj = nn.Linear(d, d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x, pbias):  # x [B, L, d], pbias [L, 3, d]
        B, L, d = x.shape
        q, k, v = self.in_proj(x).chunk(3, dim=-1)
        q, k, v = q + pbias[:, 0], k + pbias[:, 1], v + pbias[:, 2]  # flow_attention.py: q += bias_q ...
        split = lambda t: t.view(B, L, self.heads, -1).transpose(1, 2)
        a = torch.softmax(split(q) @ split(k).transpose(-1, -2) * (d // self.heads) ** -0.5, dim=-1) @ split(v)
        x = self.ln1(x + self.out_proj(a.transpose(1, 2).reshape(B, L, d)))
        return self.ln2(x + self.ff(x))


class Model(nn.Module):
    def __init__(self, vocab=6, d=16, heads=2, layers=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = posenc.FloaterEncoder(d, blocks=(3, layers), delta=0.1)  # proj_bias [3, layers, d]
        with torch.no_grad():  # a flow that moves, so positions matter
            for p in self.pos.proj_flow.parameters():
                p.normal_(0, 0.3)
        self.layers = nn.ModuleList(Layer(d, heads) for _ in range(layers))
        self.out = nn.Linear(d, vocab)

    def positions(self, L, solver):
        if solver == "posenc":
            return self.pos(L)  # [L, 3, layers, d]
        t = torch.arange(L, dtype=self.pos.proj_bias.dtype) * 0.1
        return odeint(self.pos.proj_flow, self.pos.proj_bias, t, method="rk4", options=dict(step_size=0.1 / 5))

    def forward(self, tokens, solver):
        P = self.positions(tokens.shape[1], solver)
        x = self.emb(tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x, P[:, :, i])
        return self.out(x)


def train(solver, steps=40):
    torch.manual_seed(0)
    model = Model().to(F64)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    data = torch.Generator().manual_seed(1)
    losses = []
    for _ in range(steps):
        x = torch.randint(0, 6, (16, 10), generator=data)
        loss = nn.functional.cross_entropy(model(x, solver).reshape(-1, 6), x.flip(1).reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return torch.tensor(losses, dtype=F64)


def test_training_curves_agree():
    a, b = train("torchdiffeq"), train("posenc")
    assert (a - b).abs().max() < 1e-9
    assert a[-5:].mean() < a[:5].mean() - 0.05  # it learns: the curves are not flat
