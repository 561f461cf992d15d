"""Strategy ``ark-guided``: ARK's loop with the aids for small models.

:mod:`~ark.strategies.guided.hints` read the question's chain against the schema and
write the next call into each observation; :mod:`~ark.strategies.guided.plans` run
those calls without the model where the reading is sure of them.
"""

from ark.strategies.guided.hints import ChainHints

__all__ = ["ChainHints"]
