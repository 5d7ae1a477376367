from pathlib import Path

import pytest

from config.env import (
    ImproperlyConfiguredEnv,
    check_redis_url,
    env_bool,
    env_int,
    env_list,
    env_str,
    parse_database_url,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("1", True),
        ("true", True),
        ("Yes", True),
        ("on", True),
        ("0", False),
        ("false", False),
        ("no", False),
        ("", False),
    ],
)
def test_env_bool_accepts_common_spellings(raw, expected):
    assert env_bool("DEBUG", not expected, environ={"DEBUG": raw}) is expected


def test_env_bool_rejects_typo_naming_the_variable():
    with pytest.raises(ImproperlyConfiguredEnv, match=r"DEBUG='flase' is not a boolean"):
        env_bool("DEBUG", False, environ={"DEBUG": "flase"})


def test_env_bool_default_when_unset():
    assert env_bool("DEBUG", True, environ={}) is True


def test_env_str_required_when_no_default():
    with pytest.raises(ImproperlyConfiguredEnv, match="SECRET_KEY is required"):
        env_str("SECRET_KEY", None, environ={})


def test_env_int_rejects_non_integer_and_below_minimum():
    with pytest.raises(ImproperlyConfiguredEnv, match="not an integer"):
        env_int("N", 1, environ={"N": "ten"})
    with pytest.raises(ImproperlyConfiguredEnv, match="at least 1"):
        env_int("N", 1, environ={"N": "0"}, minimum=1)
    assert env_int("N", 1, environ={"N": "16"}) == 16


def test_env_list_splits_and_rejects_empty_items():
    assert env_list("ALLOWED_HOSTS", [], environ={"ALLOWED_HOSTS": "a.com, b.com"}) == ["a.com", "b.com"]
    with pytest.raises(ImproperlyConfiguredEnv, match="empty item"):
        env_list("ALLOWED_HOSTS", [], environ={"ALLOWED_HOSTS": "a.com,,b.com"})


def test_parse_database_url_postgres():
    db = parse_database_url("postgres://u%40x:p%3Aw@db.example:6543/rank", base_dir=Path("/app"))
    assert db["ENGINE"] == "django.db.backends.postgresql"
    assert (db["NAME"], db["USER"], db["PASSWORD"], db["HOST"], db["PORT"]) == (
        "rank",
        "u@x",
        "p:w",
        "db.example",
        "6543",
    )


def test_parse_database_url_sqlite_relative_and_absolute():
    assert (
        parse_database_url("sqlite:///var/x.sqlite3", base_dir=Path("/app"))["NAME"] == "/app/var/x.sqlite3"
    )
    assert parse_database_url("sqlite:////tmp/x.sqlite3", base_dir=Path("/app"))["NAME"] == "/tmp/x.sqlite3"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("mysql://u@h/db", "scheme 'mysql' is not supported"),
        ("postgres://u@h:notaport/db", "bad port"),
        ("postgres://u@h:5432/", "names no database"),
        ("sqlite://", "names no SQLite file"),
    ],
)
def test_parse_database_url_rejects_bad_values(url, message):
    with pytest.raises(ImproperlyConfiguredEnv, match=message):
        parse_database_url(url, base_dir=Path("/app"))


def test_check_redis_url_accepts_redis_and_rejects_others():
    assert check_redis_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    with pytest.raises(ImproperlyConfiguredEnv, match="REDIS_URL='http://x' is not a redis://"):
        check_redis_url("http://x")
    with pytest.raises(ImproperlyConfiguredEnv, match="bad port"):
        check_redis_url("redis://h:abc/0")
