"""The Fit playground page: the form, and when submitted, the Fit's answer explained."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from ..errors import SharedCtxError
from . import fitview
from .config import UiConfig
from .explain import FACTORS, score_note
from .fitform import CHOICES, FitForm
from .fmt import namespace_of
from .pages import client_of, http_status, render

__all__ = ["page"]


async def page(request: Request) -> Response:
    """The playground for a namespace; runs the Fit when the form was submitted."""
    ns = namespace_of(request.path_params["namespace"])
    config: UiConfig = request.app.state.config
    form, errors = FitForm.parse(request.query_params)
    view = None
    status = 200
    if "run" in request.query_params and not errors:
        try:
            result = await client_of(request).fit(
                ns,
                form.query,
                form.budget,
                include_content=True,
                explain=True,
                **form.options(),
            )
        except SharedCtxError as exc:
            # A bad option is the form's problem: show it beside the form, keep the inputs.
            code = exc.code_name()
            errors.append(f"{code}: {exc.message}")
            status = http_status(exc)
        else:
            view = fitview.build(result, form)
    return render(
        request,
        "fit.html",
        {
            "title": f"Fit · {ns}",
            "ns": ns,
            "form": form,
            "choices": CHOICES,
            "errors": errors,
            "view": view,
            "factors": FACTORS,
            "score_note": score_note(form.strategy),
            "cli": form.cli(ns, config.target),
            "python": form.python(ns, config.target),
        },
        status=status,
    )
