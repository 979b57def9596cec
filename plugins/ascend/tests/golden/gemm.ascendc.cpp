// AscendC kernels for ascend910b (ascend910b), written by tilec-backend-ascend 0.1.0.
// Build for the NPU with CANN's compiler; with -DASCENDC_CPU_MODEL it builds
// against ascendc_cpu.h, the CPU execution model shipped with the backend.
#ifdef ASCENDC_CPU_MODEL
#include "ascendc_cpu.h"
#else
#include "kernel_operator.h"
#endif
#include <cmath>
#include <cstdint>
#include <limits>

using namespace AscendC;

// The CPU model names buffers in its messages; AscendC's InitBuffer takes no name.
#ifdef ASCENDC_CPU_MODEL
#define TILEC_INIT_BUFFER(pipe, buf, bytes, name) (pipe).InitBuffer((buf), (bytes), (name))
#else
#define TILEC_INIT_BUFFER(pipe, buf, bytes, name) (pipe).InitBuffer((buf), (bytes))
#endif

// A kernel with cube and vector work runs on an AIC and its two AIVs
// (KERNEL_TYPE_MIX_AIC_1_2): each instruction is guarded by the core that runs it,
// TILEC_AIC or TILEC_AIV (the first AIV does the vector work); both AIVs set and wait
// for the cross-core flags (TILEC_AIV_ALL). The CPU model runs both cores in program
// order and checks every instruction against the core its guard names.
#ifdef ASCENDC_CPU_MODEL
#define TILEC_SET_GLOBAL(t, ptr, n, name) (t).SetGlobalBuffer((ptr), (n), (name))
#define TILEC_AIC if (AscendC::cpu::SideScope tl_side{AscendC::cpu::SIDE_AIC}; true)
#define TILEC_AIV if (AscendC::cpu::SideScope tl_side{AscendC::cpu::SIDE_AIV}; tl_aiv_worker)
#define TILEC_AIV_ALL if (AscendC::cpu::SideScope tl_side{AscendC::cpu::SIDE_AIV}; true)
#else
#define TILEC_SET_GLOBAL(t, ptr, n, name) (t).SetGlobalBuffer((ptr), (n))
#define TILEC_AIC if (ASCEND_IS_AIC)
#define TILEC_AIV if (ASCEND_IS_AIV && tl_aiv_worker)
#define TILEC_AIV_ALL if (ASCEND_IS_AIV)
#endif

// Scalar helpers: computed in double and rounded once into the result type.
__aicore__ inline double tl_exp(double x) { return exp(x); }
__aicore__ inline double tl_exp2(double x) { return exp2(x); }
__aicore__ inline double tl_log(double x) { return log(x); }
__aicore__ inline double tl_log2(double x) { return log2(x); }
__aicore__ inline double tl_sqrt(double x) { return sqrt(x); }
__aicore__ inline double tl_rsqrt(double x) { return 1.0 / sqrt(x); }
__aicore__ inline double tl_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
__aicore__ inline double tl_tanh(double x) { return tanh(x); }
__aicore__ inline double tl_sin(double x) { return sin(x); }
__aicore__ inline double tl_cos(double x) { return cos(x); }
__aicore__ inline double tl_floor(double x) { return floor(x); }
__aicore__ inline double tl_ceil(double x) { return ceil(x); }
__aicore__ inline double tl_round(double x) { return nearbyint(x); }
__aicore__ inline double tl_pow(double x, double y) { return pow(x, y); }
__aicore__ inline double tl_fmod_floor(double x, double y) { return x - floor(x / y) * y; }
__aicore__ inline float tl_to_float(double x) { return float(x); }
__aicore__ inline float tl_abs(float x) { return fabsf(x); }
__aicore__ inline double tl_abs(double x) { return fabs(x); }
__aicore__ inline float tl_min(float x, float y) { return (x != x || y != y) ? NAN : (x < y ? x : y); }
__aicore__ inline float tl_max(float x, float y) { return (x != x || y != y) ? NAN : (x > y ? x : y); }
__aicore__ inline double tl_min(double x, double y) { return (x != x || y != y) ? NAN : (x < y ? x : y); }
__aicore__ inline double tl_max(double x, double y) { return (x != x || y != y) ? NAN : (x > y ? x : y); }
__aicore__ inline int64_t tl_div(int64_t x, int64_t y) { return y == 0 ? 0 : x / y; }
__aicore__ inline int64_t tl_floordiv(int64_t x, int64_t y) {
    if (y == 0) return 0;
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}
__aicore__ inline int64_t tl_floormod(int64_t x, int64_t y) { return y == 0 ? 0 : x - tl_floordiv(x, y) * y; }
__aicore__ inline int64_t tl_ipow(int64_t x, int64_t y) {
    int64_t r = 1;
    for (int64_t i = 0; i < y; ++i) r *= x;
    return r;
}
__aicore__ inline int64_t tl_clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
template <typename To, typename From>
__aicore__ inline To tl_bitcast(From x) {
    // The same bits read as another type of the same width.
    static_assert(sizeof(To) == sizeof(From), "a bit cast keeps the width");
    To r;
    __builtin_memcpy(&r, &x, sizeof r);
    return r;
}
template <typename T>
__aicore__ inline T tl_float_to_int(double x) {
    // Truncates toward zero, saturates at the int64 range, wraps to T.
    if (x != x) return T(0);
    double t = trunc(x);
    int64_t v = t <= -9223372036854775808.0 ? INT64_MIN
                : (t >= 9223372036854775807.0 ? INT64_MAX : int64_t(t));
    return T(v);
}

// tilec-entry main_k0 b b b
struct main_k0_Tiling {
    int64_t grid[3];  // blocks along x, y, z
};

extern "C" __global__ __aicore__ void main_k0(GM_ADDR A, GM_ADDR B, GM_ADDR C, GM_ADDR tiling)
{
    const __gm__ main_k0_Tiling* td = reinterpret_cast<const __gm__ main_k0_Tiling*>(tiling);
    // Global memory.
    GlobalTensor<half> A_gm;
    TILEC_SET_GLOBAL(A_gm, reinterpret_cast<__gm__ half*>(A), uint64_t(int64_t(1) * int64_t(int32_t(256)) * int64_t(int32_t(256))), "A");
    GlobalTensor<half> B_gm;
    TILEC_SET_GLOBAL(B_gm, reinterpret_cast<__gm__ half*>(B), uint64_t(int64_t(1) * int64_t(int32_t(256)) * int64_t(int32_t(256))), "B");
    GlobalTensor<half> C_gm;
    TILEC_SET_GLOBAL(C_gm, reinterpret_cast<__gm__ half*>(C), uint64_t(int64_t(1) * int64_t(int32_t(256)) * int64_t(int32_t(256))), "C");
    // On-chip buffers, placed by the target description's capacities.
    TPipe pipe;
    TBuf<TPosition::A1> A_shared_ping_buf;  // L1, 128 x 32, NZ, ping slot
    TILEC_INIT_BUFFER(pipe, A_shared_ping_buf, 8192, "A_shared_ping");
    LocalTensor<half> A_shared_ping = A_shared_ping_buf.Get<half>();
    TBuf<TPosition::A1> A_shared_pong_buf;  // L1, 128 x 32, NZ, pong slot
    TILEC_INIT_BUFFER(pipe, A_shared_pong_buf, 8192, "A_shared_pong");
    LocalTensor<half> A_shared_pong = A_shared_pong_buf.Get<half>();
    TBuf<TPosition::B1> B_shared_ping_buf;  // L1, 32 x 128, NZ, ping slot
    TILEC_INIT_BUFFER(pipe, B_shared_ping_buf, 8192, "B_shared_ping");
    LocalTensor<half> B_shared_ping = B_shared_ping_buf.Get<half>();
    TBuf<TPosition::B1> B_shared_pong_buf;  // L1, 32 x 128, NZ, pong slot
    TILEC_INIT_BUFFER(pipe, B_shared_pong_buf, 8192, "B_shared_pong");
    LocalTensor<half> B_shared_pong = B_shared_pong_buf.Get<half>();
    TBuf<TPosition::CO1> C_local_buf;  // L0C, 128 x 128, NZ
    TILEC_INIT_BUFFER(pipe, C_local_buf, 65536, "C_local");
    LocalTensor<float> C_local = C_local_buf.Get<float>();
    TBuf<TPosition::A2> tl_l0a_buf;  // L0A, cube A operand, Zz
    TILEC_INIT_BUFFER(pipe, tl_l0a_buf, 8192, "tl_l0a");
    LocalTensor<half> tl_l0a = tl_l0a_buf.Get<half>();
    TBuf<TPosition::B2> tl_l0b_buf;  // L0B, cube B operand, nZ
    TILEC_INIT_BUFFER(pipe, tl_l0b_buf, 8192, "tl_l0b");
    LocalTensor<half> tl_l0b = tl_l0b_buf.Get<half>();
    // Blocks of the grid, spread over the AI cores.
    const int64_t blocks = td->grid[0] * td->grid[1] * td->grid[2];
    for (int64_t block = GetBlockIdx(); block < blocks; block += GetBlockNum()) {
        const int32_t bx = int32_t(block % td->grid[0]);
        const int32_t by = int32_t(block / td->grid[0] % td->grid[1]);
        bool C_local_fresh = true;
        C_local_fresh = true; // T.clear: the next Mmad overwrites C_local
        PipeBarrier<PIPE_ALL>();
        // T.Pipelined(num_stages=2): cube operands double-buffered in L1 (slot = iteration % 2); MTE2 fills one slot while MTE1/M work on the other
        SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID4); SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID5); SetFlag<HardEvent::M_MTE1>(EVENT_ID6);
        for (int32_t k = int32_t(0); k < int32_t(int64_t(int32_t(0)) + int64_t(int32_t(8))); ++k) {
            const int32_t tl_slot = int32_t(tl_floormod(int64_t(k) - int64_t(int32_t(0)), 2));
            LocalTensor<half> A_shared = tl_slot == 0 ? A_shared_ping : A_shared_pong;
            LocalTensor<half> B_shared = tl_slot == 0 ? B_shared_ping : B_shared_pong;
            WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID4 + tl_slot);
            // T.copy A -> A_shared (GM -> L1, ND -> NZ fractals of 16 x 16)
            {
                const int64_t tl_1_s0 = int64_t(int32_t(int64_t(by) * int64_t(int32_t(128)))), tl_1_lo0 = tl_clamp(-tl_1_s0, 0, 128), tl_1_hi0 = tl_clamp(int64_t(int32_t(256)) - tl_1_s0, 0, 128);
                const int64_t tl_1_s1 = int64_t(int32_t(int64_t(k) * int64_t(int32_t(32)))), tl_1_lo1 = tl_clamp(-tl_1_s1, 0, 32), tl_1_hi1 = tl_clamp(int64_t(int32_t(256)) - tl_1_s1, 0, 32);
                if (!(tl_1_lo0 == 0 && tl_1_hi0 == 128 && tl_1_lo1 == 0 && tl_1_hi1 == 32)) InitConstValue(A_shared, InitConstValueParams<half>{uint16_t(16), 1, 0, half(0)});
                if (tl_1_hi0 > tl_1_lo0 && tl_1_hi1 > tl_1_lo1) DataCopy(A_shared[(tl_1_lo1 / 16) * 128 * 16 + tl_1_lo0 * 16 + tl_1_lo1 % 16], A_gm[(tl_1_s0 + tl_1_lo0) * int64_t(1) * int64_t(int32_t(256)) + (tl_1_s1 + tl_1_lo1) * int64_t(1)], Nd2NzParams{1, uint16_t(tl_1_hi0 - tl_1_lo0), uint16_t(tl_1_hi1 - tl_1_lo1), 0, uint16_t(int64_t(1) * int64_t(int32_t(256))), uint16_t(128), 1, 0});
            }
            // T.copy B -> B_shared (GM -> L1, ND -> NZ fractals of 16 x 16)
            {
                const int64_t tl_2_s0 = int64_t(int32_t(int64_t(k) * int64_t(int32_t(32)))), tl_2_lo0 = tl_clamp(-tl_2_s0, 0, 32), tl_2_hi0 = tl_clamp(int64_t(int32_t(256)) - tl_2_s0, 0, 32);
                const int64_t tl_2_s1 = int64_t(int32_t(int64_t(bx) * int64_t(int32_t(128)))), tl_2_lo1 = tl_clamp(-tl_2_s1, 0, 128), tl_2_hi1 = tl_clamp(int64_t(int32_t(256)) - tl_2_s1, 0, 128);
                if (!(tl_2_lo0 == 0 && tl_2_hi0 == 32 && tl_2_lo1 == 0 && tl_2_hi1 == 128)) InitConstValue(B_shared, InitConstValueParams<half>{uint16_t(16), 1, 0, half(0)});
                if (tl_2_hi0 > tl_2_lo0 && tl_2_hi1 > tl_2_lo1) DataCopy(B_shared[(tl_2_lo1 / 16) * 32 * 16 + tl_2_lo0 * 16 + tl_2_lo1 % 16], B_gm[(tl_2_s0 + tl_2_lo0) * int64_t(1) * int64_t(int32_t(256)) + (tl_2_s1 + tl_2_lo1) * int64_t(1)], Nd2NzParams{1, uint16_t(tl_2_hi0 - tl_2_lo0), uint16_t(tl_2_hi1 - tl_2_lo1), 0, uint16_t(int64_t(1) * int64_t(int32_t(256))), uint16_t(32), 1, 0});
            }
            WaitFlag<HardEvent::M_MTE1>(EVENT_ID6);
            // T.gemm A_shared x B_shared -> C_local: Mmad 128x128x32 over fractals, K in chunks of 32
            SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0); WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
            for (int64_t tl_mb = 0; tl_mb < 8; ++tl_mb) LoadData(tl_l0a[tl_mb * 512], A_shared, LoadData2DParams{uint16_t(0 * 8 + tl_mb), uint8_t(2), uint16_t(8), 0, 0, false, 0});
            for (int64_t tl_kb = 0; tl_kb < 2; ++tl_kb) LoadData(tl_l0b[tl_kb * 2048], B_shared, LoadData2DParams{uint16_t(0 + tl_kb), uint8_t(8), uint16_t(2), 0, 0, true, 0});
            SetFlag<HardEvent::MTE1_M>(EVENT_ID0); WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
            {
                MmadParams tl_mp;
                tl_mp.m = 128; tl_mp.n = 128; tl_mp.k = 32; tl_mp.cmatrixInitVal = C_local_fresh;
                Mmad(C_local, tl_l0a, tl_l0b, tl_mp);
            }
            C_local_fresh = false;
            SetFlag<HardEvent::M_MTE1>(EVENT_ID6);
            SetFlag<HardEvent::MTE1_MTE2>(EVENT_ID4 + tl_slot);
        }
        WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID4); WaitFlag<HardEvent::MTE1_MTE2>(EVENT_ID5); WaitFlag<HardEvent::M_MTE1>(EVENT_ID6);
        PipeBarrier<PIPE_ALL>();
        // T.copy C_local -> C (L0C -> GM through the fixpipe, NZ -> ND, F322F16)
        {
            const int64_t tl_3_s0 = int64_t(int32_t(int64_t(by) * int64_t(int32_t(128)))), tl_3_lo0 = tl_clamp(-tl_3_s0, 0, 128), tl_3_hi0 = tl_clamp(int64_t(int32_t(256)) - tl_3_s0, 0, 128);
            const int64_t tl_3_s1 = int64_t(int32_t(int64_t(bx) * int64_t(int32_t(128)))), tl_3_lo1 = tl_clamp(-tl_3_s1, 0, 128), tl_3_hi1 = tl_clamp(int64_t(int32_t(256)) - tl_3_s1, 0, 128);
            FixpipeParamsV220 tl_fp;
            tl_fp.nSize = uint16_t(tl_3_hi1 - tl_3_lo1); tl_fp.mSize = uint16_t(tl_3_hi0 - tl_3_lo0); tl_fp.srcStride = 128; tl_fp.dstStride = uint32_t(int64_t(1) * int64_t(int32_t(256))); tl_fp.quantPre = QuantMode_t::F322F16;
            if (tl_3_hi0 > tl_3_lo0 && tl_3_hi1 > tl_3_lo1) Fixpipe(C_gm[(tl_3_s0 + tl_3_lo0) * int64_t(1) * int64_t(int32_t(256)) + (tl_3_s1 + tl_3_lo1) * int64_t(1)], C_local[(tl_3_lo1 / 16) * 128 * 16 + tl_3_lo0 * 16 + tl_3_lo1 % 16], tl_fp);
        }
        PipeBarrier<PIPE_ALL>();
    }
}

#ifndef ASCENDC_CPU_MODEL
// Host launch: `tiling` holds a main_k0_Tiling in device memory; block_dim = min(blocks, AI cores).
void main_k0_do(uint32_t block_dim, void* stream, uint8_t* A, uint8_t* B, uint8_t* C, uint8_t* tiling)
{
    main_k0<<<block_dim, nullptr, stream>>>(A, B, C, tiling);
}
#else
extern "C" int main_k0_cpu(uint32_t block_dim, uint8_t** args, uint8_t* tiling, char* error, uint64_t error_len)
{
    return AscendC::cpu::launch(block_dim, error, error_len, [&] { main_k0(args[0], args[1], args[2], tiling); });
}
#endif

