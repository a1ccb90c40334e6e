"""QKV Studio: see, touch and show self-attention."""

__version__ = "0.1.0"
