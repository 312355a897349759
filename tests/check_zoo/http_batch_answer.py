"""The HTTP check zoo: the twin (``http_twin.py``) with one defect — it answers a batch (a JSON array) with a batch of responses in 2025-11-25."""

from http_twin import main

if __name__ == "__main__":
    main("batch-answer")
