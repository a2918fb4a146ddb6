"""nbgrad's version string (the ground floor: imports nothing)."""
__version__ = "0.1.0"
