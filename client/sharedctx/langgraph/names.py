"""LangGraph namespaces (tuples of labels) as sharedctx namespaces, and back.

A sharedctx namespace is 1-128 characters of [A-Za-z0-9._:/-]; a LangGraph label may be any
non-empty text. The mapping joins the labels with "/" after escaping each one: letters,
digits, "_", ":" and "-" stay as they are, and every other character becomes "." followed by
two upper-case hex digits per UTF-8 byte ("/" is ".2F", "." is ".2E", "é" is ".C3.A9"). A "."
therefore always starts an escape and a "/" always separates labels, so the mapping is
reversible; a name that is not the canonical escape of some labels (".41" for "A", "a//b", a
stray ".") is not one of the store's and decodes to None. The store's `prefix` is prepended
as is, so a grant on that prefix covers every namespace of the store.
"""

from __future__ import annotations

import re
import string

from langgraph.store.base import InvalidNamespaceError

MAX_NAMESPACE = 128  # sharedctx's limit on a namespace's length
SEPARATOR = "/"
_PLAIN = frozenset(string.ascii_letters + string.digits + "_:-")
_HEX_BYTE = re.compile(r"[0-9A-F]{2}")
_PREFIX_CHARS = re.compile(r"[A-Za-z0-9._:/-]*")


def check_prefix(prefix: str) -> str:
    """The store's namespace prefix, refused when sharedctx could not hold it."""
    if not _PREFIX_CHARS.fullmatch(prefix) or len(prefix) >= MAX_NAMESPACE:
        raise ValueError(
            f"prefix {prefix!r} must be under {MAX_NAMESPACE} characters of [A-Za-z0-9._:/-]"
        )
    return prefix


def escape_label(label: str) -> str:
    """One label in the namespace alphabet (see the module's docstring)."""
    if not isinstance(label, str) or not label:
        raise InvalidNamespaceError(f"namespace labels must be non-empty strings; got {label!r}")
    return "".join(
        c if c in _PLAIN else "".join(f".{b:02X}" for b in c.encode("utf-8")) for c in label
    )


def unescape_label(text: str) -> str | None:
    """The label `text` is the canonical escape of, or None."""
    raw = bytearray()
    i = 0
    while i < len(text):
        if text[i] == ".":
            digits = text[i + 1 : i + 3]
            if not _HEX_BYTE.fullmatch(digits):
                return None
            raw.append(int(digits, 16))
            i += 3
        elif text[i] in _PLAIN:
            raw.append(ord(text[i]))
            i += 1
        else:
            return None
    try:
        label = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    # Canonical only: ".41" would decode to "A", which encodes as "A".
    return label if label and escape_label(label) == text else None


def encode(namespace: tuple[str, ...], prefix: str = "") -> str:
    """The sharedctx namespace of a LangGraph namespace; InvalidNamespaceError when it is empty
    or its escaped form is longer than sharedctx allows."""
    if not namespace:
        raise InvalidNamespaceError("a namespace needs at least one label")
    name = prefix + SEPARATOR.join(escape_label(label) for label in namespace)
    if len(name) > MAX_NAMESPACE:
        raise InvalidNamespaceError(
            f"namespace {namespace!r} maps to a sharedctx namespace of {len(name)} characters "
            f"({name[:40]}...), over the limit of {MAX_NAMESPACE}: use shorter labels (each "
            "character outside [A-Za-z0-9_:-] takes 3 per UTF-8 byte)"
        )
    return name


def encode_prefix(labels: tuple[str, ...], prefix: str = "") -> str:
    """The string every sharedctx namespace under `labels` starts with (no length check: a
    prefix longer than a namespace can be simply matches nothing)."""
    return prefix + SEPARATOR.join(escape_label(label) for label in labels)


def decode(name: str, prefix: str = "") -> tuple[str, ...] | None:
    """The LangGraph namespace of a sharedctx namespace, or None when it is not the store's."""
    if not name.startswith(prefix):
        return None
    labels = []
    for part in name[len(prefix) :].split(SEPARATOR):
        label = unescape_label(part)
        if label is None:
            return None
        labels.append(label)
    return tuple(labels)
