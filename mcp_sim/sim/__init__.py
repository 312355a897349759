"""The simulated world: virtual clock, deterministic scheduler, seeded randomness."""
