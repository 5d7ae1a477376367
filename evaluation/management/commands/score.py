"""``manage.py score``: trec_eval 10 compatible scoring of a TREC run against TREC qrels."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.metrics.trec import DEFAULT_MEASURES, MEASURE_ORDER, score_files


class Command(BaseCommand):
    help = (
        "Score a TREC run (qid Q0 docno rank score tag) against TREC qrels (qid 0 docno grade) and print "
        "exactly what trec_eval 10 prints for the requested measures. Supported measures: "
        f"{', '.join(MEASURE_ORDER)}; default: {' '.join('-m ' + m for m in DEFAULT_MEASURES)}. "
        "ndcg_cut_judged is trec_eval -J's ndcg_cut: documents missing from the qrels are removed first."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("qrels", help="TREC qrels file: qid iter docno grade")
        parser.add_argument("run", help="TREC run file: qid Q0 docno rank score tag")
        parser.add_argument(
            "-q", dest="per_query", action="store_true", help="also print the value of every query"
        )
        parser.add_argument(
            "-c",
            dest="complete",
            action="store_true",
            help="average over every query of the qrels; queries missing from the run score 0",
        )
        parser.add_argument(
            "-l",
            dest="level",
            type=int,
            default=1,
            metavar="LEVEL",
            help=(
                "lowest grade counted as relevant by success, P and recall (default 1); "
                "ndcg_cut and ndcg_cut_judged ignore it"
            ),
        )
        parser.add_argument(
            "-m",
            dest="measures",
            action="append",
            default=[],
            metavar="MEASURE[.CUTOFFS]",
            help="measure to print, e.g. ndcg_cut.10,20, ndcg_cut_judged.10 or success.5 (repeatable; default: "
            + ", ".join(DEFAULT_MEASURES)
            + ")",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            lines = score_files(
                options["qrels"],
                options["run"],
                options["measures"] or DEFAULT_MEASURES,
                per_query=options["per_query"],
                complete=options["complete"],
                relevance_level=options["level"],
            )
        except OSError as exc:
            raise CommandError(f"{exc.filename}: {exc.strerror}") from exc
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("\n".join(lines))
