"""answer stage."""
