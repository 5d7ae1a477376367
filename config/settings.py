"""Rank Trainer settings: one module, configured by the environment (see .env.example).

With no environment at all the app runs embedded: SQLite under var/ and a filesystem Celery broker
that needs no server, served by a real worker process. DATABASE_URL and REDIS_URL switch the same
code to PostgreSQL and Redis.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from config.env import (
    check_redis_url,
    env_bool,
    env_int,
    env_list,
    env_str,
    parse_database_url,
    secret_key_optional,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("RANK_TRAINER_VAR_DIR", str(BASE_DIR / "var")))

DEBUG = env_bool("DEBUG", False)
_INSECURE_DEV_KEY = "django-insecure-rank-trainer-development-key-do-not-use-in-production"
# Django signs sessions, messages and password-reset links with it: whatever serves requests or runs
# tasks stops at start without one. manage.py lets a command that serves nothing (score, migrate,
# import_collection, ...) run without it; Django then refuses to sign anything, and manage.py says
# in one line that the command needs SECRET_KEY.
SECRET_KEY = env_str("SECRET_KEY", _INSECURE_DEV_KEY if DEBUG else ("" if secret_key_optional() else None))
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Refused form posts explain themselves (JSON for htmx requests) instead of Django's generic page.
CSRF_FAILURE_VIEW = "raters.views.access.csrf_failure"

INSTALLED_APPS = [
    "config.apps.RankTrainerAdminConfig",  # django.contrib.admin, with links back to the app
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "template_partials",
    "axes",
    # Bottom layer first; each app imports only the apps above it in this list (see CONTRIBUTING.md, "Where things are").
    "corpus",
    "ubi",
    "rankers",
    "ratings",
    "evaluation",
    "raters",
    "judges",
    "trainer",
    # The project shell (config/): imports every app above; registers the system checks.
    "config",
]

MIDDLEWARE = [
    # First, so a request refused for having queued too long costs nothing more (config/admission.py).
    "config.admission.AdmissionMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # With DEBUG=0, a Content-Security-Policy on every response (config/csp.py).
    "config.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Counts failed logins and refuses a locked-out account or address (see AXES_* below).
    "axes.middleware.AxesMiddleware",
    # Last, so they see the resolver's 404 and view exceptions (see config/middleware.py).
    "config.middleware.ErrorPagesMiddleware",
    "config.middleware.ApiErrorsMiddleware",
]
# A request that waited longer than this for a gunicorn thread is refused with 503 + Retry-After instead of
# queueing on (config/admission.py, gunicorn.conf.py); 0 admits every request.
WEB_MAX_QUEUE_MS = env_int("WEB_MAX_QUEUE_MS", 500)
# With DEBUG=1 a 404 still shows the styled page (what users of `make run` should see); set this to
# get Django's technical 404 page, which lists every URL pattern.
DEBUG_TECHNICAL_404 = env_bool("DEBUG_TECHNICAL_404", False)

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # Whether the nav shows the API and Tokens links (only to those who can use them).
                "trainer.context_processors.navigation",
            ],
        },
    },
]

DATABASES = {
    "default": parse_database_url(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'rank-trainer.sqlite3'}"), base_dir=BASE_DIR
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
# Brute force: after AXES_FAILURE_LIMIT wrong passwords for one username, or from one address, logins from
# it are refused for AXES_COOLOFF_MINUTES (also with the right password). Success resets the count.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# Wrong API tokens from one address in a minute before it gets 429 (api.authentication).
API_INVALID_TOKENS_PER_MINUTE = env_int("API_INVALID_TOKENS_PER_MINUTE", 20, minimum=1)
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
MEDIA_ROOT = VAR_DIR / "media"
# Ranker indexes and trained models live here; persisted across restarts.
MODEL_DIR = Path(env_str("MODEL_DIR", str(VAR_DIR / "models")))
# Answer embeddings (rankers.semantic): reused by text hash across states and collections.
EMBEDDINGS_DIR = Path(env_str("EMBEDDINGS_DIR", str(MODEL_DIR / "embeddings")))

# --- Redis: Celery broker, result backend and cache -------------------------------------------
REDIS_URL = env_str("REDIS_URL", "")
CELERY_RESULT_BACKEND: str | None
if REDIS_URL:
    check_redis_url(REDIS_URL)
    CELERY_BROKER_URL = REDIS_URL
    CELERY_RESULT_BACKEND = REDIS_URL
    # Tolerant: with Redis down, reads miss and writes do nothing (trainer/cache.py); short timeouts
    # keep a hung Redis from holding pages.
    CACHES = {
        "default": {
            "BACKEND": "trainer.cache.TolerantRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    }
else:
    # Embedded: a broker on the filesystem, shared by the web process and the worker process.
    _BROKER_DIR = VAR_DIR / "broker"
    # A hostname kombu ignores for this transport, but warns about ("No hostname was supplied") without.
    CELERY_BROKER_URL = "filesystem://localhost/"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_BROKER_DIR / "queue"),
        "data_folder_out": str(_BROKER_DIR / "queue"),
        "processed_folder": str(_BROKER_DIR / "processed"),
        # Exchange tables; kombu's default is ./control, which would litter the checkout.
        "control_folder": str(_BROKER_DIR / "control"),
        "store_processed": False,
    }
    CELERY_RESULT_BACKEND = None
    # The filesystem transport needs its folders before the first message is sent or read.
    for _folder in ("queue", "processed"):
        (_BROKER_DIR / _folder).mkdir(parents=True, exist_ok=True)
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(VAR_DIR / "cache"),
        }
    }

CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = env_str("CELERY_QUEUE", "rank-trainer")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Publishing must fail fast when the broker is down so the user gets a clear error, not a hung request.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    **globals().get("CELERY_BROKER_TRANSPORT_OPTIONS", {}),
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
CELERY_BEAT_SCHEDULE: dict[str, dict] = {}
# How many ranker requests one evaluation worker keeps in flight (HTTP rankers are I/O-bound).
EVALUATION_CONCURRENCY = env_int("EVALUATION_CONCURRENCY", 16, minimum=1)
# Outbound policy (rankers/outbound.py): may the server call ranker URLs on loopback and private networks?
# Off by default; `make run` and the tests turn it on. Link-local and metadata addresses are always refused.
OUTBOUND_ALLOW_PRIVATE = env_bool("OUTBOUND_ALLOW_PRIVATE", False)
# Test questions per Celery task when an evaluation fans out over the workers.
EVALUATION_CHUNK_SIZE = env_int("EVALUATION_CHUNK_SIZE", 250, minimum=1)
# No retry setting here: an http ranker retries transient errors itself (its config's ``retries``), the
# one retry layer, so the attempts made are the attempts its error message counts.
# A chunk whose worker has not beaten for this long is taken over by another worker (a worker beats every
# quarter of it while it holds a chunk; every worker looks for such chunks every half of it).
EVALUATION_STALE_SECONDS = env_int("EVALUATION_STALE_SECONDS", 30, minimum=1)
# Optional crontab ("minute hour day-of-month month day-of-week", e.g. "0 3 * * *") on which beat
# evaluates each collection's default ranker; the sweep resumes evaluations whose worker died.
EVALUATION_SCHEDULE = env_str("EVALUATION_SCHEDULE", "")
CELERY_BEAT_SCHEDULE["evaluation-sweep"] = {"task": "evaluation.sweep", "schedule": 60.0}
# A running training whose worker has not reported for this long is restarted (up to 3 attempts in all)
# by beat's sweep, which also starts automatic trainings (each ranker's own setting, off by default).
TRAINING_STALE_SECONDS = env_int("TRAINING_STALE_SECONDS", 30, minimum=1)
CELERY_BEAT_SCHEDULE["training-sweep"] = {"task": "trainer.training_sweep", "schedule": 60.0}
# Embedding builds whose parts went silent for EVALUATION_STALE_SECONDS get those parts queued again.
CELERY_BEAT_SCHEDULE["embeddings-sweep"] = {"task": "rankers.embeddings_sweep", "schedule": 60.0}
# Judging runs whose worker went silent this long are resumed (they skip what was already judged).
JUDGING_STALE_SECONDS = env_int("JUDGING_STALE_SECONDS", 120, minimum=1)
CELERY_BEAT_SCHEDULE["judging-sweep"] = {"task": "judges.sweep", "schedule": 60.0}
# The rating queue's candidate table is refreshed by a job (raters.next_task.refresh): one whose worker has
# not beaten for this long is taken over by beat's sweep. No request builds a table, whatever the size.
CANDIDATES_STALE_SECONDS = env_int("CANDIDATES_STALE_SECONDS", 60, minimum=1)
CELERY_BEAT_SCHEDULE["candidates-sweep"] = {"task": "raters.candidates_sweep", "schedule": 60.0}

# --- Production log (UBI: ubi/, docs/ubi.md) ------------------------------------------------------
# user_id in queries and events is dropped before anything is written unless this is on.
UBI_STORE_USER_ID = env_bool("UBI_STORE_USER_ID", False)
# Queries and events older than this many days are deleted by beat's hourly job (0: kept forever).
UBI_RETENTION_DAYS = env_int("UBI_RETENTION_DAYS", 90)
CELERY_BEAT_SCHEDULE["ubi-expire"] = {"task": "ubi.expire", "schedule": 3600.0}
# ranker_server's durable buffer of accepted queries and events (ubi/spool.py), and whether each append
# is fsynced before the answer (a power cut then loses nothing; costs an fsync, 2-8 ms here, per request).
UBI_SPOOL_DIR = Path(env_str("UBI_SPOOL_DIR", str(VAR_DIR / "ubi-spool")))
UBI_SPOOL_FSYNC = env_bool("UBI_SPOOL_FSYNC", False)
# How often ranker_server looks for an online test started or stopped (rankers.serving.online).
ONLINE_TEST_POLL_MS = env_int("ONLINE_TEST_POLL_MS", 5000, minimum=50)
# An online test's look carries running totals on (evaluation.selectors.online): the queries served in
# the last this-many seconds are read again at each look, their clicks may still come; a click on an older
# one makes the next look read the whole test again, once.
ONLINE_TEST_SETTLE_SECONDS = env_int("ONLINE_TEST_SETTLE_SECONDS", 600, minimum=0)
# Each running online test's stop rule and online promotion policy (trainer.services.online_test_settle).
CELERY_BEAT_SCHEDULE["online-tests-settle"] = {"task": "trainer.online_tests_settle", "schedule": 60.0}
if EVALUATION_SCHEDULE:
    from celery.schedules import crontab

    CELERY_BEAT_SCHEDULE["evaluation-scheduled"] = {
        "task": "evaluation.scheduled",
        "schedule": crontab.from_string(EVALUATION_SCHEDULE),
    }

# --- REST API ---------------------------------------------------------------------------------
# API tokens expire this many days after creation unless created with another lifetime (0: never).
API_TOKEN_DAYS = env_int("API_TOKEN_DAYS", 90)
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: a request without credentials then gets 401 + WWW-Authenticate, not 403.
        "api.authentication.ApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "api.exceptions.exception_handler",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_THROTTLE_CLASSES": [
        "api.throttling.AnonRateThrottle",
        "api.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env_str("API_THROTTLE_ANON", "60/minute"),
        "user": env_str("API_THROTTLE_USER", "6000/minute"),
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Rank Trainer API",
    "DESCRIPTION": "Collections, questions, answers, ratings, ground truth, rankers and evaluations.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api.schema.add_unreadable_request_responses",
        "api.schema.one_or_list_request_bodies",
        "api.schema.operation_links",
    ],
    # Runs and trainings both have a "status"; each keeps its own enum in the schema.
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "evaluation.models.RunStatus",
        "TrainingStatusEnum": "trainer.models.TrainingStatus",
        "JudgeKindEnum": "judges.models.JudgeKind",
        "JudgingStatusEnum": "judges.models.JudgingStatus",
        "RunVerdictEnum": "evaluation.models.Verdict",
        # One name for the click models wherever a field takes one (model, method): dbn, coec, pbm.
        "ClickModelEnum": "evaluation.selectors.clicks.METHODS",
    },
    # Swagger UI and ReDoc come from drf-spectacular-sidecar's static files, not a CDN: the docs work
    # offline and behind a firewall.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No deep links: with them each operation's path is a link inside its toggle button (a link in a
    # button, which screen readers cannot reach; axe: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    # System fonts: ReDoc's default typography would load web fonts from Google (templates/api/redoc.html).
    "REDOC_UI_SETTINGS": {
        "theme": {
            "typography": {
                "fontFamily": "system-ui, sans-serif",
                "headings": {"fontFamily": "system-ui, sans-serif"},
            }
        }
    },
}

# --- Security (manage.py check --deploy is clean with DEBUG=0) --------------------------------
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# The container's healthcheck (bin/healthcheck) asks over plain HTTP from inside the container.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request's URL at INFO, and a search engine's URL carries the question's text
    # (Solr's ?q=): raters' questions don't belong in the server log. Errors still come through.
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}
