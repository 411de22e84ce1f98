"""The memory lifecycle of a conversation: the flush gate before every model call (`gate.py`),
the silent flush turn (`flush.py`), compaction strictly after it (`compaction.py`, with the
summariser's transcript in `transcript.py`, its check in `summary_check.py` and the summary by
rule in `rule_summary.py`), the AGENTS.md rules re-injected after it (`reinject.py`), the last
resort of dropping the oldest turns (`window_fit.py`), and the manager that runs them in order
(`manager.py`)."""
