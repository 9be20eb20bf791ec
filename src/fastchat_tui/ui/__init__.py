"""The terminal user interface: the app, its screens and widgets.

Textual composes the screen at most ``TEXTUAL_FPS`` times a second, on a clock of its own.
The transcript already paces its frames (``chat_log.pacing``), so a second clock at
Textual's default 60 Hz only adds up to 17 ms before a frame (or a typed key) shows; at
120 Hz the wait is at most 8 ms. A value the user set is kept. It is set here, before any
module of the package imports Textual, which reads it once. Then Textual's strips are made
to free themselves when dropped (``strips``), to write only the style codes that change along a
line (``strip_codes``), and a screen just shown is not laid out twice (``screen_resize``).
"""

import os

os.environ.setdefault("TEXTUAL_FPS", "120")

from fastchat_tui.ui import screen_resize, strip_codes, strips  # after the frame rate is set

strips.install()
strip_codes.install()
screen_resize.install()
