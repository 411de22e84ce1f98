"""The one door to git: the runner every git command goes through (`runner`), the lock of each
repository (`lock`), the memory store's commits, log and blame (`store`), and the history
(`history`).
"""
