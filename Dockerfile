# The agentdocs image for docker-compose.yml: web (gunicorn), worker and beat (Celery).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONPATH=/app \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# manage.py, templates/ and the packages stay in /app too (PYTHONPATH), so gunicorn,
# Celery and manage.py all load the same config/settings.py with BASE_DIR=/app.
# What is copied is decided by .dockerignore (no .venv, tests, databases or secrets).
COPY . /app
RUN pip install /app

RUN useradd --system --create-home --uid 10001 agentdocs \
    && mkdir -p /app/staticfiles /app/media \
    && chown agentdocs:agentdocs /app/staticfiles /app/media
USER agentdocs

EXPOSE 8000
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
