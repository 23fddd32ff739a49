"""What the interpreter knows of the APIs a test reaches: models, configurations, the generation cache, testers, torch.nn."""
