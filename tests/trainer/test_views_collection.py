"""Trainer pages for a collection: who may see them, and imports that fail loudly and store nothing."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from corpus.models import Answer, Collection, Membership, Role

DOCS = b'{"add": {"doc": {"id": 1, "title": "Lift", "body": "wing lift"}}, "add": {"doc": {"id": 2, "title": "Drag"}}}'


@pytest.mark.parametrize("url_name", ["collection-manage"])
def test_collection_manage_authz(client, collection, rater, trainer, outsider, url_name):
    url = reverse(url_name, args=[collection.slug])
    assert client.get(url).status_code == 302  # anonymous → login
    client.force_login(outsider)
    assert client.get(url).status_code == 404
    client.force_login(rater)
    assert client.get(url).status_code == 403
    client.force_login(trainer)
    assert client.get(url).status_code == 200


# A collection form's fields at their defaults (name and slug added by each test).
DEFAULT_SETTINGS = {
    "ndcg_k": 10,
    "accuracy_k": 5,
    "relevance_threshold": 1,
    "gain_scheme": "linear",
    "discount": "log2",
    "test_fraction": 0.3,
    "target_raters": 1,
    "overlap_target_raters": 3,
    "overlap_fraction": 0.1,
}


def test_collection_import_upload_imports_answers(client, collection, trainer):
    client.force_login(trainer)
    response = client.post(
        reverse("collection-import", args=[collection.slug]),
        {"rnr_documents": SimpleUploadedFile("docs.json", DOCS)},
    )
    assert response.status_code == 302
    assert sorted(Answer.objects.filter(collection=collection).values_list("external_id", flat=True)) == [
        "1",
        "2",
    ]


def test_collection_import_upload_bad_file_names_line_and_imports_nothing(client, collection, trainer):
    client.force_login(trainer)
    response = client.post(
        reverse("collection-import", args=[collection.slug]),
        {
            "rnr_documents": SimpleUploadedFile("docs.json", DOCS),
            "rnr_ground_truth": SimpleUploadedFile(
                "gt.csv", b'"what lifts","1","4"\n"what drags","77","2"\n'
            ),
        },
    )
    assert response.status_code == 400
    assert (
        "gt.csv line 2: answer id 77 not in collection tiny. Nothing was imported."
        in response.content.decode()
    )
    assert Answer.objects.count() == 0


def test_collection_import_upload_without_files_is_400(client, collection, trainer):
    client.force_login(trainer)
    response = client.post(reverse("collection-import", args=[collection.slug]), {})
    assert response.status_code == 400
    assert "Choose at least one file to import." in response.content.decode()


@pytest.mark.parametrize("who", ["anonymous", "outsider", "rater"])
def test_collection_import_upload_refused_for_non_trainers(client, collection, rater, outsider, who):
    if who != "anonymous":
        client.force_login({"outsider": outsider, "rater": rater}[who])
    response = client.post(
        reverse("collection-import", args=[collection.slug]),
        {"rnr_documents": SimpleUploadedFile("docs.json", DOCS)},
    )
    assert response.status_code == {"anonymous": 302, "outsider": 404, "rater": 403}[who]
    assert Answer.objects.count() == 0


def test_collection_member_set_adds_rater_and_rejects_unknown_user(client, collection, trainer, make_user):
    client.force_login(trainer)
    newbie = make_user("newbie")
    url = reverse("collection-member-set", args=[collection.slug])
    assert client.post(url, {"username": "newbie", "role": "rater"}).status_code == 302
    assert Membership.objects.get(user=newbie, collection=collection).role == Role.RATER
    response = client.post(url, {"username": "ghost", "role": "rater"})
    assert response.status_code == 400
    assert "No active user named &#x27;ghost&#x27;." in response.content.decode()


def test_collection_member_set_refused_for_rater(client, collection, rater, make_user):
    make_user("newbie")
    client.force_login(rater)
    url = reverse("collection-member-set", args=[collection.slug])
    assert client.post(url, {"username": "newbie", "role": "trainer"}).status_code == 403
    assert not Membership.objects.filter(user__username="newbie").exists()


def test_collection_member_remove_keeps_self(client, collection, trainer, rater):
    client.force_login(trainer)
    own = Membership.objects.get(user=trainer)
    other = Membership.objects.get(user=rater)
    client.post(reverse("collection-member-remove", args=[collection.slug, own.pk]))
    client.post(reverse("collection-member-remove", args=[collection.slug, other.pk]))
    assert list(Membership.objects.values_list("user__username", flat=True)) == ["tom"]


def test_collection_settings_change_validated(client, collection, trainer):
    client.force_login(trainer)
    url = reverse("collection-manage", args=[collection.slug])
    data = {
        "name": "Tiny",
        "slug": "tiny",
        "ndcg_k": 20,
        "accuracy_k": 5,
        "relevance_threshold": 2,
        "gain_scheme": "exponential",
        "discount": "log2",
        "test_fraction": 0.3,
        "target_raters": 1,
        "overlap_target_raters": 3,
        "overlap_fraction": 0.1,
    }
    assert client.post(url, data).status_code == 302
    collection.refresh_from_db()
    assert (collection.ndcg_k, collection.gain_scheme, collection.relevance_threshold) == (
        20,
        "exponential",
        2,
    )
    response = client.post(url, {**data, "relevance_threshold": 5})
    assert (
        response.status_code == 200
        and "Ensure this value is less than or equal to 3." in response.content.decode()
    )


def test_collection_new_by_staff_makes_them_trainer(client, make_user):
    staff = make_user("sam", is_staff=True)
    client.force_login(staff)
    response = client.post(reverse("collection-new"), {**DEFAULT_SETTINGS, "name": "FAQ", "slug": "faq"})
    assert response.status_code == 302
    assert Membership.objects.get(collection=Collection.objects.get(slug="faq")).user == staff


def test_collection_new_refused_for_plain_rater(client, rater):
    client.force_login(rater)
    assert client.get(reverse("collection-new")).status_code == 403


def test_collection_settings_rating_budget_set_kept_and_validated(client, collection, trainer):
    client.force_login(trainer)
    url = reverse("collection-manage", args=[collection.slug])
    data = {**DEFAULT_SETTINGS, "name": "Tiny", "slug": "tiny"}

    assert client.post(url, {**data, "rating_budget": 12}).status_code == 302
    collection.refresh_from_db()
    assert collection.rating_budget == 12
    assert client.post(url, data).status_code == 302  # left out: kept
    collection.refresh_from_db()
    assert collection.rating_budget == 12
    response = client.post(url, {**data, "rating_budget": 0})
    assert response.status_code == 200
    assert "Ensure this value is greater than or equal to 1." in response.content.decode()
    collection.refresh_from_db()
    assert collection.rating_budget == 12


def test_collection_import_upload_wrong_file_error_names_the_field(client, collection, trainer):
    client.force_login(trainer)

    response = client.post(
        reverse("collection-import", args=[collection.slug]),
        {"rnr_documents": SimpleUploadedFile("gt.csv", b'"what lifts","1","4"\n')},
    )

    assert response.status_code == 400
    html = response.content.decode()
    errors = html[
        html.index('<label for="id_rnr_documents">') : html.index('<label for="id_rnr_ground_truth">')
    ]
    assert (
        "<li>R&amp;R documents (Solr bulk-add JSON): gt.csv line 1: invalid JSON: Extra data (column 13). "
        "Nothing was imported.</li>"
    ) in errors
    assert Answer.objects.count() == 0


def test_collection_manage_import_file_inputs_accept_their_formats(client, collection, trainer):
    client.force_login(trainer)

    html = client.get(reverse("collection-manage", args=[collection.slug])).content.decode()

    accepts = dict(re.findall(r'<input type="file" name="(\w+)" accept="([^"]+)"', html))
    assert accepts == {
        "rnr_documents": ".json,application/json",
        "rnr_ground_truth": ".csv,text/csv",
        "corpus": ".jsonl,.ndjson,.json,application/jsonl,application/x-ndjson",
        "topics": ".tsv,.txt,.topics,text/tab-separated-values,text/plain",
        "qrels": ".qrels,.txt,.tsv,.test,.trec,text/plain",
        "quepid_csv": ".csv,text/csv",
        "rre_json": ".json,application/json",
    }


def test_collection_manage_advises_an_engine_ranker_from_the_builtin_limit(
    client, collection, trainer, monkeypatch
):
    from rankers import limits

    monkeypatch.setattr(limits, "BUILTIN_ANSWERS_LIMIT", 2)
    url = reverse("collection-manage", args=[collection.slug])
    client.force_login(trainer)
    Answer.objects.create(collection=collection, external_id="a1", title="Lift", body="wing lift")
    below = client.get(url).content.decode()
    Answer.objects.create(collection=collection, external_id="a2", title="Drag", body="drag")

    advice = re.search(r'data-testid="engine-advice">(.*?)</p>', client.get(url).content.decode(), re.S)

    assert ('data-testid="engine-advice"' in below, " ".join(advice.group(1).split())[:79]) == (
        False,
        "At 2 answers this collection is better served by an engine ranker: from about 2",
    )


def test_collection_manage_links_the_judges_and_clicks_pages(client, collection, trainer):
    client.force_login(trainer)

    html = client.get(reverse("collection-manage", args=[collection.slug])).content.decode()

    assert f'<a href="/c/{collection.slug}/judges/" data-testid="judges-link">Judges</a>' in html
    assert (
        f'<a href="/c/{collection.slug}/judges/clicks/" data-testid="clicks-link">Clicks beside ratings</a>'
        in html
    )
