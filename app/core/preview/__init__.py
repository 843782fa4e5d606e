"""What each agent will see: the exact text each memory system injects at its next start or turn,
rendered as the system renders it, with what its caps cut or drop marked in place.

`models` holds what a system's own renderer returns (`Draft`) and what the faces get (`Preview`);
`build` asks each portfolio's system for its drafts and makes them inert with secrets masked. This
package imports nothing on import, so the systems may use `models` without a cycle."""
