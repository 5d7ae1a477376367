"""Import answers, questions and ground truth into a collection, all or nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from corpus.formats.common import FormatError
from corpus.models import Collection, Role
from corpus.services import ImportFiles, collection_create, membership_set, parse_import_files
from trainer.services import collection_import


class Command(BaseCommand):
    help = (
        "Import a collection. Retrieve and Rank layout: --rnr-documents (Solr bulk-add JSON) and "
        "--rnr-ground-truth (CSV). TREC layout: --corpus (JSONL), --topics (TSV), --qrels. "
        "Ratings from Quepid (--quepid-csv) or Rated Ranking Evaluator (--rre-json). "
        "Ground truth becomes ratings by an import rater. A bad file imports nothing; re-importing changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="collection slug (created if it does not exist)")
        parser.add_argument("--name", help="collection name when creating it (default: the slug)")
        parser.add_argument("--description", default="")
        parser.add_argument(
            "--test-fraction", type=float, help="share of new questions put in the test split"
        )
        parser.add_argument("--rnr-documents", type=Path, metavar="JSON")
        parser.add_argument("--rnr-ground-truth", type=Path, metavar="CSV")
        parser.add_argument("--corpus", type=Path, metavar="JSONL")
        parser.add_argument("--topics", type=Path, metavar="TSV")
        parser.add_argument("--qrels", type=Path, metavar="QRELS")
        parser.add_argument(
            "--ground-truth-jsonl", type=Path, metavar="JSONL", help="export_ground_truth jsonl output"
        )
        parser.add_argument(
            "--quepid-csv",
            type=Path,
            metavar="CSV",
            help="Quepid ratings export of a case or a snapshot (query,docid,rating)",
        )
        parser.add_argument("--rre-json", type=Path, metavar="JSON", help="Rated Ranking Evaluator ratings")
        parser.add_argument(
            "--grade-map",
            help='grade→stars: "rnr" (max(grade-1,0); default for R&R CSV), "identity" (default for qrels) '
            'or pairs like "4:3,3:2,2:1,1:0,0:0"',
        )
        parser.add_argument(
            "--rater", default="ground-truth", help="username the imported judgments are rated by"
        )
        parser.add_argument(
            "--unlisted-unknown",
            action="store_true",
            help="read the answers the judgments do not list for a judged question as unknown, not "
            "incorrect (0 stars, the default, as trec_eval reads qrels): for a sample of judgments",
        )
        parser.add_argument(
            "--trainer",
            metavar="USERNAME",
            help="make this user a trainer of the collection (it may then hold a trainer token for it)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        files = ImportFiles(
            rnr_documents=options["rnr_documents"],
            rnr_ground_truth=options["rnr_ground_truth"],
            corpus=options["corpus"],
            topics=options["topics"],
            qrels=options["qrels"],
            ground_truth_jsonl=options["ground_truth_jsonl"],
            quepid_csv=options["quepid_csv"],
            rre_json=options["rre_json"],
            grade_map=options["grade_map"],
        )
        given = [p for p in vars(files).values() if isinstance(p, Path)]
        if not given:
            raise CommandError("nothing to import: give at least one file option (see --help)")
        for path in given:
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
        trainer = None
        if options["trainer"] is not None:
            trainer = get_user_model().objects.filter(username=options["trainer"]).first()
            if trainer is None:
                raise CommandError(
                    f"--trainer: no user {options['trainer']!r}; import without --trainer, then make them "
                    f"with: python manage.py add_member --collection {options['slug']} --user "
                    f"{options['trainer']} --role trainer --create"
                )
        bar = ProgressBar(total=len(given) + 3, enabled=sys.stderr.isatty(), out=sys.stderr)
        try:
            answers, questions, judgments = parse_import_files(files, progress=bar.step)
            # Creating the collection is part of the import: a bad file leaves no empty collection behind.
            with transaction.atomic():
                collection = Collection.objects.filter(slug=options["slug"]).first()
                if collection is None:
                    extra = (
                        {}
                        if options["test_fraction"] is None
                        else {"test_fraction": options["test_fraction"]}
                    )
                    collection = collection_create(
                        name=options["name"] or options["slug"],
                        slug=options["slug"],
                        description=options["description"],
                        **extra,
                    )
                summary = collection_import(
                    collection=collection,
                    answers=answers,
                    questions=questions,
                    judgments=judgments,
                    rater_username=options["rater"],
                    unlisted_incorrect=not options["unlisted_unknown"],
                    files=[path.name for path in given],
                    progress=bar.step,
                )
                if trainer is not None:
                    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
        except (FormatError, ValueError, ValidationError) as exc:
            raise CommandError(f"{exc} (nothing was imported)") from None
        finally:
            bar.close()
        self.stdout.write(self.style.SUCCESS(f"{collection.slug}: {summary}"))
        if summary.option_sentence:
            self.stdout.write(summary.option_sentence)
        if trainer is not None:
            self.stdout.write(f"{trainer.username} is a trainer of {collection.slug}.")


class ProgressBar:
    """A one-line progress bar on a terminal (silent when output is not a terminal, e.g. in CI logs)."""

    def __init__(self, *, total: int, enabled: bool, out: Any, width: int = 30) -> None:
        self.total, self.done, self.enabled, self.out, self.width = total, 0, enabled, out, width

    def step(self, label: str) -> None:
        self.done = min(self.done + 1, self.total)
        if self.enabled:
            filled = round(self.width * self.done / self.total)
            bar = "#" * filled + "-" * (self.width - filled)
            self.out.write(f"\r[{bar}] {self.done}/{self.total} {label:<40}")
            self.out.flush()

    def close(self) -> None:
        if self.enabled and self.done:
            self.out.write("\n")
