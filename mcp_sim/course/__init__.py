"""Course tooling: notebook build and predict-then-reveal questions."""
