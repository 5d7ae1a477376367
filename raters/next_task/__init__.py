"""What a rater should rate next: the queue of questions and pairs that drives training.

* :mod:`.task` – a ``Task`` (a question, why, which answers), the priorities in order, the display order.
* :mod:`.terms` – the tokenizer and stop words of the term-overlap fallback.
* :mod:`.term_overlap` – each question's top k by shared rare terms, until a ranker can answer.
* :mod:`.pool` – a question's pool: the pooled versions' top k interleaved (term overlap until a ranker answers).
* :mod:`.table` – the candidate table as requests read it: persisted, its state, the previous one serving.
* :mod:`.fallback` – with no table yet: term-overlap candidates for a few questions, a request's cost.
* :mod:`.refresh` – the job that builds the table in the background (claim, heartbeat, take-over), queued
  right after a change (``raters.signals``) and by beat's sweep.
* :mod:`.kept` – the labels and each rater's rated answers, kept per process, read again only where changed.
* :mod:`.untouched` – the questions' assessments for a rater who never rated them, kept in pick order.
* :mod:`.budget` – the agreement sample, the rating budget per question, and where a budget goes.
* :mod:`.judge_reads` – the pairs a judge (a model) sends to people: its disputes and its least sure grades,
  kept per process and read again only where changed.
* :mod:`.reasons` – the plain words shown to a rater for why a question was chosen.
* :mod:`.picking` – ``next_task`` and its kin: one rater's state, each question's priority, the pick, the
  next pairs, the home page's overview.
* :mod:`.modes` – the queue modes: rate what decides the comparison, rate what the ranker is least sure of.
"""
