"""Test support shipped with the package (real protocols on loopback, for this project's tests and yours)."""
