"""What goes into the context window and how much of it is used: the token counter
(`counter.py`), the one budget every threshold comes from (`budget.py`), the provider's count
learned per model (`calibration.py`), and the request each model call sends (`request.py`)."""
