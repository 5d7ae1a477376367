# The image docker-compose.yml runs as web, worker and beat: the app under gunicorn or Celery.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
# libgomp1: LightGBM's OpenMP runtime.
RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Dependencies first, so a code change doesn't reinstall them.
COPY pyproject.toml README.md ./
COPY trainer ./trainer
COPY ratings ./ratings
COPY evaluation ./evaluation
RUN pip install --no-cache-dir .
COPY . .
RUN DEBUG=0 SECRET_KEY=build-only ALLOWED_HOSTS=localhost python manage.py collectstatic --noinput
RUN useradd --create-home app && mkdir -p /app/var && chown -R app /app/var
USER app
EXPOSE 8000
