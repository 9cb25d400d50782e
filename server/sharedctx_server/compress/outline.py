"""Source files: the outline first, signatures and docstrings, bodies left out.

Python (by indentation): imports, top-level statements (their first line), decorators,
`class` and `def` signatures (all their lines), the first paragraph of each docstring, and
one-line statements in class bodies (fields, constants) are kept; a function's body becomes
one marker at its indentation, `[... 12 lines omitted]`. Brace languages (C, C++, C#, Go,
Java, JavaScript, TypeScript, Kotlin, Rust, Swift, PHP) by brace depth: lines outside any
block, lines directly inside type-like blocks (class, struct, interface, impl, enum, trait,
namespace, module), doc comments before them and every closing brace at those depths are
kept, of each comment at those depths its first paragraph and closing line; the inside of any
other block (a function's body) becomes one marker. A C header without braces reads as a brace
language by its preprocessor lines and prototypes. In both, a line carrying an error
(`raise ValueError(...)`, `throw new Error(...)`) is kept where it is.
"""

from __future__ import annotations

import re

from .markers import form_header, omitted_marker
from .plan import Attempt, Plan
from .source import Source
from .whitespace import indentation
from .wording import counted

__all__ = ["plan_source"]

_PY_DEF = re.compile(r"^(?P<indent>[ \t]*)(?:async[ \t]+)?(?P<kw>def|class)[ \t]+\w")
_PY_DECORATOR = re.compile(r"^[ \t]*@[\w.]+")
_PY_SIGNS = re.compile(r"^[ \t]*(?:(?:async[ \t]+)?def |class |import |from \S+ import |@\w)", re.M)
_DOCSTRING = re.compile(r'^[ \t]*[rRbBuUfF]{0,2}("""|\'\'\')')
_BRACE_DECL = re.compile(
    r"\b(?:function|func|fn|def|class|struct|interface|enum|impl|trait|namespace|module|type"
    r"|public|private|protected|static|void|const|export)\b"
)
# A block that holds declarations rather than code: its lines are the outline. C and C++
# headers wrap their whole API in `extern "C" {` (a linkage block): as a body, OpenSSL's
# ssl.h outlined to its comments and includes, 2,261 of its 2,607 lines omitted.
_CONTAINER = re.compile(
    r"\b(?:class|struct|interface|enum|impl|trait|namespace|module|object|extension|protocol"
    r"|union|record)\b(?![^{]*=>)|\bextern\s*\"C(?:\+\+)?\""
)
_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`')
_LINE_COMMENT = re.compile(r"//.*$")
_CODE_LINE = re.compile(
    r"[{};:,()\[\]]\s*$|=>\s*$|^\s*(?:#|//|/\*|\*|@\w|import |from |return\b|def |class "
    r"|if |for |while |else|elif |try|except|finally|switch|case |package |use |func |fn "
    r"|let |const |var |public |private |protected |static |#include|type |struct )"
    r"|^\s*[\w.\[\]'\"]+\s*[-+*/%|&^]?=\s*\S"
)
_WHOLE_STATEMENT = re.compile(r"^[ \t]*(?:import |from \S+ import |__all__\b)")
# What a Python line's code is read in: a triple quote, a one-line string, a comment, a bracket.
_PY_TOKEN = re.compile(r'"""|\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|#.*|[()\[\]{}]')
_TRIPLE_END = {q: re.compile(rf"\\.|{q}") for q in ('"""', "'''")}
_LETTERS = re.compile(r"[^\W\d_]")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)
_MD_LINK = re.compile(r"\]\([^)\s]+\)")
_SAMPLE_LINES = 2000  # lines a large text's code share is judged on
_MAX_DOC_LINES = 12  # of a docstring's first paragraph
_SHORT_RUN = 1  # a body of one line is shown: its marker would cost as much


def _is_prose(line: str) -> bool:
    """Whether a line is a sentence: six words or more, mostly letters."""
    words = line.split()
    if len(words) < 6:
        return False
    return len(_LETTERS.findall(line)) >= 0.8 * sum(len(w) for w in words)


def _scan(line: str, quote: str = "") -> tuple[int, str]:
    """Brackets a Python line's code opens minus those it closes, and the triple quote still
    open after it ("" for none), given the one open before it. String literals and comments
    are not code: a triple quote inside a one-line string (a regex that finds docstrings) opens
    nothing; read as an opening, the rest of a module became one statement's marker."""
    depth, pos = 0, 0
    while True:
        if quote:
            close = next(
                (m for m in _TRIPLE_END[quote].finditer(line, pos) if m.group() == quote), None
            )
            if close is None:
                return depth, quote
            pos, quote = close.end(), ""
        for token in _PY_TOKEN.finditer(line, pos):
            text = token.group()
            if text in ('"""', "'''"):
                pos, quote = token.end(), text
                break
            if len(text) == 1:
                depth += 1 if text in "([{" else -1
        else:
            return depth, quote


# The outline as it is made: a kept line by its index (shown as the text has it, with its
# number when the lines are numbered), a marker by its text.
Outline = list[int | str]


class _Python:
    def __init__(self, lines: list[str], errors: list[bool]) -> None:
        self.lines, self.errors = lines, errors
        self.out: Outline = []
        self.omitted = 0
        self.bodies = 0

    def _signature(self, i: int) -> int:
        """Keep a (multi-line) def/class signature; return the line after it."""
        depth = 0
        while i < len(self.lines):
            line = self.lines[i]
            self.out.append(i)
            depth += _scan(line)[0]
            i += 1
            if depth <= 0 and line.rstrip().endswith(":"):
                break
        return i

    def _block_end(self, i: int, indent: int) -> int:
        while i < len(self.lines) and (
            not self.lines[i].strip() or indentation(self.lines[i]) > indent
        ):
            i += 1
        return i

    def docstring(self, i: int, end: int) -> int:
        """Keep the first paragraph of a docstring starting at `i`; the line after it."""
        while i < end and not self.lines[i].strip():
            i += 1
        opening = _DOCSTRING.match(self.lines[i]) if i < end else None
        if opening is None:
            return i
        quote = opening.group(1)
        j, closed = i, self.lines[i].count(quote) >= 2
        while not closed and j + 1 < end:
            j += 1
            closed = quote in self.lines[j]
        paragraph = [k for k in range(i, j + 1)]
        for k in range(i + 1, j + 1):
            if not self.lines[k].strip():
                paragraph = list(range(i, k))
                break
        paragraph = paragraph[:_MAX_DOC_LINES]
        self.out += paragraph
        self._elide(paragraph[-1] + 1, j + 1, self.lines[i][: indentation(self.lines[i])])
        return j + 1

    def _elide(self, start: int, end: int, indent: str) -> None:
        """Lines [start, end) become a marker, but for the error lines among them (and runs
        too short to be worth a marker)."""
        run: list[int] = []
        for k in range(start, end):
            if self.errors[k]:
                self._flush(run, indent)
                run = []
                self.out.append(k)
            elif self.lines[k].strip():
                run.append(k)
        self._flush(run, indent)

    def _flush(self, run: list[int], indent: str) -> None:
        if len(run) <= _SHORT_RUN:
            self.out += run
        else:
            self.out.append(indent + omitted_marker(len(run), "line"))
            self.omitted += len(run)

    def _statement_end(self, i: int, end: int) -> int:
        """The line after the statement starting at `i`: brackets closed, strings ended."""
        depth, quote = 0, ""
        j = i
        while j < end:
            line = self.lines[j]
            j += 1
            opened, quote = _scan(line, quote)
            depth += opened
            if depth <= 0 and not quote:
                break
        return j

    def block(self, i: int, end: int) -> None:
        """Outline lines [i, end): statements of a module or class body."""
        while i < end:
            line = self.lines[i]
            if not line.strip():
                i += 1
                continue
            if _DOCSTRING.match(line):
                i = self.docstring(i, end)
                continue
            if _PY_DECORATOR.match(line):
                self.out.append(i)
                i += 1
                continue
            m = _PY_DEF.match(line)
            if m:
                indent = len(m.group("indent"))
                body = self._signature(i)
                stop = self._block_end(body, indent)
                inner = self.docstring(body, stop)
                if m.group("kw") == "class":
                    self.block(inner, stop)
                else:
                    self.bodies += 1
                    self._elide(inner, stop, " " * (indent + 4))
                i = stop
                continue
            # Any other statement: its first line (imports and __all__ whole); the rest of it
            # (a multi-line call or literal, the block of an if/for/with) becomes a marker.
            j = self._statement_end(i, end)
            stop = j
            if self.lines[j - 1].rstrip().endswith(":"):
                stop = self._block_end(j, indentation(line))
            if _WHOLE_STATEMENT.match(line):
                self.out += range(i, j)
                self._elide(j, stop, line[: indentation(line)] + "    ")
            else:
                self.out.append(i)
                self._elide(i + 1, stop, line[: indentation(line)] + "    ")
            i = stop


def _code_braces(line: str) -> str:
    """The braces of a line's code, in order (strings and // comments left out)."""
    code = _LINE_COMMENT.sub("", _STRINGS.sub('""', line))
    return "".join(c for c in code if c in "{}")


# What a line of C-family source is to _Comments.read.
_CODE, _OPENS, _CLOSES, _INSIDE = "code", "opens", "closes", "inside"


class _Comments:
    """C-family comments, read one line after another: a `/* ... */` that opens a line (on
    that line or later ones), or a run of `//` lines."""

    def __init__(self) -> None:
        self.kind = ""  # "block", "line" or "" outside a comment

    def read(self, line: str) -> str:
        """What `line` is: _CODE, a comment's first line (_OPENS), a block's closing line
        (_CLOSES) or another line of a comment (_INSIDE)."""
        stripped = line.strip()
        if self.kind == "line" and not stripped.startswith("//"):
            self.kind = ""
        if not self.kind:
            if stripped.startswith("/*"):
                self.kind = "" if "*/" in stripped[2:] else "block"
                return _OPENS
            if stripped.startswith("//"):
                self.kind = "line"
                return _OPENS
            return _CODE
        if self.kind == "block" and "*/" in stripped:
            self.kind = ""
            return _CLOSES
        return _INSIDE


class _Braces:
    def __init__(self, lines: list[str], errors: list[bool]) -> None:
        self.lines, self.errors = lines, errors
        self.out: Outline = []
        self.omitted = 0
        self.bodies = 0
        self.run: list[int] = []
        self.run_indent = ""
        # Of the comment being read, its lines shown so far, and whether its first paragraph
        # is still going.
        self.comment_lines = 0
        self.first_paragraph = False

    def _comment_shown(self, what: str, line: str) -> bool:
        """Whether a comment line (`what` _Comments.read of it) at a shown depth is shown. Of
        each comment, the first paragraph (at most _MAX_DOC_LINES lines) and a block's
        closing line are shown, as a Python docstring's first paragraph is: a header
        documents its API in comments several times longer than its declarations (zlib.h,
        23,322 tokens, had saved 2% kept whole)."""
        if what == _OPENS:
            self.comment_lines, self.first_paragraph = 1, True
            return True
        if what == _CLOSES:
            return True
        text = line.strip().lstrip("/*!").strip()
        self.first_paragraph = (
            self.first_paragraph and bool(text) and self.comment_lines < _MAX_DOC_LINES
        )
        self.comment_lines += self.first_paragraph
        return self.first_paragraph

    def _flush(self) -> None:
        if len(self.run) <= _SHORT_RUN:
            self.out += self.run
        else:
            self.out.append(self.run_indent + omitted_marker(len(self.run), "line"))
            self.omitted += len(self.run)
        self.run = []

    def outline(self) -> None:
        """Walk the lines once, tracking which open blocks show their lines."""
        stack: list[bool] = []  # per open block: whether its lines are shown
        comments = _Comments()
        for k, line in enumerate(self.lines):
            visible = all(stack)
            what = comments.read(line)  # hidden lines too: a `{` in a comment opens nothing
            show = visible and (what == _CODE or self._comment_shown(what, line))
            if show or self.errors[k]:
                self._flush()
                self.out.append(k)
            elif line.strip():
                if not self.run:
                    self.run_indent = line[: indentation(line)]
                self.run.append(k)
            if what != _CODE:
                continue  # a comment's braces open and close nothing
            for brace in _code_braces(line):
                if brace == "{":
                    shown = all(stack)
                    container = shown and _CONTAINER.search(line) is not None
                    self.bodies += shown and not container
                    stack.append(container)
                elif stack:
                    stack.pop()
            if not visible and not self.errors[k] and all(stack) and line.strip():
                # This line closed the hidden block: it is shown, after the block's marker.
                self.run.pop()
                self._flush()
                self.out.append(k)
        self._flush()


# A line of pretty-printed JSON: a member (`"name": ...`), a lone bracket or brace, a value.
_JSON_LINE = re.compile(
    r'^\s*(?:"(?:[^"\\]|\\.)*"\s*:|[\[\]{}]+,?\s*$|"(?:[^"\\]|\\.)*",?\s*$'
    r"|-?\d[\d.eE+-]*,?\s*$|(?:true|false|null),?\s*$)"
)
_JSON_SHARE = 0.9


# C's preprocessor lines and declarations: a header may hold no braces at all (stdio.h
# declares its API with macros around plain prototypes).
_PREPROCESSOR = re.compile(r"^[ \t]*#[ \t]*(?:include|define|if|ifdef|ifndef|endif)\b", re.M)
_DECLARATION_END = re.compile(r"\);[ \t]*$", re.M)


def _language(text: str) -> str:
    python = len(_PY_SIGNS.findall(text))
    braces = text.count("{") + text.count("}")
    if python >= 2 and python * 4 >= braces:
        return "python"
    if braces >= 4:
        return "braces"
    c_header = len(_PREPROCESSOR.findall(text)) >= 2 and len(_DECLARATION_END.findall(text)) >= 2
    return "braces" if c_header else ""


def _comment_lines(lines: list[str]) -> list[bool]:
    """Which lines are comments (_Comments)."""
    comments = _Comments()
    return [comments.read(line) != _CODE for line in lines]


def _render(source: Source, language: str, numbered: list[str] | None) -> Attempt:
    shown = [line.rstrip() for line in source.raw_lines]
    # Numbered lines are read without their numbers and kept with them.
    lines = shown if numbered is None else [line.rstrip() for line in numbered]
    flags = source.judged.flags  # `shown` are its units, right-stripped: judged the same
    if language == "python":
        reader = _Python(lines, flags)
        reader.block(0, len(lines))
        made, omitted, bodies = reader.out, reader.omitted, reader.bodies
    else:
        braces = _Braces(lines, flags)
        braces.outline()
        made, omitted, bodies = braces.out, braces.omitted, braces.bodies
    out = [shown[part] if isinstance(part, int) else part for part in made]
    what = "Python" if language == "python" else "brace-language"
    summary = (
        f"{what} source, {counted(len(lines), 'line')}: outline kept (signatures, docstrings, "
        f"declarations); {counted(omitted, 'line')} of {counted(bodies, 'body', 'bodies')} "
        "omitted"
    )
    dropped = (f"{counted(omitted, 'line')} of function bodies and long statements",)
    return Attempt("\n".join([form_header(summary), *out]), dropped)


def plan_source(source: Source) -> Plan | None:
    """The source outline compressor, if the content reads as a source file (numbered lines
    as `cat -n` prints them too, read after their numbers)."""
    nonblank = source.nonblank_raw
    if len(nonblank) < source.config.min_lines:
        return None
    numbered = source.numbered
    text = source.content
    if numbered is not None:
        text = "\n".join(numbered)
        nonblank = [line for line in numbered if line.strip()]
    language = _language(text)
    if not language:
        return None
    # A Markdown document quoting code (a README, a changelog) is prose with examples: its
    # fences and links say so. A source file has neither at the start of its lines.
    fences = len(_FENCE.findall(text))
    links = len(_MD_LINK.findall(text))
    if fences >= 2 or links >= 0.05 * len(nonblank):
        return None
    declared = (line for line in nonblank if _BRACE_DECL.search(line) or _PY_DEF.match(line))
    if next(declared, None) is None or next(declared, None) is None:
        return None  # fewer than two declarations (sought no further than the second)
    # Pretty-printed JSON documents one after another (`yq .` of a multi-document YAML, `jq`
    # over several inputs) are data, not code: outlined, nine manifests kept only their braces.
    sample = nonblank[:: max(1, len(nonblank) // _SAMPLE_LINES)]
    if sum(1 for line in sample if _JSON_LINE.match(line)) >= _JSON_SHARE * len(sample):
        return None
    # Sentences neither count for nor against (docstrings, comments); among the other lines,
    # the share that reads as code. A Markdown README quoting code stays under the floor.
    # A large text is judged on evenly spaced lines (the same ones on every run).
    step = max(1, len(nonblank) // _SAMPLE_LINES)
    code = prose = 0
    # A comment's lines are what a docstring's are: neither code nor against it (zlib.h's
    # comments, 43% of its lines and many of them no full sentence, had kept it from
    # reading as source).
    comments = _comment_lines(nonblank)[::step]
    for line, comment in zip(nonblank[::step], comments, strict=True):
        if comment:
            prose += 1
            continue
        is_code, is_prose = _CODE_LINE.search(line) is not None, _is_prose(line)
        # A prototype reads as words (`int codec_step(struct codec *c, const char *in);`),
        # but no sentence ends in `);`.
        is_prose = is_prose and _DECLARATION_END.search(line) is None
        code += is_code and not is_prose
        prose += is_prose and not is_code
    share = code / max(1, len(nonblank[::step]) - prose)
    reason = f"{share:.0%} of the non-blank lines read as {language} code"
    return Plan("source", share, reason, lambda: _render(source, language, numbered))
