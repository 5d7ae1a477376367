"""Writes of ratings and the labels aggregated from them (one subject per module).

* :mod:`.write` – the one write of ratings: the rating, its history and its pair's label, for one pair
  (``rating_write``: on PostgreSQL a person's save is one round trip of prepared statements) or many
  (``ratings_write``). Every path below that stores stars goes through it.
* :mod:`.record` – people's saves (the rating page, the API): checked, with a note, lists of pairs
  locked in one order and retried when PostgreSQL aborts them.
* :mod:`.judge_ratings` – a judge's judgments as its user's ratings, and whether they count (trust).
* :mod:`.imports` – imported ground truth as one import rater's ratings, and the import kept with its option.
* :mod:`.notes` – a rater's note on their rating, kept in the history.
* :mod:`.history` – undo: the last change of a rating taken back.
* :mod:`.skips` – "can't judge this question".
* :mod:`.labels` – the median rule, which ratings count, recomputing labels (SQL and Python), and the
  marks of the questions whose ratings or labels changed (the rating queue's feed).
* :mod:`.locks` – each pair's lock, and retrying a transaction PostgreSQL aborted (``RatingsBusy``).
* :mod:`.validation` – what stars and a note may be.
"""

from .history import rating_undo
from .imports import ground_truth_import_record, ground_truth_import_set, ratings_import
from .judge_ratings import judge_rating_record, judge_ratings_record, judge_trust_set
from .labels import aggregate_stars, counted_stars, label_changes_mark, labels_recompute
from .locks import TRANSACTION_ATTEMPTS, RatingsBusy, is_retryable
from .notes import rating_note_set
from .record import rating_record, ratings_record
from .skips import SKIP_REASON_MAX_LENGTH, question_skip
from .validation import validate_note, validate_stars
from .write import RatingRow, RatingsWritten, rating_write, ratings_write

__all__ = [
    "SKIP_REASON_MAX_LENGTH",
    "TRANSACTION_ATTEMPTS",
    "RatingRow",
    "RatingsBusy",
    "RatingsWritten",
    "aggregate_stars",
    "counted_stars",
    "ground_truth_import_record",
    "ground_truth_import_set",
    "is_retryable",
    "judge_rating_record",
    "judge_ratings_record",
    "judge_trust_set",
    "label_changes_mark",
    "labels_recompute",
    "question_skip",
    "rating_note_set",
    "rating_record",
    "rating_undo",
    "rating_write",
    "ratings_import",
    "ratings_record",
    "ratings_write",
    "validate_note",
    "validate_stars",
]
