"""Logging helpers the settings' LOGGING names."""

from __future__ import annotations

import logging


def without_client_error_tracebacks(record: logging.LogRecord) -> bool:
    """Keep django.request's one line for a 4xx (a 403, a 404) but drop its traceback:
    an ordinary refusal is not a fault, and a console full of them hides the real ones."""
    status = getattr(record, "status_code", None)
    if isinstance(status, int) and 400 <= status < 500:
        record.exc_info = None
        record.exc_text = None
    return True
