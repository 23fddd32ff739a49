"""What a scan returns: per-test and per-class verdicts, folded model by model, written as JSON at the edge."""
