"""The rater pages share the rating fixtures (a small corpus, rankers, evaluation runs)."""

from tests.ratings.conftest import *  # noqa: F403
