"""transcript-view: the Textual viewer and the `--check` command line, on top of `core`."""
