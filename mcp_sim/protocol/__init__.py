"""The protocol core, pure and I/O-free: revisions as data, typed messages, lifecycle and errors."""
