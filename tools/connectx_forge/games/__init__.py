"""The games the toolkit plays: ConnectX and the other two-player games of kaggle-environments (``catalog``)."""
