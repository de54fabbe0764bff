"""What the approximator tests share: a game that counts every coalition it is asked."""

from skshapley.games import Game


class CountingGame(Game):
    """Wraps a game and counts every coalition passed to it (independent of
    n_evaluations)."""

    def __init__(self, inner):
        super().__init__(inner.n_players)
        self.inner = inner
        self.count = 0

    def _values(self, coalitions):
        self.count += coalitions.shape[0]
        return self.inner.values(coalitions)
