"""The side panes: memory files, the gate log, the git log, the one-line strip below 100 columns."""
