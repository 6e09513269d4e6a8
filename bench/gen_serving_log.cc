// gen_serving_log: writes a large multi-rank serving log to stdout.
//
// The mix follows what a long-running SGLang / vLLM server prints: per-rank
// decode/prefill batch statistics, uvicorn HTTP access lines, vLLM engine
// stats, some unmatched noise, and a crash at the end (an NCCL WARN, a rank's
// traceback ending in CUDA OOM, the launcher's sigquit).
//
//   gen_serving_log --bytes 500M > serving.log
//   gen_serving_log --long-line 2G | tptriage events --summary -   # one 2 GB line
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

unsigned long long ParseSize(const char* s) {
  char* end = nullptr;
  unsigned long long n = std::strtoull(s, &end, 10);
  switch (*end) {
    case 'K': case 'k': return n << 10;
    case 'M': case 'm': return n << 20;
    case 'G': case 'g': return n << 30;
    default: return n;
  }
}

int Usage() {
  std::fprintf(stderr, "usage: gen_serving_log (--bytes SIZE | --long-line SIZE) [--ranks N] [--mix serving|sparse]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned long long bytes = 0, long_line = 0;
  int ranks = 8;
  bool sparse = false;  // --mix sparse: 1 line in 100 is an event (a training / NCCL INFO log)
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--bytes")) bytes = ParseSize(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--long-line")) long_line = ParseSize(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--ranks")) ranks = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--mix")) sparse = !std::strcmp(argv[i + 1], "sparse");
    else return Usage();
  }
  if ((bytes == 0) == (long_line == 0) || ranks < 1) return Usage();
  static char out[1 << 16];
  std::setvbuf(stdout, out, _IOFBF, sizeof out);

  if (long_line) {
    // One line of `long_line` bytes with an OOM message at its start, then a normal crash line.
    std::printf("[2025-10-14 10:00:01 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=21.70 GB, mem usage=72.30 GB. ");
    std::string chunk(1 << 20, 'x');
    for (unsigned long long done = 0; done < long_line; done += chunk.size()) {
      std::fwrite(chunk.data(), 1, std::min<unsigned long long>(chunk.size(), long_line - done), stdout);
    }
    std::printf("\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.50 GiB is free.\n");
    return 0;
  }

  unsigned long long written = 0, n = 0;
  unsigned seed = 12345;
  auto rnd = [&]() { return seed = seed * 1103515245u + 12345u, (seed >> 8) & 0xffff; };
  char line[512];
  while (written < bytes) {
    int rank = static_cast<int>(n % ranks);
    int sec = static_cast<int>(n / 50);
    int h = 10 + sec / 3600 % 14, m = sec / 60 % 60, s = sec % 60;
    int len;
    unsigned pick = rnd() % 10;
    if (sparse && rnd() % 10 != 0) pick = 9;  // noise
    switch (pick) {
      case 0: case 1: case 2: case 3:
        len = std::snprintf(line, sizeof line,
                            "[2025-10-14 %02d:%02d:%02d TP%d] Decode batch. #running-req: %u, #token: %u, token usage: 0.%02u, "
                            "cuda graph: True, gen throughput (token/s): %u.%02u, #queue-req: %u\n",
                            h, m, s, rank, rnd() % 64, rnd() % 60000, rnd() % 100, rnd() % 3000, rnd() % 100, rnd() % 8);
        break;
      case 4:
        len = std::snprintf(line, sizeof line,
                            "[2025-10-14 %02d:%02d:%02d TP%d] Prefill batch. #new-seq: %u, #new-token: %u, #cached-token: %u, "
                            "token usage: 0.%02u, #running-req: %u, #queue-req: %u\n",
                            h, m, s, rank, rnd() % 8, rnd() % 8192, rnd() % 4096, rnd() % 100, rnd() % 64, rnd() % 8);
        break;
      case 5: case 6:
        len = std::snprintf(line, sizeof line,
                            "INFO:     10.0.%u.%u:%u - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n", rnd() % 256,
                            rnd() % 256, 30000 + rnd() % 30000);
        break;
      case 7:
        len = std::snprintf(line, sizeof line,
                            "INFO 10-14 %02d:%02d:%02d [loggers.py:116] Engine 000: Avg prompt throughput: %u.0 tokens/s, "
                            "Avg generation throughput: %u.%u tokens/s, Running: %u reqs, Waiting: 0 reqs, GPU KV cache "
                            "usage: %u.%u%%, Prefix cache hit rate: 0.0%%\n",
                            h, m, s, rnd() % 5000, rnd() % 3000, rnd() % 10, rnd() % 64, rnd() % 100, rnd() % 10);
        break;
      default:
        len = std::snprintf(line, sizeof line,
                            "[2025-10-14 %02d:%02d:%02d TP%d] Cache flushed successfully! request id %08x, tokens %u, "
                            "sampling params temperature=0.7 top_p=0.95\n",
                            h, m, s, rank, rnd() << 8, rnd() % 4096);
    }
    std::fwrite(line, 1, len, stdout);
    written += len;
    ++n;
  }
  std::printf(
      "node1:1234:1300 [3] NCCL WARN Cuda failure 'out of memory'\n"
      "[2025-10-14 23:59:59 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
      "  File \"/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py\", line 1999, in run_scheduler_process\n"
      "    scheduler.event_loop_overlap()\n"
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.10 GiB "
      "of which 1.50 GiB is free. Including non-PyTorch memory, this process has 77.58 GiB memory in use.\n"
      "[2025-10-14 23:59:59] Received sigquit from a child process. It usually means the child failed.\n");
  return 0;
}
