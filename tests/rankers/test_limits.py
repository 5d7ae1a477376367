"""rankers.limits: the collection size from which an engine ranker is advised over the builtin one."""

from rankers.limits import BUILTIN_ANSWERS_LIMIT, builtin_outgrown


def test_builtin_outgrown_from_150000_answers():
    assert (BUILTIN_ANSWERS_LIMIT, builtin_outgrown(answers=149_999), builtin_outgrown(answers=150_000)) == (
        150_000,
        False,
        True,
    )
