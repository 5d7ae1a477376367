"""Schemathesis: generated requests against every operation of /api/schema/ get documented, valid answers.

All of schemathesis's checks on every response: no 5xx, the status code, content type and headers are
documented, the body matches the documented schema, invalid data is refused, and an operation that
needs credentials refuses the same request without them or with made-up ones (``ignored_auth``).
Requests carry a trainer token of the "tiny" collection and path parameters of real objects, so bodies
and queries are exercised against existing data (404s are the authz tests' job). A stateful run follows
the schema's OpenAPI links (a created ranker to its evaluations, versions and training).
And the schema itself is precise: one-or-list bodies are ``oneOf``, enums are enums, every field typed.
"""

from __future__ import annotations

from collections import Counter

import pytest
import schemathesis
from django.core.cache import cache
from django.db import transaction
from hypothesis import HealthCheck, settings

from corpus.models import Role
from judges.models import Judge, Judging
from judges.services import judge_create
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import api_token_create


@pytest.fixture
def api_schema(db):
    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from config.wsgi import application

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
    # 10 cases an operation: 15 took a third longer (24 s of the suite's slowest test) and found nothing more
    # in this session's runs; the stateful test below adds the linked sequences.
    max_examples=10,
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

    # The throttles (anonymous, invalid tokens) count in the cache: ignored_auth's requests without our
    # token would reach them over the examples; each example starts afresh.
    cache.clear()
    headers = {"Authorization": f"Token {key}"}
    # We authenticate with the token: no generated session cookie (ignored_auth would take it for the
    # credentials in use, and the generated ones are never valid). Empty, not None: the check fills them.
    case.cookies, case.headers = {}, case.headers or {}
    response = case.call_wsgi(headers=headers)

    # All checks. Given our headers, ignored_auth knows the token is ours (explicit), and checks that the
    # same request without it, and with a made-up one, answers 401.
    case.validate_response(response, headers=headers)


@pytest.fixture(scope="module")
def openapi() -> dict:
    """The schema as /api/schema/ serves it, generated once for the tests that read it (none changes it)."""
    from drf_spectacular.generators import SchemaGenerator

    return SchemaGenerator().get_schema(request=None, public=True)


def test_api_schema_documents_the_unreadable_request_400_on_every_operation(openapi):
    missing = [
        f"{method.upper()} {path}"
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if "400" not in operation["responses"]
    ]
    assert missing == []


def test_api_schema_one_or_list_bodies_are_one_of(openapi):
    bodies = {
        path: openapi["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
        for path in (
            "/api/collections/{slug}/questions/",
            "/api/collections/{slug}/answers/",
            "/api/collections/{slug}/ratings/",
        )
    }
    for path, name in zip(bodies, ("Question", "Answer", "Rating"), strict=True):
        ref = {"$ref": f"#/components/schemas/{name}"}
        assert bodies[path]["oneOf"] == [
            ref,
            {"type": "array", "items": ref, "minItems": 1, "maxItems": 10_000},
        ], path


def _examples(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "examples" and isinstance(value, dict):
                yield from (example["value"] for example in value.values() if "value" in example)
            else:
                yield from _examples(value)
    elif isinstance(node, list):
        for item in node:
            yield from _examples(item)


def test_api_schema_has_no_example_of_a_list_inside_a_list(openapi):
    examples = list(_examples(openapi["paths"]))
    assert examples  # the questions' and rankers' examples
    assert [e for e in examples if isinstance(e, list) and any(isinstance(i, list) for i in e)] == []


def test_api_schema_train_is_for_every_kind_of_ranker(openapi):
    train = openapi["paths"]["/api/rankers/{ranker_id}/train/"]["post"]

    assert train["summary"] == "Train a new version of a ranker from the current training labels"
    assert train["description"] == (
        "Any kind of ranker trains: a builtin ranker learns to rerank its BM25 candidates, an engine or "
        "http ranker learns a reranker of its service's top answers (its `candidates`, default 50); an "
        "engine ranker's new version also gets its export model for the engine."
    )


def test_api_schema_collection_create_says_which_tokens_may(openapi):
    create = openapi["paths"]["/api/collections/"]["post"]

    assert create["description"] == (
        "Signed in: staff and trainers of a collection. With a token: a trainer token. The token still "
        "acts only in its own collection: issue one for the new collection to work in it."
    )


def test_api_schema_evaluation_verdict_is_an_enum(openapi):
    schemas = openapi["components"]["schemas"]
    assert schemas["EvaluationRun"]["properties"]["verdict"]["oneOf"] == [
        {"$ref": "#/components/schemas/RunVerdictEnum"},
        {"$ref": "#/components/schemas/BlankEnum"},
    ]
    assert schemas["RunVerdictEnum"]["enum"] == ["real improvement", "within noise", "real drop"]


def _untyped(schema, where: str) -> list[str]:
    """Places in a schema where a value may be anything: no type, reference, enum or combination."""
    if not isinstance(schema, dict):
        return []
    found = [] if {"type", "$ref", "enum", "oneOf", "allOf", "anyOf"} & set(schema) else [where]
    for name, value in schema.get("properties", {}).items():
        found += _untyped(value, f"{where}.{name}")
    if "items" in schema:
        found += _untyped(schema["items"], f"{where}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        found += _untyped(schema["additionalProperties"], f"{where}{{}}")
    for combination in ("oneOf", "allOf", "anyOf"):
        for i, part in enumerate(schema.get(combination, [])):
            found += _untyped(part, f"{where}.{combination}[{i}]")
    return found


def test_api_schema_has_no_untyped_field(openapi):
    untyped = [p for name, schema in openapi["components"]["schemas"].items() for p in _untyped(schema, name)]
    for path, operations in openapi["paths"].items():
        for method, operation in operations.items():
            for part in [operation.get("requestBody", {}), *operation["responses"].values()]:
                for media in part.get("content", {}).values():
                    untyped += _untyped(media.get("schema", {}), f"{method.upper()} {path}")
    assert untyped == []


def test_api_schema_links_what_an_operation_creates_to_its_pages(openapi):
    operations = {
        operation["operationId"]: operation for ops in openapi["paths"].values() for operation in ops.values()
    }
    links = operations["rankers_create"]["responses"]["201"]["links"]
    assert links["StartEvaluation"] == {
        "operationId": "rankers_evaluations_create",
        "parameters": {"ranker_id": "$response.body#/id"},
    }
    every_target = {
        link["operationId"]
        for operation in operations.values()
        for response in operation["responses"].values()
        for link in response.get("links", {}).values()
    }
    assert every_target <= set(operations)
    assert len(every_target) == 11


def test_api_stateful_links_conform(api_data, trainer, collection, api_schema):
    """schemathesis's state machine: it calls an operation, follows the links of its answer with the
    values the answer gave (create a ranker, then start its evaluation, read the run, ...), and checks
    every answer with all checks."""
    from hypothesis.stateful import run_state_machine_as_test

    _, key = api_token_create(collection=collection, user=trainer, role=Role.TRAINER)
    headers = {"Authorization": f"Token {key}"}
    machine = api_schema.as_state_machine()
    answered: list[tuple[str, int]] = []

    class Workflow(machine):  # type: ignore[misc, valid-type]
        def _add_results_to_targets(self, targets, results):
            # schemathesis 3.39 files a response under the link it can start (its _add_result_to_targets),
            # but Hypothesis 6.1xx calls _add_results_to_targets: without this, every response lands in
            # the catch-all, no link is ever followed, and a failed first call leaves no rule to run.
            for result in results:
                target = None if result is None else self._get_target_for_result(result)
                if target is not None:
                    super()._add_results_to_targets((target,), [result])

        # Each run of the machine starts from the same data: its writes are rolled back after it.
        def setup(self):
            self.savepoint = transaction.atomic()
            self.savepoint.__enter__()

        def teardown(self):
            transaction.set_rollback(True)
            self.savepoint.__exit__(None, None, None)

        def before_call(self, case):
            case.cookies, case.headers = {}, case.headers or {}  # as in test_api_conforms_to_its_schema
            # As the other test's real path parameters: a ranker created in our collection, builtin and
            # with its default config, so the links from its 201 are followed (random ones are 400s).
            if case.operation.path == "/api/rankers/" and isinstance(case.body, dict):
                case.body.update(collection=collection.slug, kind="builtin", config={})

        def get_call_kwargs(self, case):
            cache.clear()
            return {"headers": headers}

        def after_call(self, response, case):
            answered.append((case.operation.verbose_name, response.status_code))

        def validate_response(self, response, case, additional_checks=()):
            case.validate_response(response, headers=headers)

    run_state_machine_as_test(
        Workflow,
        settings=settings(
            max_examples=60,
            stateful_step_count=6,
            # The same draws each time: drawn afresh, 40 runs of 6 steps sometimes never follow the link
            # to GET /api/rankers/{ranker_id}/ (seen once in ~20 runs), and the test failed by chance. The
            # draws alone do not fix the walk: an answer to a random id (200 or 404) depends on the ids the
            # worker's earlier tests used up (sequences are not rolled back), and a walk of 40 missed the link
            # once in a 2-worker run on 2026-11-29. 60 runs follow it in each of several orders tried.
            derandomize=True,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        ),
    )
    # Links were followed: operations reached only through a link answered with what the link gave.
    followed = {
        name for name, status in answered if status == 200 and "{ranker_id}" in name and "POST" not in name
    }
    assert followed >= {"GET /api/rankers/{ranker_id}/"}, Counter(answered)
