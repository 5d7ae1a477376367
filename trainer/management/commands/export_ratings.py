"""Write every rating of a collection out, with its rater, source and note, as CSV or JSONL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.models import Collection
from ratings.exports import RATING_EXPORTS, write_ratings
from ratings.selectors import rating_rows


class Command(BaseCommand):
    help = "Export ratings (one row per rater and pair, with the rater's note), as csv or jsonl."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--format", choices=sorted(RATING_EXPORTS), default="csv")
        parser.add_argument("--split", choices=["train", "test", "all"], default="all")
        parser.add_argument("--output", "-o", type=Path, help="file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["slug"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['slug']!r}")
        rows = rating_rows(collection=collection, split=options["split"])
        if options["output"]:
            with options["output"].open("w", encoding="utf-8", newline="") as out:
                write_ratings(options["format"], rows, out)
        else:
            write_ratings(options["format"], rows, self.stdout._out)
