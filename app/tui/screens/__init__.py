"""The workbench's screens, one per mode."""
