"""Quepid ratings CSV (a case's and a snapshot's ratings export): what is read, and every error's place."""

from pathlib import Path

import pytest

from corpus.formats.common import FormatError, question_id_from_text
from corpus.formats.grades import grade_map_from_spec
from corpus.formats.quepid import parse_quepid_ratings

DATA = Path(__file__).resolve().parents[1] / "data" / "quepid"
IDENTITY = grade_map_from_spec("identity")


def write(tmp_path: Path, text: str, name: str = "ratings.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def judged(judgments) -> set[tuple[str, str, int, int]]:
    return {(j.question_id, j.answer_id, j.stars, j.line) for j in judgments}


def test_parse_quepid_case_export_reads_every_rating_and_query():
    questions, judgments = parse_quepid_ratings(DATA / "case-ratings.csv", grade_map=IDENTITY)

    star, aliens, jurassic, space = (
        question_id_from_text(t)
        for t in ("star wars", "aliens, the sequel", "jurassic park", "space odyssey")
    )
    assert [(q.external_id, q.text, q.line) for q in questions] == [
        (star, "star wars", 2),
        (aliens, "aliens, the sequel", 6),
        (jurassic, "jurassic park", 8),
        (space, "space odyssey", 9),
    ]
    assert judged(judgments) == {
        (star, "11", 3, 2),
        (star, "1891", 3, 3),
        (star, "1892", 2, 4),
        (star, "329", 0, 5),
        (aliens, "679", 3, 6),
        (aliens, "348", 1, 7),
        (jurassic, "329", 3, 8),  # Quepid may write 3.0
    }
    assert {j.file for j in judgments} == {"case-ratings.csv"}


def test_parse_quepid_snapshot_export_skips_unrated_documents():
    questions, judgments = parse_quepid_ratings(DATA / "snapshot-ratings.csv", grade_map=IDENTITY)

    star, aliens = question_id_from_text("star wars"), question_id_from_text("aliens, the sequel")
    assert [q.text for q in questions] == ["star wars", "aliens, the sequel", "space odyssey"]
    assert judged(judgments) == {(star, "11", 3, 2), (star, "1892", 2, 4), (aliens, "679", 3, 5)}


def test_parse_quepid_ten_point_scale_with_explicit_grade_map():
    grade_map = grade_map_from_spec("10:3,7:2,4:1,1:0")

    _, judgments = parse_quepid_ratings(DATA / "detailed-scale.csv", grade_map=grade_map)

    assert sorted((j.answer_id, j.stars) for j in judgments) == [
        ("11", 3),
        ("1891", 2),
        ("1892", 1),
        ("329", 0),
    ]


def test_parse_quepid_ten_point_scale_without_grade_map_names_line_and_field():
    with pytest.raises(FormatError) as error:
        parse_quepid_ratings(DATA / "detailed-scale.csv", grade_map=IDENTITY)

    assert (
        str(error.value) == 'detailed-scale.csv line 2: field "rating": 10 is out of range for the grade map'
    )


def test_parse_quepid_snapshot_of_documents_is_refused_with_what_to_export():
    with pytest.raises(FormatError) as error:
        parse_quepid_ratings(DATA / "snapshot.csv", grade_map=IDENTITY)

    assert error.value.line == 1
    assert "holds no ratings" in str(error.value)
    assert "query,docid,rating" in str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "q,d,r\nstar wars,11,3\n",
            "ratings.csv line 1: expected the header query,docid,rating, found 'q,d,r'",
        ),
        (
            "query,docid,rating\nstar wars,11,good\n",
            "ratings.csv line 2: field \"rating\": 'good' is not a number",
        ),
        (
            "query,docid,rating\nstar wars,11,2.5\n",
            "ratings.csv line 2: field \"rating\": '2.5' is not a whole number; give a --grade-map",
        ),
        (
            "query,docid,rating\nstar wars,11\n",
            "ratings.csv line 2: expected 3 fields query,docid,rating, found 2",
        ),
        ("query,docid,rating\n,11,3\n", 'ratings.csv line 2: field "query" is empty'),
        ("query,docid,rating\nstar wars, ,3\n", 'ratings.csv line 2: field "docid" is empty'),
        (
            "query,docid,rating\nstar wars,11,3\nStar Wars,11,1\n",
            "ratings.csv line 3: query 'Star Wars' and docid 11 were rated differently on line 2",
        ),
        ("query,docid,rating\nstar\x00wars,11,3\n", 'ratings.csv line 2: field "query" contains a NUL'),
        ("", "ratings.csv: empty file (expected the header query,docid,rating)"),
        ("query,docid,rating\n", "ratings.csv: no queries found"),
    ],
)
def test_parse_quepid_bad_file_names_file_line_and_field(tmp_path, text, message):
    with pytest.raises(FormatError) as error:
        parse_quepid_ratings(write(tmp_path, text), grade_map=IDENTITY)

    assert str(error.value).startswith(message)


def test_parse_quepid_same_rating_twice_is_one_judgment(tmp_path):
    path = write(tmp_path, "query,docid,rating\nstar wars,11,3\nstar wars,11,3\n")

    _, judgments = parse_quepid_ratings(path, grade_map=IDENTITY)

    assert [(j.answer_id, j.stars, j.line) for j in judgments] == [("11", 3, 2)]


def test_parse_quepid_formula_guards_are_taken_off(tmp_path):
    path = write(tmp_path, 'query,docid,rating\n" -20 degrees",11,3\n\'=sum of forces,1891,2\n')

    questions, _ = parse_quepid_ratings(path, grade_map=IDENTITY)

    assert [q.text for q in questions] == ["-20 degrees", "=sum of forces"]
