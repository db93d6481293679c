"""posenc's operators on DTensors (torch.distributed.tensor): sharding rules, so that q/k sharded on
heads (tensor parallel), on batch (data parallel) or on the sequence with the slice's positions
(context parallel) are rotated shard-local, with no redistribution and no collective.

Importing this module registers the rules (``torch.distributed.tensor.experimental.register_sharding``)
for:

* ``rope`` / ``rope_`` (x [B, H, S, D] or ragged [T, H, D]): batch (position_ids / offsets sharded
  alongside), heads, and the sequence or token dimension when per-token ``position_ids`` travel
  sharded alongside (ragged: without ``cu_seqlens``);
* ``rope_rotate`` / ``rope_rotate_`` (x [..., L, heads * head_dim]): the leading dimensions, the rows
  when ``positions`` travel sharded alongside, and the packed head dimension when x already is
  sharded there on whole heads (head_dim given, heads divisible by the shards);
* ``axes_rope`` / ``axes_rope_`` (M-RoPE): batch, heads, sequence/tokens, with position_ids
  [A, B, S] / [A, S] / [A, T] sharded alongside where they have that dimension;
* ``rope_cos_sin`` and ``axes_cos_sin``: any dimension of the position ids (elementwise);
* ``alibi_add`` / ``alibi_add_`` (scores [B, H, q, k]): batch (q_offsets alongside) and heads with
  the slopes sharded alongside; ``alibi_bias`` (-> [H, q, k]) on heads with the slopes;
* ``rope_frequencies_at``: replicated only (the frequencies depend on the largest position of
  all shards, so sharded positions are gathered first).

Every op also accepts everything replicated. A placement without a rule here (e.g. the query rows
of ALiBi scores, whose positions a shard does not know) is redistributed by DTensor to one that has.

posenc's Python functions (``rope``, ``rope_``, ``RotaryEmbedding``, ``alibi_add``, ``axes_rope``,
``apply_rotary``, ...) import this module themselves the first time they see a DTensor, and
replicate their plain-tensor arguments (frequencies, position ids, slopes) on its mesh: a full
``slopes`` [H] beside scores sharded on heads is then sliced locally to each shard's heads. Import
it yourself before calling ``torch.ops.posenc.*`` on DTensors directly.
"""
import math

import torch
from torch.distributed.tensor import DTensor, Replicate, Shard
from torch.distributed.tensor.experimental import register_sharding

__all__ = ["replicate_on", "on_mesh_of", "RULES"]

_P = torch.ops.posenc
_R = Replicate()

#: the ops with a sharding rule (their OpOverloads, filled by the registrations below)
RULES = []


def replicate_on(mesh, tensors):
    """The plain tensors of `tensors` as DTensors replicated on `mesh` (None and DTensors unchanged)."""
    out = []
    for t in tensors:
        if t is not None and not isinstance(t, DTensor) and isinstance(t, torch.Tensor):
            t = DTensor.from_local(t, mesh, [_R] * mesh.ndim, run_check=False)
        out.append(t)
    return tuple(out)


def on_mesh_of(x, tensors):
    """`tensors` replicated on x's mesh when x is a DTensor, else unchanged."""
    return replicate_on(x.device_mesh, tensors) if isinstance(x, DTensor) else tuple(tensors)


def _rule(*names):
    def deco(fn):
        ops = [getattr(_P, n).default for n in names]
        register_sharding(ops)(fn)
        RULES.extend(ops)
        return fn

    return deco


def _opt(t, placement):
    """The placement of an optional tensor argument: None where it is absent."""
    return None if t is None else placement


# ---- RoPE from frequencies: rope, rope_ ---------------------------------------------------------------

def _rope_strategies(x, position_ids, cu_seqlens, offsets, inplace):
    tail = [None] * 7  # layout, key, transpose, xpos, xpos_gamma, xpos_scale_base, xpos_center

    def s(xp, pp, op):
        out = [] if inplace else [xp]
        return out, [xp, _R, None, _opt(position_ids, pp), _opt(cu_seqlens, _R), _opt(offsets, op)] + tail

    found = [s(_R, _R, _R)]
    pnd = None if position_ids is None else position_ids.ndim
    if x.ndim == 4:  # [B, H, S, D]: position_ids [B, S] (or [S], shared by the batch), offsets [B]
        found.append(s(Shard(0), Shard(0) if pnd == 2 else _R, Shard(0)))
        found.append(s(Shard(1), _R, _R))
        if position_ids is not None and offsets is None:
            found.append(s(Shard(2), Shard(pnd - 1), _R))
    elif x.ndim == 3:  # ragged [T, H, D]: position_ids [T]
        found.append(s(Shard(1), _R, _R))
        if position_ids is not None and cu_seqlens is None and offsets is None:
            found.append(s(Shard(0), Shard(0), _R))
    return found


@_rule("rope")
def _rope(x, inv_freq, attention_factor=1.0, position_ids=None, cu_seqlens=None, offsets=None, *rest):
    return _rope_strategies(x, position_ids, cu_seqlens, offsets, False)


@_rule("rope_")
def _rope_inplace(x, inv_freq, attention_factor=1.0, position_ids=None, cu_seqlens=None, offsets=None, *rest):
    return _rope_strategies(x, position_ids, cu_seqlens, offsets, True)


@_rule("rope_cos_sin")
def _rope_cos_sin(position_ids, inv_freq, attention_factor=1.0, dtype=None):
    found = [([_R, _R], [_R, _R, None, None])]
    for d in range(position_ids.ndim):  # cos/sin [*position_ids.shape, width]: elementwise in the ids
        found.append(([Shard(d), Shard(d)], [Shard(d), _R, None, None]))
    return found


@_rule("rope_frequencies_at")
def _rope_frequencies_at(positions, *rest):
    return [([_R], [_R] + [None] * 5)]


# ---- RoPE of fixed base: rope_rotate, rope_rotate_ ---------------------------------------------------

def _head_shards(x, head_dim):
    """Whether x (sharded on its last dimension, heads * head_dim packed) splits on whole heads."""
    if head_dim <= 0:
        return False
    last = x.ndim - 1
    k = math.prod(x.mesh.size(i) for i, p in enumerate(x.placements) if p.is_shard(last))
    width = x.shape[last]
    return k > 1 and width % head_dim == 0 and (width // head_dim) % k == 0


def _rotate_strategies(x, positions, head_dim, inplace):
    tail = [None] * 6  # head_dim, rotary_dim, layout, base, first_position, position_step

    def s(xp, pp):
        return ([] if inplace else [xp]), [xp, _opt(positions, pp)] + tail

    found = [s(_R, _R)]
    for d in range(x.ndim - 2):  # leading dimensions: rows keep their index
        found.append(s(Shard(d), _R))
    if positions is not None and x.ndim >= 2:  # rows at positions[i]: the positions travel with them
        found.append(s(Shard(x.ndim - 2), Shard(0)))
    if _head_shards(x, head_dim):
        found.append(s(Shard(x.ndim - 1), _R))
    return found


@_rule("rope_rotate")
def _rope_rotate(x, positions=None, head_dim=0, *rest):
    return _rotate_strategies(x, positions, head_dim, False)


@_rule("rope_rotate_")
def _rope_rotate_inplace(x, positions=None, head_dim=0, *rest):
    return _rotate_strategies(x, positions, head_dim, True)


# ---- M-RoPE: axes_rope, axes_rope_, axes_cos_sin -----------------------------------------------------

def _axes_strategies(x, position_ids, inplace):
    tail = [None] * 3  # attention_factor, layout, transpose

    def s(xp, pp):
        return ([] if inplace else [xp]), [xp, pp, _R, _R] + tail

    found = [s(_R, _R)]
    pnd = position_ids.ndim
    found.append(s(Shard(1), _R))  # heads
    if x.ndim == 4:  # [B, H, S, D], position_ids [A, B, S] or [A, S]
        found.append(s(Shard(0), Shard(1) if pnd == 3 else _R))
        found.append(s(Shard(2), Shard(pnd - 1)))
    elif x.ndim == 3:  # ragged [T, H, D], position_ids [A, T]
        found.append(s(Shard(0), Shard(1)))
    return found


@_rule("axes_rope")
def _axes_rope(x, position_ids, *rest):
    return _axes_strategies(x, position_ids, False)


@_rule("axes_rope_")
def _axes_rope_inplace(x, position_ids, *rest):
    return _axes_strategies(x, position_ids, True)


@_rule("axes_cos_sin")
def _axes_cos_sin(position_ids, freqs, axis, *rest):
    tail = [None] * 3  # attention_factor, dtype, duplicated
    found = [([_R, _R], [_R, _R, _R] + tail)]
    for d in range(1, position_ids.ndim):  # cos/sin [*position_ids.shape[1:], width]
        found.append(([Shard(d - 1), Shard(d - 1)], [Shard(d), _R, _R] + tail))
    return found


# ---- ALiBi: alibi_add, alibi_add_, alibi_bias --------------------------------------------------------

def _alibi_strategies(q_offsets, inplace):
    def s(xp, sp, op):
        return ([] if inplace else [xp]), [xp, sp, _opt(q_offsets, op), None, None]

    return [s(_R, _R, _R),
            s(Shard(0), _R, Shard(0)),  # batch: each sequence's query offset travels with it
            s(Shard(1), Shard(0), _R)]  # heads: each head's slope travels with it


@_rule("alibi_add")
def _alibi_add(scores, slopes, q_offsets=None, *rest):
    return _alibi_strategies(q_offsets, False)


@_rule("alibi_add_")
def _alibi_add_inplace(scores, slopes, q_offsets=None, *rest):
    return _alibi_strategies(q_offsets, True)


@_rule("alibi_bias")
def _alibi_bias(slopes, *rest):
    tail = [None] * 6  # q_len, k_len, q_offset, form, causal_mask, dtype
    return [([_R], [_R] + tail), ([Shard(0)], [Shard(0)] + tail)]
