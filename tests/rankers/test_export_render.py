"""The four export formats rendered from one export model. The plugin-free ones also run against the real
engines (test_export_opensearch.py, test_export_solr.py); the Learning to Rank plugins are not on Maven
Central, so their JSON is checked here against the plugins' documented formats: the OpenSearch LTR
plugin's featureset and ``_createmodel`` bodies (``model/linear``, ``model/xgboost+json``) and Solr's
feature store and model store (``LinearModel``, ``MultipleAdditiveTreesModel``)."""

from __future__ import annotations

import json

import pytest

from rankers.engine_config import validate_engine_config
from rankers.export.model import export_model, search_config
from rankers.export.render import fill_question_vector, formats_for, render, uses_vector
from rankers.export.trees import solr_trees, xgboost_trees
from tests.rankers.export_support import FEATURES, TREES, opensearch_model, solr_model

NAMES = [f["name"] for f in FEATURES]
Q = "{{question}}"


def test_opensearch_rescore_is_the_ranker_body_with_a_rescore_of_boosted_queries():
    out = render(opensearch_model(), "opensearch-rescore")

    assert out["requests"] == []
    assert out["search"] == {
        "linear": {
            "method": "POST",
            "url": "http://127.0.0.1:9200/answers/_search",
            "body": {
                "size": "{{rows}}",
                "_source": False,
                "query": {"multi_match": {"query": Q, "fields": ["title^2", "text"]}},
                "rescore": {
                    "window_size": 50,
                    "query": {
                        "rescore_query": {
                            "bool": {
                                "should": [  # bm25_text has weight 0: left out
                                    {"match": {"title": {"query": Q, "boost": 0.5}}},
                                    {"match_phrase": {"title": {"query": Q, "boost": 2.0}}},
                                    {"match_phrase": {"text": {"query": Q, "boost": 0.25}}},
                                ]
                            }
                        },
                        "query_weight": 1.0,
                        "rescore_query_weight": 1.0,
                        "score_mode": "total",
                    },
                },
            },
        }
    }
    assert (out["format"], out["engine"], out["window"]) == ("opensearch-rescore", "opensearch", 50)
    assert out["weights"] == dict(zip(NAMES, [1.0, 0.5, 0.0, 2.0, 0.25], strict=True))
    assert out["left_out"][0]["feature"] == "cosine" and out["figures"]["parity"] == 0.0001


def test_opensearch_rescore_of_the_engine_score_alone_has_no_rescore():
    body = render(opensearch_model([1.0, 0, 0, 0, 0]), "opensearch-rescore")["search"]["linear"]["body"]

    assert "rescore" not in body


def test_solr_rerank_adds_rerank_parameters_to_the_ranker_parameters():
    out = render(solr_model([2.0, 0.5, 0.0, 1.0, 0.25]), "solr-rerank")

    params = out["search"]["linear"]["params"]
    assert params == {
        "q": Q,
        "defType": "simple",
        "q.operators": "WHITESPACE",
        "qf": "title^2 text",
        "rows": "{{rows}}",
        "fl": "id,score",
        "wt": "json",
        "ef_bm25_title": "{!simple qf=title q.operators=WHITESPACE v=$q}",
        "ef_phrase_title": "{!lucene}{!field f=title v=$q}",
        "ef_phrase_text": "{!lucene}{!field f=text v=$q}",
        "rq": "{!rerank reRankQuery=$rqq reRankDocs=50 reRankWeight=1}",
        # Divided by the original's weight (2), which rerank adds with weight 1.
        "rqq": "{!func}sum(product(0.25,query($ef_bm25_title,0)),product(0.5,query($ef_phrase_title,0)),"
        "product(0.125,query($ef_phrase_text,0)))",
    }
    assert out["search"]["linear"]["method"] == "GET"


def test_solr_rerank_without_the_original_score_replaces_it():
    params = render(solr_model([0.0, 1.0, 0, 0, 0]), "solr-rerank")["search"]["linear"]["params"]

    assert params["rq"] == "{!rerank reRankQuery=$rqq reRankDocs=50 reRankWeight=1 reRankOperator=replace}"
    assert params["rqq"] == "{!func}product(1.0,query($ef_bm25_title,0))"


def test_opensearch_ltr_is_featureset_then_linear_then_xgboost_model():
    out = render(opensearch_model(), "opensearch-ltr")

    steps = [(r["method"], r["url"]) for r in out["requests"]]
    assert steps == [
        ("PUT", "http://127.0.0.1:9200/_ltr"),
        ("POST", "http://127.0.0.1:9200/_ltr/_featureset/ranktrainer-7-v1"),
        ("POST", "http://127.0.0.1:9200/_ltr/_featureset/ranktrainer-7-v1/_createmodel"),
        ("POST", "http://127.0.0.1:9200/_ltr/_featureset/ranktrainer-7-v1/_createmodel"),
    ]
    featureset = out["requests"][1]["body"]["featureset"]
    assert featureset["name"] == "ranktrainer-7-v1"
    assert featureset["features"][:2] == [
        {
            "name": "original",
            "params": ["keywords"],
            "template_language": "mustache",
            "template": {"multi_match": {"query": "{{keywords}}", "fields": ["title^2", "text"]}},
        },
        {
            "name": "bm25_title",
            "params": ["keywords"],
            "template_language": "mustache",
            "template": {"match": {"title": {"query": "{{keywords}}"}}},
        },
    ]
    assert featureset["features"][4]["template"] == {"match_phrase": {"text": {"query": "{{keywords}}"}}}
    linear = out["requests"][2]["body"]["model"]
    assert (linear["name"], linear["model"]["type"]) == ("ranktrainer-7-v1-linear", "model/linear")
    assert json.loads(linear["model"]["definition"]) == dict(
        zip(NAMES, [1.0, 0.5, 0.0, 2.0, 0.25], strict=True)
    )
    trees = out["requests"][3]["body"]["model"]
    assert (trees["name"], trees["model"]["type"]) == ("ranktrainer-7-v1-trees", "model/xgboost+json")
    assert json.loads(trees["model"]["definition"]) == xgboost_trees(TREES, NAMES)
    assert out["search"]["trees"]["body"]["rescore"] == {
        "window_size": 50,
        "query": {
            "rescore_query": {"sltr": {"params": {"keywords": Q}, "model": "ranktrainer-7-v1-trees"}},
            "query_weight": 0.0,
            "rescore_query_weight": 1.0,
        },
    }
    assert out["search"]["linear"]["body"]["query"] == {
        "multi_match": {"query": Q, "fields": ["title^2", "text"]}
    }


def test_solr_ltr_is_feature_store_then_linear_then_trees_model():
    out = render(solr_model(), "solr-ltr")

    assert [(r["method"], r["url"]) for r in out["requests"]] == [
        ("PUT", "http://127.0.0.1:8983/solr/answers/schema/feature-store"),
        ("PUT", "http://127.0.0.1:8983/solr/answers/schema/model-store"),
        ("PUT", "http://127.0.0.1:8983/solr/answers/schema/model-store"),
    ]
    store = out["requests"][0]["body"]
    assert store[:2] == [
        {
            "store": "ranktrainer-7-v1",
            "name": "original",
            "class": "org.apache.solr.ltr.feature.OriginalScoreFeature",
            "params": {},
        },
        {
            "store": "ranktrainer-7-v1",
            "name": "bm25_title",
            "class": "org.apache.solr.ltr.feature.SolrFeature",
            "params": {"q": "{!simple qf=title q.operators=WHITESPACE}${user_query}"},
        },
    ]
    assert store[4]["params"] == {"q": "{!field f=text}${user_query}"}
    linear = out["requests"][1]["body"]
    assert linear == {
        "store": "ranktrainer-7-v1",
        "name": "ranktrainer-7-v1-linear",
        "class": "org.apache.solr.ltr.model.LinearModel",
        "features": [{"name": n} for n in NAMES],
        "params": {"weights": dict(zip(NAMES, [1.0, 0.5, 0.0, 2.0, 0.25], strict=True))},
    }
    trees = out["requests"][2]["body"]
    assert trees["class"] == "org.apache.solr.ltr.model.MultipleAdditiveTreesModel"
    assert trees["params"] == {"trees": solr_trees(TREES, NAMES)}
    assert (
        out["search"]["trees"]["params"]["rq"]
        == "{!ltr model=ranktrainer-7-v1-trees reRankDocs=50 efi.user_query=$q}"
    )
    assert out["search"]["linear"]["params"]["q"] == Q


def test_ltr_formats_of_a_model_without_trees_have_only_the_linear_model():
    out = render(opensearch_model(trees=None), "opensearch-ltr")

    assert len(out["requests"]) == 3 and list(out["search"]) == ["linear"]


@pytest.mark.parametrize(
    ("model", "fmt", "message"),
    [
        (
            opensearch_model(),
            "solr-rerank",
            "fitted on opensearch's features; its formats are opensearch-rescore, opensearch-ltr",
        ),
        (solr_model(), "opensearch-ltr", "fitted on solr's features"),
        (
            solr_model(),
            "csv",
            "format must be one of opensearch-rescore, opensearch-ltr, solr-rerank, solr-ltr",
        ),
    ],
)
def test_render_refuses_unknown_formats_and_the_other_engine(model, fmt, message):
    with pytest.raises(ValueError, match=message):
        render(model, fmt)


def test_export_model_keeps_no_secrets_and_knows_its_formats():
    config = validate_engine_config(
        {
            "preset": "solr",
            "url": "http://127.0.0.1:8983/solr/answers/select",
            "auth_header": "Basic c2VjcmV0",
            "request": {"headers": {"X-Tenant": "secret"}},
        }
    )

    model = export_model(
        config=config,
        name="n",
        window=50,
        features=FEATURES[:3],
        weights=[1.0, 0.5, 0.25],
        linear_details={},
        trees=None,
        trees_details=None,
    )

    assert "secret" not in json.dumps(model) and "c2VjcmV0" not in json.dumps(model)
    assert (model["formats"], model["question_param"], model["trees"]) == (
        formats_for("solr"),
        ["params", "q"],
        None,
    )
    ran = search_config(config, render(model, "solr-rerank")["search"]["linear"])
    assert ran["auth_header"] == "Basic c2VjcmV0" and ran["request"]["headers"] == {"X-Tenant": "secret"}
    assert ran["request"]["params"]["rq"].startswith("{!rerank")


VECTOR = {"name": "vector", "kind": "vector", "field": "ranktrainer_vector"}


def _with_vector(make, weight: float):
    model = make([1.0, 0.5, 0.0, 2.0, 0.25, weight])
    model["features"] = [*FEATURES, VECTOR]
    return model


def test_the_vector_feature_renders_with_the_question_vector_placeholder_and_is_filled_by_the_sender():
    os_search = render(_with_vector(opensearch_model, 3.0), "opensearch-rescore")["search"]["linear"]
    solr_search = render(_with_vector(solr_model, 3.0), "solr-rerank")["search"]["linear"]

    script = os_search["body"]["rescore"]["query"]["rescore_query"]["bool"]["should"][-1]
    assert script == {
        "script_score": {
            "query": {"match_all": {}},
            "script": {
                "source": "knn_score",
                "lang": "knn",
                "params": {
                    "field": "ranktrainer_vector",
                    "query_value": "{{question_vector}}",
                    "space_type": "cosinesimil",
                },
            },
            "boost": 3.0,
        }
    }
    assert solr_search["method"] == "POST" and "params" not in solr_search  # the vector: not in the URL
    assert solr_search["form"]["ef_vector"] == (
        "{!func}vectorSimilarity(FLOAT32,COSINE,ranktrainer_vector,$question_vector)"
    )
    assert solr_search["form"]["question_vector"] == "{{question_vector}}"
    assert solr_search["form"]["rqq"].endswith(",product(3.0,query($ef_vector,0)))")
    # The sender's part: the float32 numbers, shortest decimals; 1/3 as float32 is 0.33333334.
    filled = fill_question_vector(os_search, [0.5, 1 / 3])
    assert filled["body"]["rescore"]["query"]["rescore_query"]["bool"]["should"][-1]["script_score"][
        "script"
    ]["params"]["query_value"] == [0.5, 0.33333334]
    assert fill_question_vector(solr_search, [0.5, 1 / 3])["form"]["question_vector"] == "[0.5,0.33333334]"


def test_a_vector_feature_of_weight_0_leaves_the_search_without_the_placeholder():
    out = render(_with_vector(opensearch_model, 0.0), "opensearch-rescore")

    assert "{{question_vector}}" not in json.dumps(out["search"]) and not uses_vector(
        _with_vector(opensearch_model, 0.0)
    )
    assert not any("question's vector" in note for note in out["notes"])


def test_ltr_formats_carry_the_vector_feature_with_the_question_vector_parameter():
    os_ltr = render(_with_vector(opensearch_model, 3.0), "opensearch-ltr")
    solr_ltr = render(_with_vector(solr_model, 3.0), "solr-ltr")

    feature = os_ltr["requests"][1]["body"]["featureset"]["features"][-1]
    assert feature["params"] == ["keywords", "question_vector"]
    assert json.loads(feature["template"].replace("{{#toJson}}question_vector{{/toJson}}", "[0.5]")) == {
        "script_score": {
            "query": {"match_all": {}},
            "script": {
                "source": "knn_score",
                "lang": "knn",
                "params": {"field": "ranktrainer_vector", "query_value": [0.5], "space_type": "cosinesimil"},
            },
        }
    }
    sltr = os_ltr["search"]["linear"]["body"]["rescore"]["query"]["rescore_query"]["sltr"]
    assert sltr["params"] == {"keywords": Q, "question_vector": "{{question_vector}}"}
    assert solr_ltr["requests"][0]["body"][-1]["params"] == {
        "q": "{!func}vectorSimilarity(FLOAT32,COSINE,ranktrainer_vector,$question_vector)"
    }
    assert solr_ltr["search"]["linear"]["form"]["question_vector"] == "{{question_vector}}"
    assert all(any("not run by the app's tests" in n for n in out["notes"]) for out in (os_ltr, solr_ltr))
