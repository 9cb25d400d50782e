"""Where code defines a name, as mark terms for BM25 (docs/excerpts.md, "Definitions").

"What changed in render_excerpt?", "what does `parse_args` do?": the name is on every line
that calls or imports it, and the hunk or body that defines it, longer than those lines,
scores below them (BM25 divides by length). So a line that defines a name (`def name(`,
`class Name:`, `function name(`, `func (r *T) Name(`, `fn name<`, `struct Name {`, `const
name =`, a module's upper-case constant `NAME = ...`, or a diff's hunk header naming the
function the hunk changes) marks its segment with a term per term of
the name (`§renderexcerpt`, `§render`, `§excerpt`), and a question that names an identifier
asks for the marks of its terms: a name is defined in one place, so its mark is rare, and BM25
weighs it so. `§` is no word character: no term of any text is a mark.
"""

from __future__ import annotations

import re

from sharedctx_server.fit.lexical import lexical_terms

__all__ = ["DEFINITION_MARK", "defined_names", "definition_marks", "definition_query_terms"]

DEFINITION_MARK = "§"

_MODIFIERS = (
    r"(?:(?:export|default|public|private|protected|internal|static|async|abstract|final"
    r"|override|unsafe|pub(?:\([^)\n]*\))?)[ \t]+)*"
)
_KEYWORDS = (
    r"(?:def|class|function\*?|func(?:[ \t]*\([^)\n]*\))?|fn|struct|enum|trait|interface|impl"
    r"|type|module|object|const)"
)
# A definition: maybe a diff's line marker or a hunk header (`@@ -1,4 +1,5 @@ def name(`), the
# modifiers, the keyword, the name, and what follows a name being defined (a parameter list,
# a body, a base, generics, `=`), so that prose ("class names are...") is not one. Or a
# constant, defined where a module's lines start: an upper-case name assigned (maybe with its
# type) on a line of its own (`+REWRITING: frozenset[CompressorName] = ...`, `MAX_KEYS =
# 300`); `const` among the keywords covers the languages that say so. One pattern, one pass
# over an entry's text at Put.
_HUNK = r"(?:@@ [^@\n]* @@[ \t]*)?"
_DEFINITION = re.compile(
    r"^[-+ ]?(?:[ \t]*" + _HUNK + _MODIFIERS + _KEYWORDS + r"[ \t]+"
    r"(?P<name>[A-Za-z_$][\w$]*)"
    r"(?=[ \t]*[(:{<=\[]|[ \t]+(?:struct|interface|extends|implements)\b|[ \t]*$)"
    r"|" + _HUNK + r"(?P<constant>_?[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)"
    r"(?=[ \t]*(?::[^=\n]*)?=(?!=)))",
    re.MULTILINE,
)
# A name as code writes it, in a question: in backticks, called (`parse()`), snake_case, with
# a lower-to-upper turn (camelCase, PascalCase), or a constant's upper case, four letters or
# more ("which compressors are in REWRITING?"; an acronym the text defines nowhere asks for
# a mark no segment holds, which counts for nothing).
_CODE_NAME = re.compile(
    r"`([^`\s]+)`"  # `in backticks`
    r"|\b([A-Za-z_$][\w$]*)\(\)"  # called()
    r"|\b([A-Za-z$][\w$]*_[\w$]+|_[\w$]+|[\w$]*[a-z][A-Z][\w$]*)\b"  # snake_case, camelCase
    r"|\b([A-Z][A-Z0-9]{3,})\b"  # CONSTANT
)
# A name the question calls a function, a class...: "the parse function", "class Excerpt"
# (after the word, only a name that looks like one: "which function failed?" names none).
_KIND = r"(?:function|method|class|struct|def|fn|func|interface|trait|enum|module)"
_NAME_BEFORE = re.compile(rf"\b([A-Za-z_$][\w$]*)(?=[ \t]+{_KIND}\b)", re.IGNORECASE)
_NAME_AFTER = re.compile(rf"(?i:\b{_KIND})[ \t]+([A-Z_$][\w$]*|[a-z][\w$]*_[\w$]*)\b")


def defined_names(text: str) -> list[tuple[int, str]]:
    """Each name `text` defines, with the offset of the line that defines it, in order."""
    return [(m.start(), m["name"] or m["constant"]) for m in _DEFINITION.finditer(text)]


def definition_marks(name: str) -> list[str]:
    """The mark terms of defining `name`: one per term of the name (stop words have none)."""
    return [DEFINITION_MARK + term for term in dict.fromkeys(lexical_terms(name))]


def definition_query_terms(query: str) -> list[str]:
    """The definition marks a question asks for: those of each name it writes as code or
    calls a function, class, method..."""
    names = [
        name
        for pattern in (_CODE_NAME, _NAME_BEFORE, _NAME_AFTER)
        for m in pattern.finditer(query)
        for name in m.groups()
        if name
    ]
    return list(dict.fromkeys(mark for name in names for mark in definition_marks(name)))
