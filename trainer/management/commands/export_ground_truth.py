"""Write a collection's labels out as R&R CSV, TREC qrels or JSONL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.formats.writers import WRITERS
from corpus.models import Collection
from ratings.selectors import ground_truth_rows


class Command(BaseCommand):
    help = (
        "Export labels (gain 0-3). rnr-csv writes stars as the grade, so re-import it with --grade-map identity; "
        "jsonl carries stars explicitly."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--format", choices=sorted(WRITERS), default="jsonl")
        parser.add_argument("--split", choices=["train", "test", "all"], default="train")
        parser.add_argument("--output", "-o", type=Path, help="file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["slug"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['slug']!r}")
        rows = ground_truth_rows(collection=collection, split=options["split"])
        writer = WRITERS[options["format"]]
        if options["output"]:
            with options["output"].open("w", encoding="utf-8", newline="") as out:
                writer(rows, out)
        else:
            writer(rows, self.stdout._out)
