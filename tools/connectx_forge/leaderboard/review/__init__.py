"""After the upload: Kaggle submissions and episodes, the solver's game review, and offline HTML replays."""
