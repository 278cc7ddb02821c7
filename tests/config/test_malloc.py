"""`config.malloc`: glibc's thresholds raised where the app is served, or left alone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import malloc

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(malloc.glibc() is None, reason="tunes glibc only")
def test_it_tunes_glibc_unless_turned_off(monkeypatch):
    assert malloc.tune() is True
    monkeypatch.setenv("AGENTDOCS_MALLOC_TUNING", "0")
    assert malloc.tune() is False


def test_a_bad_setting_is_refused(monkeypatch):
    monkeypatch.setenv("AGENTDOCS_MALLOC_TUNING", "sometimes")
    with pytest.raises(Exception, match="AGENTDOCS_MALLOC_TUNING"):
        malloc.tune()


@pytest.mark.parametrize("entry", ["config.wsgi", "config.asgi"])
def test_the_server_entry_points_tune_before_loading_the_app(entry):
    """Loading the WSGI or ASGI application tunes malloc first (a fresh interpreter, so
    that the module really runs), and the application still loads."""
    probe = (
        "import config.malloc as m\n"
        "calls = []\n"
        "real = m.tune\n"
        "m.tune = lambda: calls.append(1) or real()\n"
        f"import {entry} as entry\n"
        "assert calls == [1], calls\n"
        "assert callable(entry.application)\n"
        "print('ok')\n"
    )
    env = {**os.environ, "SECRET_KEY": "x" * 50, "DJANGO_SETTINGS_MODULE": "config.settings"}
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-2000:]
