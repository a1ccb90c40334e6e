"""The presenter view (issue 23): the console on the laptop, the slide on the projector, ink and laser.

:mod:`.controller` (the window's ``presenter``: F5 on two screens, screens plugged and unplugged, the
presenter keys), :mod:`.console` (the console window), :mod:`.placement` (which screen shows what).
"""

from qkv_studio.ui.window.presenter.controller import PRESENTER_KEYS, Presenter

__all__ = ["PRESENTER_KEYS", "Presenter"]
