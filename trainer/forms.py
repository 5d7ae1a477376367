from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model

from corpus.models import Collection, Role
from rankers.models import PromotionPolicy
from ratings.models import UNLISTED_INCORRECT_LABEL


class CollectionForm(forms.ModelForm):
    class Meta:
        model = Collection
        fields = [
            "name",
            "slug",
            "description",
            "ndcg_k",
            "accuracy_k",
            "relevance_threshold",
            "gain_scheme",
            "discount",
            "test_fraction",
            "target_raters",
            "overlap_target_raters",
            "overlap_fraction",
            "rating_budget",
        ]
        labels = {
            "ndcg_k": "NDCG cutoff k",
            "accuracy_k": "Accuracy cutoff",
            "relevance_threshold": "Stars that count as correct for accuracy",
            "rating_budget": "Rating budget per question",
        }

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        # Left out (an older form, a script): the collection keeps its budget.
        self.fields["rating_budget"].required = False

    def clean_rating_budget(self) -> int:
        value = self.cleaned_data.get("rating_budget")
        return self.instance.rating_budget if value is None else value


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices)

    def clean_username(self) -> object:
        username = self.cleaned_data["username"].strip()
        user = get_user_model().objects.filter(username=username, is_active=True).first()
        if user is None:
            raise forms.ValidationError(f"No active user named {username!r}.")
        return user


IMPORT_FILE_FIELDS = (
    "rnr_documents",
    "rnr_ground_truth",
    "corpus",
    "topics",
    "qrels",
    "quepid_csv",
    "rre_json",
)


def _file_input(accept: str) -> forms.ClearableFileInput:
    return forms.ClearableFileInput(attrs={"accept": accept})


class ImportForm(forms.Form):
    """Files of one import; the same parsers and all-or-nothing service as `manage.py import_collection`."""

    # ``accept``: the file chooser offers the files of the field's format first (a filter, not a check:
    # a wrong file is refused by its parser, the error naming the field).
    rnr_documents = forms.FileField(
        required=False,
        label="R&R documents (Solr bulk-add JSON)",
        widget=_file_input(".json,application/json"),
    )
    rnr_ground_truth = forms.FileField(
        required=False, label="R&R ground truth (CSV)", widget=_file_input(".csv,text/csv")
    )
    corpus = forms.FileField(
        required=False,
        label="TREC corpus (JSONL: id, title, text)",
        widget=_file_input(".jsonl,.ndjson,.json,application/jsonl,application/x-ndjson"),
    )
    topics = forms.FileField(
        required=False,
        label="TREC topics (TSV: qid, text[, train|test])",
        widget=_file_input(".tsv,.txt,.topics,text/tab-separated-values,text/plain"),
    )
    qrels = forms.FileField(
        required=False,
        label="TREC qrels (qid 0 docid grade)",
        help_text="TREC files often end in their set's name (qrels.test): if yours is not listed, choose "
        "“All files” in the file chooser.",
        widget=_file_input(".qrels,.txt,.tsv,.test,.trec,text/plain"),
    )
    quepid_csv = forms.FileField(
        required=False,
        label="Quepid ratings (CSV: query, docid, rating; a case's or a snapshot's)",
        widget=_file_input(".csv,text/csv"),
    )
    rre_json = forms.FileField(
        required=False,
        label="Rated Ranking Evaluator ratings (JSON)",
        widget=_file_input(".json,application/json"),
    )
    grade_map = forms.CharField(
        required=False,
        label="Grade → stars",
        help_text='Leave empty for the defaults ("rnr" for R&R CSV: max(grade−1, 0); "identity" for qrels, Quepid and RRE) '
        'or give pairs like "4:3,3:2,2:1,1:0,0:0".',
    )

    unlisted_incorrect = forms.BooleanField(
        required=False,
        initial=True,
        label=UNLISTED_INCORRECT_LABEL,
        help_text="On, as trec_eval reads TREC qrels (and R&R, Quepid and RRE their ratings): the training "
        "reads an answer the files do not list for one of their questions as 0 stars. Off when the files "
        "are a sample of judgments, whose unlisted answers are unknown. You can change it later below.",
    )

    def clean(self) -> dict:
        data = super().clean() or {}
        if not any(data.get(name) for name in IMPORT_FILE_FIELDS):
            raise forms.ValidationError("Choose at least one file to import.")
        return data


class TrainingSettingsForm(forms.Form):
    """How a ranker's new versions are promoted, and whether it trains by itself (empty: off)."""

    promotion_policy = forms.ChoiceField(
        choices=PromotionPolicy.choices, label="Promote a new version", widget=forms.RadioSelect
    )
    auto_train_labels = forms.IntegerField(
        required=False,
        min_value=1,
        label="Train by itself after this many new training labels",
        help_text="Empty: not on new labels.",
    )
    auto_train_hours = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=32767,
        label="Train by itself every so many hours",
        help_text="Empty: not on a schedule.",
    )
