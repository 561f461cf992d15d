"""GraphSearch (arXiv 2509.22009) as a second strategy on ARK's tools: a fixed
six-module workflow over a semantic and a relational channel. Registered as
``"graphsearch"`` (``Retriever(strategy="graphsearch")``, ``--strategy graphsearch``)."""

from ark.agent._strategy import register_strategy
from ark.agent.graphsearch.modules import Step, Triple
from ark.agent.graphsearch.strategy import GraphSearch, GraphSearchConfig, graphsearch_factory

# One pipeline per question.
register_strategy("graphsearch", GraphSearch.from_context, default_agents=1)

__all__ = ["GraphSearch", "GraphSearchConfig", "Step", "Triple", "graphsearch_factory"]
