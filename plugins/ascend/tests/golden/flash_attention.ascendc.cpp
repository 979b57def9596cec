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

// tilec-entry main_k0 b b b b ws=40960
struct main_k0_Tiling {
    int64_t grid[3];  // blocks along x, y, z
};

// GM workspace of one AI core (staged gemm operands and products); the host allocates block_dim times this.
constexpr uint64_t main_k0_WORKSPACE_BYTES = 40960;

extern "C" __global__ __aicore__ void main_k0(GM_ADDR Q, GM_ADDR K, GM_ADDR V, GM_ADDR Output, GM_ADDR workspace, GM_ADDR tiling)
{
    // One AIC and two AIVs per AI core; GetBlockIdx counts the AIVs twice.
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    const int64_t tl_core = GetBlockIdx() / GetTaskRatio();
    const bool tl_aiv_worker = GetBlockIdx() % GetTaskRatio() == 0;
    const __gm__ main_k0_Tiling* td = reinterpret_cast<const __gm__ main_k0_Tiling*>(tiling);
    // Global memory.
    GlobalTensor<half> Q_gm;
    TILEC_SET_GLOBAL(Q_gm, reinterpret_cast<__gm__ half*>(Q), uint64_t(int64_t(1) * int64_t(int32_t(1)) * int64_t(int32_t(1)) * int64_t(int32_t(128)) * int64_t(int32_t(64))), "Q");
    GlobalTensor<half> K_gm;
    TILEC_SET_GLOBAL(K_gm, reinterpret_cast<__gm__ half*>(K), uint64_t(int64_t(1) * int64_t(int32_t(1)) * int64_t(int32_t(1)) * int64_t(int32_t(128)) * int64_t(int32_t(64))), "K");
    GlobalTensor<half> V_gm;
    TILEC_SET_GLOBAL(V_gm, reinterpret_cast<__gm__ half*>(V), uint64_t(int64_t(1) * int64_t(int32_t(1)) * int64_t(int32_t(1)) * int64_t(int32_t(128)) * int64_t(int32_t(64))), "V");
    GlobalTensor<half> Output_gm;
    TILEC_SET_GLOBAL(Output_gm, reinterpret_cast<__gm__ half*>(Output), uint64_t(int64_t(1) * int64_t(int32_t(1)) * int64_t(int32_t(1)) * int64_t(int32_t(128)) * int64_t(int32_t(64))), "Output");
    // This core's region of the GM workspace: rows at the UB pitch.
    GlobalTensor<float> acc_s_ws;
    TILEC_SET_GLOBAL(acc_s_ws, reinterpret_cast<__gm__ float*>(workspace + tl_core * main_k0_WORKSPACE_BYTES + 0), uint64_t(4096), "acc_s_ws");
    GlobalTensor<half> acc_s_cast_ws;
    TILEC_SET_GLOBAL(acc_s_cast_ws, reinterpret_cast<__gm__ half*>(workspace + tl_core * main_k0_WORKSPACE_BYTES + 16384), uint64_t(4096), "acc_s_cast_ws");
    GlobalTensor<float> acc_o_ws;
    TILEC_SET_GLOBAL(acc_o_ws, reinterpret_cast<__gm__ float*>(workspace + tl_core * main_k0_WORKSPACE_BYTES + 24576), uint64_t(4096), "acc_o_ws");
    // On-chip buffers, placed by the target description's capacities.
    TPipe pipe;
    TBuf<TPosition::A1> Q_shared_buf;  // L1, 64 x 64, NZ
    LocalTensor<half> Q_shared;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, Q_shared_buf, 8192, "Q_shared"); Q_shared = Q_shared_buf.Get<half>(); }
    TBuf<TPosition::B1> K_shared_buf;  // L1, 64 x 64, NZ
    LocalTensor<half> K_shared;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, K_shared_buf, 8192, "K_shared"); K_shared = K_shared_buf.Get<half>(); }
    TBuf<TPosition::B1> V_shared_buf;  // L1, 64 x 64, NZ
    LocalTensor<half> V_shared;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, V_shared_buf, 8192, "V_shared"); V_shared = V_shared_buf.Get<half>(); }
    TBuf<TPosition::VECCALC> O_shared_buf;  // UB, 64 x 64, rows of 64
    LocalTensor<half> O_shared;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, O_shared_buf, 8192, "O_shared"); O_shared = O_shared_buf.Get<half>(); }
    TBuf<TPosition::VECCALC> acc_s_buf;  // UB, 64 x 64, rows of 64
    LocalTensor<float> acc_s;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, acc_s_buf, 16384, "acc_s"); acc_s = acc_s_buf.Get<float>(); }
    TBuf<TPosition::CO1> acc_s_l0c_buf;  // L0C, 64 x 64, NZ: the cube's products for acc_s
    LocalTensor<float> acc_s_l0c;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, acc_s_l0c_buf, 16384, "acc_s_l0c"); acc_s_l0c = acc_s_l0c_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> acc_s_cast_buf;  // UB, 64 x 64, rows of 64
    LocalTensor<half> acc_s_cast;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, acc_s_cast_buf, 8192, "acc_s_cast"); acc_s_cast = acc_s_cast_buf.Get<half>(); }
    TBuf<TPosition::A1> acc_s_cast_l1_buf;  // L1, 64 x 64, NZ: acc_s_cast staged for the cube
    LocalTensor<half> acc_s_cast_l1;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, acc_s_cast_l1_buf, 8192, "acc_s_cast_l1"); acc_s_cast_l1 = acc_s_cast_l1_buf.Get<half>(); }
    TBuf<TPosition::VECCALC> acc_o_buf;  // UB, 64 x 64, rows of 64
    LocalTensor<float> acc_o;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, acc_o_buf, 16384, "acc_o"); acc_o = acc_o_buf.Get<float>(); }
    TBuf<TPosition::CO1> acc_o_l0c_buf;  // L0C, 64 x 64, NZ: the cube's products for acc_o
    LocalTensor<float> acc_o_l0c;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, acc_o_l0c_buf, 16384, "acc_o_l0c"); acc_o_l0c = acc_o_l0c_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> scores_max_buf;  // UB, 64, rows of 64
    LocalTensor<float> scores_max;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, scores_max_buf, 256, "scores_max"); scores_max = scores_max_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> scores_max_prev_buf;  // UB, 64, rows of 64
    LocalTensor<float> scores_max_prev;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, scores_max_prev_buf, 256, "scores_max_prev"); scores_max_prev = scores_max_prev_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> scores_scale_buf;  // UB, 64, rows of 64
    LocalTensor<float> scores_scale;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, scores_scale_buf, 256, "scores_scale"); scores_scale = scores_scale_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> scores_sum_buf;  // UB, 64, rows of 64
    LocalTensor<float> scores_sum;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, scores_sum_buf, 256, "scores_sum"); scores_sum = scores_sum_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> logsum_buf;  // UB, 64, rows of 64
    LocalTensor<float> logsum;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, logsum_buf, 256, "logsum"); logsum = logsum_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> tl_gemm_in_float32_buf;  // UB scratch
    LocalTensor<float> tl_gemm_in_float32;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, tl_gemm_in_float32_buf, 16384, "tl_gemm_in_float32"); tl_gemm_in_float32 = tl_gemm_in_float32_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> tl_red_float32_buf;  // UB scratch
    LocalTensor<float> tl_red_float32;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, tl_red_float32_buf, 2048, "tl_red_float32"); tl_red_float32 = tl_red_float32_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> tl_vt0_float32_buf;  // UB scratch
    LocalTensor<float> tl_vt0_float32;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, tl_vt0_float32_buf, 256, "tl_vt0_float32"); tl_vt0_float32 = tl_vt0_float32_buf.Get<float>(); }
    TBuf<TPosition::VECCALC> tl_work_float32_buf;  // UB scratch
    LocalTensor<float> tl_work_float32;
    TILEC_AIV { TILEC_INIT_BUFFER(pipe, tl_work_float32_buf, 256, "tl_work_float32"); tl_work_float32 = tl_work_float32_buf.Get<float>(); }
    TBuf<TPosition::A2> tl_l0a_buf;  // L0A, cube A operand, Zz
    LocalTensor<half> tl_l0a;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, tl_l0a_buf, 8192, "tl_l0a"); tl_l0a = tl_l0a_buf.Get<half>(); }
    TBuf<TPosition::B2> tl_l0b_buf;  // L0B, cube B operand, nZ
    LocalTensor<half> tl_l0b;
    TILEC_AIC { TILEC_INIT_BUFFER(pipe, tl_l0b_buf, 8192, "tl_l0b"); tl_l0b = tl_l0b_buf.Get<half>(); }
    // Blocks of the grid, spread over the AI cores.
    const int64_t blocks = td->grid[0] * td->grid[1] * td->grid[2];
    for (int64_t block = tl_core; block < blocks; block += GetBlockNum()) {
        const int32_t bx = int32_t(block % td->grid[0]);
        const int32_t by = int32_t(block / td->grid[0] % td->grid[1]);
        const int32_t bz = int32_t(block / td->grid[0] / td->grid[1] % td->grid[2]);
        TILEC_AIC {
            // T.copy Q -> Q_shared (GM -> L1, ND -> NZ fractals of 16 x 16)
            {
                const int64_t tl_1_s0 = int64_t(bz), tl_1_lo0 = tl_clamp(-tl_1_s0, 0, 1), tl_1_hi0 = tl_clamp(int64_t(int32_t(1)) - tl_1_s0, 0, 1);
                const int64_t tl_1_s1 = int64_t(by), tl_1_lo1 = tl_clamp(-tl_1_s1, 0, 1), tl_1_hi1 = tl_clamp(int64_t(int32_t(1)) - tl_1_s1, 0, 1);
                const int64_t tl_1_s2 = int64_t(int32_t(int64_t(bx) * int64_t(int32_t(64)))), tl_1_lo2 = tl_clamp(-tl_1_s2, 0, 64), tl_1_hi2 = tl_clamp(int64_t(int32_t(128)) - tl_1_s2, 0, 64);
                const int64_t tl_1_s3 = int64_t(int32_t(0)), tl_1_lo3 = tl_clamp(-tl_1_s3, 0, 64), tl_1_hi3 = tl_clamp(int64_t(int32_t(64)) - tl_1_s3, 0, 64);
                if (!(tl_1_lo0 == 0 && tl_1_hi0 == 1 && tl_1_lo1 == 0 && tl_1_hi1 == 1 && tl_1_lo2 == 0 && tl_1_hi2 == 64 && tl_1_lo3 == 0 && tl_1_hi3 == 64)) InitConstValue(Q_shared, InitConstValueParams<half>{uint16_t(16), 1, 0, half(0)});
                if (tl_1_hi0 > tl_1_lo0 && tl_1_hi1 > tl_1_lo1 && tl_1_hi2 > tl_1_lo2 && tl_1_hi3 > tl_1_lo3) DataCopy(Q_shared[(tl_1_lo3 / 16) * 64 * 16 + tl_1_lo2 * 16 + tl_1_lo3 % 16], Q_gm[tl_1_s0 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) * int64_t(int32_t(1)) + tl_1_s1 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) + (tl_1_s2 + tl_1_lo2) * int64_t(1) * int64_t(int32_t(64)) + (tl_1_s3 + tl_1_lo3) * int64_t(1)], Nd2NzParams{1, uint16_t(tl_1_hi2 - tl_1_lo2), uint16_t(tl_1_hi3 - tl_1_lo3), 0, uint16_t(int64_t(1) * int64_t(int32_t(64))), uint16_t(64), 1, 0});
            }
        }
        TILEC_AIV {
            {
                const float tl_value = float(0.0);
                for (int64_t tl_f0 = 0; tl_f0 < 64; ++tl_f0) {
                    Duplicate(acc_o[int64_t(int32_t(0)) * 64 + int64_t(int32_t(0)) * 1 + tl_f0 * 64], float(tl_value), 64);
                }
            }
        }
        TILEC_AIV {
            {
                const float tl_value = float(0.0);
                Duplicate(logsum[int64_t(int32_t(0)) * 1], float(tl_value), 64);
            }
        }
        TILEC_AIV {
            {
                const float tl_value = float(-INFINITY);
                Duplicate(scores_max[int64_t(int32_t(0)) * 1], float(tl_value), 64);
            }
        }
        PipeBarrier<PIPE_ALL>();
        // T.Pipelined(num_stages=1): not double-buffered (the body is not only operand loads and gemms, or L1 lacks room); each iteration ends at a PIPE_ALL barrier
        for (int32_t k = int32_t(0); k < int32_t(int64_t(int32_t(0)) + int64_t(int32_t((int64_t(int32_t(2)) < int64_t(int32_t(tl_floordiv(int64_t(int32_t(int64_t(int32_t(int64_t(int32_t(int64_t(int32_t(int64_t(bx) + int64_t(int32_t(1)))) * int64_t(int32_t(64)))) + int64_t(int32_t(64)))) - int64_t(int32_t(1)))), int64_t(int32_t(64))))) ? int64_t(int32_t(2)) : int64_t(int32_t(tl_floordiv(int64_t(int32_t(int64_t(int32_t(int64_t(int32_t(int64_t(int32_t(int64_t(bx) + int64_t(int32_t(1)))) * int64_t(int32_t(64)))) + int64_t(int32_t(64)))) - int64_t(int32_t(1)))), int64_t(int32_t(64))))))))); ++k) {
            TILEC_AIC {
                // T.copy K -> K_shared (GM -> L1, ND -> NZ fractals of 16 x 16)
                {
                    const int64_t tl_2_s0 = int64_t(bz), tl_2_lo0 = tl_clamp(-tl_2_s0, 0, 1), tl_2_hi0 = tl_clamp(int64_t(int32_t(1)) - tl_2_s0, 0, 1);
                    const int64_t tl_2_s1 = int64_t(by), tl_2_lo1 = tl_clamp(-tl_2_s1, 0, 1), tl_2_hi1 = tl_clamp(int64_t(int32_t(1)) - tl_2_s1, 0, 1);
                    const int64_t tl_2_s2 = int64_t(int32_t(int64_t(k) * int64_t(int32_t(64)))), tl_2_lo2 = tl_clamp(-tl_2_s2, 0, 64), tl_2_hi2 = tl_clamp(int64_t(int32_t(128)) - tl_2_s2, 0, 64);
                    const int64_t tl_2_s3 = int64_t(int32_t(0)), tl_2_lo3 = tl_clamp(-tl_2_s3, 0, 64), tl_2_hi3 = tl_clamp(int64_t(int32_t(64)) - tl_2_s3, 0, 64);
                    if (!(tl_2_lo0 == 0 && tl_2_hi0 == 1 && tl_2_lo1 == 0 && tl_2_hi1 == 1 && tl_2_lo2 == 0 && tl_2_hi2 == 64 && tl_2_lo3 == 0 && tl_2_hi3 == 64)) InitConstValue(K_shared, InitConstValueParams<half>{uint16_t(16), 1, 0, half(0)});
                    if (tl_2_hi0 > tl_2_lo0 && tl_2_hi1 > tl_2_lo1 && tl_2_hi2 > tl_2_lo2 && tl_2_hi3 > tl_2_lo3) DataCopy(K_shared[(tl_2_lo3 / 16) * 64 * 16 + tl_2_lo2 * 16 + tl_2_lo3 % 16], K_gm[tl_2_s0 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) * int64_t(int32_t(1)) + tl_2_s1 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) + (tl_2_s2 + tl_2_lo2) * int64_t(1) * int64_t(int32_t(64)) + (tl_2_s3 + tl_2_lo3) * int64_t(1)], Nd2NzParams{1, uint16_t(tl_2_hi2 - tl_2_lo2), uint16_t(tl_2_hi3 - tl_2_lo3), 0, uint16_t(int64_t(1) * int64_t(int32_t(64))), uint16_t(64), 1, 0});
                }
            }
            TILEC_AIV {
                // T.Parallel at 3750..3964: scalar unit (not expressible as vector instructions)
                for (int32_t i = 0; i < int32_t(int32_t(64)); ++i) {
                    for (int32_t j = 0; j < int32_t(int32_t(64)); ++j) {
                        acc_s.SetValue((int64_t(i)) * 64 + int64_t(j), ((int32_t(int64_t(int32_t(int64_t(bx) * int64_t(int32_t(64)))) + int64_t(i)) >= int32_t(int64_t(int32_t(int64_t(k) * int64_t(int32_t(64)))) + int64_t(j))) ? float(0.0) : float(-INFINITY)));
                    }
                }
            }
            TILEC_AIC {
                // T.gemm Q_shared x K_shared^T -> acc_s: Mmad 64x64x64 over fractals, K in chunks of 64
                for (int64_t tl_mb = 0; tl_mb < 4; ++tl_mb) LoadData(tl_l0a[tl_mb * 1024], Q_shared, LoadData2DParams{uint16_t(0 * 4 + tl_mb), uint8_t(4), uint16_t(4), 0, 0, false, 0});
                SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0); WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
                for (int64_t tl_kb = 0; tl_kb < 4; ++tl_kb) LoadData(tl_l0b[tl_kb * 1024], K_shared, LoadData2DParams{uint16_t((0 + tl_kb) * 4), uint8_t(4), 1, 0, 0, false, 0});
                SetFlag<HardEvent::MTE1_M>(EVENT_ID0); WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
                {
                    MmadParams tl_mp;
                    tl_mp.m = 64; tl_mp.n = 64; tl_mp.k = 64; tl_mp.cmatrixInitVal = true;
                    Mmad(acc_s_l0c, tl_l0a, tl_l0b, tl_mp);
                }
            }
            TILEC_AIC {
                // acc_s_l0c -> GM workspace (L0C -> GM through the fixpipe, NZ -> ND)
                SetFlag<HardEvent::M_FIX>(EVENT_ID0); WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
                {
                    FixpipeParamsV220 tl_fp;
                    tl_fp.nSize = 64; tl_fp.mSize = 64; tl_fp.srcStride = 64; tl_fp.dstStride = 64; tl_fp.quantPre = QuantMode_t::NoQuant;
                    Fixpipe(acc_s_ws, acc_s_l0c, tl_fp);
                }
            }
            TILEC_AIC CrossCoreSetFlag<2, PIPE_FIX>(0);
            TILEC_AIV_ALL CrossCoreWaitFlag(0);
            TILEC_AIV {
                // GM workspace -> UB, added to acc_s
                DataCopy(tl_gemm_in_float32, acc_s_ws, 4096);
                SetFlag<HardEvent::S_V>(EVENT_ID0); WaitFlag<HardEvent::S_V>(EVENT_ID0);
                SetFlag<HardEvent::MTE2_V>(EVENT_ID0); WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                Add(acc_s, acc_s, tl_gemm_in_float32, 4096);
            }
            TILEC_AIV {
                // T.copy scores_max -> scores_max_prev element by element on the scalar unit
                {
                    for (int64_t tl_e0 = 0; tl_e0 < 64; ++tl_e0) {
                        if ((int64_t(int32_t(0)) + tl_e0) >= 0 && (int64_t(int32_t(0)) + tl_e0) < 64) scores_max_prev.SetValue((int64_t(int32_t(0)) + tl_e0), scores_max.GetValue((int64_t(int32_t(0)) + tl_e0)));
                    }
                }
            }
            TILEC_AIV {
                SetFlag<HardEvent::S_V>(EVENT_ID0); WaitFlag<HardEvent::S_V>(EVENT_ID0);
                {
                    const float tl_value = float(-INFINITY);
                    Duplicate(scores_max[int64_t(int32_t(0)) * 1], float(tl_value), 64);
                }
            }
            TILEC_AIV {
                // T.reduce_max acc_s -> scores_max: ReduceMax per row on the vector unit
                for (int64_t tl_r = 0; tl_r < 64; ++tl_r) ReduceMax(tl_red_float32[tl_r * 8], acc_s[tl_r * 64], tl_work_float32, 64);
                SetFlag<HardEvent::V_S>(EVENT_ID0); WaitFlag<HardEvent::V_S>(EVENT_ID0);
                for (int64_t tl_r = 0; tl_r < 64; ++tl_r) scores_max.SetValue(tl_r, float(tl_max(float(scores_max.GetValue(tl_r)), float(tl_red_float32.GetValue(tl_r * 8)))));
            }
            TILEC_AIV {
                SetFlag<HardEvent::S_V>(EVENT_ID0); WaitFlag<HardEvent::S_V>(EVENT_ID0);
                // T.Parallel at 1599..1697: vector unit, one row of 64 at a time
                Max(scores_max[0], scores_max[0], scores_max_prev[0], 64);
            }
            TILEC_AIV {
                SetFlag<HardEvent::V_S>(EVENT_ID0); WaitFlag<HardEvent::V_S>(EVENT_ID0);
                // T.Parallel at 1706..1824: scalar unit (not expressible as vector instructions)
                for (int32_t i_2 = 0; i_2 < int32_t(int32_t(64)); ++i_2) {
                    scores_scale.SetValue(int64_t(i_2), float(tl_exp2(double(float(float(scores_max_prev.GetValue(int64_t(i_2)) * float(0.1803368777036667)) - float(scores_max.GetValue(int64_t(i_2)) * float(0.1803368777036667)))))));
                }
            }
            TILEC_AIV {
                // T.Parallel at 1833..1952: scalar unit (not expressible as vector instructions)
                for (int32_t i_3 = 0; i_3 < int32_t(int32_t(64)); ++i_3) {
                    for (int32_t j_1 = 0; j_1 < int32_t(int32_t(64)); ++j_1) {
                        acc_s.SetValue((int64_t(i_3)) * 64 + int64_t(j_1), float(tl_exp2(double(float(float(acc_s.GetValue((int64_t(i_3)) * 64 + int64_t(j_1)) * float(0.1803368777036667)) - float(scores_max.GetValue(int64_t(i_3)) * float(0.1803368777036667)))))));
                    }
                }
            }
            TILEC_AIV {
                // T.reduce_sum acc_s -> scores_sum: ReduceSum per row on the vector unit
                SetFlag<HardEvent::S_V>(EVENT_ID0); WaitFlag<HardEvent::S_V>(EVENT_ID0);
                for (int64_t tl_r = 0; tl_r < 64; ++tl_r) ReduceSum(tl_red_float32[tl_r * 8], acc_s[tl_r * 64], tl_work_float32, 64);
                SetFlag<HardEvent::V_S>(EVENT_ID0); WaitFlag<HardEvent::V_S>(EVENT_ID0);
                for (int64_t tl_r = 0; tl_r < 64; ++tl_r) scores_sum.SetValue(tl_r, tl_red_float32.GetValue(tl_r * 8));
            }
            TILEC_AIV {
                SetFlag<HardEvent::S_V>(EVENT_ID0); WaitFlag<HardEvent::S_V>(EVENT_ID0);
                // T.Parallel at 2008..2105: vector unit, one row of 64 at a time
                Mul(tl_vt0_float32, logsum[0], scores_scale[0], 64);
                Add(logsum[0], tl_vt0_float32, scores_sum[0], 64);
            }
            TILEC_AIV {
                // T.copy acc_s -> acc_s_cast element by element on the scalar unit
                {
                    for (int64_t tl_e0 = 0; tl_e0 < 64; ++tl_e0) {
                        for (int64_t tl_e1 = 0; tl_e1 < 64; ++tl_e1) {
                            if ((int64_t(int32_t(0)) + tl_e0) >= 0 && (int64_t(int32_t(0)) + tl_e0) < 64 && (int64_t(int32_t(0)) + tl_e1) >= 0 && (int64_t(int32_t(0)) + tl_e1) < 64) acc_s_cast.SetValue(((int64_t(int32_t(0)) + tl_e0)) * 64 + (int64_t(int32_t(0)) + tl_e1), half(double(float(acc_s.GetValue(((int64_t(int32_t(0)) + tl_e0)) * 64 + (int64_t(int32_t(0)) + tl_e1))))));
                        }
                    }
                }
            }
            TILEC_AIV {
                // T.Parallel at 2200..2280: vector unit, one row of 64 at a time
                for (int32_t i_5 = 0; i_5 < 64; ++i_5) {
                    Muls(acc_o[(i_5) * 64 + 0], acc_o[(i_5) * 64 + 0], float(scores_scale.GetValue(int64_t(i_5))), 64);
                }
            }
            TILEC_AIC {
                // T.copy V -> V_shared (GM -> L1, ND -> NZ fractals of 16 x 16)
                {
                    const int64_t tl_3_s0 = int64_t(bz), tl_3_lo0 = tl_clamp(-tl_3_s0, 0, 1), tl_3_hi0 = tl_clamp(int64_t(int32_t(1)) - tl_3_s0, 0, 1);
                    const int64_t tl_3_s1 = int64_t(by), tl_3_lo1 = tl_clamp(-tl_3_s1, 0, 1), tl_3_hi1 = tl_clamp(int64_t(int32_t(1)) - tl_3_s1, 0, 1);
                    const int64_t tl_3_s2 = int64_t(int32_t(int64_t(k) * int64_t(int32_t(64)))), tl_3_lo2 = tl_clamp(-tl_3_s2, 0, 64), tl_3_hi2 = tl_clamp(int64_t(int32_t(128)) - tl_3_s2, 0, 64);
                    const int64_t tl_3_s3 = int64_t(int32_t(0)), tl_3_lo3 = tl_clamp(-tl_3_s3, 0, 64), tl_3_hi3 = tl_clamp(int64_t(int32_t(64)) - tl_3_s3, 0, 64);
                    if (!(tl_3_lo0 == 0 && tl_3_hi0 == 1 && tl_3_lo1 == 0 && tl_3_hi1 == 1 && tl_3_lo2 == 0 && tl_3_hi2 == 64 && tl_3_lo3 == 0 && tl_3_hi3 == 64)) InitConstValue(V_shared, InitConstValueParams<half>{uint16_t(16), 1, 0, half(0)});
                    if (tl_3_hi0 > tl_3_lo0 && tl_3_hi1 > tl_3_lo1 && tl_3_hi2 > tl_3_lo2 && tl_3_hi3 > tl_3_lo3) DataCopy(V_shared[(tl_3_lo3 / 16) * 64 * 16 + tl_3_lo2 * 16 + tl_3_lo3 % 16], V_gm[tl_3_s0 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) * int64_t(int32_t(1)) + tl_3_s1 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) + (tl_3_s2 + tl_3_lo2) * int64_t(1) * int64_t(int32_t(64)) + (tl_3_s3 + tl_3_lo3) * int64_t(1)], Nd2NzParams{1, uint16_t(tl_3_hi2 - tl_3_lo2), uint16_t(tl_3_hi3 - tl_3_lo3), 0, uint16_t(int64_t(1) * int64_t(int32_t(64))), uint16_t(64), 1, 0});
                }
            }
            TILEC_AIV {
                // acc_s_cast -> GM workspace (UB -> GM), on its way to the cube
                SetFlag<HardEvent::S_MTE3>(EVENT_ID0); WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
                DataCopy(acc_s_cast_ws, acc_s_cast, 4096);
            }
            TILEC_AIV_ALL CrossCoreSetFlag<2, PIPE_MTE3>(4);
            TILEC_AIC CrossCoreWaitFlag(4);
            TILEC_AIC {
                // GM workspace -> acc_s_cast_l1 (GM -> L1, ND -> NZ fractals of 16 x 16)
                DataCopy(acc_s_cast_l1, acc_s_cast_ws, Nd2NzParams{1, uint16_t(64), uint16_t(64), 0, uint16_t(64), uint16_t(64), 1, 0});
            }
            TILEC_AIC {
                // T.gemm acc_s_cast x V_shared -> acc_o: Mmad 64x64x64 over fractals, K in chunks of 64
                SetFlag<HardEvent::M_MTE1>(EVENT_ID0); WaitFlag<HardEvent::M_MTE1>(EVENT_ID0);
                SetFlag<HardEvent::MTE2_MTE1>(EVENT_ID0); WaitFlag<HardEvent::MTE2_MTE1>(EVENT_ID0);
                for (int64_t tl_mb = 0; tl_mb < 4; ++tl_mb) LoadData(tl_l0a[tl_mb * 1024], acc_s_cast_l1, LoadData2DParams{uint16_t(0 * 4 + tl_mb), uint8_t(4), uint16_t(4), 0, 0, false, 0});
                for (int64_t tl_kb = 0; tl_kb < 4; ++tl_kb) LoadData(tl_l0b[tl_kb * 1024], V_shared, LoadData2DParams{uint16_t(0 + tl_kb), uint8_t(4), uint16_t(4), 0, 0, true, 0});
                SetFlag<HardEvent::MTE1_M>(EVENT_ID0); WaitFlag<HardEvent::MTE1_M>(EVENT_ID0);
                {
                    MmadParams tl_mp;
                    tl_mp.m = 64; tl_mp.n = 64; tl_mp.k = 64; tl_mp.cmatrixInitVal = true;
                    Mmad(acc_o_l0c, tl_l0a, tl_l0b, tl_mp);
                }
            }
            TILEC_AIC {
                // acc_o_l0c -> GM workspace (L0C -> GM through the fixpipe, NZ -> ND)
                SetFlag<HardEvent::M_FIX>(EVENT_ID0); WaitFlag<HardEvent::M_FIX>(EVENT_ID0);
                {
                    FixpipeParamsV220 tl_fp;
                    tl_fp.nSize = 64; tl_fp.mSize = 64; tl_fp.srcStride = 64; tl_fp.dstStride = 64; tl_fp.quantPre = QuantMode_t::NoQuant;
                    Fixpipe(acc_o_ws, acc_o_l0c, tl_fp);
                }
            }
            TILEC_AIC CrossCoreSetFlag<2, PIPE_FIX>(0);
            TILEC_AIV_ALL CrossCoreWaitFlag(0);
            TILEC_AIV {
                // GM workspace -> UB, added to acc_o
                SetFlag<HardEvent::V_MTE2>(EVENT_ID0); WaitFlag<HardEvent::V_MTE2>(EVENT_ID0);
                DataCopy(tl_gemm_in_float32, acc_o_ws, 4096);
                SetFlag<HardEvent::MTE2_V>(EVENT_ID0); WaitFlag<HardEvent::MTE2_V>(EVENT_ID0);
                Add(acc_o, acc_o, tl_gemm_in_float32, 4096);
            }
            PipeBarrier<PIPE_ALL>();
            TILEC_AIC CrossCoreSetFlag<2, PIPE_MTE2>(1);
            TILEC_AIV_ALL CrossCoreWaitFlag(1);
            TILEC_AIV_ALL CrossCoreSetFlag<2, PIPE_MTE2>(5);
            TILEC_AIC CrossCoreWaitFlag(5);
        }
        TILEC_AIV {
            // T.Parallel at 4731..4809: vector unit, one row of 64 at a time
            for (int32_t i_6 = 0; i_6 < 64; ++i_6) {
                Duplicate(tl_vt0_float32, float(logsum.GetValue(int64_t(i_6))), 64);
                Div(acc_o[(i_6) * 64 + 0], acc_o[(i_6) * 64 + 0], tl_vt0_float32, 64);
            }
        }
        TILEC_AIV {
            SetFlag<HardEvent::V_S>(EVENT_ID0); WaitFlag<HardEvent::V_S>(EVENT_ID0);
            // T.copy acc_o -> O_shared element by element on the scalar unit
            {
                for (int64_t tl_e0 = 0; tl_e0 < 64; ++tl_e0) {
                    for (int64_t tl_e1 = 0; tl_e1 < 64; ++tl_e1) {
                        if ((int64_t(int32_t(0)) + tl_e0) >= 0 && (int64_t(int32_t(0)) + tl_e0) < 64 && (int64_t(int32_t(0)) + tl_e1) >= 0 && (int64_t(int32_t(0)) + tl_e1) < 64) O_shared.SetValue(((int64_t(int32_t(0)) + tl_e0)) * 64 + (int64_t(int32_t(0)) + tl_e1), half(double(float(acc_o.GetValue(((int64_t(int32_t(0)) + tl_e0)) * 64 + (int64_t(int32_t(0)) + tl_e1))))));
                    }
                }
            }
        }
        TILEC_AIV {
            // T.copy O_shared -> Output (UB -> GM)
            {
                const int64_t tl_4_s0 = int64_t(bz), tl_4_lo0 = tl_clamp(-tl_4_s0, 0, 1), tl_4_hi0 = tl_clamp(int64_t(int32_t(1)) - tl_4_s0, 0, 1);
                const int64_t tl_4_s1 = int64_t(by), tl_4_lo1 = tl_clamp(-tl_4_s1, 0, 1), tl_4_hi1 = tl_clamp(int64_t(int32_t(1)) - tl_4_s1, 0, 1);
                const int64_t tl_4_s2 = int64_t(int32_t(int64_t(bx) * int64_t(int32_t(64)))), tl_4_lo2 = tl_clamp(-tl_4_s2, 0, 64), tl_4_hi2 = tl_clamp(int64_t(int32_t(128)) - tl_4_s2, 0, 64);
                const int64_t tl_4_s3 = int64_t(int32_t(0)), tl_4_lo3 = tl_clamp(-tl_4_s3, 0, 64), tl_4_hi3 = tl_clamp(int64_t(int32_t(64)) - tl_4_s3, 0, 64);
                SetFlag<HardEvent::S_MTE3>(EVENT_ID0); WaitFlag<HardEvent::S_MTE3>(EVENT_ID0);
                if (tl_4_hi0 > tl_4_lo0 && tl_4_hi1 > tl_4_lo1 && tl_4_hi2 > tl_4_lo2 && tl_4_hi3 > tl_4_lo3) {
                    DataCopyPad(Output_gm[tl_4_s0 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) * int64_t(int32_t(1)) + tl_4_s1 * int64_t(1) * int64_t(int32_t(64)) * int64_t(int32_t(128)) + (tl_4_s2 + tl_4_lo2) * int64_t(1) * int64_t(int32_t(64)) + (tl_4_s3 + tl_4_lo3) * int64_t(1)], O_shared[int64_t(int32_t(0)) * 64 + int64_t(int32_t(0)) * 1 + tl_4_lo2 * 64 + tl_4_lo3 * 1], DataCopyExtParams{uint16_t((tl_4_hi2 - tl_4_lo2)), uint32_t((tl_4_hi3 - tl_4_lo3) * 2), uint32_t((64 * 2 - ((tl_4_hi3 - tl_4_lo3) * 2 + 31) / 32 * 32) / 32), uint32_t((int64_t(1) * int64_t(int32_t(64)) - (tl_4_hi3 - tl_4_lo3)) * 2), 0});
                }
            }
        }
        PipeBarrier<PIPE_ALL>();
    }
}

#ifndef ASCENDC_CPU_MODEL
// Host launch: `tiling` holds a main_k0_Tiling in device memory; block_dim = min(blocks, AI cores).
// `workspace`: block_dim * main_k0_WORKSPACE_BYTES bytes of device memory.
void main_k0_do(uint32_t block_dim, void* stream, uint8_t* Q, uint8_t* K, uint8_t* V, uint8_t* Output, uint8_t* workspace, uint8_t* tiling)
{
    main_k0<<<block_dim, nullptr, stream>>>(Q, K, V, Output, workspace, tiling);
}
#else
extern "C" int main_k0_cpu(uint32_t block_dim, uint8_t** args, uint8_t* tiling, char* error, uint64_t error_len)
{
    return AscendC::cpu::launch(block_dim, error, error_len, [&] { main_k0(args[0], args[1], args[2], args[3], args[4], tiling); });
}
#endif

