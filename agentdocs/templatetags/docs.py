"""Where the documentation is, for the footer of every page (`{% load docs %}`): the
pages the app serves at /docs/, or the hosted site `AGENTDOCS_DOCS_URL` names."""

from __future__ import annotations

from django import template
from django.conf import settings
from django.urls import reverse

register = template.Library()


@register.simple_tag
def docs_url() -> str:
    return settings.AGENTDOCS_DOCS_URL or reverse("docs")
