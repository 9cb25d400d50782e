"""The row a question names: "which version of openssl is installed?" (docs/excerpts.md,
"Named rows").

A table of things (`dpkg -l`, `pip list`, `kubectl get pods`, `docker ps`, `df`) has a column
that names each row, and a question about one of them names it. Yet the row named `openssl`
holds that word once, and its neighbours hold it too (`libgnutls-openssl27`,
`perl-openssl-defaults ... Perl OpenSSL packages`) beside more words of the question
("version", "package"): BM25 put those first and a 300-token Fit never showed the row. So
the row's name decides at indexing (segment.row_name_marks): the row carries the mark term of
its name (`¶openssl`), and a query asks for the mark of each of its words as written
(`¶grpcio-tools`). A name is on one row, so its mark weighs as a rare term, and only the row
that is exactly what the question names has it.

Names are compared folded: lower case, and runs of `-`, `_` and `.` as one `-` (as Python
package names are: `grpcio_tools` is `grpcio-tools`).
"""

from __future__ import annotations

import re

__all__ = ["NAME_COLUMNS", "ROW_NAME_MARK", "name_marks", "row_name_query_terms"]

# Not a word character, so no term of any text can be a mark.
ROW_NAME_MARK = "¶"
# Headers of the columns that name a table's rows, lower case.
NAME_COLUMNS = frozenset(
    """name names package module library crate gem image container pod node host hostname
    unit service deployment job app application project plugin command cmd filesystem""".split()
)
_FOLD = re.compile(r"[-_.]+")
# What a name may be wrapped in: quotes, brackets, a question's punctuation after it.
_WRAPPING = "`'\"()[]{}<>,;:!?."


def _folded(name: str) -> str:
    return _FOLD.sub("-", name.lower()).strip("-")


def name_marks(value: str) -> list[str]:
    """The mark terms of a row named `value` (its first word): the name folded, and without
    what follows a colon (`libssl3:amd64`) or before a last slash (`/usr/sbin/sshd`)."""
    words = value.split()
    if not words:
        return []
    name = words[0].strip(_WRAPPING)
    forms = [name, name.split(":", 1)[0], name.rsplit("/", 1)[-1]]
    return list(dict.fromkeys(ROW_NAME_MARK + f for f in map(_folded, forms) if f))


def row_name_query_terms(query: str) -> list[str]:
    """The name marks a question asks for: one per word as written, folded."""
    words = (_folded(word.strip(_WRAPPING)) for word in query.split())
    return list(dict.fromkeys(ROW_NAME_MARK + word for word in words if word))
