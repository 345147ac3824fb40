"""jaxpr."""
