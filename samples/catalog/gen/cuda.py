"""CUDA driver/runtime errors as PyTorch and C++ runtimes print them, and NVRM Xid kernel messages
(knowledge/other-log-formats.md sections 3.2-3.3; cudaGetErrorString texts of the CUDA runtime; NVIDIA Xid catalogue)."""
from common import E, tb, write

T = "/usr/local/lib/python3.10/dist-packages/torch"
HINT = ("\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
RUN = ["loaded model in 40.1 s", "INFO:     Application startup complete.", "request 1 done", "request 2 done"]


def cuda_err(text, frames=None):
    fr = frames or [("/workspace/serve.py", 90, "step", "logits = model(input_ids)")]
    return tb(*fr, exc="RuntimeError: CUDA error: " + text + HINT)


def kern(msg, t="Dec  1 10:05:00"):
    return f"{t} gpu-node-3 kernel: [12345.678901] NVRM: {msg}"


entries = [
    E("cuda.illegal_memory_access", cuda_err("an illegal memory access was encountered"), "illegal_memory_access", "illegal_memory_access",
      "cudaErrorIllegalAddress (700)", "torch C10_CUDA_CHECK", "all", context=RUN),
    E("cuda.illegal_memory_access_accelerator_error",
      tb(("/workspace/serve.py", 90, "step", "logits = model(input_ids)"),
         exc="torch.AcceleratorError: CUDA error: an illegal memory access was encountered\nSearch for `cudaErrorIllegalAddress' in "
             "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html for more information."),
      "illegal_memory_access", "illegal_memory_access", "cudaErrorIllegalAddress (700)", "torch AcceleratorError", "torch 2.8+", context=RUN),
    E("cuda.misaligned_address", cuda_err("misaligned address"), "illegal_memory_access", "illegal_memory_access",
      "cudaErrorMisalignedAddress (716)", "torch C10_CUDA_CHECK", "all", context=RUN),
    E("cuda.illegal_instruction", cuda_err("an illegal instruction was encountered"), "illegal_memory_access", "illegal_memory_access",
      "cudaErrorIllegalInstruction (715)", "torch C10_CUDA_CHECK", "all", context=RUN),
    E("cuda.device_side_assert", cuda_err("device-side assert triggered"), "device_assert", "illegal_memory_access",
      "cudaErrorAssert (710)", "torch C10_CUDA_CHECK", "all", context=RUN),
    E("cuda.no_kernel_image", cuda_err("no kernel image is available for execution on the device"), "no_kernel_image",
      "unsupported_gpu_arch", "cudaErrorNoKernelImageForDevice (209)", "torch C10_CUDA_CHECK", "all", context=RUN[:1]),
    E("cuda.no_kernel_image_cpp",
      "CUDA Error: no kernel image is available for execution on the device (209) /workspace/csrc/flashinfer/handler.cuh: line 210 at "
      "function cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_size)",
      "no_kernel_image", "unsupported_gpu_arch", "flashinfer handler.cuh", "FLASHINFER_CUDA_CALL", "flashinfer 0.1-0.2", level="printf",
      context=RUN[:1]),
    E("cuda.sm_not_compatible_then_no_kernel",
      "/usr/local/lib/python3.10/dist-packages/torch/cuda/__init__.py:230: UserWarning: \nNVIDIA GeForce RTX 5090 with CUDA capability "
      "sm_120 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_50 "
      "sm_60 sm_70 sm_75 sm_80 sm_86 sm_90.",
      "unsupported_arch", "unsupported_gpu_arch", "torch/cuda/__init__.py", "_check_capability", "torch 1.x-2.6", level="warnings.warn",
      after=[cuda_err("no kernel image is available for execution on the device")]),
    E("cuda.driver_insufficient",
      tb((f"{T}/cuda/__init__.py", 293, "_lazy_init", "torch._C._cuda_init()"),
         exc="RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by "
             "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: "
             "https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver."),
      "driver_mismatch", "cuda_driver_mismatch", "torch/cuda/__init__.py", "_lazy_init", "torch 1.x-2.x"),
    E("cuda.driver_version_insufficient", cuda_err("CUDA driver version is insufficient for CUDA runtime version"), "driver_mismatch",
      "cuda_driver_mismatch", "cudaErrorInsufficientDriver (35)", "torch C10_CUDA_CHECK", "all"),
    E("cuda.error_803",
      f"{T}/cuda/__init__.py:138: UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
      "functions before calling NumCudaDevices() that might have already set an error? Error 803: system has unsupported display "
      "driver / cuda driver combination (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)",
      "driver_mismatch", "cuda_driver_mismatch", "c10/cuda/CUDAFunctions.cpp", "device_count_impl", "torch 2.x",
      level="warnings.warn", after=["RuntimeError: No CUDA GPUs are available"]),
    E("cuda.error_802_fabric",
      cuda_err("system not yet initialized"), "nvls_error", "nvls_fabric_manager", "cudaErrorSystemNotReady (802)",
      "torch C10_CUDA_CHECK", "all (NVSwitch systems without fabric manager)"),
    E("cuda.ecc_uncorrectable", cuda_err("uncorrectable ECC error encountered"), "ecc_error", "hardware_fault",
      "cudaErrorECCUncorrectable (214)", "torch C10_CUDA_CHECK", "all", context=RUN),
    E("cuda.stream_capturing", cuda_err("operation not permitted when stream is capturing",
                                        [("/workspace/capture.py", 40, "capture", "y = model(x)")]),
      "graph_capture_failed", "cuda_graph_capture_failure", "cudaErrorStreamCaptureUnsupported (900)", "torch C10_CUDA_CHECK", "all",
      context=["capturing graphs for bs [1, 2, 4, 8]"]),
    E("cuda.cublas_alloc_failed",
      tb(("/workspace/serve.py", 90, "step", "logits = model(input_ids)"),
         exc="RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"),
      "cuda_oom", "runtime_oom", "aten/src/ATen/cuda/CublasHandlePool.cpp", "getCurrentCUDABlasHandle", "torch 1.x-2.x", context=RUN),
    E("xid.79_fallen_off_bus",
      kern("Xid (PCI:0000:81:00): 79, pid=40213, name=python3, GPU has fallen off the bus."),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 79", "all drivers", level="kernel"),
    E("xid.fallen_off_bus_text",
      kern("GPU at PCI:0000:81:00: GPU-7c2b1f0e-3c5a-11ee-8c99-0242ac120002") + "\n" + kern("GPU Board Serial Number: 1320123456789") +
      "\n" + kern("Xid (PCI:0000:81:00): 79, GPU has fallen off the bus."),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 79", "all drivers", level="kernel"),
    E("xid.48_dbe",
      kern("Xid (PCI:0000:3b:00): 48, pid=2231, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the "
           "framebuffer at partition 6, subpartition 0."),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 48", "all drivers", level="kernel"),
    E("xid.94_contained_ecc",
      kern("Xid (PCI:0000:1b:00): 94, pid=5521, name=python3, Contained: SM (0x1). RST: No, D-RST: No"),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 94", "Ampere+ drivers", level="kernel"),
    E("xid.95_uncontained_ecc",
      kern("Xid (PCI:0000:1b:00): 95, pid=5521, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No"),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 95", "Ampere+ drivers", level="kernel"),
    E("xid.74_nvlink",
      kern("Xid (PCI:0000:b7:00): 74, pid=7811, name=python3, NVLink: fatal error detected on link 4(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 74", "all drivers", level="kernel"),
    E("xid.119_gsp_timeout",
      kern("Xid (PCI:0000:c1:00): 119, pid=9012, name=python3, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected "
           "function 76 (GSP_RM_CONTROL) (0x2080014b 0x5)."),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 119", "R525+ (GSP firmware)", level="kernel"),
    E("xid.63_row_remap",
      kern("Xid (PCI:0000:3b:00): 63, pid=2231, name=python, Row Remapper: New row marked for remapping, reset gpu to activate."),
      "xid", "hardware_fault", "NVIDIA kernel driver (NVRM)", "Xid 63", "Ampere+ drivers", level="kernel"),
]


