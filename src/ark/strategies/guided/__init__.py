"""Strategy ``ark-guided``: ARK's loop with the aids for small models.

:class:`GuidedAgent` fills in the loop's hooks: :mod:`~ark.strategies.guided.hints`
read the question's chain against the schema and write the next call into each
observation; :mod:`~ark.strategies.guided.plans` run those calls without the model
where the reading is sure of them.
"""

from ark.strategies.guided._agent import GuidedAgent, GuidedOptions, guided_agent
from ark.strategies.guided.hints import ChainHints

__all__ = ["ChainHints", "GuidedAgent", "GuidedOptions", "guided_agent"]
