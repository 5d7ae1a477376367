"""Rated Ranking Evaluator ratings JSON in its three layouts, and errors that name the line and the field."""

from pathlib import Path

import pytest

from corpus.formats.common import FormatError, question_id_from_text
from corpus.formats.grades import grade_map_from_spec
from corpus.formats.rre import parse_rre_ratings

DATA = Path(__file__).resolve().parents[1] / "data" / "rre"
IDENTITY = grade_map_from_spec("identity")
STAR = question_id_from_text("star wars")
ALIENS = question_id_from_text("aliens, the sequel")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ratings.json"
    path.write_text(text, encoding="utf-8")
    return path


def judged(judgments) -> set[tuple[str, str, int]]:
    return {(j.question_id, j.answer_id, j.stars) for j in judgments}


def test_parse_rre_topics_layout_with_gain_objects():
    questions, judgments = parse_rre_ratings(DATA / "ratings-topics.json", grade_map=IDENTITY)

    # "star wars" and "Star Wars" are one question (the id comes from the normalised text).
    assert [(q.external_id, q.text, q.line) for q in questions] == [(STAR, "star wars", 15)]
    assert judged(judgments) == {(STAR, "11", 3), (STAR, "1891", 2)}
    assert {j.line for j in judgments} == {27, 30}


def test_parse_rre_query_groups_layout_with_gain_lists():
    questions, judgments = parse_rre_ratings(DATA / "ratings-query-groups.json", grade_map=IDENTITY)

    assert [q.text for q in questions] == ["star wars", "aliens, the sequel"]
    assert judged(judgments) == {
        (STAR, "11", 3),
        (STAR, "1891", 3),
        (STAR, "329", 0),
        (ALIENS, "679", 3),
        (ALIENS, "348", 1),
    }


def test_parse_rre_quepid_export_layout():
    questions, judgments = parse_rre_ratings(DATA / "quepid-rre-export.json", grade_map=IDENTITY)

    assert [q.text for q in questions] == ["star wars", "space odyssey"]
    assert judged(judgments) == {(STAR, "1892", 2), (STAR, "11", 3), (STAR, "1891", 3)}


def test_parse_rre_grade_map_applies_to_gains():
    _, judgments = parse_rre_ratings(DATA / "ratings-topics.json", grade_map=grade_map_from_spec("3:2,2:1"))

    assert judged(judgments) == {(STAR, "11", 2), (STAR, "1891", 1)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"query_groups": [\n  {"name": "x"\n  }]}',
            'ratings.json line 2: field "query_groups[0].queries" must be a non-empty list',
        ),
        (
            '{"query_groups": [{"queries": [\n {"placeholders":\n {"$q": "x"}}]}]}',
            'ratings.json line 3: field "query_groups[0].queries[0].placeholders.$query" is missing or empty',
        ),
        (
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}],\n "relevant_documents":\n {"7": ["a1"]}}]}',
            'ratings.json line 3: field "query_groups[0].relevant_documents.7": gain 7 is out of range for the grade map',
        ),
        (
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}],\n "relevant_documents": {"a1":\n {"gain": "high"}}}]}',
            "ratings.json line 3: field \"query_groups[0].relevant_documents.a1.gain\": gain 'high' is not a whole number",
        ),
        (
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}],\n "relevant_documents": {"a1":\n {"grade": 2}}}]}',
            'ratings.json line 3: field "query_groups[0].relevant_documents.a1.gain" is missing',
        ),
        (
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}],\n "relevant_documents":\n {"a1": 2}}]}',
            'ratings.json line 3: field "query_groups[0].relevant_documents.a1" must be {"gain": N} or a list of document ids',
        ),
        (
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}], "relevant_documents": {"3": ["a1"]}},\n'
            '{"queries": [{"placeholders": {"$query": "X"}}],\n "relevant_documents":\n {"1": ["a1"]}}]}',
            "ratings.json line 4: field \"query_groups[1].relevant_documents.1[0]\": document a1 for query 'X' is "
            "3 stars in query_groups[0].relevant_documents.3[0] but 1 here",
        ),
        (
            '{"index": "movies"}',
            'ratings.json line 1: expected a field "query_groups", "topics" or "queries"',
        ),
        ('{"query_groups": [\n}', "ratings.json line 2: invalid JSON"),
        ("[]", "ratings.json line 1: expected a JSON object with query_groups, topics or queries"),
        ('{"query_groups": []}', "ratings.json: no queries found"),
    ],
)
def test_parse_rre_bad_file_names_file_line_and_field(tmp_path, text, message):
    with pytest.raises(FormatError) as error:
        parse_rre_ratings(write(tmp_path, text), grade_map=IDENTITY)

    assert str(error.value).startswith(message)
