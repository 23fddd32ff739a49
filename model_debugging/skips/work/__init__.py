"""How the work runs: worker processes, the garbage collector paused, the progress shown."""
