"""One decode point (16 x 32/8 x 8192, D 128, one query) for ncu: PyTorch's SDPA cuDNN kernel and ours (the
fixed TMA grid through bench/decode_probe.cu's library), each launched twice (ncu profiles the second),
so that their grids, resources and DRAM rates are read side by side (bench/decode6_h200.sh, step 5).
Usage: ncu ... python3 bench/decode_ncu.py build/bench/libdecode_probe.so"""
import ctypes, sys
import torch
import torch.nn.functional as F
from torch.nn.attention import sdpa_kernel, SDPBackend

lib = ctypes.CDLL(sys.argv[1])
I, P, Z = ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t
lib.launch_flash_decode.argtypes = [I, P, P, P, P, P, P, I, I, I, I, I, I, I, I, P]
lib.flash_decode_prepare.argtypes = [I]
B, Hq, Hkv, L, D = 16, 32, 8, 8192, 128
q = torch.randn(B, Hq, 1, D, device="cuda", dtype=torch.bfloat16)
k, v = (torch.randn(B, Hkv, L, D, device="cuda", dtype=torch.bfloat16) for _ in range(2))
out = torch.empty_like(q)
lse = torch.empty(B, Hq, 1, device="cuda", dtype=torch.float32)


class Cfg(ctypes.Structure):
    _fields_ = [("kernel_name", ctypes.c_char_p)]  # the leading field of flash_decode_config


lib.flash_decode_config_at.restype = ctypes.POINTER(Cfg)
lib.flash_decode_config_at.argtypes = [I]
cfg = [i for i in range(lib.flash_decode_config_count())
       if lib.flash_decode_config_at(i).contents.kernel_name == b"attnprof_flash_decode_bf16_d128_16x32_w4_s2_tma"][0]
for _ in range(2):
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    lib.flash_decode_prepare(cfg)  # 128 tiles >= 0.8 x 132: one split, no workspace
    rc = lib.launch_flash_decode(cfg, q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr(), None,
                                 B, Hq, Hkv, 1, L, D, 1, L, None)
    assert rc == 0, rc
torch.cuda.synchronize()
print("ok")
