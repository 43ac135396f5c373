"""The run engine behind the Workbench: running, re-attaching, locks, passwords and settings (Qt-free)."""
