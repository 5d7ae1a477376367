"""The Tokens page: a user's own API tokens, with expiry and last use; create one (its key shown once) or
revoke one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from corpus.models import Collection, Role
from corpus.permissions import collections_and_access
from trainer.selectors import tokens_of
from trainer.services import api_token_create, api_token_revoke_own
from trainer.views import signed_in_user


class CollectionWithRoleField(forms.ModelChoiceField):
    """A collection, named with the user's role there (``roles``: collection id -> role)."""

    roles: dict[int, str | None] = {}

    def label_from_instance(self, obj: Collection) -> str:  # type: ignore[override]
        role = self.roles.get(obj.pk)
        return f"{obj.name} (you are a {Role(role).label.lower()} there)" if role else obj.name


class TokenForm(forms.Form):
    """A new token: the collections the user may see (each naming their role there) and only the roles
    they may hold in one of them (``collection_access``): a rater is never offered a trainer token."""

    collection = CollectionWithRoleField(queryset=Collection.objects.none(), to_field_name="slug")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.RATER)
    name = forms.CharField(max_length=200, required=False, help_text="What it is for, e.g. “ranker service”.")
    days = forms.IntegerField(
        min_value=0,
        max_value=3650,
        initial=90,
        help_text="Days until it expires; 0: never (not recommended).",
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.access = {c.pk: access for c, access in collections_and_access(user=user)}
        collection = self.fields["collection"]
        assert isinstance(collection, CollectionWithRoleField)
        collection.queryset = Collection.objects.filter(pk__in=self.access).order_by("name", "pk")
        collection.roles = {pk: access.role for pk, access in self.access.items()}
        role = self.fields["role"]
        assert isinstance(role, forms.ChoiceField)
        if not any(access.may_manage for access in self.access.values()):
            role.choices = [(Role.RATER, Role.RATER.label)]
            role.help_text = "You rate in your collections, so your tokens are rater tokens."
            role.error_messages["invalid_choice"] = (
                "You are a rater in each of your collections, so your tokens can only be rater tokens."
            )

    def clean(self) -> dict:
        data = super().clean() or {}
        collection, role = data.get("collection"), data.get("role")
        if collection is not None and role == Role.TRAINER and not self.access[collection.pk].may_manage:
            self.add_error(
                "role", f"You are a rater in {collection.name}, so a token there can only be a rater token."
            )
        return data


@login_required
@require_http_methods(["GET", "POST"])
def tokens_page(request: HttpRequest) -> HttpResponse:
    form = TokenForm(request.POST or None, user=request.user)
    new_key = ""
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = api_token_create(
                collection=form.cleaned_data["collection"],
                user=signed_in_user(request),
                role=form.cleaned_data["role"],
                name=form.cleaned_data["name"],
                days=form.cleaned_data["days"],
            )
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(
                request, f"Token “{token.name}” created. Copy its key now: it is not shown again."
            )
            form = TokenForm(user=request.user)
    return render(
        request,
        "trainer/tokens.html",
        {"tokens": tokens_of(user=request.user), "form": form, "new_key": new_key},
        status=400 if request.method == "POST" and not new_key else 200,
    )


@login_required
@require_POST
def token_revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = api_token_revoke_own(user=signed_in_user(request), token_id=token_id)
    if token is None:
        raise Http404("No such token of yours.")
    messages.success(request, f"Token “{token.name}” ({token.key_prefix}…) revoked.")
    return redirect("tokens")
