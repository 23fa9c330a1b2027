"""Agent sources: bundle-safe (standard library + numpy) modules exposing agent(obs, config)."""
