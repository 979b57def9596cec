// ascendc_cpu.h: a CPU execution model of the subset of the AscendC API that
// tilec's Ascend backend emits.
//
// The emitted kernel includes this header instead of `kernel_operator.h`
// when `ASCENDC_CPU_MODEL` is defined. Every call runs at once, in program
// order, on the host; what the model adds is the checking a real AI core
// would not do for you:
//
// - capacities: `TPipe::InitBuffer` fails when the buffers of one position
//   (UB, L1, L0A, L0B, L0C) exceed the core's capacity (the sizes come in as
//   ASCENDC_CPU_*_BYTES defines from the target description);
// - alignment: operand starts in UB and L1 must be 32-byte aligned, in L0A
//   and L0B 512-byte aligned, in L0C 64-byte aligned; `DataCopy` between
//   GM and UB moves whole 32-byte blocks;
// - bounds: every access stays inside its tensor;
// - pipe synchronisation: every buffer (global tensors included) remembers
//   which pipe last wrote it and which pipes read it since; an access from
//   another pipe needs a `SetFlag`/`WaitFlag` pair from that pipe after the
//   access (or a `PipeBarrier<PIPE_ALL>`). Setting a flag twice without
//   its wait, waiting for a flag nobody set, and leaving a flag set at the
//   end of the kernel are errors too;
// - reach: the scalar unit reads and writes UB only, vector instructions
//   take UB operands only; nothing but the fixpipe reads L0C.
//
// A kernel declared `KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2)` runs
// on an AI core's AIC (cube core: S, MTE1, MTE2, M, FIX; L1, L0A, L0B, L0C)
// and its AIVs (vector cores: S, V, MTE2, MTE3; UB). The model runs both
// cores' instructions in the program order of the source, one AIV doing
// the work (the emitted code leaves the second one idle but for the
// cross-core flags, which it mirrors). Every instruction must run inside a
// side scope (`SideScope`, what the emitted TILEC_AIC / TILEC_AIV guards
// open) naming its core, on a pipe that core has and on buffers that core
// can reach; a flag orders two pipes of one core; an ordering between the
// cores (through global memory) needs `CrossCoreSetFlag<2, PIPE>` on the
// source core after the access and `CrossCoreWaitFlag` on the other core
// before the next one. A cross-core wait with no flag set (the core would
// block forever), a flag id set from two different pipes before its wait
// (their completions may overtake each other), more than 15 flags pending
// on one id, and flags left pending at the end are errors.
//
// A violation throws `AscendC::cpu::ModelError`; `AscendC::cpu::launch`
// turns it into a message for the caller.

#ifndef TILEC_ASCENDC_CPU_H
#define TILEC_ASCENDC_CPU_H

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#ifndef ASCENDC_CPU_UB_BYTES
#define ASCENDC_CPU_UB_BYTES 196608
#endif
#ifndef ASCENDC_CPU_L1_BYTES
#define ASCENDC_CPU_L1_BYTES 524288
#endif
#ifndef ASCENDC_CPU_L0A_BYTES
#define ASCENDC_CPU_L0A_BYTES 65536
#endif
#ifndef ASCENDC_CPU_L0B_BYTES
#define ASCENDC_CPU_L0B_BYTES 65536
#endif
#ifndef ASCENDC_CPU_L0C_BYTES
#define ASCENDC_CPU_L0C_BYTES 131072
#endif
#ifndef ASCENDC_CPU_CORES
#define ASCENDC_CPU_CORES 24
#endif
#ifndef ASCENDC_CPU_EVENT_IDS
#define ASCENDC_CPU_EVENT_IDS 8
#endif
// Cross-core flag ids on A2 (CrossCoreSetFlag/CrossCoreWaitFlag).
#ifndef ASCENDC_CPU_CROSS_FLAG_IDS
#define ASCENDC_CPU_CROSS_FLAG_IDS 11
#endif
// Cross-core flags one id can hold before the waiting core takes them.
#ifndef ASCENDC_CPU_CROSS_FLAG_DEPTH
#define ASCENDC_CPU_CROSS_FLAG_DEPTH 15
#endif

#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR uint8_t*

// Kernel types (KERNEL_TASK_TYPE_DEFAULT); the model distinguishes mixed
// AIC + AIV kernels from the others.
enum KernelMetaType {
    KERNEL_TYPE_AIV_ONLY,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
};
#define KERNEL_TASK_TYPE_DEFAULT(type) ::AscendC::cpu::kernel_type(type)

// ---------------------------------------------------------------------------
// 16-bit floating-point types, rounded to nearest even from float.

struct half {
    uint16_t bits = 0;
    half() = default;
    half(float f) : bits(from_float(f)) {}
    half(double d) : half(static_cast<float>(d)) {}
    half(int v) : half(static_cast<float>(v)) {}
    operator float() const { return to_float(bits); }
    static uint16_t from_float(float f) {
        uint32_t x;
        std::memcpy(&x, &f, 4);
        uint32_t sign = (x >> 16) & 0x8000u;
        uint32_t mag = x & 0x7fffffffu;
        if (mag >= 0x7f800000u) {
            return static_cast<uint16_t>(sign | (mag > 0x7f800000u ? 0x7e00u : 0x7c00u));
        }
        if (mag >= 0x477ff000u) {  // rounds to >= 65520: infinity
            return static_cast<uint16_t>(sign | 0x7c00u);
        }
        if (mag < 0x38800000u) {  // subnormal or zero in half
            float a;
            std::memcpy(&a, &mag, 4);
            // a * 2^24 rounded to nearest even gives the subnormal bits.
            float scaled = std::nearbyint(a * 16777216.0f);
            return static_cast<uint16_t>(sign | static_cast<uint32_t>(scaled));
        }
        uint32_t exp = (mag >> 23) - 112;
        uint32_t mant = mag & 0x7fffffu;
        uint32_t h = (exp << 10) | (mant >> 13);
        uint32_t rest = mant & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) {
            h += 1;
        }
        return static_cast<uint16_t>(sign | h);
    }
    static float to_float(uint16_t h) {
        uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
        uint32_t exp = (h >> 10) & 0x1fu;
        uint32_t mant = h & 0x3ffu;
        float out;
        if (exp == 0) {
            out = std::ldexp(static_cast<float>(mant), -24);
            if (sign) out = -out;
            return out;
        }
        uint32_t x;
        if (exp == 31) {
            x = sign | 0x7f800000u | (mant << 13);
        } else {
            x = sign | ((exp + 112) << 23) | (mant << 13);
        }
        std::memcpy(&out, &x, 4);
        return out;
    }
};

struct bfloat16_t {
    uint16_t bits = 0;
    bfloat16_t() = default;
    bfloat16_t(float f) : bits(from_float(f)) {}
    bfloat16_t(double d) : bfloat16_t(static_cast<float>(d)) {}
    bfloat16_t(int v) : bfloat16_t(static_cast<float>(v)) {}
    operator float() const {
        uint32_t x = static_cast<uint32_t>(bits) << 16;
        float f;
        std::memcpy(&f, &x, 4);
        return f;
    }
    static uint16_t from_float(float f) {
        uint32_t x;
        std::memcpy(&x, &f, 4);
        if ((x & 0x7fffffffu) > 0x7f800000u) {
            return static_cast<uint16_t>((x >> 16) | 0x40u);
        }
        uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
        return static_cast<uint16_t>((x + rounding) >> 16);
    }
};

namespace AscendC {

// ---------------------------------------------------------------------------
// Positions, pipes and events.

enum class TPosition { GM, A1, A2, B1, B2, CO1, CO2, VECIN, VECOUT, VECCALC };

enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_FIX, PIPE_ALL };
constexpr int PIPE_COUNT = 7;

inline const char* pipe_name(int p) {
    static const char* names[] = {"S", "V", "M", "MTE1", "MTE2", "MTE3", "FIX", "ALL"};
    return names[p];
}

// A unit is a pipe of one core: side * PIPE_COUNT + pipe. Kernels that are
// not mixed use side 0 only.
constexpr int UNIT_COUNT = 2 * PIPE_COUNT;

#define TILEC_EVENTS(X)                                                                           \
    X(MTE2_MTE1, PIPE_MTE2, PIPE_MTE1)                                                            \
    X(MTE1_MTE2, PIPE_MTE1, PIPE_MTE2) X(MTE1_M, PIPE_MTE1, PIPE_M) X(M_MTE1, PIPE_M, PIPE_MTE1) \
    X(M_FIX, PIPE_M, PIPE_FIX) X(FIX_M, PIPE_FIX, PIPE_M) X(MTE2_V, PIPE_MTE2, PIPE_V)           \
    X(V_MTE2, PIPE_V, PIPE_MTE2) X(V_MTE3, PIPE_V, PIPE_MTE3) X(MTE3_V, PIPE_MTE3, PIPE_V)       \
    X(MTE3_MTE2, PIPE_MTE3, PIPE_MTE2) X(MTE2_MTE3, PIPE_MTE2, PIPE_MTE3)                        \
    X(MTE2_S, PIPE_MTE2, PIPE_S) X(S_MTE2, PIPE_S, PIPE_MTE2) X(V_S, PIPE_V, PIPE_S)             \
    X(S_V, PIPE_S, PIPE_V) X(MTE3_S, PIPE_MTE3, PIPE_S) X(S_MTE3, PIPE_S, PIPE_MTE3)             \
    X(FIX_S, PIPE_FIX, PIPE_S) X(S_FIX, PIPE_S, PIPE_FIX) X(MTE1_S, PIPE_MTE1, PIPE_S)           \
    X(S_MTE1, PIPE_S, PIPE_MTE1) X(M_S, PIPE_M, PIPE_S) X(S_M, PIPE_S, PIPE_M)                   \
    X(MTE2_FIX, PIPE_MTE2, PIPE_FIX) X(FIX_MTE2, PIPE_FIX, PIPE_MTE2)                            \
    X(FIX_MTE3, PIPE_FIX, PIPE_MTE3) X(MTE3_FIX, PIPE_MTE3, PIPE_FIX)

enum class HardEvent {
#define TILEC_EVENT_ENUM(name, src, dst) name,
    TILEC_EVENTS(TILEC_EVENT_ENUM)
#undef TILEC_EVENT_ENUM
};

enum TEventID : int32_t {
    EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7
};

namespace cpu {

struct ModelError : std::runtime_error {
    explicit ModelError(const std::string& m) : std::runtime_error(m) {}
};

[[noreturn]] inline void fail(const std::string& message) { throw ModelError(message); }

inline void event_pipes(HardEvent e, int& src, int& dst) {
    switch (e) {
#define TILEC_EVENT_CASE(name, s, d) \
    case HardEvent::name:            \
        src = s;                     \
        dst = d;                     \
        return;
        TILEC_EVENTS(TILEC_EVENT_CASE)
#undef TILEC_EVENT_CASE
    }
    fail("unknown HardEvent");
}

// The cores of a mixed kernel.
enum SideId { SIDE_AIC = 0, SIDE_AIV = 1 };

inline const char* side_name(int side) { return side == SIDE_AIC ? "AIC" : "AIV"; }

// Whether core `side` of a mixed kernel has pipe `pipe`.
inline bool pipe_on_side(int pipe, int side) {
    if (side == SIDE_AIC) {
        return pipe == PIPE_S || pipe == PIPE_MTE1 || pipe == PIPE_MTE2 || pipe == PIPE_M ||
               pipe == PIPE_FIX;
    }
    return pipe == PIPE_S || pipe == PIPE_V || pipe == PIPE_MTE2 || pipe == PIPE_MTE3;
}

// What one buffer (one TBuf allocation or one global tensor) has seen.
struct BufferState {
    std::string name;
    int space = 0;  // 0 GM, 1 L1, 2 L0A, 3 L0B, 4 L0C, 5 UB
    int last_writer = -1;  // unit
    uint64_t write_time = 0;
    uint64_t read_time[UNIT_COUNT] = {};
};

// A cross-core flag set and not yet waited for.
struct CrossFlag {
    int unit;
    uint64_t time;
};

// The state of one AI core (in a mixed kernel: one AIC and its AIV) while
// it runs the kernel.
struct Core {
    uint32_t block_idx = 0;
    uint32_t block_num = 1;
    uint64_t now = 1;
    bool mix = false;
    int side = -1;  // the side scope open now, -1 outside any
    // visible[q][p]: operations of unit q issued before this time are
    // visible to unit p.
    uint64_t visible[UNIT_COUNT][UNIT_COUNT] = {};
    // set_time[q][p][id]: when the flag was set; 0 when not set.
    uint64_t set_time[UNIT_COUNT][UNIT_COUNT][ASCENDC_CPU_EVENT_IDS] = {};
    // cross[side][id]: cross-core flags set for core `side`, oldest first.
    std::vector<CrossFlag> cross[2][ASCENDC_CPU_CROSS_FLAG_IDS];
    std::vector<BufferState> buffers;
    uint64_t used[10] = {};
};

inline Core*& core_slot() {
    static thread_local Core* core = nullptr;
    return core;
}

inline Core& core() {
    Core* c = core_slot();
    if (c == nullptr) fail("an AscendC call outside a kernel launch");
    return *c;
}

inline const char* space_name(int space) {
    static const char* names[] = {"GM", "L1", "L0A", "L0B", "L0C", "UB"};
    return names[space];
}

// "pipe V" in a kernel that is not mixed, "AIV pipe V" in a mixed one.
inline std::string unit_name(int unit) {
    const Core& c = core();
    std::string pipe = pipe_name(unit % PIPE_COUNT);
    return c.mix ? std::string(side_name(unit / PIPE_COUNT)) + " pipe " + pipe : "pipe " + pipe;
}

// The unit `pipe` names where an instruction runs now.
inline int unit_of(int pipe, const char* op) {
    Core& c = core();
    if (!c.mix) return pipe;
    if (c.side < 0) {
        fail(std::string(op) + " runs outside a TILEC_AIC/TILEC_AIV guard: in a mixed kernel every " +
             "instruction runs on the AIC or on the AIV");
    }
    if (!pipe_on_side(pipe, c.side)) {
        fail(std::string(op) + " runs on pipe " + pipe_name(pipe) + ", which the " +
             side_name(c.side) + " does not have");
    }
    return c.side * PIPE_COUNT + pipe;
}

// Which core of a mixed kernel can reach a buffer of `space` (-1: both).
inline int side_of_space(int space) {
    if (space == 5) return SIDE_AIV;
    if (space >= 1 && space <= 4) return SIDE_AIC;
    return -1;
}

// What orders unit `src`'s work before unit `dst`'s.
inline std::string missing_order(int src, int dst) {
    if (src / PIPE_COUNT != dst / PIPE_COUNT) {
        return std::string("a cross-core flag (CrossCoreSetFlag<2, PIPE_") +
               pipe_name(src % PIPE_COUNT) + "> on the " + side_name(src / PIPE_COUNT) +
               ", CrossCoreWaitFlag on the " + side_name(dst / PIPE_COUNT) + ")";
    }
    return std::string("a SetFlag/WaitFlag pair (HardEvent::") + pipe_name(src % PIPE_COUNT) + "_" +
           pipe_name(dst % PIPE_COUNT) + ")";
}

// Records an access of `pipe` to buffer `id` and checks its ordering.
inline void access(int id, int pipe, bool write, const char* op) {
    if (id < 0) return;
    Core& c = core();
    int u = unit_of(pipe, op);
    BufferState& b = c.buffers[static_cast<size_t>(id)];
    int reach = side_of_space(b.space);
    if (c.mix && reach >= 0 && reach != c.side) {
        fail(std::string(op) + " on the " + side_name(c.side) + " reaches buffer `" + b.name +
             "` in " + space_name(b.space) + ", which only the " + side_name(reach) +
             " has (the cores share global memory only)");
    }
    if (b.last_writer >= 0 && b.last_writer != u && c.visible[b.last_writer][u] < b.write_time) {
        fail(std::string(op) + " on " + unit_name(u) + " accesses buffer `" + b.name +
             "` written by " + unit_name(b.last_writer) + " without " +
             missing_order(b.last_writer, u) + " in between");
    }
    if (write) {
        for (int q = 0; q < UNIT_COUNT; ++q) {
            if (q != u && b.read_time[q] != 0 && c.visible[q][u] < b.read_time[q]) {
                fail(std::string(op) + " on " + unit_name(u) + " overwrites buffer `" + b.name +
                     "` still being read by " + unit_name(q) + " without " + missing_order(q, u) +
                     " in between");
            }
        }
        b.last_writer = u;
        b.write_time = c.now;
        for (auto& t : b.read_time) t = 0;
    } else {
        b.read_time[u] = c.now;
    }
    c.now += 1;
}

// Registers a buffer (a TBuf or a global tensor) and returns its id.
inline int add_buffer(const std::string& name, int space) {
    Core& c = core();
    BufferState state;
    state.name = name;
    state.space = space;
    c.buffers.push_back(state);
    return static_cast<int>(c.buffers.size()) - 1;
}

inline void kernel_type(KernelMetaType type) {
    Core& c = core();
    if (!c.buffers.empty() || c.now != 1) {
        fail("KERNEL_TASK_TYPE_DEFAULT after the kernel's first buffer or instruction");
    }
    c.mix = type == KERNEL_TYPE_MIX_AIC_1_2;
}

// Opens a side scope for its lifetime: what the emitted TILEC_AIC and
// TILEC_AIV guards do on the model.
struct SideScope {
    int saved = -1;
    explicit SideScope(SideId side) {
        Core& c = core();
        if (!c.mix) fail(std::string("a ") + side_name(side) + " guard in a kernel that is not mixed");
        if (c.side >= 0 && c.side != side) {
            fail(std::string(side_name(side)) + " code inside " + side_name(c.side) +
                 " code: it would never run");
        }
        saved = c.side;
        c.side = side;
    }
    SideScope(const SideScope&) = delete;
    SideScope& operator=(const SideScope&) = delete;
    ~SideScope() {
        if (Core* c = core_slot()) c->side = saved;
    }
};

inline uint64_t capacity(TPosition pos) {
    switch (pos) {
        case TPosition::A1:
        case TPosition::B1:
            return ASCENDC_CPU_L1_BYTES;
        case TPosition::A2:
            return ASCENDC_CPU_L0A_BYTES;
        case TPosition::B2:
            return ASCENDC_CPU_L0B_BYTES;
        case TPosition::CO1:
            return ASCENDC_CPU_L0C_BYTES;
        case TPosition::VECIN:
        case TPosition::VECOUT:
        case TPosition::VECCALC:
            return ASCENDC_CPU_UB_BYTES;
        default:
            return 0;
    }
}

// The physical buffer a position lives in (L1 is shared by A1 and B1, UB by
// the VEC positions).
inline int space_of(TPosition pos) {
    switch (pos) {
        case TPosition::A1:
        case TPosition::B1:
            return 1;
        case TPosition::A2:
            return 2;
        case TPosition::B2:
            return 3;
        case TPosition::CO1:
            return 4;
        case TPosition::VECIN:
        case TPosition::VECOUT:
        case TPosition::VECCALC:
            return 5;
        default:
            return 0;
    }
}

inline uint64_t alignment(int space) {
    switch (space) {
        case 1:
        case 5:
            return 32;
        case 2:
        case 3:
            return 512;
        case 4:
            return 64;
        default:
            return 1;
    }
}

// Runs `kernel` once per AI core, `block_dim` cores one after another.
inline int launch(uint32_t block_dim, char* error, uint64_t error_len,
                  const std::function<void()>& kernel) {
    uint32_t current = 0;
    try {
        if (block_dim == 0 || block_dim > ASCENDC_CPU_CORES) {
            fail("block_dim " + std::to_string(block_dim) + " is not in 1.." +
                 std::to_string(ASCENDC_CPU_CORES));
        }
        for (uint32_t b = 0; b < block_dim; ++b) {
            current = b;
            Core c;
            c.block_idx = b;
            c.block_num = block_dim;
            core_slot() = &c;
            kernel();
            for (int q = 0; q < UNIT_COUNT; ++q)
                for (int p = 0; p < UNIT_COUNT; ++p)
                    for (int id = 0; id < ASCENDC_CPU_EVENT_IDS; ++id)
                        if (c.set_time[q][p][id] != 0)
                            fail(std::string("the kernel ends with flag ") +
                                 (c.mix ? std::string(side_name(q / PIPE_COUNT)) + " " : "") +
                                 pipe_name(q % PIPE_COUNT) + "_" + pipe_name(p % PIPE_COUNT) +
                                 " id " + std::to_string(id) + " set and never waited for");
            for (int side = 0; side < 2; ++side)
                for (int id = 0; id < ASCENDC_CPU_CROSS_FLAG_IDS; ++id)
                    if (!c.cross[side][id].empty())
                        fail(std::string("the kernel ends with cross-core flag ") +
                             std::to_string(id) + " set for the " + side_name(side) +
                             " and never waited for");
            core_slot() = nullptr;
        }
        return 0;
    } catch (const std::exception& e) {
        core_slot() = nullptr;
        std::string m = "AscendC CPU model, core " + std::to_string(current) + ": " + e.what();
        if (error != nullptr && error_len > 0) {
            size_t n = m.size() < error_len - 1 ? m.size() : static_cast<size_t>(error_len - 1);
            std::memcpy(error, m.data(), n);
            error[n] = 0;
        }
        return 1;
    }
}

}  // namespace cpu

inline int64_t GetBlockIdx() { return cpu::core().block_idx; }
inline int64_t GetBlockNum() { return cpu::core().block_num; }

template <HardEvent E>
inline void SetFlag(int32_t id) {
    int src, dst;
    cpu::event_pipes(E, src, dst);
    if (id < 0 || id >= ASCENDC_CPU_EVENT_IDS) cpu::fail("event id " + std::to_string(id) + " out of range");
    cpu::Core& c = cpu::core();
    src = cpu::unit_of(src, "SetFlag");
    dst = cpu::unit_of(dst, "SetFlag");
    if (c.set_time[src][dst][id] != 0) {
        cpu::fail(std::string("SetFlag ") + pipe_name(src % PIPE_COUNT) + "_" + pipe_name(dst % PIPE_COUNT) +
                  " id " + std::to_string(id) + " set again before its WaitFlag");
    }
    c.set_time[src][dst][id] = c.now++;
}

template <HardEvent E>
inline void WaitFlag(int32_t id) {
    int src, dst;
    cpu::event_pipes(E, src, dst);
    if (id < 0 || id >= ASCENDC_CPU_EVENT_IDS) cpu::fail("event id " + std::to_string(id) + " out of range");
    cpu::Core& c = cpu::core();
    src = cpu::unit_of(src, "WaitFlag");
    dst = cpu::unit_of(dst, "WaitFlag");
    uint64_t t = c.set_time[src][dst][id];
    if (t == 0) {
        cpu::fail(std::string("WaitFlag ") + pipe_name(src % PIPE_COUNT) + "_" + pipe_name(dst % PIPE_COUNT) +
                  " id " + std::to_string(id) + " waits for a flag nobody set (the core would hang)");
    }
    if (c.visible[src][dst] < t) c.visible[src][dst] = t;
    c.set_time[src][dst][id] = 0;
}

// PIPE_ALL orders every pipe of the core that runs it; outside a side
// scope of a mixed kernel both cores run it, each for itself. A barrier
// never orders one core after the other.
template <pipe_t P>
inline void PipeBarrier() {
    if (P == PIPE_ALL) {
        cpu::Core& c = cpu::core();
        for (int q = 0; q < UNIT_COUNT; ++q)
            for (int p = 0; p < UNIT_COUNT; ++p) {
                int side = q / PIPE_COUNT;
                bool same = side == p / PIPE_COUNT;
                if (same && (!c.mix || c.side < 0 || c.side == side)) c.visible[q][p] = c.now;
            }
        c.now += 1;
    }
}

// Mixed kernels: how many AIVs per AIC the launch has (the model runs one
// AIV per AI core) and which one this is.
inline int64_t GetTaskRatio() { return 1; }
inline int64_t GetSubBlockNum() { return 1; }
inline int64_t GetSubBlockIdx() { return 0; }

// Mode 2: between the AIC and the AIVs of one AI core. The flag counts on
// the other core once `pipe`'s earlier instructions are done.
template <uint8_t modeId, pipe_t pipe>
inline void CrossCoreSetFlag(uint16_t flagId) {
    cpu::Core& c = cpu::core();
    if (!c.mix) cpu::fail("CrossCoreSetFlag in a kernel that is not mixed");
    if (modeId != 2) cpu::fail("CrossCoreSetFlag: only mode 2 (AIC <-> AIV) is modelled");
    if (pipe == PIPE_S || pipe == PIPE_ALL) cpu::fail("CrossCoreSetFlag cannot be set from PIPE_S or PIPE_ALL");
    if (flagId >= ASCENDC_CPU_CROSS_FLAG_IDS) {
        cpu::fail("cross-core flag id " + std::to_string(flagId) + " out of range (0.." +
                  std::to_string(ASCENDC_CPU_CROSS_FLAG_IDS - 1) + ")");
    }
    int u = cpu::unit_of(pipe, "CrossCoreSetFlag");
    auto& queue = c.cross[1 - c.side][flagId];
    if (!queue.empty() && queue.front().unit != u) {
        cpu::fail("cross-core flag " + std::to_string(flagId) + " set from " + cpu::unit_name(u) +
                  " while one from " + cpu::unit_name(queue.front().unit) +
                  " is still pending: their completions may overtake each other");
    }
    if (queue.size() >= ASCENDC_CPU_CROSS_FLAG_DEPTH) {
        cpu::fail("cross-core flag " + std::to_string(flagId) + " set more than " +
                  std::to_string(ASCENDC_CPU_CROSS_FLAG_DEPTH) + " times without a wait");
    }
    queue.push_back(cpu::CrossFlag{u, c.now++});
}

// Blocks everything the core issues after it until the other core's flag
// arrives.
inline void CrossCoreWaitFlag(uint16_t flagId) {
    cpu::Core& c = cpu::core();
    if (!c.mix) cpu::fail("CrossCoreWaitFlag in a kernel that is not mixed");
    if (c.side < 0) cpu::fail("CrossCoreWaitFlag outside a TILEC_AIC/TILEC_AIV guard");
    if (flagId >= ASCENDC_CPU_CROSS_FLAG_IDS) {
        cpu::fail("cross-core flag id " + std::to_string(flagId) + " out of range");
    }
    auto& queue = c.cross[c.side][flagId];
    if (queue.empty()) {
        cpu::fail(std::string("CrossCoreWaitFlag on the ") + cpu::side_name(c.side) + " waits for flag " +
                  std::to_string(flagId) + ", which the other core has not set (the core would hang)");
    }
    cpu::CrossFlag flag = queue.front();
    queue.erase(queue.begin());
    for (int p = 0; p < PIPE_COUNT; ++p) {
        uint64_t& v = c.visible[flag.unit][c.side * PIPE_COUNT + p];
        if (v < flag.time) v = flag.time;
    }
    c.now += 1;
}

// ---------------------------------------------------------------------------
// Tensors.

template <typename T>
struct GlobalTensor {
    T* data = nullptr;
    uint64_t size = 0;
    int buffer = -1;
    void SetGlobalBuffer(T* ptr, uint64_t n, const char* name = "global tensor") {
        data = ptr;
        size = n;
        buffer = cpu::add_buffer(name, 0);
    }
    GlobalTensor operator[](uint64_t offset) const {
        if (offset > size) cpu::fail("GlobalTensor offset " + std::to_string(offset) + " beyond its " + std::to_string(size) + " elements");
        GlobalTensor t;
        t.data = data + offset;
        t.size = size - offset;
        return t;
    }
    void check(uint64_t first, uint64_t count, const char* op) const {
        if (first + count > size) {
            cpu::fail(std::string(op) + ": elements " + std::to_string(first) + ".." +
                      std::to_string(first + count) + " of a global tensor of " +
                      std::to_string(size));
        }
    }
    T GetValue(uint64_t i) const {
        check(i, 1, "GlobalTensor::GetValue");
        cpu::access(buffer, PIPE_S, false, "GlobalTensor::GetValue");
        return data[i];
    }
    void SetValue(uint64_t i, T v) const {
        check(i, 1, "GlobalTensor::SetValue");
        cpu::access(buffer, PIPE_S, true, "GlobalTensor::SetValue");
        data[i] = v;
    }
};

template <typename T>
struct LocalTensor {
    T* data = nullptr;
    uint64_t size = 0;        // elements from `data` to the end of the buffer
    uint64_t byte_offset = 0; // from the start of the buffer's space
    int buffer = -1;
    int space = 0;
    LocalTensor operator[](uint64_t offset) const {
        if (offset > size) cpu::fail("LocalTensor offset beyond its buffer");
        LocalTensor t = *this;
        t.data = data + offset;
        t.size = size - offset;
        t.byte_offset = byte_offset + offset * sizeof(T);
        return t;
    }
    uint64_t GetSize() const { return size; }
    void check(uint64_t first, uint64_t count, const char* op) const {
        if (first + count > size) {
            cpu::fail(std::string(op) + ": elements " + std::to_string(first) + ".." +
                      std::to_string(first + count) + " of " + cpu::space_name(space) +
                      " buffer `" + cpu::core().buffers[static_cast<size_t>(buffer)].name +
                      "` with " + std::to_string(size) + " left");
        }
    }
    void aligned(const char* op) const {
        if (byte_offset % cpu::alignment(space) != 0) {
            cpu::fail(std::string(op) + ": operand at byte " + std::to_string(byte_offset) + " of " +
                      cpu::space_name(space) + " is not " +
                      std::to_string(cpu::alignment(space)) + "-byte aligned");
        }
    }
    // The scalar unit addresses UB; the cube's buffers are out of its reach.
    void scalar_reach(const char* op) const {
        if (space != 5) {
            cpu::fail(std::string(op) + ": the scalar unit reads and writes UB only, not " +
                      cpu::space_name(space) + " buffer `" +
                      cpu::core().buffers[static_cast<size_t>(buffer)].name + "`");
        }
    }
    T GetValue(uint64_t i) const {
        scalar_reach("GetValue");
        check(i, 1, "LocalTensor::GetValue");
        cpu::access(buffer, PIPE_S, false, "GetValue");
        return data[i];
    }
    void SetValue(uint64_t i, T v) const {
        scalar_reach("SetValue");
        check(i, 1, "LocalTensor::SetValue");
        cpu::access(buffer, PIPE_S, true, "SetValue");
        data[i] = v;
    }
};

template <TPosition Pos>
struct TBuf {
    std::vector<uint8_t>* storage = nullptr;
    uint64_t bytes = 0;
    uint64_t offset = 0;
    int id = -1;
    template <typename T>
    LocalTensor<T> Get() {
        if (storage == nullptr) cpu::fail("TBuf::Get before TPipe::InitBuffer");
        LocalTensor<T> t;
        t.data = reinterpret_cast<T*>(storage->data());
        t.size = bytes / sizeof(T);
        t.byte_offset = offset;
        t.buffer = id;
        t.space = cpu::space_of(Pos);
        return t;
    }
};

struct TPipe {
    std::vector<std::vector<uint8_t>*> owned;
    TPipe() = default;
    TPipe(const TPipe&) = delete;
    TPipe& operator=(const TPipe&) = delete;
    ~TPipe() {
        for (auto* p : owned) delete p;
    }
    template <TPosition Pos>
    void InitBuffer(TBuf<Pos>& buf, uint32_t bytes, const char* name = "buffer") {
        cpu::Core& c = cpu::core();
        int space = cpu::space_of(Pos);
        uint64_t align = cpu::alignment(space) < 32 ? 32 : cpu::alignment(space);
        uint64_t rounded = (bytes + align - 1) / align * align;
        uint64_t start = c.used[space];
        if (start + rounded > cpu::capacity(Pos)) {
            cpu::fail(std::string("InitBuffer `") + name + "`: " + std::to_string(rounded) +
                      " bytes at offset " + std::to_string(start) + " overflow " +
                      cpu::space_name(space) + " (" + std::to_string(cpu::capacity(Pos)) +
                      " bytes)");
        }
        c.used[space] = start + rounded;
        auto* storage = new std::vector<uint8_t>(rounded, 0xA5);
        owned.push_back(storage);
        buf.storage = storage;
        buf.bytes = rounded;
        buf.offset = start;
        int reach = cpu::side_of_space(space);
        if (c.mix && reach != c.side) {
            cpu::fail(std::string("InitBuffer `") + name + "`: a " + cpu::space_name(space) +
                      " buffer is set up " +
                      (c.side < 0 ? std::string("outside a side guard")
                                  : std::string("on the ") + cpu::side_name(c.side)) +
                      "; only the " + cpu::side_name(reach) + " has " + cpu::space_name(space));
        }
        buf.id = cpu::add_buffer(name, space);
    }
};

// ---------------------------------------------------------------------------
// Data movement.

struct DataCopyExtParams {
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;   // bytes per block
    uint32_t srcStride = 0;  // GM: bytes; UB: 32-byte blocks
    uint32_t dstStride = 0;  // GM: bytes; UB: 32-byte blocks
    uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = T(0);
};

// GM -> UB on MTE2: `blockCount` blocks of `blockLen` bytes; each block
// lands at a 32-byte boundary of UB.
template <typename T>
inline void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src,
                        const DataCopyExtParams& p, const DataCopyPadExtParams<T>&) {
    dst.aligned("DataCopyPad GM->UB");
    if (dst.space != 5) cpu::fail("DataCopyPad GM->local needs a UB destination");
    if (p.blockLen % sizeof(T) != 0) cpu::fail("DataCopyPad: blockLen is not a whole number of elements");
    uint64_t n = p.blockLen / sizeof(T);
    uint64_t src_pitch = (p.blockLen + p.srcStride) / sizeof(T);
    uint64_t dst_pitch = ((p.blockLen + 31) / 32 + p.dstStride) * 32 / sizeof(T);
    cpu::access(src.buffer, PIPE_MTE2, false, "DataCopyPad");
    cpu::access(dst.buffer, PIPE_MTE2, true, "DataCopyPad");
    for (uint64_t b = 0; b < p.blockCount; ++b) {
        src.check(b * src_pitch, n, "DataCopyPad GM->UB");
        dst.check(b * dst_pitch, n, "DataCopyPad GM->UB");
        std::memcpy(dst.data + b * dst_pitch, src.data + b * src_pitch, n * sizeof(T));
    }
}

// UB -> GM on MTE3.
template <typename T>
inline void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                        const DataCopyExtParams& p) {
    src.aligned("DataCopyPad UB->GM");
    if (src.space != 5) cpu::fail("DataCopyPad local->GM needs a UB source");
    if (p.blockLen % sizeof(T) != 0) cpu::fail("DataCopyPad: blockLen is not a whole number of elements");
    uint64_t n = p.blockLen / sizeof(T);
    uint64_t src_pitch = ((p.blockLen + 31) / 32 + p.srcStride) * 32 / sizeof(T);
    uint64_t dst_pitch = (p.blockLen + p.dstStride) / sizeof(T);
    cpu::access(src.buffer, PIPE_MTE3, false, "DataCopyPad");
    cpu::access(dst.buffer, PIPE_MTE3, true, "DataCopyPad");
    for (uint64_t b = 0; b < p.blockCount; ++b) {
        src.check(b * src_pitch, n, "DataCopyPad UB->GM");
        dst.check(b * dst_pitch, n, "DataCopyPad UB->GM");
        std::memcpy(dst.data + b * dst_pitch, src.data + b * src_pitch, n * sizeof(T));
    }
}

// UB -> UB on V: `count` elements, a whole number of 32-byte blocks.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    if (dst.space != 5 || src.space != 5) {
        cpu::fail(std::string("DataCopy between local tensors moves UB to UB, not ") +
                  cpu::space_name(src.space) + " to " + cpu::space_name(dst.space));
    }
    dst.aligned("DataCopy UB->UB");
    src.aligned("DataCopy UB->UB");
    if ((count * sizeof(T)) % 32 != 0) {
        cpu::fail("DataCopy UB->UB of " + std::to_string(count * sizeof(T)) +
                  " bytes: not a whole number of 32-byte blocks");
    }
    src.check(0, count, "DataCopy");
    dst.check(0, count, "DataCopy");
    cpu::access(src.buffer, PIPE_V, false, "DataCopy");
    cpu::access(dst.buffer, PIPE_V, true, "DataCopy");
    std::memmove(dst.data, src.data, count * sizeof(T));
}

// GM -> UB on MTE2 and UB -> GM on MTE3: `count` contiguous elements, a
// whole number of 32-byte blocks.
namespace cpu {
template <typename T>
inline void contiguous(const LocalTensor<T>& ub, uint32_t count, const char* op) {
    if (ub.space != 5) fail(std::string(op) + " needs a UB tensor, not " + space_name(ub.space));
    ub.aligned(op);
    if ((static_cast<uint64_t>(count) * sizeof(T)) % 32 != 0) {
        fail(std::string(op) + " of " + std::to_string(count * sizeof(T)) +
             " bytes: not a whole number of 32-byte blocks");
    }
}
}  // namespace cpu

template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, uint32_t count) {
    cpu::contiguous(dst, count, "DataCopy GM->UB");
    src.check(0, count, "DataCopy GM->UB");
    dst.check(0, count, "DataCopy GM->UB");
    cpu::access(src.buffer, PIPE_MTE2, false, "DataCopy GM->UB");
    cpu::access(dst.buffer, PIPE_MTE2, true, "DataCopy GM->UB");
    std::memcpy(dst.data, src.data, static_cast<size_t>(count) * sizeof(T));
}

template <typename T>
inline void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, uint32_t count) {
    cpu::contiguous(src, count, "DataCopy UB->GM");
    src.check(0, count, "DataCopy UB->GM");
    dst.check(0, count, "DataCopy UB->GM");
    cpu::access(src.buffer, PIPE_MTE3, false, "DataCopy UB->GM");
    cpu::access(dst.buffer, PIPE_MTE3, true, "DataCopy UB->GM");
    std::memcpy(dst.data, src.data, static_cast<size_t>(count) * sizeof(T));
}

struct Nd2NzParams {
    uint16_t ndNum = 1;
    uint16_t nValue = 0;   // rows
    uint16_t dValue = 0;   // elements per row
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;         // GM row stride, elements
    uint16_t dstNzC0Stride = 0;     // rows between fractal columns (C0-wide)
    uint16_t dstNzNStride = 1;      // C0 blocks between rows
    uint16_t dstNzMatrixStride = 0;
};

// GM (ND, row-major) -> L1 (NZ) on MTE2.
template <typename T>
inline void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const Nd2NzParams& p) {
    dst.aligned("DataCopy ND->NZ");
    if (dst.space != 1) cpu::fail("DataCopy with Nd2NzParams needs an L1 destination");
    if (p.ndNum != 1) cpu::fail("DataCopy ND->NZ: ndNum other than 1 is not modelled");
    const uint64_t c0 = 32 / sizeof(T);
    cpu::access(src.buffer, PIPE_MTE2, false, "DataCopy ND->NZ");
    cpu::access(dst.buffer, PIPE_MTE2, true, "DataCopy ND->NZ");
    for (uint64_t r = 0; r < p.nValue; ++r) {
        src.check(r * p.srcDValue, p.dValue, "DataCopy ND->NZ");
        for (uint64_t c = 0; c < p.dValue; ++c) {
            uint64_t off = (c / c0) * p.dstNzC0Stride * c0 + r * p.dstNzNStride * c0 + c % c0;
            dst.check(off, 1, "DataCopy ND->NZ");
            dst.data[off] = src.data[r * p.srcDValue + c];
        }
    }
}

template <typename T>
struct InitConstValueParams {
    uint16_t repeatTimes = 0;  // 512-byte units
    uint16_t blockNum = 0;
    uint16_t dstGap = 0;
    T initValue = T(0);
};

// Fills 512-byte units of L1 on MTE2.
template <typename T>
inline void InitConstValue(const LocalTensor<T>& dst, const InitConstValueParams<T>& p) {
    dst.aligned("InitConstValue");
    if (dst.space != 1 && dst.space != 2 && dst.space != 3) cpu::fail("InitConstValue needs L1, L0A or L0B");
    uint64_t n = static_cast<uint64_t>(p.repeatTimes) * 512 / sizeof(T);
    dst.check(0, n, "InitConstValue");
    cpu::access(dst.buffer, PIPE_MTE2, true, "InitConstValue");
    for (uint64_t i = 0; i < n; ++i) dst.data[i] = p.initValue;
}

struct LoadData2DParams {
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint8_t sid = 0;
    uint16_t dstGap = 0;
    bool ifTranspose = false;
    uint8_t addrMode = 0;
};

// L1 -> L0A/L0B on MTE1: `repeatTimes` 512-byte fractals, the i-th read
// from fractal `startIndex + i * srcStride`; with `ifTranspose` each
// fractal of 16 x 16 two-byte elements is transposed (two-byte types only).
template <typename T>
inline void LoadData(const LocalTensor<T>& dst, const LocalTensor<T>& src, const LoadData2DParams& p) {
    dst.aligned("LoadData");
    src.aligned("LoadData");
    if (src.space != 1 || (dst.space != 2 && dst.space != 3)) cpu::fail("LoadData moves L1 to L0A or L0B");
    if (p.ifTranspose && sizeof(T) != 2) cpu::fail("LoadData2D transposes two-byte fractals only");
    const uint64_t frac = 512 / sizeof(T);
    cpu::access(src.buffer, PIPE_MTE1, false, "LoadData");
    cpu::access(dst.buffer, PIPE_MTE1, true, "LoadData");
    for (uint64_t i = 0; i < p.repeatTimes; ++i) {
        uint64_t s = (p.startIndex + i * p.srcStride) * frac;
        uint64_t d = i * (1 + p.dstGap) * frac;
        src.check(s, frac, "LoadData");
        dst.check(d, frac, "LoadData");
        if (p.ifTranspose) {
            for (uint64_t r = 0; r < 16; ++r)
                for (uint64_t c = 0; c < 16; ++c) dst.data[d + c * 16 + r] = src.data[s + r * 16 + c];
        } else {
            std::memcpy(dst.data + d, src.data + s, 512);
        }
    }
}

struct MmadParams {
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};

// L0C (NZ, 16 x 16 fractals) [+]= L0A (Zz, 16 x C0) x L0B (nZ, C0 x 16) on M.
template <typename C, typename A, typename B>
inline void Mmad(const LocalTensor<C>& dst, const LocalTensor<A>& a, const LocalTensor<B>& b,
                 const MmadParams& p) {
    if (dst.space != 4 || a.space != 2 || b.space != 3) cpu::fail("Mmad reads L0A and L0B and writes L0C");
    dst.aligned("Mmad");
    a.aligned("Mmad");
    b.aligned("Mmad");
    if (p.m > 4095 || p.n > 4095 || p.k > 4095) cpu::fail("Mmad: m, n and k must be at most 4095");
    const uint64_t c0 = 32 / sizeof(A);
    auto up = [](uint64_t v, uint64_t to) { return (v + to - 1) / to * to; };
    const uint64_t mp = up(p.m, 16), np = up(p.n, 16), kp = up(p.k, c0);
    a.check(0, mp * kp, "Mmad A");
    b.check(0, kp * np, "Mmad B");
    dst.check(0, mp * np, "Mmad C");
    cpu::access(a.buffer, PIPE_M, false, "Mmad");
    cpu::access(b.buffer, PIPE_M, false, "Mmad");
    cpu::access(dst.buffer, PIPE_M, true, "Mmad");
    for (uint64_t r = 0; r < p.m; ++r) {
        for (uint64_t c = 0; c < p.n; ++c) {
            double acc = 0.0;
            for (uint64_t k = 0; k < p.k; ++k) {
                uint64_t ao = ((r / 16) * (kp / c0) + k / c0) * 16 * c0 + (r % 16) * c0 + k % c0;
                uint64_t bo = ((k / c0) * (np / 16) + c / 16) * 16 * c0 + (c % 16) * c0 + k % c0;
                acc += static_cast<double>(static_cast<float>(a.data[ao])) *
                       static_cast<double>(static_cast<float>(b.data[bo]));
            }
            uint64_t co = (c / 16) * mp * 16 + r * 16 + c % 16;
            double base = p.cmatrixInitVal ? 0.0 : static_cast<double>(dst.data[co]);
            dst.data[co] = static_cast<C>(base + acc);
        }
    }
}

enum class QuantMode_t { NoQuant, F322F16, F322BF16 };

struct FixpipeParamsV220 {
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;  // rows of the NZ source between fractal columns
    uint32_t dstStride = 0;  // GM row stride, elements
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar = 0;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
};

// L0C (NZ) -> GM (ND) on FIX, converting f32 to the GM type as quantPre says.
template <typename D, typename S>
inline void Fixpipe(const GlobalTensor<D>& dst, const LocalTensor<S>& src, const FixpipeParamsV220& p) {
    if (src.space != 4) cpu::fail("Fixpipe reads L0C");
    src.aligned("Fixpipe");
    bool same = sizeof(D) == sizeof(S) && p.quantPre == QuantMode_t::NoQuant;
    bool quant = p.quantPre != QuantMode_t::NoQuant && sizeof(D) == 2;
    if (!same && !quant) cpu::fail("Fixpipe: the destination type needs a matching quantPre");
    cpu::access(src.buffer, PIPE_FIX, false, "Fixpipe");
    cpu::access(dst.buffer, PIPE_FIX, true, "Fixpipe");
    for (uint64_t r = 0; r < p.mSize; ++r) {
        dst.check(r * p.dstStride, p.nSize, "Fixpipe");
        for (uint64_t c = 0; c < p.nSize; ++c) {
            uint64_t so = (c / 16) * p.srcStride * 16 + r * 16 + c % 16;
            src.check(so, 1, "Fixpipe");
            S v = src.data[so];
            dst.data[r * p.dstStride + c] = static_cast<D>(p.reluEn && v < S(0) ? S(0) : v);
        }
    }
}

// ---------------------------------------------------------------------------
// Vector unit (pipe V): operands in UB, 32-byte aligned.

namespace cpu {
template <typename T>
inline void vec_operand(const LocalTensor<T>& t, uint64_t count, bool write, const char* op) {
    if (t.space != 5) fail(std::string(op) + ": vector operands live in UB");
    t.aligned(op);
    t.check(0, count, op);
    access(t.buffer, PIPE_V, write, op);
}
template <typename T>
inline double wide(T v) {
    return static_cast<double>(static_cast<float>(v));
}
inline double wide(float v) { return static_cast<double>(v); }
inline double wide(int32_t v) { return static_cast<double>(v); }
template <typename T>
inline T narrow(double v) {
    return static_cast<T>(static_cast<float>(v));
}
template <>
inline float narrow<float>(double v) {
    return static_cast<float>(v);
}
template <>
inline int32_t narrow<int32_t>(double v) {
    return static_cast<int32_t>(v);
}
template <typename T, typename F>
inline void binary(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,
                   uint32_t n, const char* op, F f) {
    vec_operand(a, n, false, op);
    vec_operand(b, n, false, op);
    vec_operand(d, n, true, op);
    for (uint32_t i = 0; i < n; ++i) d.data[i] = narrow<T>(f(wide(a.data[i]), wide(b.data[i])));
}
template <typename T, typename F>
inline void unary(const LocalTensor<T>& d, const LocalTensor<T>& a, uint32_t n, const char* op, F f) {
    vec_operand(a, n, false, op);
    vec_operand(d, n, true, op);
    for (uint32_t i = 0; i < n; ++i) d.data[i] = narrow<T>(f(wide(a.data[i])));
}
}  // namespace cpu

#define TILEC_VEC_BINARY(NAME, EXPR)                                                             \
    template <typename T>                                                                        \
    inline void NAME(const LocalTensor<T>& d, const LocalTensor<T>& a, const LocalTensor<T>& b,  \
                     uint32_t n) {                                                               \
        cpu::binary(d, a, b, n, #NAME, [](double x, double y) { return EXPR; });                 \
    }
TILEC_VEC_BINARY(Add, x + y)
TILEC_VEC_BINARY(Sub, x - y)
TILEC_VEC_BINARY(Mul, x * y)
TILEC_VEC_BINARY(Div, x / y)
TILEC_VEC_BINARY(Max, std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y))
TILEC_VEC_BINARY(Min, std::isnan(x) || std::isnan(y) ? NAN : (x < y ? x : y))
#undef TILEC_VEC_BINARY

#define TILEC_VEC_SCALAR(NAME, EXPR)                                                       \
    template <typename T>                                                                  \
    inline void NAME(const LocalTensor<T>& d, const LocalTensor<T>& a, T s, uint32_t n) {  \
        double y = cpu::wide(s);                                                           \
        cpu::unary(d, a, n, #NAME, [y](double x) { return EXPR; });                        \
    }
TILEC_VEC_SCALAR(Adds, x + y)
TILEC_VEC_SCALAR(Muls, x * y)
TILEC_VEC_SCALAR(Maxs, std::isnan(x) || std::isnan(y) ? NAN : (x > y ? x : y))
TILEC_VEC_SCALAR(Mins, std::isnan(x) || std::isnan(y) ? NAN : (x < y ? x : y))
#undef TILEC_VEC_SCALAR

#define TILEC_VEC_UNARY(NAME, EXPR)                                                          \
    template <typename T>                                                                    \
    inline void NAME(const LocalTensor<T>& d, const LocalTensor<T>& a, uint32_t n) {         \
        cpu::unary(d, a, n, #NAME, [](double x) { return EXPR; });                           \
    }
TILEC_VEC_UNARY(Exp, std::exp(x))
TILEC_VEC_UNARY(Ln, std::log(x))
TILEC_VEC_UNARY(Sqrt, std::sqrt(x))
TILEC_VEC_UNARY(Abs, std::fabs(x))
TILEC_VEC_UNARY(Reciprocal, 1.0 / x)
TILEC_VEC_UNARY(Rsqrt, 1.0 / std::sqrt(x))
TILEC_VEC_UNARY(Relu, x > 0.0 ? x : 0.0)
#undef TILEC_VEC_UNARY

template <typename T>
inline void Duplicate(const LocalTensor<T>& d, T value, uint32_t n) {
    cpu::vec_operand(d, n, true, "Duplicate");
    for (uint32_t i = 0; i < n; ++i) d.data[i] = value;
}

enum class RoundMode { CAST_NONE, CAST_RINT, CAST_TRUNC, CAST_FLOOR, CAST_CEIL, CAST_ROUND };

template <typename D, typename S>
inline void Cast(const LocalTensor<D>& d, const LocalTensor<S>& s, RoundMode mode, uint32_t n) {
    cpu::vec_operand(s, n, false, "Cast");
    cpu::vec_operand(d, n, true, "Cast");
    for (uint32_t i = 0; i < n; ++i) {
        double v = cpu::wide(s.data[i]);
        if constexpr (std::is_integral<D>::value) {
            // Out-of-range and NaN inputs follow TileLang's cast rule (NaN
            // gives 0; saturate at the int64 range, then wrap); what the
            // vector unit does with them is not documented here.
            int64_t w = 0;
            if (v == v) {
                double t = std::trunc(v);
                w = t <= -9223372036854775808.0 ? INT64_MIN
                    : (t >= 9223372036854775807.0 ? INT64_MAX : static_cast<int64_t>(t));
            }
            d.data[i] = static_cast<D>(w);
        } else if constexpr (std::is_integral<S>::value) {
            d.data[i] = static_cast<D>(static_cast<float>(s.data[i]));
        } else {
            d.data[i] = static_cast<D>(static_cast<float>(v));
        }
    }
}

// Reductions of `n` elements into element 0 of `d`; `work` is scratch UB.
namespace cpu {
template <typename T, typename F>
inline void reduce(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& work,
                   uint32_t n, const char* op, double init, F f) {
    vec_operand(s, n, false, op);
    vec_operand(work, 1, true, op);
    vec_operand(d, 1, true, op);
    double acc = init;
    for (uint32_t i = 0; i < n; ++i) acc = f(acc, wide(s.data[i]));
    d.data[0] = narrow<T>(acc);
}
}  // namespace cpu

template <typename T>
inline void ReduceSum(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& work, uint32_t n) {
    cpu::reduce(d, s, work, n, "ReduceSum", 0.0, [](double a, double x) { return a + x; });
}
template <typename T>
inline void ReduceMax(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& work, uint32_t n) {
    cpu::reduce(d, s, work, n, "ReduceMax", -INFINITY,
                [](double a, double x) { return std::isnan(a) || std::isnan(x) ? NAN : (x > a ? x : a); });
}
template <typename T>
inline void ReduceMin(const LocalTensor<T>& d, const LocalTensor<T>& s, const LocalTensor<T>& work, uint32_t n) {
    cpu::reduce(d, s, work, n, "ReduceMin", INFINITY,
                [](double a, double x) { return std::isnan(a) || std::isnan(x) ? NAN : (x < a ? x : a); });
}

}  // namespace AscendC

#endif  // TILEC_ASCENDC_CPU_H
