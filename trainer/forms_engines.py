"""The form of a search-engine ranker (kind ``engine``) on the Rankers pages: the same config as the API's,
with ``request`` and ``response`` as JSON text. Checking is the services' (``rankers.engine_config``);
this form only parses the JSON and assembles the config."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from rankers.engine_config import MASK, PRESETS, RERANK_DEFAULTS

PRESET_CHOICES = [
    ("elasticsearch", "Elasticsearch _search (query DSL)"),
    ("opensearch", "OpenSearch _search (query DSL)"),
    ("opensearch-hybrid", "OpenSearch hybrid/neural search (search pipeline + hybrid query)"),
    ("solr", "Solr /select"),
    ("custom", "Custom: my own request and mapping"),
]
assert [name for name, _ in PRESET_CHOICES] == list(PRESETS)


class EngineRankerForm(forms.Form):
    name = forms.CharField(max_length=200)
    is_default = forms.BooleanField(
        required=False, label="Default ranker", help_text="The rating queue takes candidates from it."
    )
    preset = forms.ChoiceField(choices=PRESET_CHOICES)
    url = forms.CharField(
        max_length=2000,
        label="URL",
        help_text="The engine's search endpoint, e.g. https://host:9200/answers/_search or "
        "https://host:8983/solr/answers/select.",
    )
    auth_header = forms.CharField(
        required=False,
        max_length=2000,
        label="Authorization header",
        widget=forms.PasswordInput(render_value=False),
        help_text='Sent as Authorization, e.g. "ApiKey <key>" or "Basic <base64>". Stored, never shown again.',
    )
    clear_auth_header = forms.BooleanField(required=False, label="Remove the stored authorization header")
    timeout = forms.FloatField(initial=10, help_text="Seconds per attempt (at most 120).")
    retries = forms.IntegerField(
        initial=2, help_text="Extra attempts after a timeout, refused connection or 5xx."
    )
    candidates = forms.IntegerField(
        required=False,
        initial=RERANK_DEFAULTS["candidates"],
        min_value=10,
        max_value=1000,
        label="Answers reranked",
        help_text="How many of the engine's top answers a trained version reranks, the same at training "
        f"and at ranking. Empty: {RERANK_DEFAULTS['candidates']}.",
    )
    budget_ms = forms.IntegerField(
        required=False,
        initial=RERANK_DEFAULTS["budget_ms"],
        min_value=1,
        max_value=10_000,
        label="Rerank budget (ms)",
        help_text="How long ranker_server may rerank before it answers the engine's own order instead. "
        f"Empty: {RERANK_DEFAULTS['budget_ms']}.",
    )
    request = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "class": "code"}),
        help_text="JSON: method, headers, params (query string), form (form-encoded body) or body (JSON). {{question}} and {{rows}} are filled "
        "in per question, escaped for JSON and URLs. Empty: the preset's. Header values show as ********; "
        "leave them so to keep them.",
    )
    response = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "class": "code"}),
        help_text='JSON: where the hits list is and each hit\'s id and score, e.g. {"hits": "hits.hits", '
        '"id": "_id", "score": "_score"}. Empty: the preset\'s.',
    )

    def __init__(self, *args: Any, editing: bool = False, has_auth: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.editing, self.has_auth = editing, has_auth
        if editing:
            del self.fields["name"], self.fields["is_default"]
            if has_auth:
                self.fields["auth_header"].help_text = "A header is stored. Empty: keep it."
        if not has_auth:
            del self.fields["clear_auth_header"]

    def _json(self, name: str) -> Any:
        text = self.cleaned_data.get(name, "").strip()
        if not text:
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(
                f"{name} is not JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}."
            ) from None
        if not isinstance(value, dict):
            raise forms.ValidationError(f"{name} must be a JSON object.")
        return value

    def clean_request(self) -> Any:
        return self._json("request")

    def clean_response(self) -> Any:
        return self._json("response")

    def config(self) -> dict[str, Any]:
        """The config to give the services (masked secrets keep the stored ones)."""
        data = self.cleaned_data
        config: dict[str, Any] = {
            "preset": data["preset"],
            "url": data["url"],
            "timeout": data["timeout"],
            "retries": data["retries"],
        }
        for key in ("candidates", "budget_ms"):  # left empty: the defaults
            if data.get(key) is not None:
                config[key] = data[key]
        for key in ("request", "response"):
            if data.get(key) is not None:
                config[key] = data[key]
        if data.get("auth_header"):
            config["auth_header"] = data["auth_header"]
        elif self.has_auth and not data.get("clear_auth_header"):
            config["auth_header"] = MASK
        return config


def form_field_of(key: str) -> str | None:
    """The form field a config error key belongs to (``request.body.query`` -> ``request``)."""
    head = key.split(".")[0]
    return head if head in EngineRankerForm.base_fields else None
