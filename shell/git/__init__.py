"""The one door to git: the runner every git command goes through, the memory store's commits, log
and blame, and the history.
"""
