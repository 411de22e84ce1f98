"""Secrets: detection, the policy of a write, secrets stated in words, and the scan of what a push
would send.
"""
