"""A CUDA-graph capture hook that zeroes metadata its caller still needs (vLLM PR #51585)."""
from dataclasses import dataclass

import torch


@dataclass
class CommonAttentionMetadata:
    query_start_loc: torch.Tensor  # on the device
    query_start_loc_cpu: torch.Tensor  # host copy, read by the builders that run next


class RocmAttentionMetadataBuilder:
    def build_for_cudagraph_capture(self, common_attn_metadata: CommonAttentionMetadata):
        # The device zero keeps the prefix-prefill kernel in bounds during capture.
        common_attn_metadata.query_start_loc.zero_()
        # The host zero leaks: later builders compute query lengths of 0 and assert.
        common_attn_metadata.query_start_loc_cpu.zero_()
