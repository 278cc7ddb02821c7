"""Settings for the test suite: the production settings with fast, local parts.

DATABASE_URL and REDIS_URL are honoured, so CI runs the same suite against
PostgreSQL and Redis.
"""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("SECRET_KEY", "agentdocs-tests-only-not-a-secret")
os.environ.setdefault("DEBUG", "0")
os.environ.setdefault("SECURE_SSL_REDIRECT", "0")
os.environ.setdefault("SESSION_COOKIE_SECURE", "0")
os.environ.setdefault("CSRF_COOKIE_SECURE", "0")
# Webhook receivers in the tests listen on 127.0.0.1.
os.environ.setdefault("AGENTDOCS_WEBHOOK_ALLOW_PRIVATE", "1")

from config.env import env_bool
from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ALLOWED_HOSTS = ["*"]

# Binding-record archives written by tests that really commit (live server,
# transactional tests) land in a throwaway folder, never in the working tree.
if "MEDIA_ROOT" not in os.environ:
    MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="agentdocs-test-media-"))

# Without Redis the suite keeps a local-memory cache, as fast tests want (one process:
# the disk cache every process of a machine shares is tested on its own, with gunicorn,
# in tests/test_shared_cache.py); the render cache follows the cache's being shared.
if not REDIS_URL:  # noqa: F405
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    AGENTDOCS_RENDER_CACHE = env_bool("AGENTDOCS_RENDER_CACHE", False)
