# Rank Trainer: `make run` starts the app, `make test` runs the whole suite. Both set themselves up.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

# Tests run against real PostgreSQL and Redis: TEST_DATABASE_URL / TEST_REDIS_URL when set, else the
# servers answering on the defaults, else throwaway ones bin/test_services starts (see its docstring).

.PHONY: run test test-fast install lint bench clean browser-deps engines

# The real OpenSearch and Solr nodes of the engine tests (tests/rankers/real_engines.py): launchers in
# engines/, built with Maven from Maven Central's artifacts once, then offline; classpaths under
# engines/*/target (the jars stay in ~/.m2). Rebuilt when a pom or launcher changes. Maven's own JVM runs
# with C1 only and the serial GC (engines/.mvn/jvm.config): a fresh build took 4 CPU-s instead of 8-9.
ENGINES_STAMP := engines/target/.built
$(ENGINES_STAMP): engines/pom.xml $(wildcard engines/*/pom.xml engines/*/src/main/java/*/*/*.java)
	@command -v java >/dev/null && command -v mvn >/dev/null \
	  || { echo "error: the engine tests need Java 17 and Maven: run 'sudo apt-get install openjdk-17-jdk-headless maven'" >&2; exit 1; }
	cd engines && { mvn -q -B -o compile >/dev/null 2>&1 || mvn -q -B compile; }
	@mkdir -p engines/target && touch $@

engines: $(ENGINES_STAMP)

# The venv's packages are installed by uv (from PyPI, the version pinned here), which downloads and unpacks in
# parallel: a fresh clone's install took 35-43 s with pip, 17 s with uv (under load). Bytecode is not compiled
# ahead: what the tests import is compiled as they first import it (see PYTEST_RUN), 5 s of CPU, not all of
# site-packages. The venv has no pip (ensurepip is 4 s of a fresh clone's 9): uv goes to $(VENV)/uv with
# $(PYTHON)'s own pip, or, where $(PYTHON) has none, with a pip the venv gets first.
UV_VERSION := 0.13.9
UV := $(VENV)/uv/bin/uv
UV_BOOTSTRAP = -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target $(VENV)/uv uv==$(UV_VERSION)
$(STAMP): pyproject.toml
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11" >&2; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv --without-pip $(VENV)
	@$(UV) --version 2>/dev/null | grep -qF ' $(UV_VERSION)' || { rm -rf $(VENV)/uv; \
	  $(PYTHON) $(UV_BOOTSTRAP) 2>/dev/null || { $(BIN)/python -m ensurepip -q && $(BIN)/python $(UV_BOOTSTRAP); }; }
	$(UV) pip install --python $(BIN)/python --quiet $(if $(PIP_FIND_LINKS),--find-links $(PIP_FIND_LINKS)) -e '.[test,bench]'
	@touch $(STAMP)

install: $(STAMP)

run: install
	@mkdir -p var
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py migrate --noinput -v0
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py bootstrap_demo --no-logins
	@echo "Starting web server and Celery worker (Ctrl-C stops both)..."
	@# bin/run supervises both and prints the URL and logins once both are up, as the last lines; Ctrl-C
	@# stops them within seconds, with one line (see its docstring).
	@# Rankers on this machine (manage.py ranker_server on 127.0.0.1) are allowed: OUTBOUND_ALLOW_PRIVATE.
	@DEBUG=$${DEBUG:-1} OUTBOUND_ALLOW_PRIVATE=$${OUTBOUND_ALLOW_PRIVATE:-1} exec $(BIN)/python bin/run $(HOST):$(PORT)

# Debian packages the tests drive: chromium-headless-shell (browser tests: chromium without the browser's UI,
# see CHROMIUM in tests/conftest.py) and docker-compose (the compose file is validated; no Docker engine is
# needed). Installed with apt-get when run as root, else named.
browser-deps:
	@missing=""; test -x /usr/bin/chromium-headless-shell || missing=" chromium-headless-shell"; \
	  command -v docker-compose >/dev/null || docker compose version >/dev/null 2>&1 || missing="$$missing docker-compose"; \
	  if [ -n "$$missing" ]; then \
	    if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	      echo "Installing Debian's$$missing for the tests..."; \
	      (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null) \
	        || { echo "error: could not install$$missing with apt-get" >&2; exit 1; }; \
	    else \
	      echo "error: the tests need$$missing: run 'sudo apt-get install$$missing'" >&2; exit 1; \
	    fi; \
	  fi

# The suite runs in TEST_WORKERS pytest-xdist worker processes, one test file at a time each (the slow
# files first), each worker with its own test database, Redis database and temporary directories
# (tests/isolation.py, tests/conftest.py). TEST_WORKERS=0 runs everything in one process.
# Three on two cores: a third of the suite's time is waiting (for a browser, a worker process, a server),
# which the third worker fills (2 workers: 6 min 36 s, 3: 5 min 42 s, the same machine and commit).
# Bytecode is cached (PYTHONDONTWRITEBYTECODE emptied): every worker and every process a test starts would
# otherwise compile the project again, and pytest rewrite every test module's asserts (collection: 9 s, 5 s).
# On a fresh clone one worker compiles while the others wait for it (tests/first_run.py).
TEST_WORKERS ?= 3
PYTEST_RUN = DEBUG=1 SECRET_KEY=test-only-secret OUTBOUND_ALLOW_PRIVATE=1 PYTHONDONTWRITEBYTECODE= \
  $(BIN)/python bin/test_services -- $(BIN)/pytest -n $(TEST_WORKERS) --dist loadfile

test: install browser-deps engines
	$(PYTEST_RUN) $(PYTEST_ARGS)

# The quick check while working (under a minute): pure functions, metrics, architecture, services and
# selectors; no browser, Celery worker, real engine or other process, none of the few slow in-process files,
# no HTML view or API test (the `browser`, `worker`, `subprocess`, `slow` and `views` marks; see
# tests/conftest.py). `make test` runs everything.
test-fast: install
	$(PYTEST_RUN) -m "not browser and not worker and not subprocess and not slow and not views" $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	DEBUG=1 $(BIN)/mypy jobs corpus ubi rankers ratings evaluation raters judges trainer api config

bench: install
	DEBUG=1 $(BIN)/python bench/bench_metrics.py

clean:
	rm -rf $(VENV) var engines/target engines/*/target
