"""GraphSearch (arXiv 2509.22009) as a second strategy on ARK's tools: a fixed
six-module workflow over a semantic and a relational channel. Registered as
``"graphsearch"`` (``Retriever(strategy="graphsearch")``, ``--strategy graphsearch``)."""

from ark.agent._strategy import register_strategy
from ark.agent.graphsearch.documents import DenseSearch, DocumentGraph
from ark.agent.graphsearch.modules import Step, Triple, Verdict
from ark.agent.graphsearch.strategy import GraphSearch, GraphSearchConfig, graphsearch_factory

# One pipeline per question.
register_strategy("graphsearch", GraphSearch.from_context, default_agents=1)

__all__ = [
    "DenseSearch",
    "DocumentGraph",
    "GraphSearch",
    "GraphSearchConfig",
    "Step",
    "Triple",
    "Verdict",
    "graphsearch_factory",
]
