"""The status bar: token and compaction meters, the countdown, the sync slot."""
