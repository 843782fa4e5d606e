"""What every system's reader shares: the adapter contract, safe SQLite
reads, finding portfolios on disk."""
