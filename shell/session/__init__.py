"""The session: its record of counters (`record.py`), the store that keeps it and its transcript
across restarts and crashes (`store.py`), and the live conversation everyone holds
(`conversation.py`)."""
