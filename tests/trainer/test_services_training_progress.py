"""A training's stored progress: each export step in its own slice of the fit phase, and never lower
than what was stored (the bar went 0.798 → 0.758 when the export's steps restarted the phase)."""

from __future__ import annotations

import pytest

from corpus.services import collection_create
from rankers.services import ranker_create
from trainer.models import Training, TrainingPhase
from trainer.services import export_progress, training_claim, training_progress_write


@pytest.fixture
def running(db):
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")
    training = Training.objects.create(ranker=ranker)
    assert training_claim(training_id=training.pk, worker="w")
    return training


def _stored(training: Training) -> tuple[str, float]:
    training.refresh_from_db()
    return training.phase, training.progress


def test_training_progress_write_export_steps_each_in_their_slice_of_fit_never_decreasing(running):
    stored = []

    def progress(phase: str, fraction: float) -> None:
        training_progress_write(training_id=running.pk, phase=phase, fraction=fraction)
        stored.append(_stored(running))

    export = export_progress(progress)
    progress("cross-validate", 1.0)
    progress("fit", 0.0)  # the learner's own fit
    # The reports of engine_export_fit, in its order: training questions read, the fit, the test
    # questions read (first half) and ranked (second half).
    export("export-train", 0.0)
    export("export-train", 0.5)
    export("export-train", 1.0)
    export("export-fit", 0.0)
    export("export-fit", 1.0)
    export("export-test", 0.0)
    export("export-test", 0.25)
    export("export-test", 0.5)
    export("export-test", 1.0)
    progress("evaluate", 0.0)
    progress("decide", 1.0)

    assert stored == [
        ("cross-validate", 0.75),
        ("fit", 0.75),
        ("fit", 0.755),
        ("fit", 0.765),
        ("fit", 0.775),
        ("fit", 0.775),
        ("fit", 0.78),
        ("fit", 0.78),
        ("fit", 0.785),
        ("fit", 0.79),
        ("fit", 0.8),
        ("evaluate", 0.8),
        ("decide", 1.0),
    ]
    values = [value for _, value in stored]
    assert values == sorted(values)


def test_training_progress_write_a_step_restarting_its_count_keeps_the_stored_progress(running):
    training_progress_write(training_id=running.pk, phase=TrainingPhase.FIT, fraction=0.96)

    training_progress_write(training_id=running.pk, phase=TrainingPhase.FIT, fraction=0.16)

    assert _stored(running) == ("fit", 0.798)


def test_training_progress_write_a_late_report_of_an_earlier_phase_keeps_phase_and_progress(running):
    training_progress_write(training_id=running.pk, phase=TrainingPhase.EVALUATE, fraction=0.5)

    training_progress_write(training_id=running.pk, phase=TrainingPhase.FIT, fraction=0.5)

    assert _stored(running) == ("evaluate", 0.885)


def test_training_progress_write_a_forward_report_moves_phase_and_progress(running):
    training_progress_write(training_id=running.pk, phase=TrainingPhase.FIT, fraction=0.5)

    training_progress_write(training_id=running.pk, phase=TrainingPhase.EVALUATE, fraction=0.0)

    assert _stored(running) == ("evaluate", 0.8)
