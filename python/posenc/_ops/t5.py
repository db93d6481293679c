"""T5 buckets: relative_position_bucket and t5_bias over torch.ops.posenc (t5.cpp)."""
import torch

from ._common import _P


def relative_position_bucket(n: int, num_buckets: int = 32, max_distance: int = 128,
                             bidirectional: bool = True) -> torch.Tensor:
    """[n, n] int64: element (i, j) is the T5 bucket of j - i (key minus query), as TUPE's code."""
    return _P.relative_position_bucket(int(n), int(num_buckets), int(max_distance), bool(bidirectional))


def t5_bias(table: torch.Tensor, n: int, num_buckets: int = 32, max_distance: int = 128,
            bidirectional: bool = True) -> torch.Tensor:
    """bias[h, i, j] = table[bucket(j - i), h] for table [rows >= num_buckets, heads]; differentiable."""
    return _P.t5_bias(table, int(n), int(num_buckets), int(max_distance), bool(bidirectional))
