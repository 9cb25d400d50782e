"""The Fit playground's inputs: read from the page's query string, turned into Client.fit's
arguments, and written back as the same Fit from the command line and from Python."""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..types import FIT_CHOICES

__all__ = ["CHOICES", "FitForm"]

# Each select's values; the first is the server's default (left out of requests). The preset
# is a name the server defines, not one of the request's enums, so it is listed here.
CHOICES = {
    "strategy": FIT_CHOICES["strategy"],
    "form": FIT_CHOICES["form"],
    "preset": ("default", "headroom"),
    "adaptive": FIT_CHOICES["adaptive"],
    "fill": FIT_CHOICES["fill"],
}
MAX_QUERY = 20_000
# The request's integer fields: budget_tokens is an int64, keep_recent and max_entries int32.
_INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1


@dataclass(frozen=True)
class FitForm:
    """What the playground asks a Fit for; defaults are the server's."""

    query: str = ""
    budget: int = 2000
    strategy: str = "scored"
    form: str = "compressed"
    preset: str = "default"
    adaptive: str = "none"
    fill: str = "skip"
    keep_recent: int | None = None  # None: the server's default (2)
    max_entries: int | None = None
    min_score: float | None = None
    excerpts: bool = True
    neighbours: bool = True

    @classmethod
    def parse(cls, params: Mapping[str, str]) -> tuple[FitForm, list[str]]:
        """The form from a query string, and what was wrong with it (bad fields keep their
        defaults)."""
        values: dict[str, Any] = {}
        errors: list[str] = []
        text = params.get("q", "")
        if len(text) > MAX_QUERY:
            errors.append(f"the query is limited to {MAX_QUERY:,} characters here")
            text = text[:MAX_QUERY]
        values["query"] = text
        for name, choices in CHOICES.items():
            choice = params.get(name, "") or choices[0]
            if choice in choices:
                values[name] = choice
            else:
                errors.append(f"{name}: choose one of {', '.join(choices)}")
        for name, kind, low, high in (
            ("budget", int, 1, _INT64_MAX),
            ("keep_recent", int, 0, _INT32_MAX),
            ("max_entries", int, 1, _INT32_MAX),
            ("min_score", float, 0, float("inf")),
        ):
            raw = params.get(name, "").strip()
            if not raw:
                continue
            label = name.replace("_", " ")
            try:
                number: float = kind(raw)
            except ValueError:
                number = math.nan
            if number > high:  # past what the request's field holds
                errors.append(f"{label}: at most {high:,}, not {raw!r}")
                continue
            if not low <= number:  # also refuses NaN
                what = "a number" if kind is float else "a whole number"
                errors.append(f"{label}: {what} of at least {low}, not {raw!r}")
                continue
            values[name] = number
        for box in ("excerpts", "neighbours"):
            if "boxes" in params:  # the form's checkboxes were submitted: unticked is absent
                values[box] = box in params
            elif box in params:  # a link written by hand: absent keeps the default
                values[box] = params[box].strip().lower() not in ("off", "0", "false", "no")
        return cls(**values), errors

    def options(self) -> dict[str, Any]:
        """Client.fit's keyword arguments for what differs from the defaults."""
        out: dict[str, Any] = {}
        for name, values in CHOICES.items():
            value = getattr(self, name)
            if value != values[0]:
                out[name] = value
        for name in ("keep_recent", "max_entries", "min_score"):
            if getattr(self, name) is not None:
                out[name] = getattr(self, name)
        if not self.excerpts:
            out["excerpts"] = False
        if not self.neighbours:
            out["expand_neighbours"] = False
        return out

    def cli(self, namespace: str, target: str) -> str:
        """The same Fit as a `sharedctx fit` command line."""
        opts = self.options()
        argv = ["sharedctx", "fit", "--target", target, "-n", namespace, self.query]
        argv += ["--budget", str(self.budget)]
        for name, value in opts.items():
            if name == "excerpts":
                argv.append("--no-excerpts")
            elif name == "expand_neighbours":
                argv.append("--no-neighbours")
            else:
                argv += [f"--{name.replace('_', '-')}", str(value)]
        argv += ["--explain", "--content"]
        return " ".join(shlex.quote(a) for a in argv)

    def python(self, namespace: str, target: str) -> str:
        """The same Fit as a Python snippet."""
        args = [repr(namespace), repr(self.query), str(self.budget)]
        args += [f"{k}={v!r}" for k, v in self.options().items()]
        args += ["include_content=True", "explain=True"]
        body = "".join(f"        {a},\n" for a in args)
        return (
            "from sharedctx import Client\n\n"
            f"with Client({target!r}) as client:  # token=... when the server wants one\n"
            f"    result = client.fit(\n{body}    )\n"
            "    for c in result.explain:\n"
            "        print(c.key, round(c.score, 3), c.reason)\n"
        )
