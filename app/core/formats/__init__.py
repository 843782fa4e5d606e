"""One adapter per memory system, plus discovery. Only adapters know a format."""
