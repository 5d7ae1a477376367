"""Train a new version of a ranker (builtin, or a reranker of an engine's answers), as the Rankers page's button does."""

from __future__ import annotations

import sys
import time
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.models import Collection
from rankers.models import Ranker
from rankers.selectors import default_ranker
from trainer.models import Training, TrainingPhase, TrainingStatus
from trainer.services import TrainingConflict, TrainingRefused, TrainingUnavailable, training_start

# With --wait and no worker taking the job after this long, say what is probably missing.
NO_WORKER_HINT_SECONDS = 15


class Command(BaseCommand):
    help = (
        "Train a new version of a collection's ranker from its training labels. The version is "
        "compared with the champion on the test questions and promoted by the ranker's policy. A Celery "
        "worker does the work (make run starts one); --wait shows its progress until it is done."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, metavar="SLUG")
        parser.add_argument(
            "--ranker", type=int, metavar="ID", help="default: the collection's default ranker"
        )
        parser.add_argument("--wait", action="store_true", help="wait for the training and show its progress")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection {options['collection']!r}")
        if options["ranker"] is not None:
            ranker = Ranker.objects.filter(collection=collection, pk=options["ranker"]).first()
            if ranker is None:
                raise CommandError(f"collection {collection.slug} has no ranker {options['ranker']}")
        else:
            ranker = default_ranker(collection=collection)
            if ranker is None:
                raise CommandError(f"collection {collection.slug} has no ranker; create one first")
        try:
            training = training_start(ranker=ranker, trigger="command")
        except (TrainingRefused, TrainingConflict, TrainingUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc
        self.stdout.write(f"Training {training.pk} of {ranker.name} queued.")
        if not options["wait"]:
            return
        training = self._wait(training)
        if training.status == TrainingStatus.FAILED:
            raise CommandError(f"training {training.pk} failed: {training.error}")
        version = training.version
        assert version is not None
        self.stdout.write(
            self.style.SUCCESS(
                f"{version.label} ({version.method}): {training.decision}. {training.decision_reason}"
            )
        )

    def _wait(self, training: Training) -> Training:
        terminal = sys.stderr.isatty()
        started, hinted = time.monotonic(), False
        while True:
            training.refresh_from_db()
            if terminal:
                filled = round(30 * training.progress)
                phase = TrainingPhase(training.phase).label
                sys.stderr.write(
                    f"\r[{'#' * filled}{'-' * (30 - filled)}] {training.progress:4.0%} {phase:<40}"
                )
                sys.stderr.flush()
            if not training.is_active:
                if terminal:
                    sys.stderr.write("\n")
                return training
            if (
                not hinted
                and training.status == TrainingStatus.QUEUED
                and time.monotonic() - started > NO_WORKER_HINT_SECONDS
            ):
                hinted = True
                self.stderr.write(
                    "\nNo worker has taken the training yet: is `make run` (or a Celery worker) running?"
                )
            time.sleep(0.5)
