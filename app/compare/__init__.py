"""Comparing stored runs side by side (Qt-free: the window, the PDF and the command line share it)."""
