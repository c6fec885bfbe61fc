"""Admin API (FastAPI), the CLI that wires store, proxy and API into a process, the client."""
