"""Fake kernels of the Toeplitz ops (toeplitz.cpp)."""
from ._common import register


@register("toeplitz_matmul")
def _toeplitz_matmul(b, x, m):
    return x.new_empty((m, x.shape[1]))


@register("toeplitz_correlate")
def _toeplitz_correlate(g, x):
    return x.new_empty((g.shape[0] + x.shape[0] - 1,))
