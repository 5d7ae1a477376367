"""The REST API: thin views over the same services and selectors the web pages use; one module per
resource, its serializers beside its views. Every response code is in the OpenAPI schema (``/api/schema/``,
browsable at ``/api/docs/``).

* :mod:`.urls` – every endpoint, and the schema and docs pages.
* :mod:`.authentication` – ``Authorization: Token <key>`` (the browser's session works too).
* :mod:`.token_budget` – the invalid-token budget per address (429 for valid and invalid keys alike).
* :mod:`.throttling` – requests per caller in a sliding window, exact under concurrent requests.
* :mod:`.access` – who may do what: the caller's role in a collection, narrowed for tokens; 404 or 403.
* :mod:`.exceptions` – errors as JSON, and the errors no view can prevent (413, 503 with Retry-After).
* :mod:`.schema` – OpenAPI post-processing: unreadable requests, one-or-list bodies, links.
* :mod:`.responses` – the error bodies and the error responses views document (401/429, 403, 404, 400, 503).
* :mod:`.fields` – input checks several serializers share (no NUL character, external ids).
* :mod:`.bulk` – bodies of one object or a list of them, checked item by item; an upsert's summary.
* :mod:`.negotiation` – ``?format=`` as a file format rather than a renderer.
* :mod:`.version_shape` – a ranker version as rankers, versions, trainings and started evaluations show it.
* :mod:`.views_collections` – collections: list with counts and the caller's role, create, one.
* :mod:`.views_questions` – a collection's questions: list, create or update by id.
* :mod:`.views_answers` – a collection's answers: list, create or update by id (with metadata).
* :mod:`.views_ratings` – rating answers, one or a list, as the caller.
* :mod:`.views_ground_truth` – the labels to train on, as JSON or a file.
* :mod:`.views_queue` – the next pairs the rating queue wants from the caller.
* :mod:`.views_imports` – importing files, and the imports of judgments with their option: list, one, change.
* :mod:`.views_files` – a run's files, the ratings with their notes.
* :mod:`.views_rankers` – rankers: list, create, one.
* :mod:`.views_engines` – a ranker's config changed, and a ranker tried on one question.
* :mod:`.views_versions` – a ranker's versions: list, announce a deployed model, promote one.
* :mod:`.views_export` – a version's model as files and API calls for its search engine.
* :mod:`.views_evaluations` – evaluation runs: a ranker's history, start one, one run with its results.
* :mod:`.views_compare` – 2 to 6 evaluation runs compared.
* :mod:`.views_trainings` – training a ranker (any kind), and following a training.
* :mod:`.views_judges` – judges, their judging runs and their agreement with people.
* :mod:`.views_clicks` – a collection's implicit judgments from production clicks, and their agreement with
  people and judges.
* :mod:`.views_tokens` – the caller's own API tokens: list, revoke.
"""
