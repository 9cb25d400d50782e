"""The inspector's text panes: markers found, carriage returns shown, excerpt lines numbered."""

from __future__ import annotations

from sharedctx.ui.omissions import mark


def labels(text: str, **kwargs: bool) -> list[tuple[str, str]]:
    return [(line.label, "".join(p for p, _ in line.pieces)) for line in mark(text, **kwargs).lines]


def test_a_redrawn_line_stays_one_numbered_line_with_its_carriage_returns_shown() -> None:
    text = "start\n\rupload 10%\rupload 100%\r\nend\r\n"
    assert labels(text, find=False) == [
        ("1", "start"),
        ("2", "\u240dupload 10%\u240dupload 100%"),  # the line end's own \r is not shown
        ("3", "end"),
    ]


def test_an_excerpts_lines_carry_the_entrys_line_numbers() -> None:
    excerpt = "[... 41 lines omitted ...]\nE   assert 8.99 == 8.98\n[... 1 line omitted ...]\nok\n"
    assert labels(excerpt, excerpt=True) == [
        ("", "[... 41 lines omitted ...]"),
        ("42", "E   assert 8.99 == 8.98"),
        ("", "[... 1 line omitted ...]"),
        ("44", "ok"),
    ]
    assert [label for label, _ in labels(excerpt)] == ["1", "2", "3", "4"]
