"""The startup pipeline: finding portfolios, reading them through the parse cache and worker
processes, and the phases it reports."""
