"""posenc inside torch.distributed (issue 36): gloo on CPU, 2 and 4 processes (torch.multiprocessing.spawn).

* Tensor parallel: q/k from ColwiseParallel projections arrive as DTensors sharded on heads; every
  posenc op runs shard-local (its output placement is the input's, CommDebugMode counts no
  collective) and its gathered output equals the op on the gathered input to the bit. A patched
  Llama with FLOATER under the usual plan (local outputs of H / ws heads): loss and gradients
  equal one process within 1e-6 (float64; measured: loss equal, gradients 1.5e-14).
* Context parallel: each rank holds a slice of the sequence with its positions (offsets,
  position_ids, q_offsets, ALiBi key blocks); the concatenated slices equal the unsharded result
  to the bit. Sequence-sharded DTensors with a rule whose frequencies depend on the length: equal
  to the bit, the positions gathered once (the one collective).
* DDP and FSDP2: a tiny LlamaForCausalLM with patch_rotary plus a FloaterEncoder feeding an
  nn.Linear, three SGD steps on one global batch split over the ranks: losses, gradients and
  parameters equal the single-process run within 1e-6 relative (norm-wise, per tensor). The ranks
  sum the gradients in another order, so bitwise equality is not expected; the model runs in
  float64 because in float32 the small, cancelling attention-projection gradients of an untrained
  model (norm ~1e-6) turn that reordering into up to ~1.5e-5 relative, which would hide a real
  fault behind a loose tolerance. Measured in float64: gradients 1.2e-14, parameters 2.4e-16,
  losses 1.2e-7 (transformers' loss takes the logits to float32). Tensor parallel (float32):
  outputs 1.9e-7, gradients 1.4e-7, losses equal.

References: the single process (the same ops, the same seeds, the whole batch), itself checked
against transformers and float64 in the other test files.

Cost: one spawn per world size runs every scenario (the workers import torch and transformers
once): 41-44 s of CPU in all (user + sys), 48-179 s wall on the 2 shared cores at load 6-13.
"""
import datetime
import os
import socket

import pytest
import torch

import posenc

dist = pytest.importorskip("torch.distributed")


def _missing():
    if not dist.is_available() or not dist.is_gloo_available():
        return "torch.distributed with the gloo backend is not available"
    try:  # DTensor's sharding rules and FSDP2 (torch >= 2.6; Debian's torch 1.13 has neither)
        from torch.distributed.fsdp import fully_shard  # noqa: F401
        from torch.distributed.tensor.experimental import register_sharding  # noqa: F401
    except ImportError as e:
        return "this torch has no DTensor sharding rules or FSDP2: %s" % e
    return None


if _missing():
    pytest.skip(_missing(), allow_module_level=True)
tf = pytest.importorskip("transformers")

H, D, B, S = 4, 8, 4, 8  # heads divisible by 4 ranks; batch and sequence too
WORLD_SIZES = (2, 4)
STEPS = 3
REL = 1e-6


def llama_rope_config(rope_type="default"):
    rp = {"rope_type": rope_type, "rope_theta": 10000.0}
    if rope_type == "dynamic":
        rp["factor"] = 4.0
    return {"model_type": "llama", "hidden_size": H * D, "num_attention_heads": H, "num_key_value_heads": H,
            "head_dim": D, "max_position_embeddings": 16, "rope_parameters": rp}


def qwen2_vl_config():
    return {"model_type": "qwen2_vl", "hidden_size": H * D, "num_attention_heads": H, "num_key_value_heads": H,
            "max_position_embeddings": 128,
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]}}


def inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(B, S, H * D, generator=g)
    pos = torch.randint(0, 40, (B, S), generator=g)  # per-token positions, beyond max_position_embeddings
    pos3 = torch.randint(0, 40, (3, B, S), generator=g)
    q = torch.randn(B, H, S, D, generator=g)
    k = torch.randn(B, H, S, D, generator=g)
    scores = torch.randn(B, H, S, S, generator=g)
    return x, pos, pos3, q, k, scores


class Attn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.q_proj = torch.nn.Linear(H * D, H * D)
        self.k_proj = torch.nn.Linear(H * D, H * D)


# ---- tensor parallel ----------------------------------------------------------------------------------

def tp_ops(attn, x, pos, pos3, mesh=None):
    """Every op on q/k sharded on heads (mesh given: DTensors) or on plain tensors (mesh None).
    Returns the outputs (full tensors), their placements and the collectives counted."""
    from torch.distributed.tensor import DTensor, Shard

    rot = posenc.RotaryEmbedding(llama_rope_config())
    mrot = posenc.MultiAxisRotaryEmbedding(qwen2_vl_config())
    slopes = posenc.alibi_slopes(H)
    q = attn.q_proj(x).view(B, S, H, D).transpose(1, 2)
    k = attn.k_proj(x).view(B, S, H, D).transpose(1, 2)

    def local(t):
        return t.to_local() if mesh is not None else t

    def on_heads(t):  # the attention scores each rank forms from its own heads
        return DTensor.from_local(t, mesh, [Shard(1)]) if mesh is not None else t

    out = {}
    if mesh is not None:
        from torch.distributed.tensor.debug import CommDebugMode
        cm = CommDebugMode()
        rank, ws = mesh.get_local_rank(), mesh.size()
        # position ids and slopes as DTensors sharded on batch / heads
        pos_b = DTensor.from_local(pos.chunk(ws)[rank], mesh, [Shard(0)])
        pos3_b = DTensor.from_local(pos3.chunk(ws, dim=1)[rank], mesh, [Shard(1)])
        sl = DTensor.from_local(slopes.chunk(ws)[rank], mesh, [Shard(0)])
    else:
        import contextlib
        cm = contextlib.nullcontext()
        pos_b, pos3_b, sl = pos, pos3, slopes
    with cm:
        out["rope_q"], out["rope_k"] = rot(q, k, position_ids=pos)
        qi, ki = q.detach().clone(), k.detach().clone()
        rot.apply_(qi, ki, position_ids=pos)
        out["rope__q"], out["rope__k"] = qi, ki
        out["rope_offsets"] = posenc.rope(q, rot.inv_freq, offsets=torch.arange(B) * 3)
        out["rope_bshd"] = posenc.rope(q.transpose(1, 2), rot.inv_freq, position_ids=pos, qk_layout="bshd")
        out["rope_ragged"] = posenc.rope(q[0].transpose(0, 1), rot.inv_freq, position_ids=pos[0])  # [T, H, D]
        out["rotate"] = posenc.apply_rotary(attn.q_proj(x), head_dim=D)  # [B, S, H * D], sharded on whole heads
        xr = attn.k_proj(x).detach().clone()
        posenc.apply_rotary_(xr, head_dim=D, layout="half")
        out["rotate_"] = xr
        out["axes"] = posenc.axes_rope(q, pos3, mrot.freqs, mrot.axis, layout=mrot.layout)
        qa = q.detach().clone()
        posenc.axes_rope_(qa, pos3, mrot.freqs, mrot.axis, layout=mrot.layout)
        out["axes_"] = qa
        scores = on_heads(local(out["rope_q"]) @ local(out["rope_k"]).transpose(-1, -2))
        res_scores = scores
        out["alibi"] = posenc.alibi_add(scores, slopes, causal_mask=True)
        out["alibi_off"] = posenc.alibi_add(scores, slopes, q_offsets=torch.arange(B) + 2, form="symmetric")
        sc = scores.detach().clone()
        posenc.alibi_add(sc, slopes, inplace=True)
        out["alibi_"] = sc
        out["alibi_bias"] = posenc.alibi_bias(sl, S, S, causal_mask=True, dtype=torch.float32)
        out["cos"], out["sin"] = rot.cos_sin(pos_b)
        out["axes_cos"], _ = mrot.cos_sin(pos3_b)
    res = {"q": q, "k": k, "scores": res_scores}
    if mesh is not None:
        res["collectives"] = cm.get_total_counts()
        res["placements"] = {n: tuple(repr(p) for p in t.placements) for n, t in out.items()}
    # a loss through rope and ALiBi: its gradients reach the projections through the sharded backward
    a = out["alibi"]
    loss = (out["rope_q"] * out["rope_k"]).sum() + torch.where(torch.isinf(a), 0.0, a).square().sum() * 1e-3 \
        + out["axes"].square().sum() + out["rotate"].sin().sum()
    if mesh is not None:
        loss = loss.full_tensor()
    loss.backward()

    def full(t):
        return t.full_tensor() if mesh is not None else t

    res.update({n: full(t).detach() for n, t in out.items()})
    res["q"], res["k"], res["scores"] = full(q).detach(), full(k).detach(), full(res_scores).detach()
    res["loss"] = loss.detach()
    res["grads"] = {n: full(p.grad) for n, p in attn.named_parameters()}
    return res


def tp_worker(rank, ws):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (ws,))
    attn = Attn()
    parallelize_module(attn, mesh, {"q_proj": ColwiseParallel(use_local_output=False),
                                    "k_proj": ColwiseParallel(use_local_output=False)})
    x, pos, pos3, _, _, _ = inputs()
    return tp_ops(attn, x, pos, pos3, mesh)


# ---- context parallel ---------------------------------------------------------------------------------

def cp_ops(lo, hi, q, k, pos, scores):
    """Rank's slice [lo, hi) of the sequence (queries; all keys for ALiBi) with its positions.
    lo, hi = 0, S: the unsharded run."""
    rot = posenc.RotaryEmbedding(llama_rope_config())
    dyn = posenc.RotaryEmbedding(llama_rope_config("dynamic"))
    slopes = posenc.alibi_slopes(H)
    qs, ks = q[:, :, lo:hi].clone(), k[:, :, lo:hi].clone()
    out = {}
    rot.apply_(qs, ks, offsets=torch.full((B,), lo))  # positions lo, lo + 1, ... of each sequence
    out["apply_offsets_q"], out["apply_offsets_k"] = qs, ks
    qs = q[:, :, lo:hi].clone()
    posenc.rope_(qs, rot.inv_freq, position_ids=pos[:, lo:hi])
    out["rope_position_ids"] = qs
    out["rope_bshd"] = posenc.rope(q[:, :, lo:hi].transpose(1, 2), rot.inv_freq, position_ids=pos[:, lo:hi],
                                   qk_layout="bshd").transpose(1, 2)
    # a rule whose frequencies depend on the length: the frequencies of the whole sequence, by the
    # largest position of all ranks (RotaryEmbedding alone would take the slice's largest)
    inv, af = dyn.frequencies(int(pos.max()) + 1)
    out["dynamic"] = posenc.rope(q[:, :, lo:hi], inv, af, position_ids=pos[:, lo:hi])
    out["cos"] = rot.cos_sin(pos[:, lo:hi])[0].transpose(0, 1)  # [S, B, width]: concatenated on dim 0
    # ALiBi: the rank's query rows against all keys, its first query at position lo
    out["alibi"] = posenc.alibi_add(scores[:, :, lo:hi], slopes, q_offsets=torch.full((B,), lo), causal_mask=True)
    # ring attention's key blocks: block [klo, khi) of the keys, queries shifted by -klo
    blocks = []
    for klo in range(0, S, hi - lo):
        khi = klo + (hi - lo)
        blocks.append(posenc.alibi_add(scores[:, :, lo:hi, klo:khi], slopes, q_offsets=torch.full((B,), lo - klo),
                                       causal_mask=True))
    out["alibi_ring"] = torch.cat(blocks, dim=3)
    seq_dim = {"cos": 0}
    return {n: t.transpose(0, seq_dim.get(n, 2)).contiguous() for n, t in out.items()}  # the sequence first


def cp_dtensor_worker(rank, ws, mesh):
    """q/k as DTensors sharded on the sequence with position_ids sharded alongside, a dynamic rule."""
    from torch.distributed.tensor import DTensor, Shard
    from torch.distributed.tensor.debug import CommDebugMode

    _, pos, pos3, q, k, _ = inputs()
    dyn = posenc.RotaryEmbedding(llama_rope_config("dynamic"))
    mrot = posenc.MultiAxisRotaryEmbedding(qwen2_vl_config())
    qd = DTensor.from_local(q.chunk(ws, dim=2)[rank], mesh, [Shard(2)])
    kd = DTensor.from_local(k.chunk(ws, dim=2)[rank], mesh, [Shard(2)])
    pd = DTensor.from_local(pos.chunk(ws, dim=1)[rank], mesh, [Shard(1)])
    p3 = DTensor.from_local(pos3.chunk(ws, dim=2)[rank], mesh, [Shard(2)])
    with CommDebugMode() as cm:
        qr, kr = dyn(qd, kd, position_ids=pd)
        ax = posenc.axes_rope(qd, p3, mrot.freqs, mrot.axis, layout=mrot.layout)
    # batch-sharded q of S = B rows: per-sequence offsets [B], then positions [S] of the same shape and
    # dtype (the first must not decide the second's placements: offsets travel with the batch, the
    # shared positions do not)
    qb = DTensor.from_local(q[:, :, :B].chunk(ws)[rank], mesh, [Shard(0)])
    inv = dyn.inv_freq
    by_offsets = posenc.rope(qb, inv, offsets=torch.arange(B) * 5)
    by_positions = posenc.rope(qb, inv, position_ids=torch.arange(B) + 7)
    # the other shardings with their tensors alongside, each shard-local
    rot = posenc.RotaryEmbedding(llama_rope_config())
    slopes = posenc.alibi_slopes(H)
    _, _, _, _, _, scores = inputs()

    def shard(t, d):
        return DTensor.from_local(t.chunk(ws, dim=d)[rank], mesh, [Shard(d)])

    with CommDebugMode() as cm2:
        other = {
            "ragged_tokens": posenc.rope(shard(q[0].transpose(0, 1).contiguous(), 0), rot.inv_freq,
                                         position_ids=shard(pos[0], 0)),  # [T, H, D], position_ids [T]
            "rotate_rows": posenc.apply_rotary(shard(q.transpose(1, 2).reshape(B, S, H * D), 1),
                                               positions=shard(pos[0].double() * 0.5, 0), head_dim=D),
            "axes_ragged": posenc.axes_rope(shard(q[0].transpose(0, 1).contiguous(), 0), shard(pos3[:, 0], 1),
                                            mrot.freqs, mrot.axis, layout=mrot.layout),
            "alibi_batch": posenc.alibi_add(shard(scores, 0), slopes, q_offsets=shard(torch.arange(B) + 1, 0),
                                            causal_mask=True),
            "cos_seq": rot.cos_sin(shard(pos, 1))[0],
            "rotate_batch": posenc.apply_rotary(shard(q.transpose(1, 2).reshape(B, S, H * D), 0), head_dim=D),
            "axes_batch": posenc.axes_rope(shard(q, 0), shard(pos3, 1), mrot.freqs, mrot.axis, layout=mrot.layout),
        }
    return {"collectives": {str(c): n for c, n in cm.get_comm_counts().items()},
            "placements": [tuple(repr(p) for p in t.placements) for t in (qr, kr, ax)],
            "q": qr.full_tensor(), "k": kr.full_tensor(), "axes": ax.full_tensor(),
            "by_offsets": by_offsets.full_tensor(), "by_positions": by_positions.full_tensor(),
            "other_collectives": cm2.get_total_counts(),
            "other_placements": {n: tuple(repr(p) for p in t.placements) for n, t in other.items()},
            "other": {n: t.full_tensor() for n, t in other.items()}}


# ---- DDP and FSDP2 ------------------------------------------------------------------------------------

class Net(torch.nn.Module):
    """A tiny Llama with posenc's rotary (patch_rotary) and FLOATER positions added to its embeddings."""

    def __init__(self, kv_heads=2):
        super().__init__()
        import posenc.transformers as pt

        torch.manual_seed(0)
        cfg = tf.LlamaConfig(hidden_size=32, intermediate_size=48, num_hidden_layers=2, num_attention_heads=4,
                             num_key_value_heads=kv_heads, vocab_size=64, max_position_embeddings=64,
                             rope_parameters={"rope_type": "default", "rope_theta": 10000.0})
        self.llama = pt.patch_rotary(tf.LlamaForCausalLM(cfg))
        self.floater = posenc.FloaterEncoder(32, hidden=16, substeps=2)
        self.proj = torch.nn.Linear(32, 32)
        self.double()

    def forward(self, ids):
        n = ids.shape[1]
        emb = self.llama.model.embed_tokens(ids) + self.proj(self.floater(n).view(n, -1))
        return self.llama(inputs_embeds=emb, labels=ids).loss


def batch():
    return torch.randint(0, 64, (4, 12), generator=torch.Generator().manual_seed(2))


def train(model, ids, params):
    """STEPS SGD steps; (losses, the last step's gradients, the final parameters), by name."""
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = model(ids)
        loss.backward()
        losses.append(loss.detach())
        grads = {n: params(p.grad) for n, p in model.named_parameters()}
        opt.step()
    return torch.stack(losses), grads, {n: params(p.detach()) for n, p in model.named_parameters()}


def train_worker(rank, ws, how):
    ids = batch().chunk(ws)[rank]
    net = Net()
    if how == "ddp":
        from torch.nn.parallel import DistributedDataParallel

        model = DistributedDataParallel(net)
        losses, grads, params = train(model, ids, lambda t: t.clone())
        strip = len("module.")
        grads = {n[strip:]: g for n, g in grads.items()}
        params = {n[strip:]: p for n, p in params.items()}
    else:
        from torch.distributed.fsdp import fully_shard

        for layer in net.llama.model.layers:
            fully_shard(layer)
        fully_shard(net)
        losses, grads, params = train(net, ids, lambda t: t.full_tensor())
    dist.all_reduce(losses)  # each rank's loss is its sequences' mean: the global mean is their mean
    return {"losses": losses / ws, "grads": grads, "params": params}


def tp_llama_worker(rank, ws):
    """The patched Llama (with FLOATER) under transformers' usual tensor-parallel plan: the
    projections' outputs are plain local tensors of H / ws heads (use_local_output=True), so posenc's
    rotary sees an ordinary, smaller model; one forward and backward on the whole batch."""
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor import DTensor
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module

    mesh = init_device_mesh("cpu", (ws,))
    net = Net(kv_heads=4)  # 4 key/value heads: whole heads on each of 4 ranks
    plan = {"self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
            "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(),
            "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(), "mlp.down_proj": RowwiseParallel()}
    for layer in net.llama.model.layers:
        parallelize_module(layer, mesh, plan)
    loss = net(batch())
    loss.backward()
    return {"loss": loss.detach(), "grads": {n: p.grad.full_tensor() if isinstance(p.grad, DTensor) else p.grad
                                             for n, p in net.named_parameters()}}


# ---- the workers and the single-process references ----------------------------------------------------

def worker(rank, ws, port, out):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=ws, timeout=datetime.timedelta(seconds=120))
    try:
        from torch.distributed.device_mesh import init_device_mesh

        res = {"tp": tp_worker(rank, ws)}
        _, pos, _, q, k, scores = inputs()
        lo, hi = rank * S // ws, (rank + 1) * S // ws
        res["cp"] = cp_ops(lo, hi, q, k, pos, scores)
        res["cp_dtensor"] = cp_dtensor_worker(rank, ws, init_device_mesh("cpu", (ws,)))
        res["tp_llama"] = tp_llama_worker(rank, ws)
        res["ddp"] = train_worker(rank, ws, "ddp")
        res["fsdp2"] = train_worker(rank, ws, "fsdp2")
        torch.save(res, os.path.join(out, "rank%d.pt" % rank))
    finally:
        dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import torch.multiprocessing as mp

    out = {}
    for ws in WORLD_SIZES:
        d = tmp_path_factory.mktemp("ws%d" % ws)
        mp.spawn(worker, args=(ws, free_port(), str(d)), nprocs=ws, join=True)
        out[ws] = [torch.load(os.path.join(str(d), "rank%d.pt" % r), weights_only=False) for r in range(ws)]
    return out


@pytest.fixture(scope="module")
def single():
    x, pos, pos3, q, k, scores = inputs()
    ref = {"tp": tp_ops(Attn(), x, pos, pos3), "cp": cp_ops(0, S, q, k, pos, scores)}
    ref["ddp"] = ref["fsdp2"] = dict(zip(("losses", "grads", "params"), train(Net(), batch(), lambda t: t.clone())))
    net = Net(kv_heads=4)
    loss = net(batch())
    loss.backward()
    ref["tp_llama"] = {"loss": loss.detach(), "grads": {n: p.grad for n, p in net.named_parameters()}}
    return ref


def rel_err(a, b):
    return float((a.double() - b.double()).norm() / b.double().norm())


# ---- the tests --------------------------------------------------------------------------------------

HEAD_SHARDED = {"rope_q", "rope_k", "rope__q", "rope__k", "rope_offsets", "rope_ragged", "axes", "axes_", "alibi",
                "alibi_off", "alibi_"}


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_tensor_parallel_runs_shard_local(runs, ws):
    for r in runs[ws]:
        tp = r["tp"]
        # a missing rule fails the op outright; a rule that made DTensor redistribute would show here
        assert tp["collectives"] == 0
        pl = tp["placements"]
        for n in HEAD_SHARDED:
            assert pl[n] == ("Shard(dim=1)",), n  # heads of [B, H, S, D], of [T, H, D], of scores [B, H, q, k]
        assert pl["rope_bshd"] == ("Shard(dim=2)",)  # heads of [B, S, H, D]
        assert pl["rotate"] == pl["rotate_"] == ("Shard(dim=2)",)  # whole heads of [B, S, H * D]
        assert pl["alibi_bias"] == ("Shard(dim=0)",)  # heads of [H, q, k]
        assert pl["cos"] == pl["sin"] == ("Shard(dim=0)",)  # position_ids sharded on batch
        assert pl["axes_cos"] == ("Shard(dim=0)",)  # position_ids [3, B, S] sharded on batch


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_tensor_parallel_equals_single_process(runs, single, ws):
    ref = single["tp"]
    x, pos, pos3, _, _, _ = inputs()
    for r in runs[ws]:
        tp = r["tp"]
        # the ops on the gathered q/k, bit for bit: each head is rotated as on one process
        rot = posenc.RotaryEmbedding(llama_rope_config())
        qr, kr = rot(tp["q"], tp["k"], position_ids=pos)
        assert torch.equal(tp["rope_q"], qr) and torch.equal(tp["rope_k"], kr)
        assert torch.equal(tp["rope__q"], qr) and torch.equal(tp["rope__k"], kr)
        assert torch.equal(tp["rope_bshd"], qr.transpose(1, 2))
        assert torch.equal(tp["rope_ragged"], qr[0].transpose(0, 1))
        assert torch.equal(tp["rope_offsets"], posenc.rope(tp["q"], rot.inv_freq, offsets=torch.arange(B) * 3))
        flat_q = tp["q"].transpose(1, 2).reshape(B, S, H * D)  # what the projections gave, gathered
        flat_k = tp["k"].transpose(1, 2).reshape(B, S, H * D)
        assert torch.equal(tp["rotate"], posenc.apply_rotary(flat_q, head_dim=D))
        assert torch.equal(tp["rotate_"], posenc.apply_rotary(flat_k, head_dim=D, layout="half"))
        mrot = posenc.MultiAxisRotaryEmbedding(qwen2_vl_config())
        ax = posenc.axes_rope(tp["q"], pos3, mrot.freqs, mrot.axis, layout=mrot.layout)
        assert torch.equal(tp["axes"], ax) and torch.equal(tp["axes_"], ax)
        slopes = posenc.alibi_slopes(H)
        assert torch.equal(tp["alibi"], posenc.alibi_add(tp["scores"], slopes, causal_mask=True))
        assert torch.equal(tp["alibi_"], posenc.alibi_add(tp["scores"], slopes))
        assert torch.equal(tp["alibi_off"], posenc.alibi_add(tp["scores"], slopes, q_offsets=torch.arange(B) + 2,
                                                             form="symmetric"))
        assert torch.equal(tp["alibi_bias"], ref["alibi_bias"]) and torch.equal(tp["cos"], ref["cos"])
        assert torch.equal(tp["axes_cos"], ref["axes_cos"])
        # and everything to the single process within 1e-6: the projections' local matmuls may round
        # otherwise than the full one (the rotations and biases do not)
        for n in ("q", "k", "rope_q", "rope_k", "rope_offsets", "rotate", "rotate_", "axes", "axes_", "alibi",
                  "alibi_off", "alibi_"):
            a, b = tp[n], ref[n]
            assert torch.equal(torch.isinf(a), torch.isinf(b)), n
            fin = torch.isfinite(b)
            assert rel_err(a[fin], b[fin]) <= REL, n
        assert abs(float(tp["loss"]) - float(ref["loss"])) <= REL * abs(float(ref["loss"]))
        for n, g in ref["grads"].items():
            assert rel_err(tp["grads"][n], g) <= REL, n


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_context_parallel_slices_equal_unsharded_bitwise(runs, single, ws):
    ref = single["cp"]
    for n, full in ref.items():
        got = torch.cat([r["cp"][n] for r in runs[ws]])  # the slices in rank order, sequence first
        assert got.shape == full.shape, n
        assert torch.equal(got, full), n


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_dtensor_shardings_along_batch_sequence_tokens(runs, ws):
    _, pos, pos3, q, k, _ = inputs()
    dyn = posenc.RotaryEmbedding(llama_rope_config("dynamic"))
    assert dyn.depends_on_seq_len and int(pos.max()) + 1 > 16  # the scaled frequencies are in use
    qr, kr = dyn(q, k, position_ids=pos)
    mrot = posenc.MultiAxisRotaryEmbedding(qwen2_vl_config())
    ax = posenc.axes_rope(q, pos3, mrot.freqs, mrot.axis, layout=mrot.layout)
    rot = posenc.RotaryEmbedding(llama_rope_config())
    scores = inputs()[5]
    other = {  # the same ops on whole tensors
        "ragged_tokens": posenc.rope(q[0].transpose(0, 1), rot.inv_freq, position_ids=pos[0]),
        "rotate_rows": posenc.apply_rotary(q.transpose(1, 2).reshape(B, S, H * D), positions=pos[0].double() * 0.5,
                                           head_dim=D),
        "axes_ragged": posenc.axes_rope(q[0].transpose(0, 1).contiguous(), pos3[:, 0], mrot.freqs, mrot.axis,
                                        layout=mrot.layout),
        "alibi_batch": posenc.alibi_add(scores, posenc.alibi_slopes(H), q_offsets=torch.arange(B) + 1,
                                        causal_mask=True),
        "cos_seq": rot.cos_sin(pos)[0],
        "rotate_batch": posenc.apply_rotary(q.transpose(1, 2).reshape(B, S, H * D), head_dim=D),
        "axes_batch": ax,
    }
    for r in runs[ws]:
        c = r["cp_dtensor"]
        assert torch.equal(c["q"], qr) and torch.equal(c["k"], kr) and torch.equal(c["axes"], ax)
        assert c["placements"] == [("Shard(dim=2)",)] * 3
        assert torch.equal(c["by_offsets"], posenc.rope(q[:, :, :B], dyn.inv_freq, offsets=torch.arange(B) * 5))
        assert c["other_collectives"] == 0
        assert c["other_placements"] == {"ragged_tokens": ("Shard(dim=0)",), "rotate_rows": ("Shard(dim=1)",),
                                         "axes_ragged": ("Shard(dim=0)",), "alibi_batch": ("Shard(dim=0)",),
                                         "cos_seq": ("Shard(dim=1)",), "rotate_batch": ("Shard(dim=0)",),
                                         "axes_batch": ("Shard(dim=0)",)}
        for n, t in other.items():
            assert torch.equal(c["other"][n], t), n
        assert torch.equal(c["by_positions"], posenc.rope(q[:, :, :B], dyn.inv_freq, position_ids=torch.arange(B) + 7))
        # the only collective: the positions gathered once for the frequencies of q and k (seq_len =
        # the global max + 1); the rotations themselves run shard-local
        assert c["collectives"] == {"c10d_functional.all_gather_into_tensor": 1}


@pytest.mark.parametrize("how", ["ddp", "fsdp2"])
@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_data_parallel_training_equals_single_process(runs, single, ws, how):
    ref = single[how]
    for r in runs[ws]:
        got = r[how]
        assert rel_err(got["losses"], ref["losses"]) <= REL
        assert set(got["grads"]) == set(ref["grads"])
        assert any(n.startswith("floater.") for n in ref["grads"])
        for n, g in ref["grads"].items():
            assert rel_err(got["grads"][n], g) <= REL, (n, rel_err(got["grads"][n], g))
            assert rel_err(got["params"][n], ref["params"][n]) <= REL, n
    # the losses moved: the steps trained something
    assert float(ref["losses"][-1]) < float(ref["losses"][0])


@pytest.mark.parametrize("ws", WORLD_SIZES)
def test_tensor_parallel_llama_with_local_outputs(runs, single, ws):
    ref = single["tp_llama"]
    for r in runs[ws]:
        got = r["tp_llama"]
        # float64 model; transformers' loss takes the logits to float32, the rows of the split
        # products are summed across ranks (RowwiseParallel) in another order
        assert abs(float(got["loss"]) - float(ref["loss"])) <= REL * abs(float(ref["loss"]))
        assert set(got["grads"]) == set(ref["grads"])
        for n, g in ref["grads"].items():
            assert rel_err(got["grads"][n], g) <= REL, (n, rel_err(got["grads"][n], g))
