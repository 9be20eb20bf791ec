"""The terminal user interface: the app, its screens and widgets."""
