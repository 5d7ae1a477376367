from __future__ import annotations

from django import forms

from evaluation.selectors.clicks import DEFAULT_MAX_RANK, MAX_MAX_RANK, ClickParameters
from judges.models import Judge, Selection
from judges.services import MAX_PAIRS


class JudgeForm(forms.ModelForm):
    """A judge's settings. The API key field is never filled in: blank keeps the stored key."""

    api_key = forms.CharField(
        required=False,
        max_length=500,
        widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "off"}),
        label="API key",
        help_text="Write-only: stored, never shown again. Leave blank to keep the stored key.",
    )
    clear_api_key = forms.BooleanField(required=False, label="Remove the stored API key")
    base_url = forms.URLField(required=False, max_length=500, assume_scheme="https", label="Base URL (…/v1)")

    class Meta:
        model = Judge
        fields = [
            "name",
            "kind",
            "base_url",
            "model",
            "temperature",
            "concurrency",
            "requests_per_minute",
            "timeout_seconds",
            "reply_format",
            "few_shot",
            "logprobs",
            "prompt_template",
        ]
        labels = {
            "base_url": "Base URL (…/v1)",
            "requests_per_minute": "Requests per minute (0: no limit)",
            "few_shot": "Worked examples from people's ratings",
            "logprobs": "Ask for token log-probabilities (how sure the judge is of each grade)",
        }
        help_texts = {
            "model": "OpenAI chat completions: the model's name. Clicks: dbn (the cascade click model, the "
            "default), coec (clicks over expected clicks) or pbm (the position-based click model).",
        }
        widgets = {"prompt_template": forms.Textarea(attrs={"rows": 12, "spellcheck": "false"})}

    def setting_values(self) -> dict:
        return {name: self.cleaned_data[name] for name in self.Meta.fields}

    def api_key_value(self) -> str | None:
        """None keeps the key; "" removes it."""
        if self.cleaned_data.get("clear_api_key"):
            return ""
        return self.cleaned_data.get("api_key") or None


class TrustForm(forms.Form):
    counts = forms.BooleanField(required=False, label="Its ratings count toward labels")
    human_wins = forms.BooleanField(
        required=False,
        initial=True,
        label="People win over the judge on a pair they rated (else: one more rater)",
    )


class JudgingForm(forms.Form):
    selection = forms.ChoiceField(choices=Selection.choices, initial=Selection.TEST_TOP)
    limit = forms.IntegerField(min_value=1, max_value=MAX_PAIRS, initial=100, label="At most this many pairs")
    question_ids = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        label="Question ids (for “chosen questions”; comma or space separated)",
    )
    budget_tokens = forms.IntegerField(min_value=0, initial=0, label="Token budget (0: none)")

    def question_id_list(self) -> list[str]:
        return [x for x in self.cleaned_data.get("question_ids", "").replace(",", " ").split() if x]


class ClickParametersForm(forms.Form):
    """The parameters of the implicit judgments (``evaluation.selectors.clicks.ClickParameters``), from a
    GET query string."""

    max_rank = forms.IntegerField(
        min_value=1,
        max_value=MAX_MAX_RANK,
        required=False,
        label="Deepest rank counted",
        help_text=f"Only events at ranks 1 to this count (default {DEFAULT_MAX_RANK}; the Search Relevance "
        "Workbench's maxRank).",
    )
    start_date = forms.DateField(
        required=False, label="From (UTC day)", widget=forms.DateInput(attrs={"type": "date"})
    )
    end_date = forms.DateField(
        required=False, label="To (UTC day, included)", widget=forms.DateInput(attrs={"type": "date"})
    )

    def clean(self):
        data = super().clean()
        start, end = data.get("start_date"), data.get("end_date")
        if start and end and start > end:
            self.add_error("end_date", "The range ends before it starts.")
        return data

    def parameters(self) -> ClickParameters:
        data = self.cleaned_data
        return ClickParameters(
            max_rank=data.get("max_rank") or DEFAULT_MAX_RANK,
            start_date=data.get("start_date"),
            end_date=data.get("end_date"),
        )
