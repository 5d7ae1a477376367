"""The config of an ``engine`` ranker (a search engine called directly), its presets, and filling its
request template.

::

    {"preset": "elasticsearch" | "opensearch" | "opensearch-hybrid" | "solr" | "custom",
     "url": "https://search.example.com:9200/answers/_search",
     "request": {"method": "POST", "headers": {...}, "params": {...}, "form" or "body": {...}},
     "response": {"hits": "hits.hits", "id": "_id", "score": "_score", "errors": [...]},
     "auth_header": "ApiKey ...", "timeout": 10, "retries": 2}

- ``preset`` fills ``request`` and ``response``; what the config gives key by key (``method``,
  ``headers``, ``params``, ``body``; ``hits``, ``id``, ``score``, ``errors``) replaces the preset's, so a
  preset is a starting point that stays editable. ``custom`` fills nothing but ``method`` (POST) and
  ``errors``.
- ``request.params`` (query-string parameters: text, a number, or a list of texts for a repeated
  parameter), ``request.form`` (the same, sent as an ``application/x-www-form-urlencoded`` body: Solr
  takes its parameters so, which keeps long questions out of the URL) and ``request.body`` (any JSON
  value, sent as ``application/json``; not with ``form``) may hold the
  placeholders ``{{question}}`` (the question's text) and ``{{rows}}`` (how many answers are wanted).
  They are filled **structurally**: in the parsed JSON value and per query parameter, never by pasting
  text into a JSON or URL string, so quotes, backslashes, ``&``, ``#`` or any unicode in a question can't
  break (or inject into) the request. A value that is exactly ``"{{rows}}"`` becomes the number.
  ``url`` and headers take no placeholders.
- ``response`` names where the hits list is (``hits``) and, within each hit, its id and score: dotted
  paths, a whole-number part indexing a list (``error.root_cause.0.reason``). ``errors`` lists where
  the engine puts its error message (Elasticsearch/OpenSearch ``error.root_cause.0.reason``, Solr
  ``error.msg``); the first that holds text is quoted, shortened, in errors.
- ``auth_header`` is sent as ``Authorization`` (``"ApiKey <key>"``, ``"Basic <base64>"``). It and the
  values of ``request.headers`` are secrets: masked whenever a config is shown (``redacted_engine_config``).
  A URL may not carry a user name or password (they would show): use ``auth_header``.

The package, a file a subject:

* :mod:`.templates` – the placeholders ``{{question}}`` and ``{{rows}}``: found, checked, filled structurally.
* :mod:`.presets` – the request and response each preset fills in.
* :mod:`.validation` – checking a config: the preset and defaults filled in, or each wrong field named.
* :mod:`.rerank` – how many answers a trained version reranks and its time budget: checked, defaults.
* :mod:`.masking` – the secrets masked when a config is shown, and kept when it comes back edited.
"""

from rankers.engine_config.masking import MASK, keep_engine_secrets, redacted_engine_config
from rankers.engine_config.presets import ERROR_PATHS, PRESETS, preset_config
from rankers.engine_config.rerank import RERANK_DEFAULTS, check_rerank_settings, rerank_settings
from rankers.engine_config.templates import QUESTION, ROWS, fill_params, fill_template
from rankers.engine_config.validation import (
    ALLOWED,
    ENGINE_DEFAULTS,
    MAX_BODY_CHARS,
    REQUEST_KEYS,
    RESPONSE_KEYS,
    validate_engine_config,
)

__all__ = [
    "ALLOWED",
    "ENGINE_DEFAULTS",
    "ERROR_PATHS",
    "MASK",
    "MAX_BODY_CHARS",
    "PRESETS",
    "QUESTION",
    "REQUEST_KEYS",
    "RERANK_DEFAULTS",
    "RESPONSE_KEYS",
    "ROWS",
    "check_rerank_settings",
    "fill_params",
    "fill_template",
    "keep_engine_secrets",
    "preset_config",
    "redacted_engine_config",
    "rerank_settings",
    "validate_engine_config",
]
