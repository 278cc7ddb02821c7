"""The app as `config.wsgi` serves it, with its lazy imports done: gunicorn loads this
with `--preload` in the master, so each worker it forks answers its first request
at once (the tests whose workers leave after one request fork one per request)."""

from django.urls import get_resolver

from config.wsgi import application

get_resolver().url_patterns  # noqa: B018  # imports every view, serializer and template tag

__all__ = ["application"]
