"""JavaScript's `JSON.stringify(value).slice(0, n)`, reproduced for Python values.

The relevance battery (docs/relevance.md) folds tool arguments into a turn's text the way its
TypeScript source does, so the text, and with it the relevance scores, must match character
for character. Python's `json.dumps` differs from JavaScript in ways that show up in real tool
arguments: number formatting (`1.0` is `1`, `1e16` is `10000000000000000`, NaN is `null`),
integer-like object keys (JavaScript lists them first, in ascending order), lone surrogates
(escaped by JavaScript) and the slice, which counts UTF-16 code units.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

__all__ = ["UnserializableError", "js_number", "js_stringify", "utf16_prefix"]

# Integers up to 2**53 are exact doubles; larger ones are what JavaScript would hold after
# parsing them, i.e. the nearest double.
_SAFE_INT = 2**53
_MAX_ARRAY_INDEX = 2**32 - 2

# Control characters, quote, backslash and lone surrogates are escaped (lowercase hex, as in
# JavaScript); everything else, including U+2028/U+2029, is written as is.
_NEEDS_ESCAPE = re.compile(r'[\ud800-\udbff][\udc00-\udfff]|[\x00-\x1f"\\\ud800-\udfff]')
_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}


class UnserializableError(ValueError):
    """The value has no JSON form (a cycle, or a type JSON.stringify would reject here)."""


def js_number(value: float) -> str:
    """JavaScript's Number.prototype.toString for a finite double (shortest round-trip digits)."""
    if value == 0:
        return "0"  # also -0
    sign = "-" if value < 0 else ""
    mantissa, _, exp_text = repr(abs(value)).partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    digits = (int_part + frac_part).lstrip("0")
    exponent = (int(exp_text) if exp_text else 0) - len(frac_part)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = k + exponent  # value = 0.d1d2...dk * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + digits + "e" + exp
    return sign + digits[0] + "." + digits[1:] + "e" + exp


def _number_json(value: int | float) -> str:
    if isinstance(value, int):
        if -_SAFE_INT <= value <= _SAFE_INT:
            return str(value)
        try:
            value = float(value)
        except OverflowError:
            return "null"  # beyond the double range JavaScript would hold Infinity
    if not math.isfinite(value):
        return "null"
    return js_number(value)


def _escape(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:
        return found  # a high+low surrogate pair held as two code points: a valid pair, as is
    return _ESCAPES.get(found) or f"\\u{ord(found):04x}"


def _quote(text: str) -> str:
    return '"' + _NEEDS_ESCAPE.sub(_escape, text) + '"'


def _property_key(key: object) -> str:
    if isinstance(key, str):
        return key
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        if abs(key) <= _SAFE_INT:
            return str(key)
        try:
            return _key_of_float(float(key))
        except OverflowError:
            return "Infinity" if key > 0 else "-Infinity"
    if isinstance(key, float):
        return _key_of_float(key)
    raise UnserializableError(f"object key of type {type(key).__name__}")


def _key_of_float(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return js_number(value)


def _is_array_index(key: str) -> bool:
    return (
        key.isdigit()
        and key.isascii()
        and (key == "0" or key[0] != "0")
        and (int(key) <= _MAX_ARRAY_INDEX)
    )


def _ordered_items(mapping: Mapping[object, object]) -> list[tuple[str, object]]:
    """Own properties in JavaScript order: array indices ascending, then insertion order."""
    props: dict[str, object] = {}
    for key, value in mapping.items():
        props[_property_key(key)] = value  # a repeated key keeps its first place, last value
    indices = sorted((k for k in props if _is_array_index(k)), key=int)
    if not indices:
        return list(props.items())
    rest = [(k, v) for k, v in props.items() if not _is_array_index(k)]
    return [(k, props[k]) for k in indices] + rest


def js_stringify(value: object) -> str:
    """What JavaScript's JSON.stringify(value) returns for a JSON-shaped Python value."""
    out: list[str] = []
    _write(value, out, set())
    return "".join(out)


def _write(value: object, out: list[str], open_ids: set[int]) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, (int, float)):
        out.append(_number_json(value))
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, (Mapping, list, tuple)):
        if id(value) in open_ids:
            raise UnserializableError("cyclic structure")
        open_ids.add(id(value))
        if isinstance(value, Mapping):
            _write_object(value, out, open_ids)
        else:
            _write_array(value, out, open_ids)
        open_ids.discard(id(value))
    else:
        raise UnserializableError(f"no JSON form for {type(value).__name__}")


def _write_object(value: Mapping[object, object], out: list[str], open_ids: set[int]) -> None:
    out.append("{")
    for i, (key, item) in enumerate(_ordered_items(value)):
        if i:
            out.append(",")
        out.append(_quote(key))
        out.append(":")
        _write(item, out, open_ids)
    out.append("}")


def _write_array(value: Sequence[object], out: list[str], open_ids: set[int]) -> None:
    out.append("[")
    for i, item in enumerate(value):
        if i:
            out.append(",")
        _write(item, out, open_ids)
    out.append("]")


def utf16_prefix(text: str, units: int) -> str:
    """The longest prefix of `text` that is at most `units` UTF-16 code units long.

    JavaScript's slice may cut a surrogate pair in half and keep a lone high surrogate; that
    half is dropped here instead, so the result always encodes as UTF-8.
    """
    if len(text) <= units and text.isascii():
        return text
    used = 0
    for i, ch in enumerate(text):
        used += 2 if ord(ch) > 0xFFFF else 1
        if used > units:
            return text[:i]
    return text
