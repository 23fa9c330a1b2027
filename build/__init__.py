"""The bundler: turns an agent and what it uses into one self-contained submission file."""
