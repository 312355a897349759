"""The HTTP check zoo: the twin (``http_twin.py``) with one defect — it exits when it finds that the client of a call in flight hung up."""

from http_twin import main

if __name__ == "__main__":
    main("dies-after-hangup")
