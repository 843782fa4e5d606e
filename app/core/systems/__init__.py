"""The memory systems, one package each, behind the contract in `api`
and found through `registry`."""
