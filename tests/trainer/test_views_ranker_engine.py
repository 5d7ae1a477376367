"""The search-engine ranker pages: add one, change its settings (secrets never shown), and Try it."""

from __future__ import annotations

import json

import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import answers_upsert
from rankers.models import Ranker
from rankers.services import ranker_create
from tests.rankers.engine_support import engine_fixture, es_config, solr_config  # noqa: F401
from tests.trainer.rankers_views_support import assert_authz

pytestmark = pytest.mark.django_db
SECRET = "ApiKey c2VjcmV0LWtleQ=="
HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def es_ranker(collection, engine):
    answers_upsert(
        collection=collection,
        records=[AnswerRecord("a1", "Boundary layer", ""), AnswerRecord("a2", "Shock waves", "")],
    )
    return ranker_create(
        collection=collection,
        name="Elasticsearch",
        kind="engine",
        config=es_config(engine.url, auth_header=SECRET, request={"headers": {"X-Tenant": "tenant-secret"}}),
    )


def _form(url: str, **extra) -> dict[str, str]:
    return {
        "name": "My ES",
        "preset": "elasticsearch",
        "url": url,
        "auth_header": "",
        "timeout": "5",
        "retries": "0",
        "request": "",
        "response": "",
        **extra,
    }


def test_engine_pages_authz(client, es_ranker, rater, outsider, trainer):
    slug, pk = "tiny", es_ranker.pk
    assert_authz(
        client,
        method="get",
        url=f"/c/{slug}/rankers/engine/new/",
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=200,
    )
    assert_authz(
        client,
        method="post",
        url=f"/c/{slug}/rankers/engine/new/",
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=400,
    )
    assert_authz(
        client,
        method="get",
        url=f"/c/{slug}/rankers/{pk}/engine/",
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=200,
    )
    assert_authz(
        client,
        method="post",
        url=f"/c/{slug}/rankers/{pk}/engine/",
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=400,
    )
    assert_authz(
        client,
        method="post",
        url=f"/c/{slug}/rankers/{pk}/try/",
        rater=rater,
        outsider=outsider,
        trainer=trainer,
        ok=400,
    )
    assert Ranker.objects.filter(collection__slug=slug).count() == 1  # fmt: skip


def test_engine_page_of_a_builtin_ranker_is_404(client, collection, trainer):
    builtin = ranker_create(collection=collection, name="Built-in", kind="builtin")
    client.force_login(trainer)

    assert client.get(f"/c/tiny/rankers/{builtin.pk}/engine/").status_code == 404


def test_engine_ranker_new_fills_the_preset_and_redirects_to_try_it(client, collection, trainer, engine):
    client.force_login(trainer)

    response = client.post(
        "/c/tiny/rankers/engine/new/", _form(f"{engine.url}/answers/_search", auth_header=SECRET)
    )

    ranker = Ranker.objects.get(name="My ES")
    assert (response.status_code, response["Location"]) == (303, f"/c/tiny/rankers/{ranker.pk}/engine/")
    assert ranker.kind == "engine"
    assert ranker.config["response"]["hits"] == "hits.hits"
    assert ranker.config["request"]["body"]["size"] == "{{rows}}"
    assert ranker.config["auth_header"] == SECRET
    assert (ranker.config["timeout"], ranker.config["retries"]) == (5.0, 0)


def test_engine_ranker_new_keeps_what_a_trained_version_reranks(client, collection, trainer, engine):
    client.force_login(trainer)

    client.post(
        "/c/tiny/rankers/engine/new/", _form(f"{engine.url}/answers/_search", candidates="30", budget_ms="80")
    )
    bad = client.post(
        "/c/tiny/rankers/engine/new/", _form(f"{engine.url}/a/_search", name="Other", candidates="5")
    )

    ranker = Ranker.objects.get(name="My ES")
    assert (ranker.config["candidates"], ranker.config["budget_ms"]) == (30, 80)
    assert bad.status_code == 400
    assert bad.context["form"].errors["candidates"] == ["Ensure this value is greater than or equal to 10."]


def test_engine_ranker_new_request_not_json_names_the_field(client, collection, trainer, engine):
    client.force_login(trainer)

    response = client.post("/c/tiny/rankers/engine/new/", _form(f"{engine.url}/a/_search", request="{nope"))

    assert response.status_code == 400
    assert "request is not JSON: Expecting property name enclosed in double quotes at line 1, column 2." in (
        response.content.decode()
    )
    assert not Ranker.objects.filter(name="My ES").exists()


def test_engine_ranker_new_config_error_shows_under_its_field(client, collection, trainer, engine):
    client.force_login(trainer)
    request = json.dumps({"params": {"q": "{{qestion}}"}})

    response = client.post(
        "/c/tiny/rankers/engine/new/",
        _form(f"{engine.url}/solr/answers/select", preset="solr", request=request),
    )

    assert response.status_code == 400
    assert response.context["form"].errors["request"] == [
        "request.params.q: unknown placeholder {{qestion}}; use {{question}} or {{rows}}."
    ]
    assert not Ranker.objects.filter(name="My ES").exists()


def test_engine_settings_page_never_shows_secrets(client, es_ranker, trainer):
    client.force_login(trainer)

    page = client.get(f"/c/tiny/rankers/{es_ranker.pk}/engine/").content.decode()

    assert "c2VjcmV0LWtleQ" not in page and "tenant-secret" not in page
    assert "A header is stored. Empty: keep it." in page
    assert "&quot;X-Tenant&quot;: &quot;********&quot;" in page


def test_engine_settings_save_keeps_secrets_left_masked(client, es_ranker, trainer, engine):
    client.force_login(trainer)
    form = client.get(f"/c/tiny/rankers/{es_ranker.pk}/engine/").context["form"]
    data = {name: form.initial.get(name, "") for name in form.fields}
    data["response"] = json.dumps({**json.loads(form.initial["response"]), "id": "_source.title"})

    response = client.post(f"/c/tiny/rankers/{es_ranker.pk}/engine/", data)

    assert response.status_code == 303
    es_ranker.refresh_from_db()
    assert es_ranker.config["auth_header"] == SECRET
    assert es_ranker.config["request"]["headers"] == {"X-Tenant": "tenant-secret"}
    assert es_ranker.config["response"]["id"] == "_source.title"


def test_engine_settings_can_remove_the_auth_header(client, es_ranker, trainer):
    client.force_login(trainer)
    form = client.get(f"/c/tiny/rankers/{es_ranker.pk}/engine/").context["form"]
    data = {name: form.initial.get(name, "") for name in form.fields} | {"clear_auth_header": "on"}

    assert client.post(f"/c/tiny/rankers/{es_ranker.pk}/engine/", data).status_code == 303

    es_ranker.refresh_from_db()
    assert "auth_header" not in es_ranker.config


def test_engine_try_htmx_shows_the_mapped_answers(client, es_ranker, trainer, engine):
    client.force_login(trainer)

    response = client.post(
        f"/c/tiny/rankers/{es_ranker.pk}/try/", {"question": "boundary layer", "rows": "5"}, **HTMX
    )

    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="try-result"')
    assert "2 answers for “boundary layer” (asked for 5)" in html
    assert "<code>a1</code></td>\n            <td>Boundary layer</td>" in html
    assert '<code>a3</code></td>\n            <td><span class="muted">not in this collection</span>' in html
    assert "1.464816" in html and "1.098612" in html
    assert "1 id the collection does not know" in html


def test_engine_try_shows_the_failed_mapping_part(client, es_ranker, trainer, engine):
    engine.faults.drop, engine.faults.drop_at = "_score", 1
    client.force_login(trainer)

    response = client.post(f"/c/tiny/rankers/{es_ranker.pk}/try/", {"question": "boundary layer"}, **HTMX)

    html = response.content.decode()
    assert "The response mapping failed." in html
    assert '<code data-testid="try-part">response.hits.hits[1]._score</code>' in html


def test_engine_try_shows_the_engine_message(client, collection, trainer, engine):
    ranker = ranker_create(
        collection=collection,
        name="Solr",
        kind="engine",
        config=solr_config(engine.url, request={"params": {"q": "{{question}}", "qf": "nosuch"}}),
    )
    client.force_login(trainer)

    response = client.post(f"/c/tiny/rankers/{ranker.pk}/try/", {"question": "boundary layer"})

    assert response.status_code == 200  # without htmx: the whole page, with the result in it
    html = response.content.decode()
    assert '<h2 id="settings-heading">Settings</h2>' in html
    assert "The engine refused the request." in html
    assert '<dd data-testid="try-engine-message">undefined field nosuch</dd>' in html


def test_engine_try_without_a_question_says_so(client, es_ranker, trainer, engine):
    client.force_login(trainer)

    response = client.post(f"/c/tiny/rankers/{es_ranker.pk}/try/", {"question": " "}, **HTMX)

    assert "question: type a question to rank." in response.content.decode()
    assert engine.requests == []


def test_rankers_page_links_to_engine_pages(client, es_ranker, trainer):
    client.force_login(trainer)

    html = client.get("/c/tiny/rankers/").content.decode()

    assert 'href="/c/tiny/rankers/engine/new/"' in html
    assert f'href="/c/tiny/rankers/{es_ranker.pk}/engine/"' in html


def test_engine_version_method_is_the_engine_ranking():
    from trainer.ranker_display import method_text

    assert method_text("", "engine") == "the search engine's own ranking"
