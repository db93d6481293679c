"""The training example of docs/pytorch.md: the page quotes python/examples/train_floater.py
verbatim, and the example runs (a few steps here; the full 301 steps take ~6 s of CPU)."""
import os
import re

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
EXAMPLE = os.path.join(ROOT, "python", "examples", "train_floater.py")
PAGE = os.path.join(ROOT, "docs", "pytorch.md")


def test_page_quotes_the_example():
    src = open(EXAMPLE).read()
    blocks = re.findall(r"```python\n(.*?)```", open(PAGE).read(), flags=re.S)
    assert src in blocks


def test_example_runs(capsys):
    src = open(EXAMPLE).read()
    assert "range(301)" in src
    exec(compile(src.replace("range(301)", "range(3)"), EXAMPLE, "exec"), {"__name__": "__example__"})
    out = capsys.readouterr().out
    assert re.match(r"step   0  loss \d+\.\d{3}\n$", out)
