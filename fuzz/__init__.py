"""Seeded, resumable fuzzing campaigns."""
