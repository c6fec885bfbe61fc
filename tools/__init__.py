"""Developer tools (screenshots for the docs)."""
