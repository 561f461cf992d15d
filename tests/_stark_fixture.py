"""Write a small knowledge base in exactly stark-qa's processed/ layout (tests only)."""

from __future__ import annotations

import pickle
from pathlib import Path


def write_kb(
    processed: Path, node_info, edges, edge_types, node_types, type_dict=None, rel_dict=None
):
    import torch

    processed.mkdir(parents=True)
    with (processed / "node_info.pkl").open("wb") as f:
        pickle.dump(node_info, f)
    torch.save(torch.LongTensor(edges).t().contiguous(), processed / "edge_index.pt")
    torch.save(torch.LongTensor(edge_types), processed / "edge_types.pt")
    torch.save(torch.LongTensor(node_types), processed / "node_types.pt")
    if type_dict is not None:
        with (processed / "node_type_dict.pkl").open("wb") as f:
            pickle.dump(type_dict, f)
        with (processed / "edge_type_dict.pkl").open("wb") as f:
            pickle.dump(rel_dict, f)
