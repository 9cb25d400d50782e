"""YAML documents (`kubectl get -o yaml`, manifests, CI and compose files): every value kept.

A configuration's lines differ in their values, which are what an agent reads it for: the
log compressor, which folds lines that differ only in numbers and names, turned a NetworkPolicy's
`port: 53` and `port: 6379` into `[... 1 line omitted]`. So this form keeps every line but
two blocks that the Kubernetes API server writes for its own bookkeeping, which repeat the
object or describe who set which field:

- `managedFields:` (server-side apply's field ownership, often longer than the object);
- the `kubectl.kubernetes.io/last-applied-configuration` annotation (the whole object again,
  as one line of JSON or a block of it).

Each becomes its key and a marker, `managedFields: [... 83 lines omitted]`. A YAML document
without them is stored as written (compressor "none"): the log compressor does not run on it
either. A block holding a line that carries an error is kept whole.

Recognised when nearly every non-blank line is YAML syntax (`key: value`, `- item`, comments,
`---`, the lines of a `|` or `>` block) and some of them are nested under a key: flat
`Name: value` listings (`pip show`, `/proc/meminfo`) are not YAML documents here, and
`kubectl describe` (keys with spaces, an events table) is read as the log it resembles.
"""

from __future__ import annotations

import re

from .markers import chars_marker, form_header, lines_marker
from .plan import Attempt, Plan
from .source import Source
from .wording import counted

__all__ = ["plan_yaml"]

# `key: value` or `key:` (after any `- ` of sequence items): a key is a quoted string or
# text without spaces up to the first `:` that a space or the line's end follows, so
# managedFields' `f:metadata:` and `k:{"name":"api"}:` are keys too.
_KEY = re.compile(
    r"^(?P<indent> *)(?P<items>(?:- +)*)(?P<key>\"[^\"]*\"|'[^']*'|[^\s#'\"\-\[{][^\s]*?|-\S+?)"
    r":(?: +(?P<value>.*))?$"
)
# A source location a logger puts first (`client.go:617: [debug] ...`, helm's and Go's
# loggers) reads like a key; it is none.
_SOURCE_AT = re.compile(r":\d+$")
_ITEM = re.compile(r"^ *-(?: |$)")
_COMMENT = re.compile(r"^ *#")
_DOCUMENT = re.compile(r"^(?:---|\.\.\.)(?: .*)?$")
# A block scalar's header (`script: |`, `description: >-`): the lines indented under it are text.
_BLOCK_SCALAR = re.compile(r"^[|>][-+0-9]*(?: +#.*)?$")
# A value that opens a flow collection over several lines (`command: ["sh", "-c",`).
_FLOW_OPEN = re.compile(r"^[\[{]")

# Nearly every line is YAML syntax in a YAML document; `kubectl describe` reaches about 70%.
_MIN_SHARE = 0.95
# Keys with a mapping or sequence under them, at the least: `Name: value` listings have none.
_MIN_PARENTS = 3
# The bookkeeping blocks left out, by key.
_NOISE_KEYS = frozenset({"managedFields", "kubectl.kubernetes.io/last-applied-configuration"})


def _key(line: str) -> re.Match[str] | None:
    """The `key: value` match of a line, if it is one."""
    key = _KEY.match(line)
    return key if key is not None and not _SOURCE_AT.search(key["key"]) else None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _block_end(lines: list[str], start: int, indent: int) -> int:
    """The index after the block that the key at `start` (at `indent`) opens: the lines
    indented deeper, and the sequence items at its own indent (`managedFields:` then `- ...`
    at the same column, as kubectl prints it)."""
    end = start + 1
    while end < len(lines):
        line = lines[end]
        if line.strip():
            deeper = _indent(line) > indent
            if not deeper and not (_indent(line) == indent and _ITEM.match(line)):
                break
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # trailing blank lines belong to what follows
    return end


def _read(lines: list[str], most_missed: float) -> tuple[int, int] | None:
    """(lines understood as YAML, keys that open a mapping or a sequence under them), or None
    as soon as more than `most_missed` non-blank lines are not (a 1 MiB log was read to its
    end for a share that its first lines had already ruled out)."""
    understood = parents = missed = 0
    in_block = -1  # the indent of the key whose block scalar (or flow) is being read
    opener = -1  # the indent of the key before, when it had no value
    for line in lines:
        if not line.strip():
            continue
        indent = _indent(line)
        if in_block >= 0 and indent > in_block:
            understood += 1
            continue
        in_block = -1
        # `stat`'s indented `  File: x` is no child: a child follows a key without a value.
        if opener >= 0 and (indent > opener or (indent == opener and _ITEM.match(line))):
            parents += 1
        opener = -1
        key = _key(line)
        if key is not None:
            understood += 1
            value = key["value"] or ""
            if not value:
                opener = indent
            elif _BLOCK_SCALAR.match(value) or (_FLOW_OPEN.match(value) and not _closed(value)):
                in_block = indent
        elif _ITEM.match(line) or _COMMENT.match(line) or _DOCUMENT.match(line):
            understood += 1
        else:
            missed += 1
            if missed > most_missed:
                return None
    return understood, parents


def _closed(value: str) -> bool:
    """Whether a flow collection opened by `value` closes on its line (strings ignored)."""
    text = re.sub(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'", "", value)
    return text.count("[") + text.count("{") <= text.count("]") + text.count("}")


def plan_yaml(source: Source) -> Plan | None:
    """The YAML compressor, if the content reads as a YAML document with nested keys."""
    head = source.content[:2000].lstrip()
    if not head or head[0] in "{[":
        return None  # JSON (also YAML, but the JSON compressor's)
    lines = source.lines
    nonblank = sum(1 for line in lines if line.strip())
    read = _read(lines, most_missed=(1 - _MIN_SHARE) * nonblank)
    if read is None:
        return None
    understood, parents = read
    share = understood / nonblank if nonblank else 0.0
    if share < _MIN_SHARE or parents < _MIN_PARENTS:
        return None
    reason = (
        f"{share:.0%} of the non-blank lines are YAML, {counted(parents, 'key')} with more under it"
    )
    return Plan("yaml", share, reason, lambda: _render(source, lines))


def _render(source: Source, lines: list[str]) -> Attempt:
    out: list[str] = []
    blocks = 0
    i = 0
    while i < len(lines):
        line = lines[i]
        key = _key(line)
        if key is None or key["key"] not in _NOISE_KEYS:
            out.append(line)
            i += 1
            continue
        indent = _indent(line) + len(key["items"])
        end = _block_end(lines, i, indent)
        value = key["value"] or ""
        inline = end == i + 1 and len(value) > len(chars_marker(len(value)))
        if (end == i + 1 and not inline) or any(source.errors[i:end]):
            out.extend(lines[i:end])  # nothing to gain, or an error line that must stay
        else:
            head = line[: key.end("key") + 1]
            marker = chars_marker(len(value)) if inline else lines_marker(end - i - 1)
            out.append(f"{head} {marker}")
            blocks += 1
        i = end
    if not blocks:
        return Attempt(source.content, ())
    header = form_header(
        f"YAML: every value as written but {counted(blocks, 'bookkeeping block')} of the "
        "Kubernetes API server (managedFields, last-applied-configuration)"
    )
    return Attempt(
        "\n".join([header, *out]),
        ("managedFields and last-applied-configuration, each marked in place",),
    )
