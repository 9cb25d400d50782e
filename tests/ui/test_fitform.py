"""The playground's form read from a query string: what a browser submits and what a person
writes into a link."""

from __future__ import annotations

import pytest
from sharedctx.ui.fitform import FitForm


@pytest.mark.parametrize(
    ("params", "excerpts", "neighbours"),
    [
        # Submitted by the page: the checkboxes were there, an unticked one is absent.
        ({"q": "x", "boxes": "1", "excerpts": "on", "neighbours": "on", "run": "1"}, True, True),
        ({"q": "x", "boxes": "1", "neighbours": "on", "run": "1"}, False, True),
        ({"q": "x", "boxes": "1", "run": "1"}, False, False),
        # Written by hand: what is not said keeps the default, what is said counts.
        ({"q": "x", "budget": "500", "run": "1"}, True, True),
        ({"q": "x", "excerpts": "off", "run": "1"}, False, True),
        ({"q": "x", "neighbours": "false", "excerpts": "on", "run": "1"}, True, False),
    ],
)
def test_checkboxes_from_the_page_and_from_a_written_link(
    params: dict[str, str], excerpts: bool, neighbours: bool
) -> None:
    form, errors = FitForm.parse(params)
    assert not errors
    assert (form.excerpts, form.neighbours) == (excerpts, neighbours)
