"""Reading and writing collection files, one module per format. Pure parsing: no database access.

Every error names the file, the line (where the format has lines) and the field, e.g.
``cranfield-gt.csv line 17: grade 'x' is not a whole number``.

* :mod:`.common` – ``FormatError``, the limits on one record, reading UTF-8 text, ids and question ids.
* :mod:`.records` – what the readers return and the writers take: answer, question, judgment, label rows.
* :mod:`.grades` – a file's grades to stars (``--grade-map``: ``rnr``, ``identity`` or explicit pairs).
* :mod:`.rnr` – Retrieve and Rank: Solr bulk-add documents JSON, ground truth CSV (read and write).
* :mod:`.trec` – TREC: corpus JSONL, topics TSV, qrels (read and write).
* :mod:`.ground_truth_jsonl` – ground-truth JSONL as ``export_ground_truth --format jsonl`` writes it.
* :mod:`.quepid` – Quepid ratings CSV (a case's or a snapshot's ratings).
* :mod:`.rre` – Rated Ranking Evaluator ratings JSON (and Quepid's RRE export).
* :mod:`.writers` – ``WRITERS``: the export formats by name.
"""
