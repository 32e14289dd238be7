"""The compact tables behind a million-line analysis agree with plain dicts."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_view.core.analysis import analyse
from transcript_view.core.compact import IdOverlay, IdTable, LineColumns
from transcript_view.core.keys import IdKeys
from transcript_view.core.session import Session
from transcript_view.core.transcript import Transcript

key_of = IdKeys.new()


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(0, 2**31 - 1)), max_size=300)
)
def test_id_table_behaves_like_a_dict(pairs: list[tuple[int, int]]) -> None:
    table, plain = IdTable(expected=4), {}
    for key, value in pairs:
        key = key or 1  # zero marks an empty slot; IdKeys never makes it
        assert table.setdefault(key, value) == plain.get(key, -1)
        plain.setdefault(key, value)
    assert len(table) == len(plain)
    for key, value in plain.items():
        assert table.get(key) == value
    if pairs:
        table.replace(pairs[0][0] or 1, 7)
        assert table.get(pairs[0][0] or 1) == 7


def test_id_table_grows_past_its_expected_size() -> None:
    rng = random.Random(3)
    table = IdTable(expected=2)
    keys = [key_of(f"id-{i}-{rng.random()}") for i in range(20000)]
    for i, k in enumerate(keys):
        table.setdefault(k, i)
    assert all(table.get(k) == i for i, k in enumerate(keys))
    assert table.get(key_of("absent")) == -1


def test_line_columns_sorted_lookup() -> None:
    cols = LineColumns("a", "b")
    for i in range(50):
        cols.append(a=(i * 7) % 50, b=-1 if i % 3 else i)
    values, rows = cols.sorted_by("b")
    assert list(values) == sorted(v for v in cols.column("b") if v >= 0)
    assert all(cols.get("b", r) == v for v, r in zip(values, rows, strict=True))


def test_operations_and_replay_read_back_after_the_transcript_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    with Session.create(path, limit=50) as s:
        s.append_message("system", "sys", sticky=True)
        calls = [
            {"id": f"c{i}", "type": "function", "function": {"name": f"t{i}", "arguments": "{}"}}
            for i in range(3)
        ]
        s.append_message("assistant", "go", tool_calls=calls)
        for i in range(3):
            op = s.append_tool_dispatched(f"c{i}", f"t{i}", "{}")
            s.settle(op, f"c{i}", "x" * (10 + 40 * i), duration=0.5)
    with Transcript.open(path) as t:
        a = analyse(t)
    ops = list(a.operations)
    assert [(o.call_id, o.tool, o.outcome, o.duration) for o in ops] == [
        ("c0", "t0", "completed", 0.5),
        ("c1", "t1", "completed", 0.5),
        ("c2", "t2", "completed", 0.5),
    ]
    assert ops[2].artifact is not None and ops[0].artifact is None
    assert a.operations.at("settle", ops[1].settle_line or -1) == ops[1]
    assert a.operations.at_call(3, "c2") == ops[2]
    assert a.operations.at("message", 1) is None
    assert [e.role for e in a.replay] == ["system", "assistant", "tool", "tool", "tool"]
    assert a.replay[0].id == t.parse(2).id  # type: ignore[union-attr]


def test_id_overlay_keeps_its_additions_apart() -> None:
    """A snapshot's view of an id table: reads fall through, writes stay in the overlay."""
    base = IdTable()
    base.setdefault(key_of("a"), 1)
    over = IdOverlay(base)
    assert over.get(key_of("a")) == 1
    assert over.setdefault(key_of("a"), 9) == 1  # present below: not added
    assert over.setdefault(key_of("b"), 2) == -1
    assert over.get(key_of("b")) == 2
    assert base.get(key_of("b")) == -1  # the original never sees it
    deeper = IdOverlay(over)
    assert deeper.setdefault(key_of("b"), 5) == 2
    assert deeper.setdefault(key_of("c"), 3) == -1
    assert over.get(key_of("c")) == -1
