"""Reference solution for ex06_stdio_framer. Try the exercise before reading this."""

from __future__ import annotations


def feed(pending: bytes, chunk: bytes) -> tuple[list[str], bytes]:
    """The messages completed by ``chunk`` (decoded lines) and the bytes still waiting for a newline."""
    data = pending + chunk  # join first: a read may end inside a message, even inside a character
    *finished, rest = data.split(b"\n")  # only the byte \n ends a message
    frames = []
    for line in finished:
        text = line.decode("utf-8")  # a whole line: every character is complete
        if text.strip():  # a blank line (or a lone \r from \r\n) is no message
            frames.append(text)
    return frames, rest  # the unfinished tail, unchanged, for the next read
