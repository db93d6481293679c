"""The binding's one autograd helper (python/src/common.hpp, autograd_apply) as every differentiable op
uses it: each op's node is named after the op, the tensors its backward needs live exactly as long
as the graph (no reference cycle through the node), and inputs saved for backward carry torch's
version check (an in-place change after the forward is an error, as for torch.mm's saved inputs).
The gradients themselves are checked against references in test_ops.py, test_floater.py,
test_rotary.py and test_multiaxis.py."""
import gc
import weakref

import pytest
import torch

import posenc

P = torch.ops.posenc


def _dense(*shape, grad=True):
    return torch.randn(*shape, dtype=torch.float64, requires_grad=grad)


def _cases():
    """(op, node tag, a thunk returning the op's output) for every op with an Autograd kernel."""
    torch.manual_seed(0)
    d, h = 4, 3
    inv = 1.0 / 10000 ** (torch.arange(0, 4, 2, dtype=torch.float64) / 4)
    pos3 = torch.arange(5).view(1, 5).expand(3, 5).contiguous()
    freqs, axis = inv.clone(), torch.tensor([0, 1])
    return [
        ("floater_table", "FloaterTableBackward",
         lambda: P.floater_table(_dense(h, d + 1), _dense(h), _dense(d, h + 1), _dense(d), _dense(1, d), 3)),
        ("rope", "RopeBackward", lambda: P.rope(_dense(1, 2, 5, 4), inv)),
        ("rope_rotate", "RopeRotateBackward", lambda: P.rope_rotate(_dense(5, 4))),
        ("axes_rope", "AxesRopeBackward", lambda: P.axes_rope(_dense(1, 2, 5, 4), pos3, freqs, axis)),
        ("alibi_add", "AlibiAddBackward", lambda: P.alibi_add(_dense(1, 2, 3, 3), posenc.alibi_slopes(2))),
        ("tupe_bias", "TupeBiasBackward",
         lambda: P.tupe_bias(_dense(6, d), _dense(d), _dense(d), _dense(d, d), None, _dense(d, d), None, None, 4, 2)),
        ("t5_bias", "T5BiasBackward", lambda: P.t5_bias(_dense(32, 2), 4)),
        ("t5_bias_backward", "T5BiasBackwardBackward", lambda: P.t5_bias_backward(_dense(2, 4, 4), 32)),
        ("toeplitz_matmul", "ToeplitzMatmulBackward", lambda: P.toeplitz_matmul(_dense(5), _dense(3, 2), 3)),
        ("toeplitz_correlate", "ToeplitzCorrelateBackward", lambda: P.toeplitz_correlate(_dense(3, 2), _dense(3, 2))),
    ]


def test_every_autograd_kernel_is_covered():
    ops = {s.name.split("::")[1] for s in torch._C._jit_get_all_schemas() if s.name.startswith("posenc::")}
    with_autograd = {o for o in ops if torch._C._dispatch_has_kernel_for_dispatch_key("posenc::" + o, "Autograd")}
    assert with_autograd == {c[0] for c in _cases()}


@pytest.mark.parametrize("op,tag,run", _cases(), ids=[c[0] for c in _cases()])
def test_node_is_named_after_its_op_and_backward_runs(op, tag, run):
    y = run()
    name = y.grad_fn.name()
    assert "autograd_node" in name and tag + ">" in name, name
    leaves = [t for t in y.grad_fn.next_functions if t[0] is not None]
    assert leaves, name  # the node has edges to the inputs that need a gradient
    y.backward(torch.ones_like(y))


def test_backward_captures_live_as_long_as_the_graph():
    # rope's backward holds inv_freq and position_ids; alibi_add's the q_offsets: held while the
    # output (and so its node) is alive, released with it -- a cycle through the node would keep them
    x = _dense(2, 2, 4, 4)
    inv = torch.tensor([1.0, 0.01], dtype=torch.float64)
    pids = torch.arange(8).view(2, 4)
    scores = _dense(2, 2, 3, 3)
    q_off = torch.tensor([0, 1])
    refs = [weakref.ref(inv), weakref.ref(pids), weakref.ref(q_off)]
    y = P.rope(x, inv, 1.0, pids)
    z = P.alibi_add(scores, posenc.alibi_slopes(2), q_off, "relative", True)
    del inv, pids, q_off
    gc.collect()
    assert all(r() is not None for r in refs)
    (y.sum() + z.masked_fill(z.isinf(), 0).sum()).backward()
    assert x.grad is not None and scores.grad is not None
    del y, z
    gc.collect()
    assert all(r() is None for r in refs)


@pytest.mark.parametrize("op", ["toeplitz_matmul", "tupe_bias", "floater_table"])
def test_saved_inputs_are_version_checked(op):
    d, h = 4, 3
    if op == "toeplitz_matmul":
        b, x = _dense(5), _dense(3, 2)
        y, changed = P.toeplitz_matmul(b, x, 3), x
    elif op == "tupe_bias":
        pos = _dense(6, d)
        y = P.tupe_bias(pos, _dense(d), _dense(d), _dense(d, d), None, _dense(d, d), None, None, 4, 2)
        changed = pos
    else:
        p0 = _dense(1, d)
        y = P.floater_table(_dense(h, d + 1), _dense(h), _dense(d, h + 1), _dense(d), p0, 3)
        changed = p0
    with torch.no_grad():
        changed.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
