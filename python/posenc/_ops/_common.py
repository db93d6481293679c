"""What the families of posenc._ops share: the op namespace, DTensor placement of side inputs,
the compile check, and the default dtype of the table ops."""
import sys

import torch

_P = torch.ops.posenc


def _is_dtensor(x):
    """Whether x is a DTensor (without importing torch.distributed when nothing has)."""
    dt = sys.modules.get("torch.distributed.tensor")
    return dt is not None and isinstance(x, dt.DTensor)


def _on_mesh(x, *tensors):
    """`tensors` as they are, or, when x is a DTensor, the plain ones replicated on its mesh (posenc's
    sharding rules, posenc.distributed, are registered then: its import is not paid otherwise)."""
    if not _is_dtensor(x):
        return tensors
    from .. import distributed
    return distributed.on_mesh_of(x, tensors)


def _compiling():
    c = getattr(torch, "compiler", None)
    return bool(c is not None and hasattr(c, "is_compiling") and c.is_compiling())


def _dtype(dtype):
    return torch.get_default_dtype() if dtype is None else dtype
