"""The training dashboard's pages: one headline score, its history, what to rate next, and the drilldown.

Raters see the simplified dashboard (headline, chart, their own contribution); trainers see everything
and may start evaluations.

* :mod:`.access` – who may open which page: log in, 404 for non-members, 403 for raters on trainers' pages.
* :mod:`.headline` – the headline figures and their change since the ranker's previous run.
* :mod:`.dashboard` – the collections' dashboards: the index and one collection's dashboard.
* :mod:`.how_sure` – "How sure are we?", its own page and a part of the dashboard.
* :mod:`.runs` – a run: start it, its progress bar, its page, its files.
* :mod:`.question` – one question of a run: the top k beside the ideal order, the measures' disagreement.
* :mod:`.compare` – runs compared: two side by side, or 2 to 6 in a matrix.
"""
