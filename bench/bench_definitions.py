"""Which NDCG@10 should a comparison use? Measured under the pooled ratings the queue really collects
(issue 34 §1).

``bench_loop`` runs as it does (simulated raters following the real queue, Train after each round, the
truth a collection's complete judgments); after each round (``bench_loop.ROUND_HOOKS``) this bench takes
every system there is at that moment:

* the product ranker's versions (each round's champion and every trained candidate, promoted or kept),
* the references: BM25 (or the engine alone), the untrained fusion, the upper bound,
* unless ``--no-candidates``: a learned fusion and a LambdaMART fitted on the app's labels of that round
  (``ranker_train`` with the choice forced, on the references' ranker, so the queue never sees them),

drops the systems whose top 2k rankings of every test question are the same as an earlier one's, and scores
each with the app's labels of that round under each candidate definition:

* ``zero``: an unrated answer is 0 stars (``rankers.ndcg.ndcg_at_k`` through ``score_rankings``: what an
  evaluation run, the compare page and an export's cost compute today; trec_eval ``ndcg_cut.10``);
* ``judged@k``: judged-only, the top k condensed to its rated answers (``versions_compare``, the gate;
  ``evaluation.metrics.judged``, trec_eval ``-J``);
* ``judged@2k``: judged-only over the top 2k (the learner's cross-validation, ``candidates._ndcg``);
* ``predicted``: the expected NDCG@k with the unrated answers' stars drawn from the predicted relevance
  (``evaluation.certainty``: a system alone as the headline's estimate; a pair as "Is the challenger
  better?", its ``expected_difference``, the relevance model fitted on the pair's pool as the app does);
* ``both-rated`` (pairs only): unrated = 0, on the test questions whose top k is fully rated for both.

and with the truth (the test questions' complete judgments, unlisted answers 0 stars, the questions with a
relevant answer: ``bench_loop.TruthScorer``). Reported per collection and overall: over the pairs of
systems of a round, how often each definition orders the pair as the truth does (all pairs whose truth
difference is not 0; pairs whose truth difference is at least 0.01; a tie counts half), how often it
orders it the wrong way by at least 0.01 both ways ("confidently wrong"), the mean absolute error of the
pair's difference and of each system's figure against the truth, Kendall's τ-b between the definition
and the truth over a round's systems (mean over rounds), with the share of rated answers in the top 10.

    .venv/bin/python bench/bench_definitions.py --quick                       # adi, covidfaq; 60 questions
    .venv/bin/python bench/bench_definitions.py --collections cranfield-rr,adi,cisi,cacm
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bench_loop as loop
import numpy as np
from scipy.stats import kendalltau

from corpus.models import Question
from corpus.selectors import test_questions
from evaluation.certainty.state import judging_state
from evaluation.models import EvaluationRun
from evaluation.services import score_rankings
from evaluation.uncertainty import probability_of_improvement
from rankers.backends import RankQuery, get_backend
from rankers.models import RankerVersion
from ratings.selectors import labels_by_question
from trainer.learner import training
from trainer.services import ranker_train

DEFINITIONS = ("zero", "judged@k", "judged@2k", "predicted")
PAIR_DEFINITIONS = (*DEFINITIONS, "both-rated")
CLOSE = 0.01  # a truth difference below this is "too close to call"


@contextmanager
def forced(method: str) -> Iterator[None]:
    """``ranker_train`` fits ``method`` without cross-validating anything (the choice is forced)."""
    cross_validate, choose = training._cross_validate, training.choose
    training._cross_validate = lambda make, examples, *a, **kw: (np.full(len(examples), 0.5), [0.5], 1.0)  # type: ignore[assignment]
    training.choose = lambda scores, *, untrained, first: (method, "fusion", method)  # type: ignore[assignment]
    try:
        yield
    finally:
        training._cross_validate, training.choose = cross_validate, choose  # type: ignore[assignment]


@dataclass
class Snapshot:
    """One round's systems: their figures under each definition and on the truth, and the pairs."""

    collection: str
    number: int
    systems: list[str] = field(default_factory=list)
    truth: list[float] = field(default_factory=list)
    share: list[float] = field(default_factory=list)  # rated share of the top k (all test questions)
    pooled: list[bool] = field(default_factory=list)  # a product version: the queue pools its top k
    figures: dict[str, list[float]] = field(default_factory=dict)
    # (i, j, truth difference, {definition: difference}) for i < j
    pairs: list[tuple[int, int, float, dict[str, float]]] = field(default_factory=list)
    both_rated_questions: list[int] = field(default_factory=list)  # per pair, questions both-rated used


class Measurer:
    def __init__(self, name: str, candidates: bool) -> None:
        self.name = name
        self.candidates = candidates
        self.rankings: dict[int, list[list[str]]] = {}
        self.snapshots: list[Snapshot] = []
        self.extra: list[RankerVersion] = []

    def _rank(self, version: RankerVersion, questions: list[Question], depth: int) -> list[list[str]]:
        if version.pk not in self.rankings:
            backend = get_backend(version.ranker, version)
            self.rankings[version.pk] = [
                list(backend.rank(RankQuery(q.external_id, q.text), depth).ids) for q in questions
            ]
        return self.rankings[version.pk]

    def __call__(self, state: loop.RoundState) -> None:
        started = time.perf_counter()
        collection = state.collection
        k = collection.ndcg_k
        if self.candidates:
            for method in ("learned-fusion", "lambdamart"):
                try:
                    with forced(method):
                        version = ranker_train(ranker=state.reference)
                except Exception as exc:  # too few rated training questions in an early round
                    print(f"  [definitions] forced {method} not fitted: {exc!r}")
                    continue
                version.label = f"{method}-r{state.number}"
                self.extra.append(version)
        questions = list(test_questions(collection=collection).order_by("id"))
        by_question = labels_by_question(question_ids=[q.pk for q in questions])
        labels = [by_question[q.pk] for q in questions]
        run = EvaluationRun(
            ndcg_k=k,
            gain_scheme=collection.gain_scheme,
            discount=collection.discount,
            relevance_threshold=collection.relevance_threshold,
            accuracy_k=collection.accuracy_k,
        )
        named: list[tuple[str, RankerVersion]] = [
            (f"{v.label} {v.method or 'engine'}", v)
            for v in RankerVersion.objects.filter(ranker=state.ranker).order_by("pk")
        ]
        named += [(name, v) for name, v in state.references.items()]  # BM25 and the fusion: duplicates
        named += [(v.label, v) for v in self.extra]
        seen: dict[tuple, str] = {}
        systems: list[tuple[str, RankerVersion, list[list[str]]]] = []
        for name, version in named:
            ranked = self._rank(version, questions, 2 * k)
            key = tuple(tuple(r) for r in ranked)
            if key in seen:
                continue
            seen[key] = name
            systems.append((name, version, ranked))
        snap = Snapshot(self.name, state.number)
        per_question: dict[str, list[np.ndarray]] = {d: [] for d in DEFINITIONS}
        tops = []
        for name, version, ranked in systems:
            snap.systems.append(name)
            snap.pooled.append(version.ranker_id == state.ranker.pk)
            snap.truth.append(float(np.nanmean(state.scorer.ndcg(version))))
            top = [r[:k] for r in ranked]
            tops.append(top)
            shares = [
                sum(a in known for a in r) / max(1, len(r)) for r, known in zip(top, labels, strict=True)
            ]
            snap.share.append(float(np.mean(shares)))
            zero = np.asarray(score_rankings(run=run, rankings=top, labels=labels).ndcg, dtype=float)
            judged = [[a for a in r if a in known] for r, known in zip(top, labels, strict=True)]
            judged_k = np.asarray(score_rankings(run=run, rankings=judged, labels=labels).ndcg, dtype=float)
            deep = [[a for a in r if a in known] for r, known in zip(ranked, labels, strict=True)]
            judged_2k = np.asarray(score_rankings(run=run, rankings=deep, labels=labels).ndcg, dtype=float)
            for d, values in (("zero", zero), ("judged@k", judged_k), ("judged@2k", judged_2k)):
                per_question[d].append(values)
            arrays_state = judging_state(
                collection=collection, rankings=[{q.pk: r for q, r in zip(questions, top, strict=True)}]
            )
            estimate = probability_of_improvement(
                arrays_state.arrays, arrays_state.probs, challenger=0, champion=0
            )
            per_question["predicted"].append(np.array([estimate.run_means[0]]))
        for d in DEFINITIONS:
            snap.figures[d] = [
                float(np.nanmean(v)) if np.any(~np.isnan(v)) else math.nan for v in per_question[d]
            ]
        full = [
            np.array([all(a in known for a in r) for r, known in zip(top, labels, strict=True)])
            for top in tops
        ]
        for i, j in itertools.combinations(range(len(systems)), 2):
            diffs = {d: snap.figures[d][i] - snap.figures[d][j] for d in ("zero", "judged@k", "judged@2k")}
            pair_state = judging_state(
                collection=collection,
                rankings=[
                    {q.pk: r for q, r in zip(questions, tops[j], strict=True)},
                    {q.pk: r for q, r in zip(questions, tops[i], strict=True)},
                ],
            )
            diffs["predicted"] = probability_of_improvement(
                pair_state.arrays, pair_state.probs, challenger=1, champion=0
            ).expected_difference
            both = full[i] & full[j]
            a, b = per_question["zero"][i][both], per_question["zero"][j][both]
            defined = ~(np.isnan(a) | np.isnan(b))
            diffs["both-rated"] = float(np.mean(a[defined] - b[defined])) if defined.any() else math.nan
            snap.both_rated_questions.append(int(defined.sum()))
            snap.pairs.append((i, j, snap.truth[i] - snap.truth[j], diffs))
        self.snapshots.append(snap)
        print(
            f"  [definitions] round {state.number}: {len(systems)} distinct systems of {len(named)}, "
            f"{len(snap.pairs)} pairs, {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        for n, name in enumerate(snap.systems):
            said = ", ".join(f"{d} {snap.figures[d][n]:.4f}" for d in DEFINITIONS)
            print(
                f"    {name:28s} truth {snap.truth[n]:.4f}; {said}; rated share of top {k} {snap.share[n]:.0%}"
            )


def distinct(snapshots: list[Snapshot]) -> list[Snapshot]:
    """The snapshots less those that repeat the one before (a round that added no rating and no system)."""
    kept: list[Snapshot] = []
    for snap in snapshots:
        previous = kept[-1] if kept and kept[-1].collection == snap.collection else None
        if previous is None or (previous.systems, previous.figures) != (snap.systems, snap.figures):
            kept.append(snap)
    return kept


def summarise(snapshots: list[Snapshot], which: str = "all") -> dict[str, Any]:
    """Agreement, Kendall τ and errors of each definition over the snapshots' pairs and systems.

    ``which``: "all" pairs, "pooled" (both systems product versions, whose top k the queue pools: the
    gate's and the compare page's pairs) or "other" (at least one never pooled: the upper bound, a
    candidate only cross-validated, another ranker's version)."""
    snapshots = distinct(snapshots)
    out: dict[str, Any] = {}
    for d in PAIR_DEFINITIONS:
        agree_all = agree_far = n_all = n_far = wrong = 0.0
        pair_errors: list[float] = []
        missing = 0
        for snap in snapshots:
            for i, j, truth, diffs in snap.pairs:
                both_pooled = bool(snap.pooled[i] and snap.pooled[j]) if snap.pooled else False
                if (which == "pooled" and not both_pooled) or (which == "other" and both_pooled):
                    continue
                dd = diffs[d]
                if math.isnan(dd):
                    missing += 1
                    continue
                if truth == 0:
                    continue
                score = 0.5 if dd == 0 else float(np.sign(dd) == np.sign(truth))
                n_all += 1
                agree_all += score
                pair_errors.append(abs(dd - truth))
                if abs(truth) >= CLOSE:
                    n_far += 1
                    agree_far += score
                    wrong += float(abs(dd) >= CLOSE and np.sign(dd) != np.sign(truth))
        row: dict[str, Any] = {
            "pairs": int(n_all),
            "agree": agree_all / n_all if n_all else math.nan,
            "pairs_far": int(n_far),
            "agree_far": agree_far / n_far if n_far else math.nan,
            "wrong_far": wrong / n_far if n_far else math.nan,
            "pair_mae": float(np.mean(pair_errors)) if pair_errors else math.nan,
            "undefined_pairs": missing,
        }
        if d in DEFINITIONS:
            taus, errors = [], []
            for snap in snapshots:
                figures, truth = np.array(snap.figures[d]), np.array(snap.truth)
                ok = ~np.isnan(figures)
                errors += list(np.abs(figures[ok] - truth[ok]))
                if ok.sum() >= 3:
                    tau = kendalltau(figures[ok], truth[ok]).statistic
                    if not math.isnan(tau):
                        taus.append(tau)
            row["tau"] = float(np.mean(taus)) if taus else math.nan
            row["mae"] = float(np.mean(errors)) if errors else math.nan
            row["bias"] = float(
                np.nanmean([f - t for s in snapshots for f, t in zip(s.figures[d], s.truth, strict=True)])
            )
        out[d] = row
    out["share"] = float(np.mean([x for s in snapshots for x in s.share])) if snapshots else math.nan
    out["systems"] = sum(len(s.systems) for s in snapshots)
    return out


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    lines = [
        "| collection | definition | pairs (truth diff ≥ 0.01) | agree, all pairs | agree, diff ≥ 0.01 "
        "| wrong by ≥ 0.01 | Kendall τ (mean over rounds) | MAE of a figure | bias | MAE of a difference "
        "| rated share of top 10 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, summary in rows:
        for d in PAIR_DEFINITIONS:
            r = summary[d]

            def f(key: str, pct: bool = False, r: dict[str, Any] = r) -> str:
                value = r.get(key, math.nan)
                if value is None or (isinstance(value, float) and math.isnan(value)):
                    return "–"
                return f"{value:.0%}" if pct else f"{value:.3f}"

            lines.append(
                f"| {name} | {d} | {r['pairs']} ({r['pairs_far']}) | {f('agree', True)} | {f('agree_far', True)} "
                f"| {f('wrong_far', True)} | {f('tau')} | {f('mae')} | {f('bias')} | {f('pair_mae')} "
                f"| {summary['share']:.0%} |"
            )
    return "\n".join(lines)


def run_child(name: str, args: argparse.Namespace) -> list[Snapshot]:
    with tempfile.TemporaryDirectory(prefix="bench-definitions-") as directory:
        out = Path(directory) / "snapshots.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--collections",
            name,
            "--result-json",
            str(out),
        ]
        for option in ("outside", "budget", "rounds", "raters", "seed", "test_fraction", "max_questions"):
            command += [f"--{option.replace('_', '-')}", str(getattr(args, option))]
        command += ["--embeddings-cache", str(args.embeddings_cache)]
        if not args.candidates:
            command.append("--no-candidates")
        sys.stdout.flush()
        subprocess.run(command, check=True)
        return [Snapshot(**s) for s in json.loads(out.read_text())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="", help="comma-separated (default all, as bench_loop)")
    parser.add_argument("--outside", type=Path, default=loop.DEFAULT_OUTSIDE)
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--raters", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--test-fraction", type=float, default=0.5)
    parser.add_argument("--max-questions", type=int, default=0)
    parser.add_argument("--embeddings-cache", type=Path, default=loop.DEFAULT_CACHE)
    parser.add_argument("--quick", action="store_true", help="adi and covidfaq, 60 questions each")
    parser.add_argument(
        "--no-candidates",
        dest="candidates",
        action="store_false",
        help="no forced learned-fusion and LambdaMART per round, only the loop's own versions",
    )
    parser.add_argument(
        "--snapshots-json", type=Path, help="write every round's figures here (to re-summarise)"
    )
    parser.add_argument(
        "--from-json", type=Path, nargs="*", help="summarise snapshots written earlier, run nothing"
    )
    parser.add_argument("--result-json", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.from_json:
        saved = [Snapshot(**s) for path in args.from_json for s in json.loads(path.read_text())]
        by_name_saved: dict[str, list[Snapshot]] = {}
        for snap in saved:
            by_name_saved.setdefault(snap.collection, []).append(snap)
        rows = [(name, summarise(s)) for name, s in by_name_saved.items()] + [("all", summarise(saved))]
        print(table(rows))
        print()
        print(
            table(
                [
                    ("all, pooled pairs", summarise(saved, "pooled")),
                    ("all, other pairs", summarise(saved, "other")),
                ]
            )
        )
        return
    args.policy, args.pool, args.engine = None, "interleaved", None
    if args.quick:
        args.max_questions = args.max_questions or loop.QUICK_QUESTIONS
        args.collections = args.collections or ",".join(loop.QUICK_COLLECTIONS)
    available = list(loop.CRANFIELD) + sorted(
        p.name for p in args.outside.iterdir() if (p / "qrels.tsv").exists()
    )
    names = [n.strip() for n in args.collections.split(",") if n.strip()] or available
    begun = time.perf_counter()
    if args.result_json or len(names) == 1:
        snapshots: list[Snapshot] = []
        for name in names:
            measurer = Measurer(name, args.candidates)
            loop.ROUND_HOOKS[:] = [measurer]
            loop.run_collection(name, args)
            snapshots += measurer.snapshots
        if args.result_json:
            args.result_json.write_text(json.dumps([s.__dict__ for s in snapshots]))
            return
        by_name = {names[0]: snapshots}
    else:
        print(
            f"bench_definitions: code {loop.code_version()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
            f"{args.raters} raters, {args.rounds} rounds, budget {args.budget}, seed {args.seed}; {loop.load()}",
            flush=True,
        )
        by_name = {name: run_child(name, args) for name in names}
    rows = [(name, summarise(s)) for name, s in by_name.items()]
    every = [s for snaps in by_name.values() for s in snaps]
    if len(rows) > 1:
        rows.append(("all", summarise(every)))
    print("\n## NDCG@10 definitions against the truth\n")
    print(table(rows))
    print("\n### by pair: both product versions (pooled by the queue) / at least one never pooled\n")
    print(
        table(
            [
                ("all, pooled pairs", summarise(every, "pooled")),
                ("all, other pairs", summarise(every, "other")),
            ]
        )
    )
    if args.snapshots_json:
        args.snapshots_json.write_text(json.dumps([s.__dict__ for s in every]))
    print(f"\ntotal {time.perf_counter() - begun:.0f} s; {loop.load()}")


if __name__ == "__main__":
    main()
