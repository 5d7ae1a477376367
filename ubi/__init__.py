"""The production log in the UBI 1.3.0 schema (docs/ubi.md): ``models`` (UbiQuery, UbiEvent), ``records``
(checking and writing UBI JSON), ``spool`` (the durable file and its drain), ``writer`` (the process that
stores it), ``log`` (ranker_server's side), ``services`` / ``selectors``, ``opensearch`` (reading a
team's UBI indexes), ``tasks`` (beat's retention job), ``production_questions`` (logged query texts
matched to a collection's questions, and the frequent others imported as questions)."""
