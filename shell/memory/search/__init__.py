"""Recall: the search pipeline, its ranking, cited windows, time in the query, and the memory_search
tool.
"""
