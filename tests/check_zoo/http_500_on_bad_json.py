"""The HTTP check zoo: the twin (``http_twin.py``) with one defect — it answers a body that is not JSON with 500 Internal Server Error."""

from http_twin import main

if __name__ == "__main__":
    main("500-on-bad-json")
