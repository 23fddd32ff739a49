"""The pull-request check: scan the base revision and the working tree, list the skips the change introduces."""
