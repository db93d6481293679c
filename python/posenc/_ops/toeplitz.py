"""Toeplitz products: toeplitz_matmul over torch.ops.posenc.toeplitz_matmul (toeplitz.cpp)."""
from typing import Optional

import torch

from ._common import _P


def toeplitz_matmul(b: torch.Tensor, x: torch.Tensor, m: Optional[int] = None) -> torch.Tensor:
    """B X for the m x n Toeplitz matrix B_ij = b_{j-i}, b = [b_{-(m-1)}, ..., b_{n-1}] (length
    m + n - 1; m defaults to n, i.e. 2n - 1 values), x [n, k] or [n]. O(k P log P) by FFT.
    Differentiable in b and x (twice, too)."""
    vec = x.dim() == 1
    xx = x.unsqueeze(1) if vec else x
    m = xx.shape[0] if m is None else int(m)
    y = _P.toeplitz_matmul(b, xx, m)
    return y.squeeze(1) if vec else y
