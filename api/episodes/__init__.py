"""Episodes as the service keeps them: their lifecycle and the evidence they leave."""
