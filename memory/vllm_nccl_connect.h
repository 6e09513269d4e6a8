// vllm_nccl_connect.h: the ring and tree connection buffers NCCL allocates when a vLLM
// communicator is created before vLLM 0.10.2, on the cards whose channel count the NCCL
// source fixes here. The plan's per-communicator figure (kNcclCommBytes, 558 MiB) was
// measured on a one-rank communicator, which has no peers and so no connection buffers.
//
//   p.non_torch_bytes += communicators_in_the_profile_window * VllmNcclConnectBytes(in);
#pragma once

#include <string>

namespace tpt::memory {

struct VllmNcclConnectInput {
  std::string version;   // vLLM version
  int tp = 1;            // ranks of the communicator (the TP group)
  std::string gpu_name;  // catalog name
};

// Read at NCCL v2.26.2-1 (torch 2.7.0's pin, vLLM 0.9.x; the lines below are the same in
// v2.20.5-1 and v2.21.5-1, torch 2.3-2.6's) and vLLM 0.8.3, 0.9.2:
// - vLLM sets NCCL_CUMEM_ENABLE=0 on import (env_override.py 0.9.2:16-32, 0.8.3:12) from
//   vllm#5091 (2024-05) until vllm#24141 (merged 2025-09-03: 0.10.2 taken as the first
//   release without it, inferred from the date; absent from 0.22.0's and 0.28.0's sdists).
// - NCCL connects at first use only where cuMem is on: init.cc:1135 `runtimeConn =
//   cuMemSupport && ncclParamRuntimeConnect()`; otherwise ncclCommInitRank connects every
//   channel's ring and tree at once (init.cc:1145-1151; transport/generic.cc: ring recv from
//   prev / send to next, tree recv from up and down / send to both). NCCL before 2.22 has no
//   runtime connect at all, so every vLLM release before 0.10.2 connects eagerly.
// - A receive connection is one cudaMalloc of ncclRecvMem + LL (8 x 512 x 8 x 16 B = 0.5 MiB)
//   + LL128 (120 x 640 x 8 x 8 B = 4.69 MiB) + Simple (4 MiB) buffers, aligned to
//   CUDA_IPC_MIN (2 MiB): 10 MiB (transport/p2p.cc:444-447, init.cc:606-608, comm.h:34).
//   Reads (Simple on the sender) only between two sm80 GPUs (graph/paths.cc:354), so on
//   Hopper a send connection is ncclSendMem aligned to 2 MiB (p2p.cc:376-379).
// - Intra-node the tree is a chain in the search's GPU order, the ring's on an NVSwitch
//   (connect.cc ncclTopoPreset): a middle rank receives from prev and next and sends to both,
//   2 x 10 + 2 x 2 = 24 MiB a channel; at TP 2 the one peer is both, 12 MiB. The KV pool is
//   the smallest rank's, so the middle rank's is priced. (The ring and tree searches are
//   separate; were their orders to differ, a middle rank would have three peers, 36 MiB.)
// - Channels (search.cc ncclTopoCompute, connect.cc ncclTopoPostset): on a Hopper SXM part
//   with 18 NVLinks to NVSwitches (18 x SM90_NVLINK_BW 20.6 = 370.8 GB/s a GPU) the ring
//   search's first speed, 60 GB/s, fits 6 channels (360 GB/s; 50, 40 and 30 GB/s fit no more
//   bandwidth: 350, 360, 360), ncclTopoDupChannels doubles them (bw 60 >= 50) to 12, and
//   ncclTopoPostset doubles again: 24 (below MAXCHANNELS 64, device.h).
// So: 24 x 24 MiB = 576 MiB a communicator at TP >= 3, 288 MiB at TP 2, on H100 SXM, H200
// and H20 (18 NVLinks); 0 where the channel count is not derived here (other parts, PCIe,
// Blackwell) or from 0.10.2 (runtime connect: rings only, at first use; not read).
double VllmNcclConnectBytes(const VllmNcclConnectInput& in);

// The channels NCCL 2.26 builds on this card (0 where not derived), for the plan's text.
int VllmNcclChannels(const std::string& gpu_name);

}  // namespace tpt::memory
