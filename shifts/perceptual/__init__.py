"""Perceptual shifts: change what an agent grounds on, never what the task needs."""
