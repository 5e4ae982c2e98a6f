"""What a failure tells a reviewer: the report message (:mod:`.report`), cut for a
terminal (:mod:`.terminal`), ``report.html`` (:mod:`.html`), the CI summaries
(:mod:`.summary`), and the calls pending ``tlgraph accept`` (:mod:`.pending`)."""
