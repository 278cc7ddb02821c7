"""The Explain page, beside Export: what a tool loads for a file, in its order
(`agentdocs.core.explain`, the same answer as `GET .../explain`)."""

from __future__ import annotations

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from agentdocs import permissions
from agentdocs.core.errors import InvalidInput
from agentdocs.core.explain import validate_path, validate_tool
from agentdocs.core.labels import validate_label_name
from agentdocs.core.targets import LOADING_TOOLS
from agentdocs.selectors import explain as explain_selectors
from agentdocs.web.pages import add_service_error, member_page


class ExplainForm(forms.Form):
    tool = forms.CharField(required=False, max_length=64)
    path = forms.CharField(required=False, max_length=1024)
    label = forms.CharField(required=False)


@member_page
def explain_page(request: HttpRequest, tenant: str, project: str) -> HttpResponse:
    """Readers may ask. Without `?path=` the form only; a bad tool or path is 400 with
    the refusal beside its field, as on the API."""
    access = permissions.project_access(request.user, tenant, project)
    form = ExplainForm(request.GET or {"tool": "codex"})
    answer = None
    status = 200
    if form.is_valid() and form.cleaned_data["path"]:
        try:
            tool = validate_tool(form.cleaned_data["tool"])
            path = validate_path(form.cleaned_data["path"])
            label = form.cleaned_data["label"]
            answer = explain_selectors.export_explain(
                project=access.project,
                tool=tool,
                path=path,
                label=validate_label_name(label) if label else None,
            ).as_dict()
        except InvalidInput as error:
            if error.field not in ("tool", "path", "label"):
                raise
            status = error.status
            add_service_error(form, error)
    return render(
        request,
        "agentdocs/explain.html",
        {
            "access": access,
            "project": access.project,
            "form": form,
            "tools": [(tool.slug, tool.target.tool) for tool in LOADING_TOOLS],
            "answer": answer,
        },
        status=status,
    )
