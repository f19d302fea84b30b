"""lint-h2d: find host-blocking host→device copies and capture-time mutations of shared CPU
metadata in PyTorch serving code, and rewrite them safely."""

__version__ = "0.1.0"
