"""Options changed in 0.2: the rank layout is gone, collapse_budget is checked."""

from __future__ import annotations

import pytest

from pytest_tlgraph.errors import REFUSAL_CODES
from tests.corpus.traces import corpus_trace


def test_the_rank_layout_is_gone_with_a_remedy() -> None:
    trace = corpus_trace("lstm_bidirectional")
    with pytest.raises(ValueError, match=r"layout='rank'.*removed.*collapse='auto'"):
        trace.draw(layout="rank")
    with pytest.raises(ValueError, match=r"layout='neato'"):
        trace.draw(layout="neato")
    assert trace.draw(layout="auto").dot == trace.draw(layout="dot").dot == trace.draw().dot
    assert "encoding_requires_dot_layout" not in REFUSAL_CODES
    assert "neato" not in trace.draw(color_by="flops").dot
