"""import_collection: the Cranfield demo files, the TREC layout, and every malformed input leaving no trace."""

import json
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from corpus.formats.common import question_id_from_text
from corpus.models import Answer, Collection, Membership, Question, Role
from ratings.models import GroundTruthImport, Label, Rating

DEMO = Path(__file__).resolve().parents[2] / "trainer" / "demo_data"
DOCS = DEMO / "cranfield-data.json"
GT = DEMO / "cranfield-gt.csv"


def import_(*args: str) -> str:
    out = StringIO()
    call_command("import_collection", *args, stdout=out)
    return out.getvalue()


def counts() -> tuple[int, int, int, int, int]:
    return (
        Collection.objects.count(),
        Answer.objects.count(),
        Question.objects.count(),
        Rating.objects.count(),
        Label.objects.count(),
    )


@pytest.fixture
def cranfield(db):
    import_("cran", "--rnr-documents", str(DOCS), "--rnr-ground-truth", str(GT))
    return Collection.objects.get(slug="cran")


def test_import_cranfield_counts(cranfield):
    assert counts() == (1, 1400, 150, 1197, 1197)


def test_import_cranfield_empty_docs_still_import(cranfield):
    for external_id in ("471", "995"):
        answer = Answer.objects.get(collection=cranfield, external_id=external_id)
        assert (answer.title, answer.body) == ("", "")


def test_import_cranfield_maps_grades_to_stars_and_keeps_metadata(cranfield):
    # Star counts under max(grade - 1, 0), as documented in the data's SOURCE.md.
    stars = {s: Label.objects.filter(gain=s).count() for s in range(4)}
    assert stars == {3: 82, 2: 222, 1: 479, 0: 414}
    assert Answer.objects.get(external_id="1").metadata["author"] == "brenckman,m."


def test_import_cranfield_question_ids_come_from_text(cranfield):
    text = "what similarity laws must be obeyed when constructing aeroelastic models of heated high speed aircraft."
    question = Question.objects.get(external_id=question_id_from_text(text))
    assert question.text == text
    assert (
        question_id_from_text(
            "  What similarity laws must be obeyed when constructing aeroelastic models of "
            "heated high speed aircraft ."
        )
        == question.external_id
    )


def test_import_same_files_again_changes_nothing(cranfield):
    before = list(Rating.objects.values_list("id", "stars", "updated_at").order_by("id"))
    splits = dict(Question.objects.values_list("external_id", "split"))
    output = import_("cran", "--rnr-documents", str(DOCS), "--rnr-ground-truth", str(GT))
    assert "answers: 0 new, 0 updated, 1400 unchanged" in output
    assert "ratings: 0 new, 0 updated, 1197 unchanged" in output
    assert list(Rating.objects.values_list("id", "stars", "updated_at").order_by("id")) == before
    assert dict(Question.objects.values_list("external_id", "split")) == splits
    assert counts() == (1, 1400, 150, 1197, 1197)


def test_import_split_is_deterministic_across_collections_with_same_slug(db, tmp_path):
    import_("cran", "--rnr-documents", str(DOCS), "--rnr-ground-truth", str(GT))
    first = dict(Question.objects.values_list("external_id", "split"))
    Collection.objects.all().delete()
    import_("cran", "--rnr-documents", str(DOCS), "--rnr-ground-truth", str(GT))
    assert dict(Question.objects.values_list("external_id", "split")) == first
    assert 30 <= list(first.values()).count("test") <= 60  # ~30% of 150 by hash


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


DOCS_OK = '{"add": {"doc": {"id": 1, "title": "lift", "body": "wing lift"}}, "add": {"doc": {"id": 2, "title": "drag", "body": "drag"}}}'


@pytest.mark.parametrize(
    ("docs", "gt", "message"),
    [
        ('{"add": {"doc": {"id": 1, "title": "x"', '"q","1","2"', "docs.json line 1: invalid JSON"),
        ('{"add": {"doc": {"title": "x"}}}', '"q","1","2"', 'docs.json: document 1: field "id" is missing'),
        (
            '{"add": {"doc": {"id": 1}}, "add": {"doc": {"id": 1}}}',
            '"q","1","2"',
            "docs.json: document 2: duplicate id '1'",
        ),
        (
            DOCS_OK,
            '"what lifts","1","3"\n"what drags","9999","2"',
            "gt.csv line 2: answer id 9999 not in collection",
        ),
        (DOCS_OK, '"what lifts","1","3"\n"what drags","2","7"', "gt.csv line 2: grade 7 is out of range"),
        (DOCS_OK, '"what lifts","1","three"', "gt.csv line 1: grade 'three' is not a whole number"),
        (DOCS_OK, '"what lifts","1"', "gt.csv line 1: expected the question then answer_id,grade pairs"),
        (DOCS_OK, '"what lifts","1","3","1","2"', "gt.csv line 1: answer id 1 appears twice"),
        (
            DOCS_OK,
            '"what lifts","1","3"\n"What lifts .","2","2"',
            "gt.csv line 2: duplicate question (also on line 1)",
        ),
        (DOCS_OK, b'"what lifts","1","3"\n"caf\xe9","2","2"', "gt.csv line 2: not UTF-8 text (byte 0xe9)"),
    ],
)
def test_import_malformed_files_give_clear_error_and_import_nothing(db, tmp_path, docs, gt, message):
    docs_path, gt_path = write(tmp_path, "docs.json", docs), write(tmp_path, "gt.csv", gt)
    with pytest.raises(CommandError) as excinfo:
        import_("bad", "--rnr-documents", docs_path, "--rnr-ground-truth", gt_path)
    assert message in str(excinfo.value)
    assert "nothing was imported" in str(excinfo.value)
    assert counts() == (0, 0, 0, 0, 0)


def test_import_bad_file_into_existing_collection_leaves_it_unchanged(cranfield, tmp_path):
    before = counts()
    gt = write(tmp_path, "gt.csv", '"a new question about wings","1","4"\n"another","12345","2"')
    with pytest.raises(CommandError, match="gt.csv line 2: answer id 12345 not in collection cran"):
        import_("cran", "--rnr-ground-truth", gt)
    assert counts() == before
    assert not Question.objects.filter(text="a new question about wings").exists()


def test_import_trec_layout_with_splits_from_topics(db, tmp_path):
    corpus = write(
        tmp_path,
        "corpus.jsonl",
        "\n".join(
            json.dumps(d)
            for d in [
                {"id": "d1", "title": "Wings", "text": "lift of wings", "year": 1958},
                {"id": "d2", "title": "Drag", "text": "drag at speed"},
            ]
        ),
    )
    topics = write(tmp_path, "topics.tsv", "t1\twhat gives lift\ttest\nt2\twhat causes drag\ttrain\n")
    qrels = write(tmp_path, "qrels.txt", "t1 0 d1 3\nt1 0 d2 -1\nt2 0 d2 2\n")
    output = import_("trec", "--corpus", corpus, "--topics", topics, "--qrels", qrels)
    assert "answers: 2 new" in output
    assert dict(Question.objects.values_list("external_id", "split")) == {"t1": "test", "t2": "train"}
    assert sorted(Label.objects.values_list("question__external_id", "answer__external_id", "gain")) == [
        ("t1", "d1", 3),
        ("t1", "d2", 0),
        ("t2", "d2", 2),
    ]
    assert Answer.objects.get(external_id="d1").metadata == {"year": 1958}


def test_import_trec_qrels_unlisted_incorrect_by_default_or_unknown(db, tmp_path):
    corpus = write(tmp_path, "corpus.jsonl", '{"id": "d1", "title": "Wings", "text": "lift of wings"}')
    topics = write(tmp_path, "topics.tsv", "t1\twhat gives lift\ttrain\n")
    qrels = write(tmp_path, "qrels.txt", "t1 0 d1 3\n")

    default = import_("trec", "--corpus", corpus, "--topics", topics, "--qrels", qrels)
    unknown = import_("trec", "--qrels", qrels, "--unlisted-unknown")

    first, second = GroundTruthImport.objects.order_by("id")
    assert (first.files, first.unlisted_incorrect, second.files, second.unlisted_incorrect) == (
        "corpus.jsonl, topics.tsv, qrels.txt",
        True,
        "qrels.txt",
        False,
    )
    assert default.splitlines()[-1] == (
        f"The training reads the answers that import {first.pk} (corpus.jsonl, topics.tsv, qrels.txt) does not list "
        "for its 1 judged question as 0 stars."
    )
    assert unknown.splitlines()[-1] == (
        f"The answers that import {second.pk} (qrels.txt) does not list for its 1 judged question stay unknown (not "
        "rated)."
    )


@pytest.mark.parametrize(
    ("name", "content", "option", "message"),
    [
        (
            "corpus.jsonl",
            '{"id": "d1", "text": "x"}\nnot json\n',
            "--corpus",
            "corpus.jsonl line 2: invalid JSON",
        ),
        (
            "corpus.jsonl",
            '{"id": "d1"}\n{"id": "d1"}\n',
            "--corpus",
            "corpus.jsonl line 2: duplicate id 'd1' (also on line 1)",
        ),
        ("topics.tsv", "t1 what gives lift\n", "--topics", "topics.tsv line 1: expected qid<TAB>text"),
        (
            "topics.tsv",
            "t1\tlift\tvalidation\n",
            "--topics",
            "topics.tsv line 1: split 'validation' must be train or test",
        ),
        ("qrels.txt", "t1 0 d1\n", "--qrels", "qrels.txt line 1: expected 4 columns"),
        ("qrels.txt", "t1 0 d1 9\n", "--qrels", "qrels.txt line 1: grade 9 is out of range"),
    ],
)
def test_import_trec_malformed_lines_name_file_and_line(db, tmp_path, name, content, option, message):
    path = write(tmp_path, name, content)
    with pytest.raises(CommandError) as excinfo:
        import_("trec", option, path)
    assert message in str(excinfo.value)
    assert counts() == (0, 0, 0, 0, 0)


def test_import_without_files_is_an_error(db):
    with pytest.raises(CommandError, match="nothing to import"):
        import_("empty")


def test_import_missing_file_is_an_error(db, tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        import_("x", "--corpus", str(tmp_path / "nope.jsonl"))


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"id": "d1", "title": "T", "text": "nul \\u0000 here"}',
            'corpus.jsonl line 2: field "text" contains a NUL character',
        ),
        (
            '{"id": "d1", "title": "T", "text": "ok", "tag": "a\\u0000"}',
            "corpus.jsonl line 2: a metadata field contains a NUL",
        ),
        (
            '{"id": "d\\u0000", "title": "T", "text": "ok"}',
            'corpus.jsonl line 2: field "id" contains a NUL character',
        ),
        (
            json.dumps({"id": "d1", "title": "T", "text": "x" * 100_001}),
            'corpus.jsonl line 2: field "text" is 100,001 characters long; the limit is 100,000',
        ),
        (
            json.dumps({"id": "d1", "title": "t" * 1_001, "text": "ok"}),
            'corpus.jsonl line 2: field "title" is 1,001 characters long; the limit is 1,000',
        ),
    ],
)
def test_import_nul_or_oversized_field_names_file_and_line_and_imports_nothing(db, tmp_path, line, message):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"id": "d0", "title": "Fine", "text": "fine"}\n' + line + "\n")
    before = counts()

    with pytest.raises(CommandError) as error:
        import_("limits", "--corpus", str(corpus))

    assert message in str(error.value)
    assert counts() == before


def test_import_topic_with_nul_names_line(db, tmp_path):
    topics = tmp_path / "topics.tsv"
    topics.write_text("q1\tfine question\nq2\tbad \x00 question\n")

    with pytest.raises(CommandError, match=r"topics.tsv line 2: question text contains a NUL character"):
        import_("limits", "--topics", str(topics))


def _tiny_trec(tmp_path) -> list[str]:
    corpus = write(tmp_path, "corpus.jsonl", json.dumps({"id": "d1", "title": "Wings", "text": "lift"}))
    topics = write(tmp_path, "topics.tsv", "t1\twhat gives lift\ttrain\n")
    return ["--corpus", corpus, "--topics", topics]


def test_import_trainer_becomes_a_trainer_of_the_new_collection(db, tmp_path):
    tom = User.objects.create_user("tom", password="pw")

    output = import_("aero", *_tiny_trec(tmp_path), "--trainer", "tom")

    assert output.endswith("tom is a trainer of aero.\n")
    assert list(Membership.objects.values_list("user", "collection__slug", "role")) == [
        (tom.pk, "aero", Role.TRAINER)
    ]


def test_import_unknown_trainer_is_named_and_imports_nothing(db, tmp_path):
    with pytest.raises(CommandError) as error:
        import_("aero", *_tiny_trec(tmp_path), "--trainer", "nobody")

    assert str(error.value) == (
        "--trainer: no user 'nobody'; import without --trainer, then make them with: python manage.py "
        "add_member --collection aero --user nobody --role trainer --create"
    )
    assert counts() == (0, 0, 0, 0, 0)
