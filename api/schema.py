"""OpenAPI post-processing.

- Document the error every operation can answer, whatever its view says: the API's error middleware
  (``config.middleware``) answers ``400 {"detail": ...}`` to any request it cannot read at all (a NUL
  character in a query parameter, a body nested too deeply), before a view runs.
- Declare the bodies that take one object or a list of them (questions, answers, ratings) as exactly
  that, ``oneOf: [X, array of 1..N X]``: drf-spectacular can only say "a list" (``many=True``).
- OpenAPI links from what an operation creates to the operations that use it (a ranker to its
  evaluations, versions and training; a run, a version, a training to their pages), so clients and
  schemathesis's stateful tests can follow them.
"""

from __future__ import annotations

from typing import Any

BAD_REQUEST = {
    "description": "A request that cannot be read (a NUL character in a parameter, JSON nested too deeply).",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def add_unreadable_request_responses(
    result: dict[str, Any], generator: Any, request: Any, public: Any
) -> dict:
    """drf-spectacular postprocessing hook: add the 400 to every operation that does not list one."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault("400", BAD_REQUEST)
    return result


# Put in a view's ``extend_schema(extensions=...)`` with the list's maximum length (see views.ONE_OR_LIST).
ONE_OR_LIST_MARK = "x-one-or-list"


def one_or_list_request_bodies(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """drf-spectacular postprocessing hook: a marked operation's ``array of X`` body becomes
    ``oneOf: [X, array of 1..N X]``, and the mark is removed."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or ONE_OR_LIST_MARK not in operation:
                continue
            max_items = operation.pop(ONE_OR_LIST_MARK)
            for media in operation.get("requestBody", {}).get("content", {}).values():
                listed = media["schema"]
                media["schema"] = {
                    "oneOf": [listed["items"], {**listed, "minItems": 1, "maxItems": max_items}],
                    "description": "One object, or a list of them (all or nothing).",
                }
                # drf-spectacular wraps a many=True body's example in a list: [[...]]. The example is the
                # body as sent (an object or a list).
                for example in media.get("examples", {}).values():
                    value = example.get("value")
                    if isinstance(value, list) and len(value) == 1 and isinstance(value[0], list | dict):
                        example["value"] = value[0]
    return result


# (operation, response status) -> {link name: (target operation, {parameter: runtime expression})}
LINKS: dict[tuple[str, str], dict[str, tuple[str, dict[str, str]]]] = {
    ("collections_create", "201"): {
        "GetCollection": ("collections_retrieve", {"slug": "$response.body#/slug"}),
        "ListQuestions": ("collections_questions_list", {"slug": "$response.body#/slug"}),
        "ListAnswers": ("collections_answers_list", {"slug": "$response.body#/slug"}),
    },
    ("rankers_create", "201"): {
        "GetRanker": ("rankers_retrieve", {"ranker_id": "$response.body#/id"}),
        "ListVersions": ("rankers_versions_list", {"ranker_id": "$response.body#/id"}),
        "ListEvaluations": ("rankers_evaluations_list", {"ranker_id": "$response.body#/id"}),
        "StartEvaluation": ("rankers_evaluations_create", {"ranker_id": "$response.body#/id"}),
        "AnnounceVersion": ("rankers_versions_create", {"ranker_id": "$response.body#/id"}),
    },
    ("rankers_evaluations_create", "202"): {
        "GetEvaluation": ("evaluations_retrieve", {"run_id": "$response.body#/evaluation/id"}),
    },
    ("rankers_versions_create", "202"): {
        "GetEvaluation": ("evaluations_retrieve", {"run_id": "$response.body#/evaluation/id"}),
        "PromoteVersion": (
            "rankers_versions_promote_create",
            {"ranker_id": "$request.path.ranker_id", "version_id": "$response.body#/version/id"},
        ),
    },
    ("rankers_train_create", "202"): {
        "GetTraining": ("trainings_retrieve", {"training_id": "$response.body#/id"}),
    },
}


def operation_links(result: dict[str, Any], generator: Any, request: Any, public: Any) -> dict:
    """drf-spectacular postprocessing hook: add ``LINKS`` to the responses they start from."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for status, response in operation.get("responses", {}).items():
                links = LINKS.get((operation.get("operationId", ""), status))
                if links:
                    response["links"] = {
                        name: {"operationId": target, "parameters": parameters}
                        for name, (target, parameters) in links.items()
                    }
    return result
