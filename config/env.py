"""Environment readers for settings: each one fails loudly on a value it cannot use.

A typo in production config (``DEBUG=flase``) must stop the process at start-up with a message
naming the variable, not run with a silently different meaning.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit


class ImproperlyConfiguredEnv(ValueError):
    """Raised for an environment variable whose value cannot be used."""


# Whether this process may run without SECRET_KEY: manage.py allows it for commands that serve no
# requests (score, migrate, import_collection, ...). Servers (gunicorn, runserver) and workers never.
_secret_key_optional = False


def allow_missing_secret_key() -> None:
    """Called by manage.py before the settings load, for a command that signs nothing."""
    global _secret_key_optional
    _secret_key_optional = True


def secret_key_optional() -> bool:
    return _secret_key_optional


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str | None = None, *, environ: Mapping[str, str] = os.environ) -> str:
    value = environ.get(name)
    if value is None:
        if default is None:
            raise ImproperlyConfiguredEnv(f"{name} is required but not set")
        return default
    return value


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] = os.environ) -> bool:
    raw = environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfiguredEnv(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, *, environ: Mapping[str, str] = os.environ, minimum: int = 0) -> int:
    raw = environ.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name}={raw!r} is not an integer") from None
    if value < minimum:
        raise ImproperlyConfiguredEnv(f"{name}={raw!r} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str], *, environ: Mapping[str, str] = os.environ) -> list[str]:
    raw = environ.get(name)
    if raw is None:
        return list(default)
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfiguredEnv(f"{name}={raw!r} has an empty item (use a comma-separated list)")
    return items


def parse_database_url(url: str, *, base_dir: Path, name: str = "DATABASE_URL") -> dict[str, Any]:
    """Turn ``postgres://user:pass@host:port/db`` or ``sqlite:///path`` into a Django DATABASES entry."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        # sqlite:///relative/path and sqlite:////absolute/path, as dj-database-url reads them.
        path = unquote(parts.path)[1:] if parts.path.startswith("/") else unquote(parts.path)
        if not path:
            raise ImproperlyConfiguredEnv(f"{name}={url!r} names no SQLite file")
        file = Path(path)
        if not file.is_absolute():
            file = base_dir / file
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(file),
            # WAL lets the web server read while the worker writes; IMMEDIATE takes the write lock at
            # BEGIN so two writers queue on the timeout instead of failing with "database is locked".
            "OPTIONS": {
                "timeout": 30,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    if scheme in {"postgres", "postgresql", "pgsql"}:
        db = unquote(parts.path.lstrip("/"))
        if not db:
            raise ImproperlyConfiguredEnv(f"{name}={url!r} names no database")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfiguredEnv(f"{name}={url!r} has a bad port") from None
        options = dict(parse_qsl(parts.query))
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": db,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(port or ""),
            "OPTIONS": options,
            "CONN_MAX_AGE": 60,
            "CONN_HEALTH_CHECKS": True,
        }
    raise ImproperlyConfiguredEnv(
        f"{name}={url!r}: scheme {scheme!r} is not supported (postgres:// or sqlite://)"
    )


def check_redis_url(url: str, *, name: str = "REDIS_URL") -> str:
    parts = urlsplit(url)
    if parts.scheme not in {"redis", "rediss"} or not parts.hostname:
        raise ImproperlyConfiguredEnv(f"{name}={url!r} is not a redis:// or rediss:// URL with a host")
    try:
        parts.port  # noqa: B018 - raises ValueError for a non-numeric port
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name}={url!r} has a bad port") from None
    return url
