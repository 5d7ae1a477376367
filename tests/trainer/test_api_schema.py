"""Schemathesis: generated requests against every operation of /api/schema/ get documented, valid answers.

Checks every response: no 5xx, the status code and content type are documented, and the body matches
the documented schema. Requests carry a trainer token of the "tiny" collection and path parameters of
real objects, so bodies and queries are exercised against existing data (404s are the authz tests' job).
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import ignored_auth

from corpus.models import Role
from judges.models import Judge, Judging
from judges.services import judge_create
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import api_token_create


@pytest.fixture
def api_schema(db):
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from trainer.wsgi import application

    # As Django's test client does: the real WSGI handler would close the test's database connection
    # (and with it the test transaction) at the end of each request.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield schemathesis.from_wsgi("/api/schema/?format=json", application)
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


schema = schemathesis.from_pytest_fixture("api_schema")


@schema.parametrize()
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_api_conforms_to_its_schema(case, api_data, trainer, collection):
    _, key = api_token_create(collection=collection, user=trainer, role=Role.TRAINER)
    # Hypothesis calls this test many times in one database transaction: make the judge once.
    judge = Judge.objects.filter(collection=collection).first() or judge_create(
        collection=collection, name="Builtin", kind="builtin"
    )
    judging = Judging.objects.filter(judge=judge).first() or Judging.objects.create(
        judge=judge, selection="queue", pairs=[]
    )
    real = {
        "judge_id": judge.pk,
        "judging_id": judging.pk,
        "slug": "tiny",
        "ranker_id": api_data.ranker.pk,
        "run_id": api_data.run.pk,
        "version_id": api_data.version.pk,
        "training_id": api_data.training.pk,
    }
    if case.path_parameters:
        case.path_parameters = {name: real.get(name, value) for name, value in case.path_parameters.items()}

    response = case.call_wsgi(headers={"Authorization": f"Token {key}"})

    # ignored_auth would take our token for one it generated; test_api_authz checks every endpoint's 401.
    case.validate_response(response, excluded_checks=(ignored_auth,))


def test_api_schema_documents_the_unreadable_request_400_on_every_operation(db):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)

    missing = [
        f"{method.upper()} {path}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if "400" not in operation["responses"]
    ]
    assert missing == []
