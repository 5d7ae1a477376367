"""The settings module as a process sees it: environment in, configuration (or a loud failure) out."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRINT = (
    "import django, json; from django.conf import settings; django.setup(); "
    "print(json.dumps({'engine': settings.DATABASES['default']['ENGINE'], 'name': str(settings.DATABASES['default']['NAME']), "
    "'broker': settings.CELERY_BROKER_URL, 'debug': settings.DEBUG, 'cache': settings.CACHES['default']['BACKEND']}))"
)


def run(env: dict[str, str], code: str = PRINT, args: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k
        not in {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "CSRF_TRUSTED_ORIGINS"}
        # Browser tests set this for Playwright's event loop; a deployment never does.
        and k != "DJANGO_ALLOW_ASYNC_UNSAFE"
    }
    clean["DJANGO_SETTINGS_MODULE"] = "config.settings"
    command = [sys.executable, *args] if args else [sys.executable, "-c", code]
    return subprocess.run(command, cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=60)


def test_settings_embedded_defaults_use_sqlite_and_filesystem_broker(tmp_path):
    result = run({"DEBUG": "1", "RANK_TRAINER_VAR_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert '"engine": "django.db.backends.sqlite3"' in result.stdout
    assert f'"name": "{tmp_path}/rank-trainer.sqlite3"' in result.stdout
    assert '"broker": "filesystem://localhost/"' in result.stdout
    assert "FileBasedCache" in result.stdout


def test_settings_use_postgres_and_redis_when_urls_set():
    result = run(
        {
            "DEBUG": "1",
            "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/test",
            "REDIS_URL": "redis://127.0.0.1:6379/2",
        }
    )
    assert result.returncode == 0, result.stderr
    assert '"engine": "django.db.backends.postgresql"' in result.stdout
    assert '"broker": "redis://127.0.0.1:6379/2"' in result.stdout
    assert "RedisCache" in result.stdout


def test_settings_without_debug_require_secret_key():
    result = run({"DEBUG": "0"})
    assert result.returncode != 0
    assert "SECRET_KEY is required but not set" in result.stderr


def test_settings_bad_redis_url_fails_loudly():
    result = run({"DEBUG": "1", "REDIS_URL": "localhost:6379"})
    assert result.returncode != 0
    assert "REDIS_URL='localhost:6379' is not a redis:// or rediss:// URL" in result.stderr


def test_check_deploy_reports_nothing_with_debug_off(tmp_path):
    env = {
        "DEBUG": "0",
        "SECRET_KEY": "k" * 30 + "-long-random-production-secret-value-123",
        "ALLOWED_HOSTS": "rank.example.com",
        "RANK_TRAINER_VAR_DIR": str(tmp_path),
    }
    result = run(env, args=("manage.py", "check", "--deploy", "--fail-level", "WARNING"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
