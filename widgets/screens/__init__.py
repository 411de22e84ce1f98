"""Screens and modals: the main screen, the memory history, a sync conflict, the dream review, an
approval.
"""
