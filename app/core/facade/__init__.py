"""The bodies of the `Workbench` facade (app/core/workbench.py), one module per concern.

Each function takes the workbench first; the facade's methods call them. What a load made is one
`Loaded` (state.py), swapped whole under the workbench's lock; what is worked out from it (trusts,
the review queue's ids, saliences) is kept with the `Loaded.version` it was worked out on.
"""
