"""No cut graphs on any corpus model: every op has a producer (a parent op or a
parameter it reads) unless it makes a tensor from nothing or is a constant (a ``const``
record: a tensor drawn by value), every constant is read, and every input is read."""

from __future__ import annotations

import pytest

from tests.corpus import names
from tests.corpus.traces import corpus_trace

#: Calls that make a tensor from no tensor at all: the only ops that may be sources.
FACTORIES = frozenset(
    {
        "arange", "zeros", "ones", "full", "empty", "empty_strided", "rand", "randn",
        "randint", "randperm", "normal", "tensor", "as_tensor", "scalar_tensor", "eye",
        "linspace", "logspace", "tril_indices", "triu_indices", "const",
    }
)  # fmt: skip


@pytest.mark.parametrize("name", names())
def test_every_op_has_a_producer_and_every_input_a_consumer(name: str) -> None:
    trace = corpus_trace(name)
    sources = [
        op.label
        for op in trace.ops
        if op.func != "input" and not op.parents and not op.params and op.func not in FACTORIES
    ]
    unread = [op.label for op in trace.ops if op.func in ("input", "const") and not op.children]
    assert (sources, unread) == ([], []), f"{name}: sources {sources}, unread inputs {unread}"
