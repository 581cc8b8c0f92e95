"""How an LlmAgent runs: request building, the model-call loop, tool execution, resumption."""
