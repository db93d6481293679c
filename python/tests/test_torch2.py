"""The torch 2 registration: torch.library.opcheck on every tensor op (schema, fake kernel against
the real one, autograd registration, AOT dispatch with static and dynamic shapes), a compiled
module using FLOATER, TUPE, RoPE and ALiBi with no graph break (torch._dynamo.explain) whose
values and gradients equal eager's, and the import-time check of the torch version the library
was built for."""
import os
import shutil
import subprocess
import sys

import pytest
import torch
from torch import nn

import posenc

P = torch.ops.posenc
F64 = torch.float64
needs_torch2 = pytest.mark.skipif(not hasattr(torch.library, "opcheck") or not hasattr(torch, "compile"),
                                  reason="opcheck/torch.compile need torch >= 2.4")


def rg(*s, dtype=F64):
    return torch.randn(*s, dtype=dtype, requires_grad=True)


# a Qwen2-VL text config with head_dim 8: 4 pairs in sections (t, h, w) = (2, 1, 1)
QWEN2_VL_CFG = ('{"model_type": "qwen2_vl", "hidden_size": 32, "num_attention_heads": 4, '
                '"rope_scaling": {"type": "mrope", "mrope_section": [2, 1, 1]}, "rope_theta": 10000.0}')


DYN_CFG = ('{"hidden_size": 32, "num_attention_heads": 4, "max_position_embeddings": 64, '
           '"rope_scaling": {"rope_type": "dynamic", "factor": 2.0}, "rope_theta": 10000.0}')


def opcheck_cases():
    torch.manual_seed(0)
    inv = 1e4 ** (-torch.arange(0, 8, 2, dtype=F64) / 8)
    t = lambda *s: torch.randn(*s, dtype=F64)  # noqa: E731
    slopes = posenc.alibi_slopes(4)
    ids3 = torch.randint(-50, 100, (3, 2, 6))
    afreqs, aaxis = P.mrope_config(QWEN2_VL_CFG)[:2]
    exact = P.rope_frequencies('{"hidden_size": 32, "num_attention_heads": 4}', exact=True)[0]
    return {
        "floater_table": (P.floater_table, (rg(5, 5), rg(5), rg(4, 6), rg(4), rg(2, 4), 5), {}),
        "floater_table adjoint": (P.floater_table, (rg(5, 5), rg(5), rg(4, 6), rg(4), rg(2, 4), 4),
                                  {"gradient": "adjoint", "activation": "tanh"}),
        "floater_table_backward": (P.floater_table_backward, (t(5, 2, 4), t(5, 5), t(5), t(4, 6), t(4), t(2, 4)), {}),
        "sinusoidal_table": (P.sinusoidal_table, (6, 8), {}),
        "sinusoidal_table positions": (P.sinusoidal_table, (0, 8), {"positions": torch.tensor([0.5, 2.0], dtype=F64)}),
        "rope_tables": (P.rope_tables, (6, 8), {}),
        "rope_rotate": (P.rope_rotate, (rg(2, 6, 16),), {"head_dim": 8}),
        "rope_rotate_": (P.rope_rotate_, (t(2, 6, 16),), {"head_dim": 8}),
        "rope": (P.rope, (rg(2, 4, 6, 8), inv), {}),
        "rope position_ids": (P.rope, (rg(2, 4, 6, 8), inv), {"position_ids": torch.randint(0, 100, (2, 6))}),
        "rope ragged": (P.rope, (rg(7, 4, 8), inv), {"cu_seqlens": torch.tensor([0, 3, 7]),
                                                     "offsets": torch.tensor([5, 0])}),
        "rope xpos key": (P.rope, (rg(2, 4, 6, 8), inv), {"xpos": True, "key": True}),
        "rope bf16": (P.rope, (torch.randn(2, 4, 6, 8, dtype=torch.bfloat16), inv), {}),
        "rope_": (P.rope_, (t(2, 4, 6, 8), inv), {}),
        "rope_decode": (P.rope_decode, (torch.randn(3, 4, 1, 8), torch.randn(3, 2, 1, 8), exact),
                        {"offsets": torch.tensor([5, 900, 0])}),
        "rope_decode ragged": (P.rope_decode, (torch.randn(3, 4, 8, dtype=torch.bfloat16), None, exact),
                               {"position_ids": torch.tensor([7, 2, 40])}),
        "rope_decode prefill": (P.rope_decode, (t(2, 4, 6, 8), t(2, 1, 6, 8), inv), {}),
        "rope_decode_cos_sin": (P.rope_decode_cos_sin, (torch.tensor([[5000], [3]]), exact), {"dtype": torch.bfloat16}),
        "rope_decode_": (P.rope_decode_, (t(2, 4, 1, 8), t(2, 2, 1, 8), exact),
                         {"position_ids": torch.tensor([[3], [70]])}),
        "rope_frequencies": (P.rope_frequencies, ('{"hidden_size": 64, "num_attention_heads": 4}',), {}),
        "rope_cos_sin": (P.rope_cos_sin, (torch.arange(6).view(2, 3), inv), {}),
        "rope_cos_sin exact": (P.rope_cos_sin, (torch.arange(6).view(2, 3), exact), {"dtype": F64}),
        "rope exact": (P.rope, (rg(2, 4, 6, 8), exact), {"position_ids": torch.randint(0, 100, (2, 6))}),
        "rope_frequencies exact": (P.rope_frequencies, ('{"hidden_size": 64, "num_attention_heads": 4}',),
                                   {"exact": True}),
        "rope_frequencies_at": (P.rope_frequencies_at, (torch.tensor([[3, 900]]), DYN_CFG, 4), {}),
        "mrope_config": (P.mrope_config, (QWEN2_VL_CFG,), {}),
        "axes_cos_sin": (P.axes_cos_sin, (ids3, afreqs, aaxis), {}),
        "axes_cos_sin pairs f64": (P.axes_cos_sin, (ids3, afreqs, aaxis), {"dtype": F64, "duplicated": False}),
        "axes_rope": (P.axes_rope, (rg(2, 4, 6, 8), ids3, afreqs, aaxis), {}),
        "axes_rope shared": (P.axes_rope, (rg(2, 4, 6, 8), ids3[:, 0], afreqs, aaxis), {"layout": "interleaved"}),
        "axes_rope ragged": (P.axes_rope, (rg(6, 4, 8), ids3[:, 0], afreqs[:, 0, 0].contiguous(), aaxis), {}),
        "axes_rope bf16": (P.axes_rope, (torch.randn(2, 4, 6, 8, dtype=torch.bfloat16), ids3, afreqs, aaxis), {}),
        "axes_rope_": (P.axes_rope_, (t(2, 4, 6, 8), ids3, afreqs, aaxis), {"attention_factor": 1.5}),
        "axes_rope split-half": (P.axes_rope, (rg(2, 4, 6, 8), ids3, afreqs, torch.stack([aaxis, aaxis.flip(0)])), {}),
        "axes_layout_frequencies": (P.axes_layout_frequencies, ("dinov3", [16, 3, 5]), {}),
        "axes_layout_positions": (P.axes_layout_positions, ("qwen2_5_vl_window", [2, 56, 14], [1, 4, 6, 2, 4, 4]), {}),
        "get_rope_index": (P.get_rope_index, (torch.tensor([[0, 1, 1, 1, 1, 0, 2, 2, 2, 2, 0]]),
                                              torch.tensor([[1, 4, 4]]), torch.tensor([[2, 2, 4]])), {}),
        "hunyuan_rope_index": (P.hunyuan_rope_index, (torch.tensor([[0, 1, 1, 1, 1, 1, 1, 1, 1, 0]]),
                                                      torch.tensor([[1, 4, 4]])), {}),
        "alibi_slopes": (P.alibi_slopes, (6,), {}),
        "alibi_bias": (P.alibi_bias, (slopes, 3, 5), {}),
        "alibi_add": (P.alibi_add, (rg(2, 4, 3, 5), slopes), {"causal_mask": True}),
        "alibi_add_": (P.alibi_add_, (t(2, 4, 3, 5), slopes), {}),
        "tupe_bias": (P.tupe_bias, (rg(11, 8), rg(8), rg(8), rg(8, 8), rg(8), rg(8, 8), None, rg(9, 2), 6, 2),
                      {"num_buckets": 8, "max_distance": 16}),
        "tupe_bias_backward": (P.tupe_bias_backward, (t(2, 6, 6), t(11, 8), t(8), t(8), t(8, 8), None, t(8, 8), None,
                                                      None, 2), {}),
        "relative_position_bucket": (P.relative_position_bucket, (6,), {}),
        "t5_bias": (P.t5_bias, (rg(33, 3), 6), {}),
        "t5_bias_backward": (P.t5_bias_backward, (rg(3, 6, 6), 33), {}),
        "toeplitz_matmul": (P.toeplitz_matmul, (rg(7), rg(4, 3), 4), {}),
        "toeplitz_correlate": (P.toeplitz_correlate, (rg(4, 3), rg(5, 3)), {}),
    }


# Ops not in the list: floater_forward / floater_extend / floater_backward / floater_state_cached
# take or return the FloaterEncoder eval cache's TorchScript state object (eager only: a compiled
# FloaterEncoder calls floater_table); build_torch_version, rope_layer_types and rope_cache_info /
# _clear / _limits have no tensors.
CASES = opcheck_cases()


@needs_torch2
@pytest.mark.parametrize("name", list(CASES))
def test_opcheck(name):
    op, args, kwargs = CASES[name]
    result = torch.library.opcheck(op, args, kwargs)
    assert all(v == "SUCCESS" for v in result.values()), result


def test_every_tensor_op_is_checked():
    schema_ops = {s.name.split("::")[1] for s in torch._C._jit_get_all_schemas() if s.name.startswith("posenc::")}
    eager_only = {"floater_forward", "floater_extend", "floater_backward", "floater_state_cached",
                  "build_torch_version", "rope_layer_types", "rope_cache_info", "rope_cache_clear",
                  "rope_cache_limits"}
    checked = {n.split(" ")[0] for n in CASES}
    assert schema_ops - eager_only == checked


class Everything(nn.Module):
    """A toy attention score using FLOATER (positions added to x), RoPE on q/k ([B, S, H, D] views),
    ALiBi and TUPE's positional term."""

    def __init__(self):
        super().__init__()
        self.floater = posenc.FloaterEncoder(8, hidden=8, delta=0.1)
        self.tupe = posenc.TUPEPositionalBias(8, 2, 16, num_buckets=8, max_distance=16)
        self.rot = posenc.RotaryEmbedding({"hidden_size": 16, "num_attention_heads": 2, "rope_theta": 10000.0})
        self.register_buffer("slopes", posenc.alibi_slopes(2))
        self.qk = nn.Linear(8, 32)

    def forward(self, x):
        L = x.shape[1]
        h = x + self.floater(L)[:, 0]
        q, k = self.qk(h).view(x.shape[0], L, 2, 2, 8).unbind(2)
        q, k = self.rot(q, k, qk_layout="bshd")
        s = torch.einsum("bshd,bthd->bhst", q, k)
        s = posenc.alibi_add(s, self.slopes, causal_mask=True) + self.tupe(L)
        return s.softmax(-1).square().sum()


@needs_torch2
def test_compiled_module_has_no_graph_break_and_matches_eager():
    torch.manual_seed(0)
    m = Everything()
    x = torch.randn(2, 6, 8)
    ex = torch._dynamo.explain(m)(x)
    assert ex.graph_break_count == 0 and ex.graph_count == 1, ex.break_reasons
    torch._dynamo.reset()
    cm = torch.compile(m, fullgraph=True, dynamic=False)
    y = cm(x)
    y.backward()
    g = {n: p.grad.clone() for n, p in m.named_parameters()}
    m.zero_grad()
    y0 = m(x)
    y0.backward()
    # the same kernels run in both; only inductor's fusion of the surrounding float32 arithmetic
    # reorders roundings: 1e-5 relative
    assert abs(y.item() - y0.item()) <= 1e-5 * abs(y0.item())
    for n, p in m.named_parameters():
        assert torch.allclose(g[n], p.grad, rtol=1e-4, atol=1e-6), n


def test_torchscript_callers_get_gradients():
    # the Autograd kernels are C++: a scripted function differentiates through posenc's ops
    @torch.jit.script
    def f(b: torch.Tensor, x: torch.Tensor, table: torch.Tensor):
        return torch.ops.posenc.toeplitz_matmul(b, x, 3).sum() + torch.ops.posenc.t5_bias(table, 4, 8, 16, True).sum()

    b, x, table = torch.randn(5, dtype=F64, requires_grad=True), torch.randn(3, 2, dtype=F64), \
        torch.randn(9, 2, dtype=F64, requires_grad=True)
    f(b, x, table).backward()
    b2, t2 = b.detach().clone().requires_grad_(), table.detach().clone().requires_grad_()
    (posenc.toeplitz_matmul(b2, x, 3).sum() + posenc.t5_bias(t2, 4, 8, 16).sum()).backward()
    assert torch.equal(b.grad, b2.grad) and torch.equal(table.grad, t2.grad)


def test_version_mismatch_is_an_import_error(tmp_path):
    # a copy of the library whose record names another torch release: importing posenc with it
    # raises TorchVersionMismatch (an ImportError) naming both versions, before loading anything
    lib = tmp_path / "libposenc_torch.so"
    shutil.copy2(posenc.library_path, lib)
    (tmp_path / "libposenc_torch.torch-version").write_text("1.13.0a0+gitunknown\n")
    env = dict(os.environ, POSENC_TORCH_LIBRARY=str(lib))
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(posenc.__file__)))
    r = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import posenc" % pkg], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1
    assert "TorchVersionMismatch" in r.stderr and "built for torch 1.13.0a0+gitunknown" in r.stderr
    assert "imports torch " + torch.__version__ in r.stderr
    with pytest.raises(ImportError, match=r"built for torch 2\.0\.0.*imports torch 2\.15\.0\+cpu"):
        (tmp_path / "libposenc_torch.torch-version").write_text("2.0.0\n")
        posenc.check_build(str(lib), running="2.15.0+cpu")
    assert posenc.check_build(str(lib), running="2.0.0+cu121") == "2.0.0"  # local tags do not matter
    assert posenc.torch_version_built.split("+")[0] == torch.__version__.split("+")[0]
