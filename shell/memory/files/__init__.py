"""The one door for memory reads and writes, and its values."""
