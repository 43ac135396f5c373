"""Text and tables that describe runs and hosts (Qt-free): shared by the window, the CLI and the report."""
