"""``ark index describe``: a model writes the described schema's words into the index.

For the relations and node types whose names do not already say it, a model writes a
one-line description and the everyday words a question may use for them
(:func:`describe_index`); :func:`plan_describe` says what would be asked. Like
:mod:`ark.ingest`'s extraction, it is a model writing data into the index, and it sits
beside it in the layers: the reading (:mod:`ark.reading`) reads the words written
here and never calls a model itself.

    from ark.describe import describe_index

    described = describe_index(index, llm)
"""

from ark.describe._describe import DescribePlan, ask_model, describe_index, plan_describe

__all__ = ["DescribePlan", "ask_model", "describe_index", "plan_describe"]
