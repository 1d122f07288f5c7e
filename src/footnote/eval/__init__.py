"""eval stage."""
