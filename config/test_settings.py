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


def _worker_services() -> None:
    """Under pytest-xdist (`python3 dev.py test` runs the suite on several workers, each
    a process named gw0, gw1, ... in PYTEST_XDIST_WORKER) each worker gets Redis
    databases of its own, since the tests empty the cache between tests: worker n takes
    database base + 2n for the cache and base + 2n + 1 for the broker, where base is one
    past the databases REDIS_URL and CELERY_BROKER_URL name (AGENTDOCS_TEST_REDIS_DB
    sets it). A broker that is not Redis gets a queue per worker instead. The database
    is the worker's already: pytest-django names it test_<NAME>_gw<n>.

    In one process (`-p no:xdist`, `-n 0`) the databases are REDIS_URL's and
    CELERY_BROKER_URL's, unless AGENTDOCS_TEST_REDIS_DB is set: then the process takes
    worker 0's, base and base + 1.

    The environment itself is rewritten, so every process a test starts inherits its
    worker's. AGENTDOCS_TEST_WORKER_SERVICES names the process it was done for (gw<n>,
    or main for the one process): the processes a test starts, which load these
    settings again, keep what they inherit, and xdist's workers, which inherit the
    environment of the run's first process, still take their own."""
    from urllib.parse import urlsplit

    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    done_for = os.environ.get("AGENTDOCS_TEST_WORKER_SERVICES")
    if worker.startswith("gw"):
        if done_for == worker:
            return
        index = int(worker[2:])
    elif done_for or not os.environ.get("AGENTDOCS_TEST_REDIS_DB"):
        return
    else:
        worker, index = "main", 0
    os.environ["AGENTDOCS_TEST_WORKER_SERVICES"] = worker
    cache_url = os.environ.get("REDIS_URL", "")
    broker_url = os.environ.get("CELERY_BROKER_URL", "")
    redis_urls = {
        name: urlsplit(url)
        for name, url in (("REDIS_URL", cache_url), ("CELERY_BROKER_URL", broker_url))
        if url.startswith(("redis://", "rediss://"))
    }
    if worker != "main" and broker_url and "CELERY_BROKER_URL" not in redis_urls:
        queue = os.environ.get("CELERY_TASK_DEFAULT_QUEUE") or "celery"
        os.environ["CELERY_TASK_DEFAULT_QUEUE"] = f"{queue}-{worker}"
    if not redis_urls:
        return
    numbers = [int(url.path.strip("/") or 0) for url in redis_urls.values()]
    base = int(os.environ.get("AGENTDOCS_TEST_REDIS_DB") or max(numbers) + 1)
    for offset, name in enumerate(("REDIS_URL", "CELERY_BROKER_URL")):
        if name in redis_urls:
            number = base + 2 * index + offset
            os.environ[name] = redis_urls[name]._replace(path=f"/{number}").geturl()


_worker_services()

from config.env import env_bool  # noqa: E402
from config.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
ALLOWED_HOSTS = ["*"]

# Binding-record archives written by tests that really commit (live server,
# transactional tests) land in a throwaway folder, never in the working tree.
if "MEDIA_ROOT" not in os.environ:
    MEDIA_ROOT = Path(tempfile.mkdtemp(prefix="agentdocs-test-media-"))

# Without Redis the suite keeps a local-memory cache, as fast tests want (one process:
# the disk cache every process of a machine shares is tested on its own, with gunicorn,
# in tests/test_cache_shared.py); the render cache follows the cache's being shared.
if not REDIS_URL:  # noqa: F405
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    AGENTDOCS_RENDER_CACHE = env_bool("AGENTDOCS_RENDER_CACHE", False)

# On PostgreSQL a commit of the tests' own connections does not wait for its WAL to
# reach the disk (an fsync, 10 ms or more a commit on the development machine): a
# transactional test commits every write, and the template database's migrations
# commit each migration. What a commit makes visible to other connections is the same;
# only a crash of the server could lose the last of them, and the test database is
# thrown away anyway.
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    _options = DATABASES["default"].setdefault("OPTIONS", {})  # noqa: F405
    _options["options"] = f"{_options.get('options', '')} -c synchronous_commit=off".strip()
