"""Real parts for tests: free ports, a local upstream web server, redis-server, the service."""
