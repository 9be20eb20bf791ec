"""Subcommands of ``fastchat``, one module each (see ``fastchat_tui.cli``)."""
