"""Trainer pages: create a collection, change its settings and members, import files into it and say how
the training reads each import's unlisted answers."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from corpus.formats.common import FormatError
from corpus.models import Collection, Membership
from corpus.permissions import can_create_collections, page_collection
from corpus.services import ImportFiles, collection_create, membership_set, parse_import_files
from ratings.models import GroundTruthImport
from ratings.selectors import ground_truth_imports
from ratings.services import ground_truth_import_set
from trainer.forms import IMPORT_FILE_FIELDS, CollectionForm, ImportForm, MemberForm
from trainer.services import collection_import


def uploads_save(files: dict, folder: Path) -> dict[str, Path]:
    """Save the uploaded import files under ``folder``, as ``ImportFiles`` fields to their paths.

    Each keeps its uploaded file name so errors name the file the user chose.
    """
    paths: dict[str, Path] = {}
    for name in IMPORT_FILE_FIELDS:
        upload = files.get(name)
        if upload:
            path = folder / name / (Path(upload.name).name or name)
            path.parent.mkdir()
            with path.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            paths[name] = path
    return paths


def signed_in_user(request: HttpRequest) -> User:
    """The logged-in user of a view behind @login_required."""
    assert isinstance(request.user, User)
    return request.user


def _managed_collection(request: HttpRequest, slug: str) -> Collection:
    """The collection if the user trains it; 404 for non-members (don't reveal it exists), 403 for raters."""
    refusal = "Only trainers of this collection can manage it."
    return page_collection(user=request.user, slug=slug, manage=True, refusal=refusal)[0]


@login_required
@require_http_methods(["GET", "POST"])
def collection_new(request: HttpRequest) -> HttpResponse:
    if not can_create_collections(user=request.user):
        raise PermissionDenied("Only trainers and staff can create collections.")
    form = CollectionForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        collection = collection_create(created_by=signed_in_user(request), **form.cleaned_data)
        messages.success(request, f"Created {collection.name}. Import its answers and questions next.")
        return redirect("collection-manage", slug=collection.slug)
    return render(request, "trainer/collection_new.html", {"form": form})


@login_required
@require_http_methods(["GET", "POST"])
def collection_manage(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _managed_collection(request, slug)
    form = CollectionForm(request.POST or None, instance=collection)
    if request.method == "POST" and form.is_valid():
        form.save()
        messages.success(request, "Settings saved. New evaluations use them; past runs keep theirs.")
        return redirect("collection-manage", slug=collection.slug)
    return render(request, "trainer/collection_manage.html", _context(collection, settings_form=form))


def _context(collection: Collection, **forms: object) -> dict:
    return {
        "collection": collection,
        "settings_form": forms.get("settings_form") or CollectionForm(instance=collection),
        "member_form": forms.get("member_form") or MemberForm(),
        "import_form": forms.get("import_form") or ImportForm(),
        "members": Membership.objects.filter(collection=collection)
        .select_related("user")
        .order_by("user__username"),
        "rankers": collection.rankers.all(),
        "imports": ground_truth_imports(collection=collection),
        "counts": {
            "answers": collection.answers.count(),
            "questions": collection.questions.count(),
            "test_questions": collection.questions.filter(split="test").count(),
        },
    }


@login_required
@require_POST
def collection_member_set(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _managed_collection(request, slug)
    form = MemberForm(request.POST)
    if not form.is_valid():
        response = render(request, "trainer/collection_manage.html", _context(collection, member_form=form))
        response.status_code = 400
        return response
    membership_set(collection=collection, user=form.cleaned_data["username"], role=form.cleaned_data["role"])
    messages.success(request, f"{form.cleaned_data['username']} is now a {form.cleaned_data['role']}.")
    return redirect("collection-manage", slug=collection.slug)


@login_required
@require_POST
def collection_member_remove(request: HttpRequest, slug: str, membership_id: int) -> HttpResponse:
    collection = _managed_collection(request, slug)
    membership = get_object_or_404(Membership, pk=membership_id, collection=collection)
    if membership.user_id == request.user.pk:
        messages.error(request, "You cannot remove yourself; ask another trainer.")
    else:
        membership.delete()
        messages.success(request, f"Removed {membership.user}. Their ratings are kept.")
    return redirect("collection-manage", slug=collection.slug)


@login_required
@require_POST
def collection_import_upload(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _managed_collection(request, slug)
    form = ImportForm(request.POST, request.FILES)
    if form.is_valid():
        with tempfile.TemporaryDirectory() as folder:
            paths = uploads_save(form.cleaned_data, Path(folder))
            # A file's error goes by its field, named by its label (the API's import names the field too).
            field_of = {path.name: field for field, path in paths.items()}
            try:
                records = parse_import_files(
                    ImportFiles(**paths, grade_map=form.cleaned_data["grade_map"] or None)
                )
                summary = collection_import(
                    collection=collection,
                    answers=records[0],
                    questions=records[1],
                    judgments=records[2],
                    unlisted_incorrect=form.cleaned_data["unlisted_incorrect"],
                    files=[path.name for path in paths.values()],
                    created_by=signed_in_user(request),
                )
            except FormatError as exc:
                field = field_of.get(exc.file)
                label = f"{form.fields[field].label}: " if field else ""
                form.add_error(field, f"{label}{exc}. Nothing was imported.")
            except ValueError as exc:
                form.add_error(None, f"{exc}. Nothing was imported.")
            else:
                messages.success(request, f"Imported: {summary}. {summary.option_sentence}".strip())
                return redirect("collection-manage", slug=collection.slug)
    response = render(request, "trainer/collection_manage.html", _context(collection, import_form=form))
    response.status_code = 400
    return response


@login_required
@require_POST
def collection_import_option(request: HttpRequest, slug: str, import_id: int) -> HttpResponse:
    """Turn an import's "answers not listed for a judged question are incorrect" on or off."""
    collection = _managed_collection(request, slug)
    record = get_object_or_404(GroundTruthImport, pk=import_id, collection=collection)
    value = request.POST.get("unlisted_incorrect", "")
    if value not in {"true", "false"}:
        messages.error(request, "unlisted_incorrect must be true or false.")
        return redirect("collection-manage", slug=collection.slug)
    record = ground_truth_import_set(record=record, unlisted_incorrect=value == "true")
    state = "as 0 stars" if record.unlisted_incorrect else "as unknown"
    messages.success(
        request,
        f"The training now reads the answers {record.name} does not list for its judged questions {state}; "
        "the next training uses it.",
    )
    return redirect(f"{reverse('collection-manage', kwargs={'slug': collection.slug})}#import-{record.pk}")
