"""A sixth memory system that exists only for the tests: one plain `.txt` file per memory in a
folder holding a `.notes` marker. It is registered like any plug-in, through the `memwb.systems`
entry point group, and proves the core needs no knowledge of a system to read, search and budget
it."""

NAME = "notes"
