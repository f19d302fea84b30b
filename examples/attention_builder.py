"""A miniature attention-metadata builder with the two patterns lint-h2d finds."""
import torch


class PrefillMetadataBuilder:
    def __init__(self, max_num_reqs: int, device: torch.device):
        self.cu_seqlens_q = torch.zeros(max_num_reqs + 1, dtype=torch.int32, device=device)

    def build(self, kv_lens: torch.Tensor, num_prefills: int) -> torch.Tensor:
        cu_seqlens_k = torch.empty(num_prefills + 1, dtype=torch.int32, device=kv_lens.device)
        cu_seqlens_k[0] = 0  # blocks the host: 4-byte host-to-device copy + stream sync
        torch.cumsum(kv_lens, dim=0, out=cu_seqlens_k[1:])
        self.cu_seqlens_q[0] = 0
        return cu_seqlens_k
