"""Sources (signatures and docstrings first) and markup (text without the markup)."""

from __future__ import annotations

import pytest
from sharedctx_server.compress import compress, missing_error_lines
from sharedctx_server.tokens import TokenCounter


def _module() -> str:
    parts = ['"""Orders: parsing and totals.', "", "Longer notes nobody reads.", '"""', ""]
    parts += ["import json", "from decimal import Decimal", "", "TAX = Decimal('0.2')", ""]
    for c in range(4):
        parts += [f"class Model{c}:", f'    """Model number {c}."""', "", "    name: str = ''", ""]
        for m in range(5):
            parts += [
                f"    def method_{m}(self, amount: int,",
                "                 currency: str = 'EUR') -> Decimal:",
                f'        """Convert {m}: the first paragraph.',
                "",
                "        The rest of the docstring.",
                '        """',
                "        total = Decimal(amount)",
                "        for step in range(3):",
                "            total = total * (1 + TAX) - step",
                "        if total < 0:",
                f"            log.error('negative total in method {m}')",
                "        return total.quantize(Decimal('0.01'))",
                "",
            ]
    return "\n".join(parts)


def test_a_python_module_keeps_its_outline(token_counter: TokenCounter) -> None:
    text = _module()
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "source"
    out = result.text.split("\n")
    assert out[0].startswith("[Python source, ")
    for kept in (
        '"""Orders: parsing and totals.',
        "import json",
        "TAX = Decimal('0.2')",
        "class Model2:",
        '    """Model number 2."""',
        "    name: str = ''",
        "    def method_3(self, amount: int,",
        "                 currency: str = 'EUR') -> Decimal:",
        '        """Convert 3: the first paragraph.',
        "            log.error('negative total in method 3')",
    ):
        assert kept in out
    assert "        total = Decimal(amount)" not in out
    assert "Longer notes nobody reads." not in result.text
    assert missing_error_lines(text, result.text) == []
    assert result.compressed_tokens < 0.8 * result.original_tokens


def test_a_numbered_module_keeps_its_outline_with_the_numbers(
    token_counter: TokenCounter,
) -> None:
    # As `cat -n` or a coding agent's file reader shows it: read after the numbers, kept with
    # them (an agent edits by line number).
    plain = _module().split("\n")
    for after in ("\t", "\u2192"):
        text = "\n".join(f"{i:6d}{after}{line}" for i, line in enumerate(plain, 1))
        result = compress(text, count_tokens=token_counter.count, kind="tool_output")
        assert result.compressor == "source"
        out = result.text.split("\n")
        at = plain.index("class Model2:") + 1
        assert f"{at:6d}{after}class Model2:" in out
        method = plain.index("    def method_0(self, amount: int,", at) + 1
        assert f"{method:6d}{after}    def method_0(self, amount: int," in out
        assert not any(line.endswith("total = Decimal(amount)") for line in out)
        assert missing_error_lines(text, result.text) == []
        assert result.compressed_tokens < 0.8 * result.original_tokens


def test_numbered_blank_lines_without_their_tab_still_read_as_numbered(
    token_counter: TokenCounter,
) -> None:
    # Trailing blanks stripped (by the compressed form's normalisation, or an agent's
    # harness), a blank line's `     2\t` is `     2`: the module is still a numbered source.
    plain = _module().split("\n")
    text = "\n".join(f"{i:6d}\t{line}".rstrip() for i, line in enumerate(plain, 1))
    result = compress(text, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "source"
    at = plain.index("class Model2:") + 1
    assert f"{at:6d}\tclass Model2:" in result.text.split("\n")
    # Numbers from the first column that count up are `seq`, not numbered lines.
    counted = "\n".join(str(i) for i in range(1, 200))
    assert compress(counted, count_tokens=token_counter.count).compressor != "source"


def test_a_triple_quote_inside_a_string_opens_no_docstring(token_counter: TokenCounter) -> None:
    # A regex that finds docstrings holds a triple quote; read as an opening, every later
    # line of the module was one statement's marker and no function was outlined.
    parts = _module().split("\n")
    at = parts.index("TAX = Decimal('0.2')")
    parts[at:at] = ['_DOC = re.compile(r\'^\\s*("""|x)\')', "_ESC = '\\'\\'\\''  # # ( ["]
    text = "\n".join(parts)
    result = compress(text, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor == "source"
    out = result.text.split("\n")
    for kept in (
        "class Model3:",
        "    def method_4(self, amount: int,",
        '    """Model number 3."""',
    ):
        assert kept in out
    assert "        total = Decimal(amount)" not in out


def test_a_brace_language_keeps_declarations_and_hides_bodies(token_counter: TokenCounter) -> None:
    lines = ["import { readFile } from 'fs';", "", "export class Store {"]
    for m in range(8):
        lines += [
            f"  /** Reads item {m}. */",
            f"  async get{m}(key) {{",
            "    const raw = await readFile(key);",
            "    const started = Date.now();",
            "    const parsed = JSON.parse(raw.toString('utf8'));",
            "    this.cache.set(key, { parsed, started, size: raw.length });",
            "    if (!raw) {",
            f"      throw new Error('missing item {m}');",
            "    }",
            "    return parsed;",
            "  }",
        ]
    lines += ["}", "", "export function helper(a, b) {", "  return a + b;", "}"]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "source"
    out = result.text.split("\n")
    assert "export class Store {" in out
    assert "  async get5(key) {" in out
    assert "  /** Reads item 5. */" in out
    assert "    const raw = await readFile(key);" not in out
    assert "      throw new Error('missing item 5');" in out
    assert missing_error_lines(text, result.text) == []


def test_a_c_header_keeps_the_declarations_of_its_extern_c_block(
    token_counter: TokenCounter,
) -> None:
    # C and C++ headers wrap their whole API in `extern "C" {`: a declarations block, not a
    # body (ssl.h had outlined to its comments and includes).
    lines = ["#ifndef STORE_H", "#define STORE_H", "#ifdef __cplusplus", 'extern "C" {', "#endif"]
    for m in range(12):
        lines += [
            f"/* Reads item {m} of the store. */",
            f"int store_get{m}(struct store *s, const char *key, size_t len);",
        ]
    lines += ["static inline int store_twice(int x) {"]
    lines += [f"    x = x + {k};" for k in range(60)]
    lines += ["    return x;", "}", "#ifdef __cplusplus", "}", "#endif", "#endif"]
    text = "\n".join(lines)
    out = compress(text, count_tokens=token_counter.count, kind="document").text.split("\n")
    assert "int store_get7(struct store *s, const char *key, size_t len);" in out
    assert "static inline int store_twice(int x) {" in out
    assert "    x = x + 3;" not in out  # a function's body still goes


def test_a_header_keeps_the_first_paragraph_of_each_comment(token_counter: TokenCounter) -> None:
    # zlib.h documents each function in a comment several times longer than its prototype:
    # kept whole, the header had saved 2%.
    lines = ["#ifndef CODEC_H", "#define CODEC_H", "#include <stddef.h>", ""]
    for m in range(10):
        lines += [
            f"int codec_step{m}(struct codec *c, const char *in, size_t len);",
            "/*",
            f"     Runs step {m} of the codec over the input.",
            "   The first paragraph says what the call does.",
            "",
            "     Further paragraphs explain every flag, each return value and what",
            "   the caller must have done before, at length, for several lines that an",
            "   agent reading the header for its API rarely needs in full.",
            "   The state is left as it was when a bad flag is given.",
            f"   Returns CODEC_STREAM_ERROR if the stream state {m} was inconsistent.",
            "*/",
            "",
        ]
    lines += ["#endif"]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "source"
    out = result.text.split("\n")
    assert "int codec_step7(struct codec *c, const char *in, size_t len);" in out
    assert "     Runs step 7 of the codec over the input." in out
    assert "   The first paragraph says what the call does." in out
    assert "   agent reading the header for its API rarely needs in full." not in out
    assert out.count("*/") == 10  # each comment still closes
    assert missing_error_lines(text, result.text) == []
    assert result.compressed_tokens < 0.7 * result.original_tokens


def test_a_header_without_braces_reads_as_source(token_counter: TokenCounter) -> None:
    # stdio.h declares its API with macros around plain prototypes: no braces to count.
    lines = ["#ifndef _IO_H", "#define _IO_H 1", "#include <stddef.h>", "__BEGIN_DECLS", ""]
    for m in range(30):
        lines += [
            f"/* Write item {m} to STREAM; the stream must be open for writing.",
            "",
            "   Each call flushes what the previous one left in the buffer, so that",
            "   another process reading the file sees it at once, and a reader that",
            "   polls the file finds every item written before the call returned.",
            "   Items are written whole or not at all. */",
            f"extern int io_put{m} (FILE *__restrict __stream, const char *__s) __nonnull ((1));",
        ]
    lines += ["__END_DECLS", "#endif"]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "source"
    out = result.text.split("\n")
    assert all(f"extern int io_put{m} (FILE" in result.text for m in range(30))
    assert "/* Write item 7 to STREAM; the stream must be open for writing." in out
    assert "   another process reading the file sees it at once, and a reader that" not in out
    assert "   Items are written whole or not at all. */" in out


def _declarations_after_a_comment() -> list[str]:
    # The comment's `{` never closes: read as a block, it had hidden every declaration.
    lines = ['extern "C" {', "/* Use it like this:", "     while (more) {", "*/"]
    for m in range(12):
        lines += [f"int table_get{m}(struct table *t, const char *key, size_t len);"]
    lines += ["static inline int table_twice(int x) {"]
    lines += [f"    x = x + {k};" for k in range(60)]
    return [*lines, "    return x;", "}", "}"]


def _bodies_holding_a_comment() -> list[str]:
    # Counted in a hidden body, the comment's `{` left every later function inside the first.
    lines = []
    for m in range(6):
        lines += [
            f"static int step{m}(int x) {{",
            "    /* a body reads:",
            "       if (x) {",
            "    */",
        ]
        lines += [f"    x = x * {k} + {m};" for k in range(12)]
        lines += ["    return x;", "}", ""]
    return lines


@pytest.mark.parametrize(
    ("lines", "shown", "hidden"),
    [
        (
            _declarations_after_a_comment(),
            "int table_get9(struct table *t, const char *key, size_t len);",
            "    x = x + 3;",
        ),
        (_bodies_holding_a_comment(), "static int step5(int x) {", "    x = x * 3 + 5;"),
    ],
)
def test_braces_inside_a_comment_open_no_block(
    lines: list[str], shown: str, hidden: str, token_counter: TokenCounter
) -> None:
    text = "\n".join(lines)
    out = compress(text, count_tokens=token_counter.count, kind="document").text.split("\n")
    assert shown in out
    assert hidden not in out


def test_json_documents_one_after_another_are_not_outlined_as_code(
    token_counter: TokenCounter,
) -> None:
    # `yq .` of a multi-document YAML: an outline kept only the braces of each document.
    import json

    docs = [
        {"apiVersion": "v1", "kind": kind, "metadata": {"name": f"app-{i}", "namespace": "shop",
         "labels": {"app.kubernetes.io/name": "app", "tier": "web"}},
         "spec": {"type": "ClusterIP", "replicas": i}}
        for i, kind in enumerate(["Service", "Deployment", "ConfigMap", "Secret"] * 3)
    ]  # fmt: skip
    text = "\n".join(json.dumps(doc, indent=2) for doc in docs)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor != "source"
    assert all(f'"name": "app-{i}"' in result.text for i in range(12))
    # So with `cat -n`'s numbers before its lines, whose indentation after the number stays
    # when whitespace is normalised (collapsed, a JSON file was outlined to its first brace).
    numbered = "\n".join(f"{i:6d}\t{line}" for i, line in enumerate(text.split("\n"), 1))
    result = compress(numbered, count_tokens=token_counter.count)
    assert result.compressor != "source"
    assert all(f'"name": "app-{i}"' in result.text for i in range(12))
    assert '     4\t  "metadata": {' in result.text.split("\n")


def test_html_becomes_text(token_counter: TokenCounter) -> None:
    items = "".join(f"<li><a href='/docs/{i}'>Chapter {i}</a></li>" for i in range(40))
    text = (
        "<!doctype html><html><head><title>Guide</title><style>body{margin:0}</style>"
        "<script>window.track = function () { return 1; };</script></head><body>"
        "<nav><a href='/'>Home</a><a href='/about'>About</a></nav>"
        "<h1>Install</h1><p>Run the <b>installer</b> &amp; wait.</p>"
        f"<ul>{items}</ul><footer>© 2026 Example</footer></body></html>"
    )
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "markup"
    out = result.text.split("\n")
    assert out[0].startswith("[HTML as text: ")
    assert "Guide" in out and "# Install" in out
    assert "Run the installer & wait." in out
    assert "- Chapter 7" in out
    for gone in ("window.track", "margin:0", "About", "© 2026", "href"):
        assert gone not in result.text


def test_markdown_loses_link_targets_and_badges(token_counter: TokenCounter) -> None:
    badge = "[![build](https://ci.example.com/badge.svg)](https://ci.example.com/job)"
    sections = []
    for n in range(30):
        sections += [
            f"## Section {n}",
            "",
            f"See [the guide](https://docs.example.com/guide/{n}) and [API](https://api.example.com/v{n}).",
            "",
            "```python",
            f"print('[not a link](inside code {n})')",
            "```",
            "",
        ]
    text = "\n".join([badge, "# Project", "", *sections])
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "markup"
    assert "See the guide and API." in result.text
    assert "print('[not a link](inside code 3)')" in result.text
    assert "ci.example.com" not in result.text
    assert result.compressed_tokens < 0.8 * result.original_tokens


def test_a_readme_that_opens_with_html_is_markdown(token_counter: TokenCounter) -> None:
    # GitHub READMEs centre a logo and badges in HTML; one quoted a page (`<!doctype html>
    # <html><head>`) in a code block, and read as an HTML document, every section after the
    # quoted <head> was dropped without a marker.
    logo = '<p align="center"><a href="https://example.org/"><img src="logo.png" alt="X"></a></p>'
    page = "'<!doctype html>\\n<html>\\n<head>\\n<title>Example Domain</title>...'"
    sections = [
        f"## Section {n}\n\nSee [the guide](https://docs.example.com/{n}) now.\n" for n in range(80)
    ]
    text = "\n".join(
        [logo, "", "HTTPX is a client.", "", "```pycon", ">>> r.text", page, "```", "", *sections]
    )
    result = compress(text, count_tokens=token_counter.count, kind="document")
    assert result.compressor == "markup"
    assert result.text.startswith("[Markdown as text: ")
    assert all(f"## Section {n}" in result.text for n in range(80))
    assert page in result.text  # the quoted page stays as written, in its fence


def test_short_markdown_and_messages_stay_as_written(token_counter: TokenCounter) -> None:
    note = "# Plan\n\nSee [the doc](https://example.com/doc) for details.\n" * 8
    assert compress(note, count_tokens=token_counter.count).text == note
    long = note * 20
    message = compress(long, count_tokens=token_counter.count, kind="message")
    assert message.compressor != "markup"


def test_a_stub_file_keeps_every_declaration(token_counter: TokenCounter) -> None:
    # A stub (or a header) is all declarations: the outline saves little, and the log
    # compressor's sizer, whose result was smaller, kept 63 of these 161 lines. Read as
    # source, the log compressor steps aside.
    types = ["float", "ArrayLike", "ColorType | None", 'Literal["N", "S"]', "dict | None", "int"]
    lines = ["from typing import Any, Literal, overload", "from numpy.typing import ArrayLike", ""]
    for c in range(3):
        lines += [f"class Arrow{c}(Artist):"]
        lines += [f"    field_{c}_{k}: {types[k % 6]}" for k in range(12)]
        for m in range(3):
            lines += ["    @overload", f"    def draw_{m}(", "        self,"]
            lines += [f"        param_{c}_{m}_{k}: {types[(k + m) % 6]} = ...," for k in range(8)]
            lines += ["        **kwargs", "    ) -> None: ...", ""]
        lines += [f"    def size_{c}(self) -> float: ...", ""]
    text = "\n".join(lines)
    result = compress(text, count_tokens=token_counter.count, kind="tool_output")
    assert result.compressor != "log"
    kept = result.text.split("\n")
    assert all(line in kept for line in lines if line.strip())
