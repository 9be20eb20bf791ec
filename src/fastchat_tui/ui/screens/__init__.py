"""Modal screens of the fastchat TUI."""
