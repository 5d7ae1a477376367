"""The rating pages: the rater's home, the rating task, its htmx saves, and the trainers' progress page.

* :mod:`.access` – who may open a rating page (``collection_view``, ``pair_view``), refusals, CSRF failures.
* :mod:`.session` – what a rater's session keeps: the tasks shown, when the session started.
* :mod:`.card` – an answer's card: stars, note, what the last action did; the stars a post gives.
* :mod:`.home` – the rater's home: their collections and how far they are in each.
* :mod:`.next_question` – the next question to rate, in the split and mode asked for.
* :mod:`.question` – a question's rating page, its plain-form save, skipping it.
* :mod:`.pair` – one answer: rate it, undo, set the note (htmx or plain post).
* :mod:`.progress` – the trainers' progress page: ratings, coverage, agreement, budget.
* :mod:`.contribution` – a rater's contribution, the card their dashboard loads: ratings, what waits.
"""
