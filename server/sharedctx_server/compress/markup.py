"""HTML and Markdown: the text, without the markup around it.

HTML: scripts, styles, `<head>` (but its title), navigation, footers, forms' hidden parts
and comments are dropped; headings become `#` lines, list items `- ` lines, table rows
cells joined by ` | `, `<pre>` keeps its layout, links keep their text (their targets are
counted, not shown), images their alt text. Markdown: HTML comments and tags, badge and
image markup, link targets (`[text](url)` -> `text`), reference definitions and table rule
rows are dropped; headings, lists, emphasis and fenced code stay as written.

The form opens with a header counting what was dropped. A line carrying an error is kept
as it was (in HTML, as the text the parser read on that line).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from .markers import form_header
from .plan import Attempt, Plan
from .source import Source
from .wording import counted

__all__ = ["plan_markup"]

_HTML = re.compile(r"<(?:!doctype html|html|head|body|div|p|span|table|ul|a)\b", re.IGNORECASE)
_HTML_DOCUMENT = re.compile(r"<(?:!doctype html|html|head|body)\b", re.IGNORECASE)
_TAG = re.compile(r"<[^<>]{0,2000}>")
_SKIP = frozenset({"script", "style", "noscript", "svg", "template", "nav", "footer", "iframe"})
_BLOCK = frozenset(
    {"p", "div", "section", "article", "main", "header", "aside", "ul", "ol", "dl", "table",
     "tr", "br", "hr", "blockquote", "figure", "form", "dd", "dt", "details", "summary"}
)  # fmt: skip
_HEADINGS = {f"h{n}": "#" * n for n in range(1, 7)}

_MD_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_MD_IMAGE = re.compile(r"!\[(?P<alt>[^\]\n]*)\]\([^)\n]*\)")
_MD_BADGE = re.compile(r"\[!\[[^\]\n]*\]\([^)\n]*\)\]\([^)\n]*\)")
_MD_LINK = re.compile(r"(?<!!)\[(?P<text>[^\]\n]+)\]\((?P<url>[^)\s\n]+)(?: \"[^\"\n]*\")?\)")
_MD_REF_DEF = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s+\S+.*$", re.MULTILINE)
_MD_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$", re.MULTILINE)
_MD_INLINE_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>\n]*)?/?>")
_MD_FEATURES = re.compile(r"^#{1,6} |^\s*[-*+] |^```|\]\(|^\s*\|.*\|\s*$", re.MULTILINE)
_MD_HEADING = re.compile(r"^#{1,6} \S", re.MULTILINE)
_MD_FENCE = re.compile(r"^\s*(?:```|~~~)", re.MULTILINE)
_MD_FENCED_BLOCK = re.compile(r"^\s*(```|~~~).*?(?:^\s*\1|\Z)", re.MULTILINE | re.DOTALL)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping: list[str] = []
        self.pre = 0
        self.title = False
        self.in_head = False
        self.links = 0
        self.dropped_elements = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.append(tag)
            return
        if tag in _SKIP:
            self.skipping.append(tag)
            self.dropped_elements += 1
        elif tag == "head":
            self.in_head = True
        elif tag == "title":
            self.title = True
        elif tag in _HEADINGS:
            self.parts.append("\n\n" + _HEADINGS[tag] + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag == "pre":
            self.pre += 1
            self.parts.append("\n")
        elif tag in _BLOCK:
            self.parts.append("\n")
        elif tag == "a" and dict(attrs).get("href"):
            self.links += 1
        elif tag == "img":
            alt = dict(attrs).get("alt")
            if alt:
                self.parts.append(f"[image: {alt}]")

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
            return
        if tag == "head":
            self.in_head = False
        elif tag == "title":
            self.title = False
            self.parts.append("\n")
        elif tag == "pre":
            self.pre = max(0, self.pre - 1)
            self.parts.append("\n")
        elif tag in _HEADINGS or tag in _BLOCK or tag == "li":
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self.skipping or (self.in_head and not self.title):
            return
        self.parts.append(data if self.pre else re.sub(r"\s+", " ", data))


def _tidy(text: str) -> list[str]:
    """Lines stripped of edge spaces, no more than one blank line in a row."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip().removeprefix("| ").strip() if line.startswith(" | ") else line.rstrip()
        if line.strip() or (out and out[-1]):
            out.append(line if line.strip() else "")
    return out


def _html(source: Source) -> Attempt:
    parser = _Text()
    parser.feed(source.content)
    parser.close()
    lines = _tidy("".join(parser.parts))
    # Error lines the text lost (an error inside an attribute or a dropped script) go last.
    lines += source.judged.lost("\n".join(lines))
    summary = (
        f"HTML as text: {counted(len(source.content), 'character')} of markup reduced to text; "
        f"dropped tags, {counted(parser.dropped_elements, 'script/style/nav block')}, "
        f"{counted(parser.links, 'link target')}"
    )
    dropped = ("tags and attributes", f"{counted(parser.dropped_elements, 'block')}")
    return Attempt("\n".join([form_header(summary), *lines]), dropped)


def _markdown(source: Source) -> Attempt:
    out: list[str] = []
    counts = {"links": 0, "images": 0, "tags": 0}
    fenced = False
    text = _MD_COMMENT.sub("", source.content)
    for line in text.split("\n"):
        if _MD_FENCE.match(line):
            fenced = not fenced
        if fenced or source.judged.is_error_line(line):
            out.append(line.rstrip())
            continue
        new = _MD_BADGE.sub("", line)
        counts["images"] += len(_MD_IMAGE.findall(new)) + (new != line)
        new = _MD_IMAGE.sub(lambda m: f"[image: {m.group('alt')}]" if m.group("alt") else "", new)
        counts["links"] += len(_MD_LINK.findall(new))
        new = _MD_LINK.sub(lambda m: m.group("text"), new)
        counts["tags"] += len(_MD_INLINE_TAG.findall(new))
        new = _MD_INLINE_TAG.sub("", new)
        if _MD_REF_DEF.match(new) or _MD_TABLE_RULE.match(new):
            counts["links"] += 1
            continue
        if new.strip() or not line.strip():
            out.append(new.rstrip())
    lines: list[str] = []
    for line in out:
        if line.strip() or (lines and lines[-1]):
            lines.append(line)
    summary = (
        f"Markdown as text: dropped {counted(counts['links'], 'link target')}, "
        f"{counted(counts['images'], 'image/badge', 'images/badges')}, "
        f"{counted(counts['tags'], 'HTML tag')} and comments"
    )
    dropped = tuple(f"{n:,} {k}" for k, n in counts.items() if n)
    return Attempt("\n".join([form_header(summary), *lines]), dropped)


def _html_document(content: str) -> bool:
    """Whether `content` is an HTML document rather than Markdown that opens with HTML (a
    README's centred logo and badges): it starts with a tag, and either declares itself
    (`<!doctype html>`, `<html>`, `<head>`, `<body>`, outside fenced code, where a README may
    quote a page) or has HTML tags near the start and no fenced code or Markdown headings."""
    if content.lstrip()[:1] != "<":
        return False
    head = _MD_FENCED_BLOCK.sub("", content[:4000])
    if _HTML_DOCUMENT.search(head):
        return True
    markdown = _MD_FENCE.search(content) is not None or len(_MD_HEADING.findall(content)) >= 2
    return _HTML.search(head) is not None and not markdown


def plan_markup(source: Source) -> Plan | None:
    """The markup compressor, for HTML documents and Markdown with markup to drop."""
    content = source.content
    if _html_document(content):
        tags = sum(len(m.group()) for m in _TAG.finditer(content))
        share = min(1.0, 4 * tags / max(1, len(content)))
        reason = f"an HTML document ({tags / max(1, len(content)):.0%} of it is tags)"
        return Plan("markup", share, reason, lambda: _html(source))
    if len(content) < source.config.prose_min_chars:
        return None
    if len(_MD_HEADING.findall(content)) < 2:
        return None  # Markdown documents have headings; diffs and logs quoting it do not
    features = len(_MD_FEATURES.findall(content))
    boilerplate = len(_MD_LINK.findall(content)) + len(_MD_IMAGE.findall(content))
    boilerplate += len(_MD_COMMENT.findall(content)) + len(_MD_INLINE_TAG.findall(content))
    if features < 3 or boilerplate < 3:
        return None
    reason = f"Markdown with {counted(boilerplate, 'link, image or tag', 'links, images or tags')}"
    return Plan("markup", 1.0, reason, lambda: _markdown(source))
