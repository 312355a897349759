"""The HTTP check zoo: the twin (``http_twin.py``) with one defect — it exits on a POST body that is not JSON."""

from http_twin import main

if __name__ == "__main__":
    main("crash-on-bad-json")
