"""pytest plugin (entry point pytest11): --topk-target, --topk-spec and Hypothesis profiles."""
