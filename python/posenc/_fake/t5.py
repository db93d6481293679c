"""Fake kernels of the T5 bucket ops (t5.cpp)."""
import torch

from ._common import register


@register("relative_position_bucket")
def _relative_position_bucket(n, num_buckets=32, max_distance=128, bidirectional=True):
    return torch.empty((n, n), dtype=torch.int64)


@register("t5_bias")
def _t5_bias(table, n, *args):
    return table.new_empty((table.shape[1], n, n))


@register("t5_bias_backward")
def _t5_bias_backward(grad, rows, *args):
    return grad.new_empty((rows, grad.shape[0]))
