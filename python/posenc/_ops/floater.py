"""FLOATER: floater_table and FloaterEncoder over torch.ops.posenc.floater_* (floater.cpp)."""
from typing import Optional, Sequence, Union

import torch
from torch import nn

from ._common import _P, _compiling

_ACTIVATIONS = {
    "relu": lambda: nn.ReLU(inplace=True),  # the reference code's nn.ReLU(inplace=True)
    "tanh": nn.Tanh,
    "gelu": nn.GELU,
    "softplus": nn.Softplus,
    "identity": nn.Identity,
}


def _floater_cfg(delta, substeps, activation, time_input, scheme, gradient, adjoint_substeps, threads):
    if gradient not in ("backprop", "adjoint"):
        raise ValueError("posenc: FloaterEncoder: gradient: expected 'backprop' (exact discrete gradient) or "
                         "'adjoint' (continuous adjoint), got %r" % (gradient,))
    if activation not in _ACTIVATIONS:
        raise ValueError("posenc: FloaterEncoder: activation: expected one of %s, got %r"
                         % (", ".join(sorted(_ACTIVATIONS)), activation))
    t1, t2 = (time_input, time_input) if isinstance(time_input, bool) else tuple(time_input)
    return dict(delta=float(delta), substeps=int(substeps), activation=activation, time1=bool(t1), time2=bool(t2),
                scheme=scheme, gradient=gradient, adjoint_substeps=int(adjoint_substeps), threads=int(threads))


def floater_table(w1, b1, w2, b2, p0, L: int, delta: float = 0.01, substeps: int = 5, activation: str = "relu",
                  time_input=(True, True), scheme: str = "rk4", gradient: str = "backprop", adjoint_substeps: int = 0,
                  threads: int = 0):
    """The FLOATER table [L, N, d] of p' = W2 [act(W1 [p; t] + b1); t] + b2 from p(0) = p0 [N, d]
    at t_i = i * delta, with `substeps` steps of `scheme` per interval. w1/w2 are nn.Linear weights
    with the time column last (or without it where time_input is False). Differentiable in every
    tensor; backward by posenc's exact discrete backprop or the continuous adjoint."""
    cfg = _floater_cfg(delta, substeps, activation, time_input, scheme, gradient, adjoint_substeps, threads)
    return _floater_op(int(L), cfg, w1, b1, w2, b2, p0)


def _floater_op(L, cfg, w1, b1, w2, b2, p0):
    return _P.floater_table(w1, b1, w2, b2, p0, L, cfg["delta"], cfg["substeps"], cfg["activation"], cfg["time1"],
                            cfg["time2"], cfg["scheme"], cfg["threads"], cfg["gradient"], cfg["adjoint_substeps"])


class _LinearT(nn.Module):
    """The reference code's Linear_t: nn.Linear(in + 1, out) applied to [x; t] (time column last)."""

    def __init__(self, in_f, out_f, time=True):
        super().__init__()
        self.time = time
        self.linear = nn.Linear(in_f + (1 if time else 0), out_f)
        nn.init.xavier_normal_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, t, x):
        if self.time:
            x = torch.cat([x, torch.ones(x.shape[:-1] + (1,), dtype=x.dtype, device=x.device) * t], dim=-1)
        return self.linear(x)


class _FlowFunc(nn.Module):
    """The dynamics h(t, p) with the reference module's layout: layers = [Linear_t, act, Linear_t]
    (so its parameters are layers.0.linear.* and layers.2.linear.*). Its forward(t, p) is plain
    PyTorch, e.g. for torchdiffeq; FloaterEncoder never calls it."""

    def __init__(self, d, hidden, activation, time1, time2):
        super().__init__()
        self.layers = nn.Sequential(_LinearT(d, hidden, time1), _ACTIVATIONS[activation](), _LinearT(hidden, d, time2))

    def forward(self, t, x):
        return self.layers[2](t, self.layers[1](self.layers[0](t, x)))


class FloaterEncoder(nn.Module):
    """FLOATER position encodings (Liu et al., ICML 2020) as a module.

    Parameters are laid out and named as the reference code's encoder, so its state_dict entries
    load unchanged: ``proj_flow.layers.0.linear.weight`` [hidden, d + 1], ``...0.linear.bias``
    [hidden], ``proj_flow.layers.2.linear.weight`` [d, hidden + 1], ``...2.linear.bias`` [d] and
    ``proj_bias`` [*blocks, d] (the reference: [3, n_layers, d]).

    ``forward(L)`` returns the table [L, *blocks, d] (row i = p(i * delta), row 0 = proj_bias).
    Backward runs posenc's exact discrete backprop (``gradient="backprop"``) or the continuous
    adjoint (``gradient="adjoint"``, ``adjoint_substeps`` steps per interval, 0 = ``substeps``).
    In eval mode with no gradient needed, the table is cached: a shorter request is a slice and a
    longer one integrates only the new intervals (bitwise equal to a fresh computation); each call
    returns a copy, and the cache is dropped when a parameter changes (in place or replaced).
    """

    def __init__(self, d: int, hidden: Optional[int] = None, blocks: Union[int, Sequence[int]] = 1,
                 activation: str = "relu", delta: float = 0.01, substeps: int = 5, scheme: str = "rk4",
                 time_input=(True, True), gradient: str = "backprop", adjoint_substeps: int = 0, threads: int = 0):
        super().__init__()
        hidden = d if hidden is None else hidden
        self.cfg = _floater_cfg(delta, substeps, activation, time_input, scheme, gradient, adjoint_substeps, threads)
        self.d, self.hidden = int(d), int(hidden)
        self.blocks = (int(blocks),) if isinstance(blocks, int) else tuple(int(b) for b in blocks)
        self.proj_flow = _FlowFunc(self.d, self.hidden, activation, self.cfg["time1"], self.cfg["time2"])
        self.proj_bias = nn.Parameter(torch.empty(self.blocks + (self.d,)))
        if len(self.proj_bias.shape) >= 2:
            nn.init.xavier_uniform_(self.proj_bias)  # the reference's reset_parameters
        else:
            nn.init.zeros_(self.proj_bias)
        self._cache = None

    def extra_repr(self):
        c = self.cfg
        return "d=%d, hidden=%d, blocks=%s, activation=%s, delta=%g, substeps=%d, scheme=%s, gradient=%s" % (
            self.d, self.hidden, self.blocks, c["activation"], c["delta"], c["substeps"], c["scheme"], c["gradient"])

    def _tensors(self):
        l1, l2 = self.proj_flow.layers[0].linear, self.proj_flow.layers[2].linear
        return l1.weight, l1.bias, l2.weight, l2.bias, self.proj_bias.reshape(-1, self.d)

    def forward(self, L: int) -> torch.Tensor:
        L = int(L)
        ts = self._tensors()
        shape = (L,) + tuple(self.proj_bias.shape)
        needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in ts)
        if self.training or needs_grad or _compiling():
            self._cache = None
            return _floater_op(L, self.cfg, *ts).view(shape)
        params = (self.proj_flow.layers[0].linear.weight, self.proj_flow.layers[0].linear.bias,
                  self.proj_flow.layers[2].linear.weight, self.proj_flow.layers[2].linear.bias, self.proj_bias)
        key = tuple((p.data_ptr(), p._version, p.dtype, tuple(p.shape)) for p in params) + (tuple(sorted(self.cfg.items())),)
        with torch.no_grad():
            if self._cache is None or self._cache[0] != key:
                table, state = _P.floater_forward(*[t.detach().contiguous() for t in ts], L, self.cfg["delta"],
                                                  self.cfg["substeps"], self.cfg["activation"], self.cfg["time1"],
                                                  self.cfg["time2"], self.cfg["scheme"], self.cfg["threads"])
                self._cache = (key, state, table)
            elif L > self._cache[2].shape[0]:
                self._cache = (key, self._cache[1], _P.floater_extend(self._cache[1], L))
            return self._cache[2][:L].clone().view(shape)  # a copy: in-place use cannot corrupt the cache

    def train(self, mode: bool = True):
        self._cache = None
        return super().train(mode)

    def load_reference_state_dict(self, state_dict, prefix: str = "encoder.", flow: str = "proj_flow",
                                  bias: str = "proj_bias", strict: bool = True):
        """Load the FLOATER tensors of a whole reference (fairseq) model's state_dict: the entries
        ``<prefix><flow>.layers.{0,2}.linear.{weight,bias}`` and ``<prefix><bias>``; everything
        else is ignored. E.g. prefix="decoder.", flow="proj_flow_selfattn",
        bias="proj_bias_selfattn" for the decoder's self-attention flow."""
        own = {}
        for k, v in state_dict.items():
            if k.startswith(prefix + flow + "."):
                own["proj_flow." + k[len(prefix + flow) + 1:]] = v
            elif k == prefix + bias:
                own["proj_bias"] = v
        missing = {"proj_flow.layers.0.linear.weight", "proj_flow.layers.0.linear.bias",
                   "proj_flow.layers.2.linear.weight", "proj_flow.layers.2.linear.bias", "proj_bias"} - set(own)
        if missing:
            raise KeyError("posenc: FloaterEncoder.load_reference_state_dict: missing %s (prefix %r)"
                           % (", ".join(sorted(prefix + m.replace("proj_flow", flow).replace("proj_bias", bias)
                                               for m in missing)), prefix))
        return self.load_state_dict(own, strict=strict)
