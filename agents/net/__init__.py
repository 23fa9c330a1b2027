"""Trained-network agents: the feature encoding, a numpy MLP, and the agents that use them.

Everything here is bundle-safe (standard library and numpy).  Training lives in
``tools/`` and calls the same encoder, so the features a network sees in training
and at run time are computed by one function.
"""
