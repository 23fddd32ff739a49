"""Ground floor: the frozen records every floor of the analyzer passes on (nothing here imports the rest)."""
