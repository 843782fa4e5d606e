"""The change layer: every write the workbench makes to an agent's store goes through here.

A decision (approve, flag, quarantine, restore) or a curation change (promote, demote, pin, unpin,
set-priority, merge, budget, undo) is one `Target`, prepared by the memory's system into a
`Prepared` change (what it will do, as data, printable as a `Plan` for a dry run) with the helpers
here: `freshness` (is the source still what the person saw), `vaulting` (take a file or a block out
into the vault, put it back) and `edits` (byte-exact edits an undo can reverse). The `Applier` then
refuses a portfolio that holds the workbench's data folder, applies the change through
app.core.storage (noting every path written), starts the revert watch and records the result in the
ledger. Errors are one family (`errors`). Nothing
here imports the facade: the caller passes the portfolio and the memory down.
"""
