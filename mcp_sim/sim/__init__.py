"""The simulated world: virtual clock, deterministic scheduler, seeded randomness, and a garbage
collector paced for runs with thousands of clients."""
