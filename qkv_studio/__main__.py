"""``python -m qkv_studio`` — the same as the ``qkv-studio`` command."""

from qkv_studio.cli import main

raise SystemExit(main())
