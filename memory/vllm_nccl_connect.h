// vllm_nccl_connect.h: the ring and tree connection buffers NCCL allocates for a vLLM
// communicator, on the cards whose channel count the NCCL source fixes here: all of them when
// the communicator is created before vLLM 0.10.2, the ring's at its first collective from
// 0.10.2. The plan's per-communicator figure (kNcclCommBytes, 558 MiB) was measured on a
// one-rank communicator, which has no peers and so no connection buffers.
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
// v2.20.5-1 and v2.21.5-1, torch 2.3-2.6's, and in v2.27.5-1, torch 2.9's) and vLLM 0.8.3, 0.9.2:
// - vLLM sets NCCL_CUMEM_ENABLE=0 on import (env_override.py 0.9.2:16-32, 0.8.3:12) from
//   vllm#5091 (2024-05) until vllm#24141 (merged 2025-09-03: 0.10.2 taken as the first
//   release without it, inferred from the date; absent from 0.11's env_override.py and from
//   0.22.0's and 0.28.0's sdists).
// - NCCL connects at first use only where cuMem is on: init.cc:1135 (v2.27.5: 1148)
//   `runtimeConn = cuMemSupport && ncclParamRuntimeConnect()`; otherwise ncclCommInitRank
//   connects every channel's ring and tree at once (init.cc:1145-1151; transport/generic.cc:
//   ring recv from prev / send to next, tree recv from up and down / send to both). NCCL
//   before 2.22 has no runtime connect at all, so every vLLM release before 0.10.2 connects
//   eagerly.
// - A receive connection is one allocation of ncclRecvMem + LL (8 x 512 x 8 x 16 B = 0.5 MiB)
//   + LL128 (120 x 640 x 8 x 8 B = 4.69 MiB) + Simple (4 MiB) buffers, aligned to
//   CUDA_IPC_MIN (2 MiB): 10 MiB (transport/p2p.cc:444-447, init.cc:606-608, comm.h:34), and a
//   send connection ncclSendMem aligned to 2 MiB (p2p.cc:376-379): 12 MiB a peer a channel.
//   Between two sm80 GPUs P2P reads (graph/paths.cc:354, v2.27.5 :365 "Enable P2P Read for
//   Ampere/NVLink only"): Simple moves to the sender (p2p.cc v2.27.5:379, :447), 6 + 6 MiB,
//   the same 12.
// - Intra-node the tree is a chain in the search's GPU order, the ring's on an NVSwitch
//   (connect.cc ncclTopoPreset): a middle rank receives from prev and next and sends to both,
//   2 x 12 = 24 MiB a channel; at TP 2 the one peer is both, 12 MiB. The KV pool is
//   the smallest rank's, so the middle rank's is priced. (The ring and tree searches are
//   separate; were their orders to differ, a middle rank would have three peers, 36 MiB.)
// - Channels (search.cc ncclTopoCompute, connect.cc ncclTopoPostset): on a Hopper SXM part
//   with 18 NVLinks to NVSwitches (18 x SM90_NVLINK_BW 20.6 = 370.8 GB/s a GPU) the ring
//   search's first speed, 60 GB/s, fits 6 channels (360 GB/s; 50, 40 and 30 GB/s fit no more
//   bandwidth: 350, 360, 360), ncclTopoDupChannels doubles them (bw 60 >= 50) to 12, and
//   ncclTopoPostset doubles again: 24 (below MAXCHANNELS 64, device.h). On A100 SXM4 with 12
//   NVLinks to NVSwitches (12 x SM80_NVLINK_BW 20 = 240 GB/s; v2.27.5 topo.h:18) the sm80
//   speeds (search.cc:952 speedArrayIntra) start at 40 GB/s: 6 channels fill 240, DupChannels
//   doubles them (search.cc:937-950: bwIntra 40 >= 25, ccMin 80 not > 80) to 12 at 20 GB/s,
//   pass 2 cannot raise 12 channels to 30 GB/s (360 > 240), and ncclTopoPostset doubles to 24
//   (connect.cc:452). Assumed: the NVSwitch board (HGX A100 8-GPU, DGX A100, p4d); HGX A100
//   4-GPU boards link each pair by 4 NVLinks (80 GB/s: 2 -> 4 -> 8 channels), not an input.
// - From 0.10.2 (cuMem on, runtime connect, v2.27.5 enqueue.cc:463-470) a communicator connects
//   only the algorithm its first collective takes. vLLM's collectives on these cards take
//   the ring: all-gather runs Ring, PAT (one GPU a node only, tuning.cc ncclPatEnable), NVLS
//   or CollNet (tuning.cc:256-258), and NVLS is off on two GPUs (nvls.cc:160 `gpuCount <= 2`)
//   and on Ampere; PyNccl's creation warms up with a 4-byte all-reduce (pynccl.py 0.11:137-139)
//   whose Ring LL latency (tuning.cc:135,145: 6.6 + 2 x 0.6 us at TP 2) is below Tree LL's
//   (6.8 + 2 x 0.6). A ring rank receives from prev and sends to next: 12 MiB a channel at any
//   TP. On Hopper at 3 or more GPUs (NVLS possible) it is not derived: 0.
// So: 24 x 24 MiB = 576 MiB a communicator at TP >= 3, 288 MiB at TP 2, before 0.10.2; 288 MiB
// a communicator from 0.10.2 (Hopper at TP >= 3: 0), on H100 SXM, H200, H20 and A100 SXM4; 0
// where the channel count is not derived here (other parts, PCIe, Blackwell).
double VllmNcclConnectBytes(const VllmNcclConnectInput& in);

// The channels NCCL 2.26-2.27 builds on this card (0 where not derived), for the plan's text.
int VllmNcclChannels(const std::string& gpu_name);

}  // namespace tpt::memory
