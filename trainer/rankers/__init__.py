from trainer.rankers.base import RankerBackend, RankerError, RankerUnavailable, RankQuery, Ranking

__all__ = ['RankQuery', 'Ranking', 'RankerBackend', 'RankerError', 'RankerUnavailable']
