"""Distillation: teach a small model ARK's tool use from trajectories — synthetic ones
made from the graph itself by an oracle policy, or a teacher's — with no labels.

Data flows: synthesize/collect (trajectories) → sft (token ids + loss mask) → train
(LoRA, behind the ``[train]`` extra) → export (a GGUF LoRA adapter for llama.cpp).
"""

from ark.distill._plans import DEFAULT_WALKS, PlanFit, PlanSample, fit_plans, plan_samples
from ark.distill._synth_file import synthesis_stats, write_synthesis

__all__ = [
    "DEFAULT_WALKS",
    "PlanFit",
    "PlanSample",
    "fit_plans",
    "plan_samples",
    "synthesis_stats",
    "write_synthesis",
]
