"""The marks of a row's name, and the marks a question asks for."""

from __future__ import annotations

from sharedctx_server.fit import lexical_terms
from sharedctx_server.fit.row_names import ROW_NAME_MARK, name_marks, row_name_query_terms


def test_a_name_is_marked_folded_and_without_its_qualifiers() -> None:
    assert name_marks("openssl") == ["¶openssl"]
    # Folded as package names are: case, and runs of - _ . as one -.
    assert name_marks("Grpcio_Tools") == ["¶grpcio-tools"]
    # dpkg's architecture after a colon, a command's folder: the bare name is marked too.
    assert name_marks("libssl3:amd64") == ["¶libssl3:amd64", "¶libssl3"]
    assert name_marks("/usr/sbin/sshd -D") == ["¶/usr/sbin/sshd", "¶sshd"]
    # Only the first word names the row; an empty cell names nothing.
    assert name_marks("[kworker/0:1]") == ["¶kworker/0:1", "¶kworker/0", "¶0:1"]
    assert name_marks("   ") == []


def test_a_question_asks_for_the_mark_of_each_word_as_written() -> None:
    terms = row_name_query_terms("Which version of `grpcio_tools` is installed?")
    assert terms == ["¶which", "¶version", "¶of", "¶grpcio-tools", "¶is", "¶installed"]
    # A name and the question's word for it meet when folded alike.
    assert name_marks("grpcio-tools")[0] in terms


def test_no_text_holds_a_mark() -> None:
    assert not any(t.startswith(ROW_NAME_MARK) for t in lexical_terms("¶openssl ¶ name"))
